# Issue 7 scenario 18: 10,000 short-lived threads (8 alive at a time, one launch each) -> every launch
# arrives, each under its own thread id, the last ones too (no lost tail: a thread's ring is drained after
# it exits), nothing lost; and no leak: a finished thread's event ring is reused by later threads, so a
# few hundred rings serve 10,000 threads (the flusher lists them at exit with CPROF_DEBUG=3).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
N=10000
export CPROF_EXIT_TIMEOUT_MS=10000 # a loaded machine must not turn into a lost tail here
out=$(CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" manythreads $N 8 2> err.txt) ||
	fail "run failed: $out $(tail -3 err.txt)"
assert_eq "$out" "threads $N" "stdout"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" $((N + 1)) "launches (one per thread, one from main)"
assert_eq "$(q prof.db "SELECT count(DISTINCT tid) FROM LAUNCHES")" $((N + 1)) "threads seen"
assert_eq "$(q prof.db "SELECT lostEvents FROM PROCESSES")" 0 "lost"
assert_eq "$(q prof.db "SELECT eventsRecorded = eventsEmitted FROM PROCESSES")" 1 "recorded = emitted"
rings=$(grep -c "ring tid" err.txt)
echo "$rings event rings for $N threads"
assert_ge "$rings" 1 "rings listed"
[ "$rings" -le 1000 ] || fail "$rings rings for $N threads: finished threads' rings are not reused"
assert_eq "$(meta prof.db complete)" 1 "complete"
echo ok
