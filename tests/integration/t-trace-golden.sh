# cprof trace of a tiny hand-made profile (tests/golden/tiny.sql) is byte for byte tests/golden/tiny.trace.json:
# the export is deterministic. Bad input: one line on stderr, exit 2, nothing written or overwritten.
# After an intended change of the format, regenerate the golden file and review its diff:
#   sqlite3 /tmp/tiny.db < tests/golden/tiny.sql && build/bin/cprof trace /tmp/tiny.db -f -o tests/golden/tiny.trace.json
. "$(dirname "$0")/lib.sh"
G=$ROOT/tests/golden
sqlite3 tiny.db < "$G/tiny.sql" || fail "tiny.sql does not load"
"$BIN/cprof" trace tiny.db -o tiny.trace.json 2>err.txt || fail "export failed: $(cat err.txt)"
grep -qvE '^cprof trace: wrote [^ ]+ \([0-9]+ events, [0-9]+ (bytes|kB|MB)\)$' err.txt && fail "export printed: $(cat err.txt)"
grep -qE '^cprof trace: wrote [^ ]+ \([0-9]+ events' err.txt || fail "export did not say what it wrote: $(cat err.txt)"
if ! cmp -s tiny.trace.json "$G/tiny.trace.json"; then
	diff -u "$G/tiny.trace.json" tiny.trace.json | head -30 >&2
	fail "trace differs from the golden file"
fi
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' tiny.trace.json || fail "golden trace is not JSON"
# a second export is the same file
"$BIN/cprof" trace tiny.db -o again.json && cmp -s again.json tiny.trace.json || fail "second export differs"

one_line_exit2() { # CMD... : exit 2 and exactly one line on stderr
	"$@" 2>err.txt >/dev/null
	local rc=$?
	assert_eq "$rc" 2 "exit status of: $*"
	assert_eq "$(wc -l < err.txt)" 1 "stderr lines of: $* ($(cat err.txt))"
}
one_line_exit2 "$BIN/cprof" trace missing.db -o m.json
[ -e m.json ] && fail "missing input wrote m.json"
echo "not a database" > junk.db
one_line_exit2 "$BIN/cprof" trace junk.db -o j.json
grep -q "not a cprof profile" err.txt || fail "junk message: $(cat err.txt)"
assert_eq "$(cat junk.db)" "not a database" "junk input untouched"
[ -e j.json ] && fail "junk input wrote j.json"
sqlite3 other.db "CREATE TABLE x(a); INSERT INTO x VALUES(1);"
one_line_exit2 "$BIN/cprof" trace other.db -o o.json
one_line_exit2 "$BIN/cprof" trace tiny.db
one_line_exit2 "$BIN/cprof" trace -o n.json
one_line_exit2 "$BIN/cprof" trace tiny.db -o "$T/no/such/dir/t.json"
# --per-rank: the one rank of the tiny profile (rank 3 of 4) gets its own file, otherwise the same trace
"$BIN/cprof" trace tiny.db --per-rank ranks || fail "--per-rank"
[ "$(ls ranks)" = "rank-3.json" ] || fail "per-rank files: $(ls ranks)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["distributedInfo"]["rank"] == 3 and d["distributedInfo"]["world_size"] == 4, d["distributedInfo"]' ranks/rank-3.json \
	|| fail "per-rank distributedInfo"
one_line_exit2 "$BIN/cprof" trace tiny.db -o x.json --per-rank ranks

# an existing output is never overwritten without -f, and -f replaces it whole
echo "keep me" > existing.json
one_line_exit2 "$BIN/cprof" trace tiny.db -o existing.json
grep -q "exists" err.txt || fail "message for an existing output: $(cat err.txt)"
assert_eq "$(cat existing.json)" "keep me" "existing output untouched"
"$BIN/cprof" trace tiny.db -f -o existing.json || fail "-f did not overwrite"
cmp -s existing.json tiny.trace.json || fail "-f output differs from the golden file"
ls -a | grep -q '\.tmp\.' && fail "temporary files left behind: $(ls -a | grep '\.tmp\.')"

# a profile from before the GPU lane (no CUPTI tables) still exports: the hooked calls, no GPU lanes
cp tiny.db old.db
for t in KERNEL MEMCPY MEMSET RUNTIME DRIVER SYNCHRONIZATION OVERHEAD EXTERNAL_CORRELATION; do
	sqlite3 old.db "DROP TABLE CUPTI_ACTIVITY_KIND_$t" || fail "drop $t"
done
"$BIN/cprof" trace old.db -o old.json 2>err.txt || fail "old profile: $(cat err.txt)"
assert_eq "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sum(e["ph"] == "X" for e in d["traceEvents"]))' old.json)" \
	"$(q old.db "SELECT count(*) FROM CPROF_API")" "old profile: one span per hooked call"
echo ok
