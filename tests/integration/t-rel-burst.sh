# Issue 7 scenario 3: a burst from 8 threads far above what the collector can store (launches that cost
# nothing on the simulated GPU: millions per second) -> drops, all counted: recorded + lost = emitted =
# the calls made; the loss is shown by cprof report, in the trace metadata, in cprof info, and makes
# cprof check --require-complete fail (exit 3).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
N=50000
out=$(CPROF_NO_CUPTI=1 SIMGPU_LAUNCH_NS=0 sim "$BIN/cprof-run" -o prof.db -- "$WL/scenarios" burst 8 $N 2> err.txt) ||
	fail "run failed: $out $(cat err.txt)"
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
grep -q "\"cprof\": {\"lost_events\": $lost, \"complete\": false" trace.json || fail "trace metadata: $(grep -o '"cprof": {[^}]*}' trace.json)"
"$BIN/cprof" check prof.db --require-complete > check.txt; assert_eq $? 3 "cprof check --require-complete"
grep -q "INCOMPLETE" check.txt || fail "check says why: $(cat check.txt)"
echo ok
