# Issue 2 / must show 3: N launches from 2 threads on the simulated GPU -> exactly N launch events, named.
. "$(dirname "$0")/lib.sh"
need_sim
# 10000 fits the rings and the pipe even if the collector stalls, so the count is exact on a slow machine;
# the second thread starts before the first hooked call, racing the library's lazy start
N=10000
out=$(sim "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" threads $N) || fail "run failed: $out"
assert_eq "$out" "threads launched $N" "stdout"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" $N "launch events"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES WHERE kernelName='_Z6kern_aPi'")" $((N / 2)) "kern_a launches"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES WHERE kernelName='_Z6kern_bPi'")" $((N - N / 2)) "kern_b launches"
assert_eq "$(q prof.db "SELECT count(DISTINCT tid) FROM LAUNCHES")" 2 "launching threads"
# nothing else lost silently: one __cudaGetKernel per launch site and the final synchronize
assert_eq "$(q prof.db "SELECT count(*) FROM CPROF_API")" $((N + 3)) "all events"
assert_eq "$(q prof.db "SELECT eventsEmitted - eventsRecorded - lostEvents FROM PROCESSES")" 0 "emitted = recorded + lost"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES WHERE returnValue != 0")" 0 "simulated launches succeed"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='lost_events'")" 0 "lost"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='complete'")" 1 "complete"
# correlation ids are unique in the process
assert_eq "$(q prof.db "SELECT count(DISTINCT correlationId) FROM CPROF_API")" "$(q prof.db "SELECT count(*) FROM CPROF_API")" "unique correlation ids"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='simulated_gpu'")" 1 "profile says simulated"
"$BIN/cprof" report prof.db | grep -q "simulated GPU" || fail "text report does not say simulated GPU"
"$BIN/cprof" report prof.db --format json | grep -q '"simulated_gpu":true' || fail "JSON does not say simulated"
echo ok
