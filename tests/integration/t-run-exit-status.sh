# cprof-run exits with the target's status: its code, 128+N when killed by signal N, 127 / 126 when
# the command is missing / not executable, 2 for bad usage; an existing profile is never overwritten.
. "$(dirname "$0")/lib.sh"
"$BIN/cprof-run" -q -o a.db -- sh -c 'exit 42'; assert_eq $? 42 "exit code"
"$BIN/cprof-run" -q -o b.db -- sh -c 'kill -TERM $$'; assert_eq $? 143 "killed by SIGTERM"
"$BIN/cprof-run" -q -o c.db -- "$WL/scenarios" signal 6 2>/dev/null; assert_eq $? 134 "abort()"
"$BIN/cprof-run" -q -o d.db -- ./no-such-command 2>err.txt; assert_eq $? 127 "missing command"
grep -q "no-such-command" err.txt || fail "no message for a missing command"
touch notexec
"$BIN/cprof-run" -q -o e.db -- ./notexec 2>/dev/null; assert_eq $? 126 "not executable"
"$BIN/cprof-run" 2>/dev/null; assert_eq $? 2 "no command"
"$BIN/cprof-run" --bogus -- true 2>/dev/null; assert_eq $? 2 "unknown option"
echo precious > keep.db
"$BIN/cprof-run" -q -o keep.db -- true 2>err.txt; assert_eq $? 2 "refuses to overwrite"
assert_eq "$(cat keep.db)" precious "existing file untouched"
"$BIN/cprof-run" -q -f -o keep.db -- true; assert_eq $? 0 "-f overwrites"
"$BIN/cprof" info keep.db >/dev/null || fail "overwritten profile unreadable"
[ "$(stat -c %a a.db)" = 600 ] || fail "profile not private: $(stat -c %a a.db)"
# default name: cprof.db, then cprof-1.db
"$BIN/cprof-run" -q -- true && "$BIN/cprof-run" -q -- true
[ -f cprof.db ] && [ -f cprof-1.db ] || fail "default profile names"
# signals sent to cprof-run reach the target
"$BIN/cprof-run" -q -o s.db -- sh -c 'trap "exit 9" TERM; while :; do sleep 0.05; done' &
pid=$!; sleep 0.5; kill -TERM $pid; wait $pid; assert_eq $? 9 "SIGTERM forwarded"
# the summary goes to stderr, never stdout
out=$("$BIN/cprof-run" -o t.db -- echo hello 2>err.txt)
assert_eq "$out" hello "stdout is the target's only"
grep -q "cprof: profile" err.txt || fail "no summary on stderr"
echo ok
