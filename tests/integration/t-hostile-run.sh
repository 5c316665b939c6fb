# Issue 32 item 4 (cprof fails to run): a command line over 128 KiB (cprofd got it joined as one argument:
# E2BIG, exit 125), -o through a symlinked directory (SQLite's no-follow open refused it, the target was not
# run), and cprof-run with stdin and stdout closed (its ready pipe took fds 0 and 1: exit 125) all run the
# program and write its profile now.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
# 3,000 arguments of 60 bytes: 183 KB of command line, each argument well under the kernel's 128 KiB
set -- $("$PY" -c "print(' '.join(['a' * 60] * 3000))")
assert_eq "$#" 3000 "arguments built"
sim "$BIN/cprof-run" -q -o long.db -- "$WL/scenarios" steady 3 "$@" > /dev/null 2> err.txt
assert_eq "$?" 0 "a 183 KB command line ($(cat err.txt))"
assert_ge "$(q long.db "SELECT count(*) FROM CPROF_API")" 3 "its calls"
assert_match "$(meta long.db command)" "bytes more\)$" "the stored command says it was cut"

mkdir real
ln -s real link
sim "$BIN/cprof-run" -q -o link/p.db -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt
assert_eq "$?" 0 "-o through a symlinked directory ($(cat err.txt))"
assert_ge "$(q real/p.db "SELECT count(*) FROM CPROF_API")" 3 "the profile, in the directory the link names"
[ -L link ] || fail "the directory link was replaced"
# the file itself is still never followed
ln -s real/elsewhere.db planted.db
sim "$BIN/cprof-run" -q -o planted.db -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt && fail "a planted link at the profile's name was followed"
[ -e real/elsewhere.db ] && fail "the planted link's target was created"

cat > fds.py <<'PYEOF'
import os, sys
open_fds = []
for fd in (0, 1):
    try:
        os.fstat(fd)
        open_fds.append(str(fd))
    except OSError:
        pass
open(sys.argv[1], "w").write("open: " + " ".join(open_fds) + "\n")
PYEOF
sim "$BIN/cprof-run" -o closed.db -- "$PY" fds.py "$T/fds.txt" <&- >&- 2> err.txt
assert_eq "$?" 0 "stdin and stdout closed ($(cat err.txt))"
[ -e closed.db ] || fail "no profile with stdin and stdout closed"
assert_eq "$(cat fds.txt)" "open: " "the target's fds 0 and 1 (closed, as it was given them)"

# cprof-run killed (SIGKILL, no clean-up of its own): its collector removes the run directory as it ends
mkdir tmp
TMPDIR=$T/tmp LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o k.db -- "$WL/scenarios" steady 200000 > /dev/null 2> err.txt &
run=$!
for _ in $(seq 200); do
	target=$(pgrep -P $run -x scenarios) && break
	sleep 0.02
done
[ -n "$target" ] || fail "no target under cprof-run"
ls tmp | grep -q cprof-run- || fail "no run directory in TMPDIR"
kill -KILL $run
wait $run 2>/dev/null
kill -KILL "$target" 2>/dev/null
for _ in $(seq 200); do
	[ -z "$(ls tmp)" ] && break
	sleep 0.05
done
assert_eq "$(ls tmp)" "" "TMPDIR after cprof-run was killed"
echo OK
