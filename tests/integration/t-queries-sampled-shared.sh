# The occupancy queries' CUPTI records stay on while the program's own CUPTI client shares cprof's session: Kineto
# (torch.profiler) keeps them, and the copies it gets are cprof's records. torch.profiler on around 1,500 eager steps
# (a GEMM each) under cprof-run: no queries-sampled status, one occupancy record a GEMM in cprof's profile.
# (Simulated GPU.)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
"$BIN/cprof-run" -q -f -o shared.db -- "$SIMRUN" "$PY" "$ROOT/tests/bench/torch_loop.py" eager --steps 1500 --torch-profiler \
	> out.txt 2> err.txt || fail "cprof-run torch_loop.py --torch-profiler: $(tail -3 err.txt)"
g=$(q shared.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cublasGemmEx'")
o=$(q shared.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaOccupancy%'")
echo "shared: $g GEMM calls, $o occupancy records"
[ "$(q shared.db "SELECT count(*) FROM CPROF_STATUS WHERE code = 'cupti-shared'")" -ge 1 ] ||
	fail "torch.profiler did not share cprof's session: the case this test is for did not happen"
[ "$g" -ge 1500 ] || fail "$g GEMM calls recorded, want >= 1500"
assert_eq "$(q shared.db "SELECT count(*) FROM CPROF_STATUS WHERE code = 'queries-sampled'")" 0 "queries-sampled while shared"
assert_eq "$o" "$g" "occupancy records while shared, one per GEMM call"
echo ok
