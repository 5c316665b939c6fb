# Issue 7 scenario 12: SIGINT / SIGTERM sent to cprof-run -> forwarded to the target; cprof-run's status
# is the target's (130 for a target SIGINT killed, 9 for one that handles SIGTERM and exits 9: what the
# bare command gives); the profile is finalised and marked interrupted (META interrupted = the signal,
# incomplete with the reason, shown by cprof info and report).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
export SIMGPU_LAUNCH_NS=100000 # 10000 launches a second: a light profile to report on
set -m # background jobs in their own process groups, with SIGINT not ignored, as from a terminal
# ready FILE: waits until the target said it is ready (its signal dispositions are set)
ready() { for i in $(seq 500); do grep -q ready "$1" 2>/dev/null && return; sleep 0.01; done; fail "target not ready"; }
# interrupt SIG MODE: the bare status, then cprof-run's, each sent SIG once the target is running
interrupt() {
	local sig=$1 pid
	LD_LIBRARY_PATH=$SIMLIB "$WL/scenarios" $2 > bare.out &
	pid=$!; ready bare.out; sleep 0.1; kill -$sig $pid; wait $pid; bare=$?
	LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -o prof.db -- "$WL/scenarios" $2 > out.txt 2> err.txt &
	pid=$!; ready out.txt; sleep 0.1; kill -$sig $pid; wait $pid; rc=$?
}
interrupt INT waitsig
assert_eq "$bare" 130 "bare status after SIGINT"
assert_eq "$rc" "$bare" "cprof-run's status after SIGINT"
assert_eq "$(meta prof.db interrupted)" 2 "interrupted by SIGINT"
assert_eq "$(meta prof.db finalised)" 1 "finalised"
assert_eq "$(meta prof.db complete)" 0 "complete"
assert_eq "$(meta prof.db term_signal)" 2 "the target died of SIGINT"
assert_match "$(meta prof.db incomplete_reason)" "^interrupted by SIGINT" "reason"
grep -q "INCOMPLETE: interrupted by SIGINT" err.txt || fail "summary: $(cat err.txt)"
assert_ge "$(q prof.db "SELECT count(*) FROM LAUNCHES")" 1 "launches before the interrupt"
"$BIN/cprof" report prof.db | grep -q "INCOMPLETE - interrupted by SIGINT" || fail "report does not say interrupted"
rm -f prof.db*

interrupt TERM graceful
assert_eq "$bare" 9 "bare status after SIGTERM (handled)"
assert_eq "$rc" "$bare" "cprof-run's status after SIGTERM"
assert_eq "$(tail -1 out.txt)" graceful "the target handled SIGTERM"
assert_eq "$(meta prof.db interrupted)" 15 "interrupted by SIGTERM"
assert_eq "$(meta prof.db finalised)" 1 "finalised"
assert_eq "$(meta prof.db exit_status)" 9 "exit status in the profile"
assert_eq "$(q prof.db "SELECT byeReason FROM PROCESSES")" exit "the target said goodbye"
assert_match "$(meta prof.db incomplete_reason)" "^interrupted by SIGTERM" "reason"
echo ok
