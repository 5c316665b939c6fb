# Issue 32 item 4 (cosmetic): cprof merge attached the second and later profiles read-write-capable: it left
# -wal and -shm files beside them, and failed in a read-only directory ("attempt to write a readonly
# database"). They are attached as every reader opens a profile: read-only, immutable when finished.
# s21 review: parts that hold the same run are refused (exit 7).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
for p in a b "it's"; do
	sim "$BIN/cprof-run" -q -o "$p.db" -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
done
"$BIN/cprof" merge a.db b.db "it's.db" -o m.db 2> err.txt || fail "merge: $(cat err.txt)"
ls | grep -E -- '-(wal|shm)$' && fail "side files left by the merge"
assert_eq "$(q m.db "SELECT count(*) FROM PROCESSES")" 3 "processes merged"

# s21 review: the same run twice (the same file, a copy, a merged profile and one of its parts) doubled
# every count without a word. Refused: one line, exit 7, no output written, an existing one untouched.
refused() { # WHAT CMD...: exit 7, one line naming both parts
	local what=$1
	shift
	"$@" > out.txt 2> err.txt
	assert_eq "$?" 7 "$what: exit status ($(cat err.txt))"
	assert_eq "$(wc -l < err.txt)" 1 "$what: one line ($(cat err.txt))"
	grep -q "same run" err.txt || fail "$what: message: $(cat err.txt)"
}
cp a.db copy.db
refused "a profile twice" "$BIN/cprof" merge a.db a.db -o twice.db
[ -e twice.db ] && fail "a profile twice: an output was written"
ls | grep -q 'tmp-' && fail "a profile twice: a temporary file left: $(ls)"
refused "a copy" "$BIN/cprof" merge a.db b.db copy.db -o twice.db
grep -q "copy.db holds the same run as a.db" err.txt || fail "a copy: the parts not named: $(cat err.txt)"
refused "a merged profile and its part" "$BIN/cprof" merge m.db b.db -o twice.db
grep -q "b.db holds the same run as m.db" err.txt || fail "a merged profile and its part: $(cat err.txt)"
cp m.db keep.db
refused "over an existing output" "$BIN/cprof" merge a.db copy.db -o m.db -f
cmp -s m.db keep.db || fail "the existing output was changed by a refused merge"
refused "to standard output" "$BIN/cprof" merge a.db copy.db -o -
assert_eq "$(wc -c < out.txt)" 0 "a refused merge to standard output wrote bytes"
# a read-only directory of inputs, as a user who may not write there (root may write anywhere)
id -u nobody > /dev/null 2>&1 || skip "no user 'nobody' to try a read-only directory as"
mkdir ro out
cp a.db b.db ro/
chmod 644 ro/*.db
chmod 555 ro
chmod 777 out
chmod 755 "$T"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$BIN/cprof" --version > /dev/null 2>&1 ||
	skip "user nobody cannot run $BIN/cprof (a build directory private to its owner)"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$BIN/cprof" merge ro/a.db ro/b.db -o out/m.db 2> err.txt ||
	fail "merge from a read-only directory: $(cat err.txt)"
assert_eq "$(q out/m.db "SELECT count(*) FROM PROCESSES")" 2 "processes merged from the read-only directory"
echo OK
