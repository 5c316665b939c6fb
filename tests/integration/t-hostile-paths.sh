# Issue 21 item 14: output paths. A host name holding "/../" in -o's %h stays one file name component
# in the chosen directory; a profile path longer than SQLite opens (504 bytes) is refused by cprof-run
# with one line and exit 2 before anything runs or is created, and cprofd leaves no empty file behind
# when SQLite refuses its path; a valid profile moved into such a directory still reads.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim

# %h: a UTS namespace of our own lets an unprivileged user pick the host name
mkdir -p out/sub
if unshare -Uru true 2>/dev/null; then
	unshare -Uru env LD_LIBRARY_PATH="$SIMLIB" sh -c 'printf "x/../../esc" > /proc/sys/kernel/hostname &&
		exec "$0" -q -o out/sub/p-%h.db -- "$1" steady 2' "$BIN/cprof-run" "$WL/scenarios" > /dev/null 2> err.txt ||
		fail "run with a hostile host name: $(cat err.txt)"
	[ -f out/sub/p-x_.._.._esc.db ] || fail "profile not where -o put it: $(find . -name '*.db')"
	assert_eq "$(find . -name '*esc*' | wc -l)" 1 "one profile, inside out/sub"
	"$BIN/cprof" info out/sub/p-x_.._.._esc.db > /dev/null || fail "that profile reads"
else
	echo "SKIPPED (part): no user namespaces here, the %h check needs one to set a host name"
fi

# a directory whose absolute path is about 560 bytes (each component under NAME_MAX)
long=$T/$(printf 'd%.0s' $(seq 120))/$(printf 'e%.0s' $(seq 120))/$(printf 'f%.0s' $(seq 120))/$(printf 'g%.0s' $(seq 180))
mkdir -p "$long"
"$BIN/cprof-run" -q -o "$long/p.db" -- touch ran.txt 2> err.txt
assert_eq $? 2 "cprof-run with a profile path SQLite cannot open"
assert_eq "$(wc -l < err.txt)" 1 "one line: $(cat err.txt)"
grep -q "SQLite opens at most 504" err.txt || fail "message: $(cat err.txt)"
[ -e ran.txt ] && fail "the command ran although no profile could be written"
assert_eq "$(ls -A "$long" | wc -l)" 0 "nothing created in the long directory"
# relative, from inside the directory: the absolute path is what SQLite sees
(cd "$long" && "$BIN/cprof-run" -q -o p.db -- true 2> /dev/null)
assert_eq $? 2 "relative -o in a long directory"
assert_eq "$(ls -A "$long" | wc -l)" 0 "nothing created by the relative run"

# cprofd itself, given such a path: says why, leaves no empty file that would block the next run
mkfifo ev.fifo
timeout -k 2 10 "$BIN/cprofd" --fifo ev.fifo --db "$long/c.db" 2> err.txt
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "cprofd with a too long path: exit $rc"
[ -e "$long/c.db" ] && fail "cprofd left $(stat -c %s "$long/c.db") bytes at the path it could not open"

# a profile written at a short path and moved into the long directory reads (info, report, trace)
sim "$BIN/cprof-run" -q -o short.db -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
"$BIN/cprof" info short.db | sed 's|short.db|P|' > want.txt
mv short.db "$long/p.db"
"$BIN/cprof" info "$long/p.db" > got.txt 2> err.txt || fail "cprof info in a long directory: $(cat err.txt)"
sed "s|$long/p.db|P|" got.txt > got2.txt
cmp -s want.txt got2.txt || fail "info differs: $(diff want.txt got2.txt)"
(cd "$long" && "$BIN/cprof" report p.db > "$T/r.txt") || fail "cprof report, relative, in a long directory"
grep -q "^Verdict" r.txt || fail "report: $(head -5 r.txt)"
"$BIN/cprof" trace "$long/p.db" -o t.json || fail "trace from a long directory"
# the profile is not written to
assert_eq "$(ls -A "$long")" "p.db" "no side files made by reading"
echo ok
