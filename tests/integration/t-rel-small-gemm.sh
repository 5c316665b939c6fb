# Issue 16 / must show: the simulated small-GEMM loop (a cuBLAS GEMM and a bias kernel per step: each launch
# an API event, a kernel, a runtime record and an external correlation) at a size that fits the suite loses
# nothing, and every hooked launch and GEMM is joined to its kernel. The run outpaces SQLite (the spool lags
# behind and catches up after the exit): the collector before the spool lost 2426 of its 220k records here.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
STEPS=20000
SIMGPU_COPY_DATA=0 sim "$BIN/cprof-run" -o prof.db -- "$WL/matmul_sweep" --sizes 64 --steps $STEPS --warmup 0 \
	> out.txt 2> err.txt || fail "matmul_sweep failed: $(cat out.txt err.txt)"
echo "$(q prof.db "SELECT group_concat(key || '=' || value, ' ') FROM META WHERE key LIKE 'lost%'
	OR key IN ('events', 'gpu_records', 'spool_peak_lag_bytes', 'catchup_ns')")"
bias=$(grep -o 'bias_launches=[0-9]*' out.txt | cut -d= -f2); gemms=$(grep -o 'gemm_calls=[0-9]*' out.txt | cut -d= -f2)
assert_eq "$bias" $STEPS "bias launches printed by the workload"
assert_eq "$(meta prof.db lost_events)" 0 "lost"
assert_eq "$(meta prof.db complete)" 1 "complete"
assert_eq "$(q prof.db "SELECT count(*) FROM KERNELS")" $((bias + gemms)) "kernels on the GPU"
assert_eq "$(q prof.db "SELECT count(*) FROM API_GPU WHERE gpuKind='kernel'")" $((bias + gemms)) "hooked calls joined to kernels"
assert_eq "$(q prof.db "SELECT count(DISTINCT apiId) FROM API_GPU WHERE gpuKind='kernel'")" $((bias + gemms)) "one kernel per call"
assert_eq "$(q prof.db "SELECT count(*) FROM API_GPU g JOIN LAUNCHES l ON l.id = g.apiId WHERE g.name = l.kernelName")" "$bias" "launch joins its own kernel"
echo ok
