# A producer's wake-up that comes while the flusher is draining is not lost: with the periodic round
# pushed out to 2 s (CPROF_FLUSH_MS), only the rings' own wake-ups drain them; 200k launches/s from two
# threads fill a thread's 16384-event ring in 164 ms, so a flusher that slept on a wake it had missed lost
# 187k-330k of 400k events in 2 s (7 runs in 8 before the fix, 2026-12-01; the test runs 3 s), and one that sees it loses none.
. "$(dirname "$0")/lib.sh"
need_sim
out=$(CPROF_FLUSH_MS=2000 CPROF_NO_CUPTI=1 SIMGPU_LAUNCH_NS=0 sim "$BIN/cprof-run" -o prof.db -- "$WL/scenarios" rate-paced 200000 3 2 2> err.txt) ||
	fail "run failed: $out $(cat err.txt)"
assert_eq "$out" "rate-paced 600001" "stdout"
lost=$(q prof.db "SELECT lostEvents FROM PROCESSES")
recorded=$(q prof.db "SELECT eventsRecorded FROM PROCESSES")
echo "recorded $recorded lost $lost"
assert_eq "$lost" 0 "events lost while the flusher slept through a wake-up"
assert_ge "$recorded" 600001 "every launch recorded"
echo ok
