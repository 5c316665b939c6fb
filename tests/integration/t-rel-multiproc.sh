# Issue 7 scenario 11: many processes writing one FIFO at once (16 children released together, 3000
# launches each, frames of up to 4096 bytes = PIPE_BUF) -> no torn or interleaved frame: the collector
# rejects none, no producer has a gap in its frame sequence, every child's launches all arrive.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
P=16 N=3000
export CPROF_EXIT_TIMEOUT_MS=10000 # a loaded machine must not turn into lost goodbyes here
out=$(sim "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" multi $P $N) || fail "run failed: $out"
assert_eq "$out" "children $P bad 0" "children's status"
assert_eq "$(q prof.db "SELECT count(*) FROM PROCESSES")" $((P + 1)) "processes"
assert_eq "$(meta prof.db bad_frames)" 0 "malformed frames"
assert_eq "$(meta prof.db dropped_frames)" 0 "dropped frames"
assert_eq "$(q prof.db "SELECT count(*) FROM DIAGNOSTICS")" 0 "diagnostics"
assert_eq "$(q prof.db "SELECT sum(seqGaps) FROM PROCESSES")" 0 "gaps in any producer's frame sequence"
assert_ge "$(q prof.db "SELECT min(frames) FROM PROCESSES WHERE forked = 1")" $((N / 42)) "frames per child"
assert_eq "$(q prof.db "SELECT count(*) FROM PROCESSES WHERE eventsRecorded + lostEvents != eventsEmitted")" 0 "recorded + lost = emitted"
assert_eq "$(q prof.db "SELECT count(*) FROM (SELECT l.processId FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId
	WHERE p.forked = 1 AND l.kernelName = '_Z6kern_bPi' GROUP BY l.processId HAVING count(*) = $N)")" $P "every child's launches"
assert_eq "$(meta prof.db complete)" 1 "complete"
echo ok
