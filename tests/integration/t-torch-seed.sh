# Issue 15: the seed's loop, torch.add(torch.matmul(x, w), b), in PyTorch 2.15 from PyPI on the simulated GPU
# cprof-test-timeout: 600
# under cprof-run. 64x64 is overhead-bound, 4096x4096 compute-bound; exactly one GEMM and one add kernel per
# step; stdout and exit status are those of the plain simulated run. (Simulated GPU: kernels do not compute.)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
check() { # n steps verdict
	"$SIMRUN" "$PY" "$TW" seed "$1" "$2" > plain.out 2> plain.err; prc=$?
	"$BIN/cprof-run" -q -o "p$1.db" -- "$SIMRUN" "$PY" "$TW" seed "$1" "$2" > prof.out 2> prof.err; rc=$?
	assert_eq "$rc" "$prc" "exit status at $1 (plain run: $(tail -2 plain.err))"
	assert_eq "$rc" 0 "exit status at $1"
	cmp -s plain.out prof.out || fail "stdout differs at $1: $(cat prof.out)"
	grep -q "is not simulated" prof.err && fail "reached a simulator stub: $(grep "is not simulated" prof.err)"
	assert_eq "$(cat prof.out)" "seed n=$1 steps=$2 shape=($1, $1)" "workload output"
	# torch.ones x3 fill once each, then per step one GEMM (cuBLAS) and one broadcast add
	assert_eq "$(q "p$1.db" "SELECT count(*) FROM KERNELS WHERE name LIKE '%gemm%'")" "$2" "GEMM kernels at $1"
	assert_eq "$(q "p$1.db" "SELECT count(*) FROM KERNELS WHERE name LIKE '%18elementwise_kernel%CUDAFunctor_add%'")" "$2" "add kernels at $1"
	assert_eq "$(q "p$1.db" "SELECT count(*) FROM KERNELS")" $((2 * $2 + 3)) "all kernels at $1"
	assert_eq "$(q "p$1.db" "SELECT count(*) FROM GEMMS WHERE m = $1 AND n = $1 AND k = $1")" "$2" "hooked GEMMs at $1"
	assert_eq "$(q "p$1.db" "SELECT value FROM META WHERE key='lost_events'")" 0 "lost at $1"
	"$BIN/cprof" report "p$1.db" > "r$1.txt" || fail "report $1"
	grep -q "^Verdict: $3" "r$1.txt" || fail "verdict at $1: $(grep Verdict "r$1.txt")"
	grep -q "simulated GPU" "r$1.txt" || fail "report does not say simulated GPU"
}
check 64 30 overhead-bound
check 4096 30 compute-bound
echo ok
