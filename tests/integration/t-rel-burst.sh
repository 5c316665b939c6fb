# Issue 7 scenario 3: a burst from 8 threads far above what the collector can take (launches that cost
# nothing on the simulated GPU: millions per second, while the collector is stopped) -> drops, all counted: recorded + lost = emitted =
# the calls made; the loss is shown by cprof report, in the trace metadata, in cprof info, and makes
# cprof check --require-complete fail (exit 3).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
N=50000
# The burst must overflow whatever the machine and cprof's speed: the collector is stopped before it starts
# (the target sleeps a second first) and goes on 3 s later, so the 400,000 events meet 8 rings of 16,384 and
# a full pipe; the exit waits for it (CPROF_EXIT_TIMEOUT_MS), so each thread's ring still arrives. (Left to
# race, a faster flusher and a quiet machine once stored them all: 0 lost.)
CPROF_NO_CUPTI=1 CPROF_EXIT_TIMEOUT_MS=20000 SIMGPU_LAUNCH_NS=0 LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -o prof.db -- sh -c "sleep 1; exec '$WL/scenarios' burst 8 $N" \
	> out.txt 2> err.txt &
run=$!
cd_pid=$(collector_of $run) || fail "collector not found"
# stopped once the target runs (cprof-run starts it only when the collector said it was ready)
for i in $(seq 100); do pgrep -P $run -x sh > /dev/null && break; sleep 0.02; done
pgrep -P $run -x sh > /dev/null || fail "the target did not start"
kill -STOP "$cd_pid"
sleep 3
kill -CONT "$cd_pid"
wait $run || fail "run failed: $(cat out.txt err.txt)"
out=$(cat out.txt)
assert_eq "$out" "launches $((8 * N + 1))" "stdout"
calls=$((8 * N + 2)) # and one __cudaGetKernel
emitted=$(q prof.db "SELECT eventsEmitted FROM PROCESSES")
recorded=$(q prof.db "SELECT eventsRecorded FROM PROCESSES")
lost=$(q prof.db "SELECT lostEvents FROM PROCESSES")
echo "calls $calls emitted $emitted recorded $recorded lost $lost"
assert_eq "$emitted" "$calls" "emitted = calls the program made"
assert_eq "$((recorded + lost))" "$emitted" "recorded + lost = emitted"
assert_eq "$(q prof.db "SELECT count(*) FROM CPROF_API")" "$recorded" "rows stored = recorded"
assert_ge "$lost" 1 "a burst this large loses events"
assert_eq "$(q prof.db "SELECT count(DISTINCT tid) FROM CPROF_API")" 9 "threads seen"
# shown everywhere
grep -q "$lost lost events, INCOMPLETE: events were lost" err.txt || fail "cprof-run's summary: $(cat err.txt)"
"$BIN/cprof" report prof.db > report.txt || fail "report failed"
grep -q "lost events: $lost .*INCOMPLETE - events were lost" report.txt || fail "text report: $(head -5 report.txt)"
"$BIN/cprof" trace prof.db -o trace.json || fail "trace failed"
grep -q "\"cprof\": {\"lost_events\": $lost, \"lost_events_lower_bound\": false, \"complete\": false" trace.json || fail "trace metadata: $(grep -o '"cprof": {[^}]*}' trace.json)"
"$BIN/cprof" check prof.db --require-complete > check.txt; assert_eq $? 3 "cprof check --require-complete"
grep -q "INCOMPLETE" check.txt || fail "check says why: $(cat check.txt)"
echo ok
