# Issue 15: PyTorch 2.15 on the simulated GPU under cprof-run: nn.Linear forward/backward/SGD (the chain
# cprof-test-timeout: 600
# aten::linear -> aten::addmm -> cublasLtMatmul on the launching stacks; the backward GEMMs on torch's
# autograd thread are counted), and CUDA graph replay (the graph's kernels once per replay, with graph ids).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
S=6
"$SIMRUN" "$PY" "$TW" linear $S > plain.out 2> plain.err || fail "plain run: $(tail -2 plain.err)"
"$BIN/cprof-run" -q --stacks all -o lin.db -- "$SIMRUN" "$PY" "$TW" linear $S > prof.out 2> prof.err || fail "cprof-run linear"
cmp -s plain.out prof.out || fail "stdout differs: $(cat prof.out)"
grep -q "is not simulated" prof.err && fail "reached a simulator stub: $(grep "is not simulated" prof.err)"
# forward: one cuBLASLt GEMM with the bias epilogue per step; backward: one weight-gradient GEMM per step
assert_eq "$(q lin.db "SELECT count(*) FROM GEMMS WHERE api='cublasLtMatmul'")" $S "forward GEMMs"
assert_eq "$(q lin.db "SELECT count(*) FROM GEMMS WHERE api='cublasGemmEx'")" $S "backward GEMMs"
assert_eq "$(q lin.db "SELECT count(DISTINCT tid) FROM GEMMS")" 2 "forward and backward GEMMs on two threads"
assert_eq "$(q lin.db "SELECT count(*) FROM GEMMS g JOIN GEMMS f ON f.tid = g.tid WHERE g.api='cublasGemmEx' AND f.api='cublasLtMatmul'")" 0 "backward GEMMs not on the forward thread"
assert_eq "$(q lin.db "SELECT count(*) FROM KERNELS WHERE name LIKE 'nvjet%bias%'")" $S "forward GEMM kernels"
assert_eq "$(q lin.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%sgemm%'")" $S "backward GEMM kernels"
"$BIN/cprof" report lin.db --format json > r.json || fail "report json"
py() { python3 -c "import json,sys; d=json.load(open('r.json')); $1"; }
assert_eq "$(py "print([(c['chain'], c['gpu_ops']) for c in d['chains'] if c['kernel'].startswith('nvjet')])")" \
	"[('aten::linear → aten::addmm → cublasLtMatmul', $S)]" "forward chain"
assert_eq "$(py "print([(c['chain'], c['gpu_ops']) for c in d['chains'] if 'sgemm' in c['kernel']])")" \
	"[('aten::mm → cublasGemmEx', $S)]" "backward chain (autograd thread)"

# CUDA graph: captured once (matmul + add), replayed R times; each replay's kernels counted once
R=5
"$SIMRUN" "$PY" "$TW" graph $R > gplain.out 2> gplain.err || fail "plain graph run: $(tail -2 gplain.err)"
"$BIN/cprof-run" -q -o g.db -- "$SIMRUN" "$PY" "$TW" graph $R > gprof.out 2> gprof.err || fail "cprof-run graph"
cmp -s gplain.out gprof.out || fail "graph stdout differs: $(cat gprof.out)"
grep -q "is not simulated" gprof.err && fail "reached a simulator stub: $(grep "is not simulated" gprof.err)"
assert_eq "$(q g.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0")" $((2 * R)) "replayed kernels"
assert_eq "$(q g.db "SELECT count(DISTINCT graphNodeId) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0")" 2 "graph nodes"
assert_eq "$(q g.db "SELECT count(DISTINCT correlationId) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0")" $R "one correlation per replay"
# warm-up (2 steps on a side stream) ran eagerly; the captured step launched nothing
assert_eq "$(q g.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId = 0 AND (nameId IN (SELECT id FROM StringIds WHERE value LIKE '%gemm%'))")" 2 "eager GEMMs"
echo ok
