# Issue 15: torch.profiler (Kineto, CUDA activities) inside a cprof-run on the simulated GPU: both finish,
# cprof-test-timeout: 600
# torch's table keeps its CUDA times, cprof shares CUPTI with it (cupti-shared, issue 27) and its verdict never
# claims "GPU busy 0%". torch.cuda.nvtx ranges are recorded as steps.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
S=5
"$BIN/cprof-run" -q -o prof.db -- "$SIMRUN" "$PY" "$TW" profiler $S > prof.out 2> prof.err; rc=$?
assert_eq "$rc" 0 "exit status ($(tail -2 prof.err))"
grep -q "is not simulated" prof.err && fail "reached a simulator stub: $(grep "is not simulated" prof.err)"
assert_eq "$(cat prof.out)" "profiler steps=$S shape=(64, 64) cuda_time_positive=True" "torch's profiler kept its CUDA times"
grep -q "Self CUDA time total" prof.err || fail "torch's table has no CUDA column"
assert_eq "$(q prof.db "SELECT group_concat(code) FROM (SELECT code FROM CPROF_STATUS ORDER BY timeNs)")" "cupti-started,cupti-shared,cupti-shared" "statuses"
grep -q "cuptiActivityRegisterCallbacks" prof.err || fail "cprof did not say that it shares CUPTI with the program"
assert_eq "$(q prof.db "SELECT count(*) FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE s.value = 'step'")" $S "nvtx ranges"
"$BIN/cprof" report prof.db > r.txt || fail "report"
grep -q "GPU busy 0%" r.txt && fail "verdict claims GPU busy 0%: $(grep Verdict r.txt)"
grep -q "^GPU records: CUPTI shared with the program's profiler: [1-9][0-9]* records handed to it ([1-9][0-9]* kernels), 0 it enabled and did not get" r.txt || fail "report does not say what the program's profiler got: $(grep 'GPU records' r.txt)"
echo ok
