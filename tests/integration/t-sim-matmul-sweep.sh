# Issue 3 / must show 1: matmul_sweep under cprof-run on the simulated GPU. The profile holds exactly the
# launched bias kernels, one GEMM kernel per cuBLAS call, every copy and memset; every hooked launch
# joins its kernel record through the external correlation; nothing is lost; it says "simulated GPU".
. "$(dirname "$0")/lib.sh"
need_sim
sim "$BIN/cprof-run" -q -o prof.db -- "$WL/matmul_sweep" --sizes 64,256 --steps 10 --warmup 2 --variant both > out.txt \
	|| fail "matmul_sweep failed: $(cat out.txt)"
sum() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] == k) s += kv[2] } END { print s + 0 }' out.txt; }
bias=$(sum bias_launches); gemms=$(sum gemm_calls)
assert_eq "$bias" 48 "bias launches printed by the workload"
assert_eq "$(q prof.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%bias_add%'")" "$bias" "bias kernels on the GPU"
assert_eq "$(q prof.db "SELECT count(*) FROM KERNELS WHERE name NOT LIKE '%bias_add%'")" "$gemms" "GEMM kernels (one per cuBLAS call)"
assert_eq "$(q prof.db "SELECT count(*) FROM GEMMS")" "$gemms" "cuBLAS calls hooked"
assert_eq "$(q prof.db "SELECT count(*) FROM GEMMS WHERE api='cublasSgemmStridedBatched' AND batch=4")" $((gemms / 2)) "strided-batched calls"
# every hooked GEMM and launch maps to exactly one kernel, and that kernel is the one it asked for
assert_eq "$(q prof.db "SELECT count(*) FROM API_GPU WHERE gpuKind='kernel'")" $((bias + gemms)) "hooked calls joined to kernels"
assert_eq "$(q prof.db "SELECT count(DISTINCT apiId) FROM API_GPU WHERE gpuKind='kernel'")" $((bias + gemms)) "one kernel per call"
assert_eq "$(q prof.db "SELECT count(*) FROM API_GPU g JOIN LAUNCHES l ON l.id = g.apiId WHERE g.name = l.kernelName")" "$bias" "launch joins its own kernel"
assert_eq "$(q prof.db "SELECT count(*) FROM API_GPU WHERE gpuKind='kernel' AND start < apiStart")" 0 "no kernel starts before its launch call"
# copies and memsets: one GPU record per call
assert_eq "$(q prof.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")" "$(q prof.db "SELECT count(*) FROM MEMOPS WHERE class='memcpy'")" "memcpy records"
assert_eq "$(q prof.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET")" "$(q prof.db "SELECT count(*) FROM MEMOPS WHERE class='memset'")" "memset records"
assert_eq "$(q prof.db "SELECT count(*) FROM API_GPU WHERE gpuKind IN ('memcpy','memset')")" "$(q prof.db "SELECT count(*) FROM MEMOPS WHERE class IN ('memcpy','memset')")" "copies joined"
assert_eq "$(q prof.db "SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY")" "$(q prof.db "SELECT sum(bytes) FROM MEMOPS WHERE class='memcpy'")" "bytes copied"
# CUPTI's runtime records include the occupancy queries cuBLAS makes internally, which no hook sees
assert_ge "$(q prof.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaOccupancy%'")" 1 "internal occupancy queries"
assert_eq "$(q prof.db "SELECT count(*) FROM API_CALLS WHERE name LIKE 'cudaOccupancy%'")" 0 "no hooked occupancy call"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='lost_events'")" 0 "lost"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='complete'")" 1 "complete"
assert_eq "$(q prof.db "SELECT code FROM CPROF_STATUS")" cupti-started "CUPTI status"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='simulated_gpu'")" 1 "simulated"
"$BIN/cprof" report prof.db | grep -q "simulated GPU" || fail "report does not say simulated GPU"
echo ok
