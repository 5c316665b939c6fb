# Issue 27: torch.compile (Triton kernels through the driver API, a GEMM with an epilogue, mode="reduce-overhead"
# cprof-test-timeout: 600
# with CUDA graphs) on the simulated GPU under cprof-run: the same output as without it; per block, as many kernels
# as torch.profiler counts over the same block in a separate run; every Triton launch hooked with its Python call
# site; the compile and graph findings with exact counts. (Simulated GPU: kernels do not compute.)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
TC=$ROOT/tests/workloads/torch_compile.py
# inductor's and Triton's caches of this test only: no state shared with other runs on the machine
export TORCHINDUCTOR_CACHE_DIR=$T/inductor TRITON_CACHE_DIR=$T/triton
S=5
# a run without cprof first: it compiles and fills the caches (torch.profiler's count of the reduce-overhead block
# came out 0 once when its own run was the one compiling: a gap of the simulator with Kineto, not cprof's)
"$SIMRUN" "$PY" "$TC" run $S > plain.out 2> plain.err || fail "plain run ($(tail -3 plain.err))"
grep -q "is not simulated" plain.err && fail "reached a simulator stub: $(grep "is not simulated" plain.err)"
printf 'pointwise shape=(1024,)\nreduction shape=(128,)\nguide shape=(64, 256)\nreduce-overhead shape=(64, 128)\nrecompiled done\n' > want.out
cmp -s want.out plain.out || fail "workload output without cprof: $(cat plain.out)"
"$SIMRUN" "$PY" "$TC" count $S > count.out 2> count.err || fail "torch.profiler run ($(tail -3 count.err))"
cmp -s plain.out count.out || fail "stdout differs under torch.profiler"
"$BIN/cprof-run" -q --torch-ops -o c.db -- "$SIMRUN" "$PY" "$TC" run $S > prof.out 2> prof.err; rc=$?
assert_eq "$rc" 0 "exit status under cprof-run ($(tail -3 prof.err))"
cmp -s plain.out prof.out || fail "stdout differs under cprof-run: $(diff plain.out prof.out | head -5)"
grep -q "is not simulated" prof.err && fail "reached a simulator stub: $(grep "is not simulated" prof.err)"
assert_eq "$(q c.db "SELECT value FROM META WHERE key='lost_events'")" 0 "lost events"

# kernels launched (runtime, driver or graph launch) inside each block's NVTX range, against torch.profiler's
for b in pointwise reduction guide reduce-overhead; do
	want=$(sed -n "s/^torch.profiler kernels block:$b //p" count.err)
	[ -n "$want" ] || fail "torch.profiler printed no count for $b"
	got=$(q c.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN (SELECT processId, correlationId, start
		FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT processId, correlationId, start FROM CUPTI_ACTIVITY_KIND_DRIVER) r
		ON r.processId = k.processId AND r.correlationId = k.correlationId JOIN NVTX_EVENTS n ON n.processId = k.processId
		JOIN StringIds s ON s.id = n.textId WHERE s.value = 'block:$b' AND r.start BETWEEN n.start AND n.end")
	assert_eq "$got" "$want" "kernels in block:$b (torch.profiler's count)"
done

# every driver launch is hooked (no CUPTI-only one), named, with a stack reaching the compiled function's line
nk=$(q c.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_DRIVER d ON d.processId = k.processId
	AND d.correlationId = k.correlationId JOIN StringIds s ON s.id = k.nameId WHERE s.value LIKE 'triton%'")
assert_ge "$nk" 20 "Triton kernels"
assert_eq "$(q c.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_DRIVER d ON d.processId = k.processId
	AND d.correlationId = k.correlationId JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = d.processId
	AND e.correlationId = d.correlationId AND e.externalKind = 5 JOIN CPROF_API a ON a.processId = e.processId
	AND a.correlationId = e.externalId JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cuLaunchKernel'
	AND a.kernelNameId = k.nameId")" "$nk" "Triton kernels launched by a hooked cuLaunchKernel of the same name"
nl=$(q c.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cuLaunchKernel'")
assert_eq "$(q c.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cuLaunchKernel'
	AND EXISTS (SELECT 1 FROM CPROF_STACK_FRAMES f JOIN StringIds fi ON fi.id = f.fileId JOIN StringIds fu ON fu.id = f.funcId
	WHERE f.processId = a.processId AND f.stackId = a.stackId AND f.kind = 'python' AND fi.value = '$TC'
	AND fu.value IN ('pointwise', 'reduction', 'guide', 'graphed'))")" "$nl" "cuLaunchKernel calls whose stack has the compiled function's frame"
"$BIN/cprof" report c.db --by callsite > site.txt || fail "report --by callsite"
grep -q "torch_compile.py:14 pointwise " site.txt || fail "no call site torch_compile.py:14 pointwise: $(grep torch_compile site.txt | head -5)"
grep -q "<string>\|$TORCHINDUCTOR_CACHE_DIR" site.txt && fail "generated code given as a call site: $(grep "<string>\|$TORCHINDUCTOR_CACHE_DIR" site.txt | head -2)"

# the findings, with the counts the script's structure fixes: 4 functions x (3 warm-up + $S) calls, two more of
# pointwise at the end, the second with a new shape (frame 0 compiled again: 0/1)
"$BIN/cprof" report c.db --format json > r.json || fail "report json"
python3 - "$nk" $S > f.txt <<'PY' || fail "findings: $(cat f.txt)"
import json, sys
nk, s = int(sys.argv[1]), int(sys.argv[2])
f = {x["id"]: x for x in json.load(open("r.json"))["findings"]}
ev = lambda i: f[i]["evidence"] if i in f else sys.exit("no finding %s: %s" % (i, sorted(f)))
e = ev("driver-api-kernels")
assert e.startswith("%d kernels launched with cuLaunchKernel* (%d Triton kernels), %d by a hooked call:" % (nk, nk, nk)), e
assert "their launch calls are hooked" in f["driver-api-kernels"]["message"], f["driver-api-kernels"]["message"]
e = ev("torch-compile-host-cost")
assert e.startswith("%d calls of 5 compiled regions, %d after each region's first;" % (4 * (3 + s) + 2, 4 * (3 + s) + 2 - 5)), e
assert ev("torch-compile-recompiles") == "1 recompilations: Torch-Compiled Region 0/1", ev("torch-compile-recompiles")
e = ev("cuda-graphs")
assert "kernels ran in graphs (2 per replay)" in e, e
print("ok")
PY
# the graph's numbers against the profile's own records
rep=$(q c.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaGraphLaunch' AND a.returnValue = 0")
assert_ge "$rep" $S "graph replays"
grep -q "$rep replays; $((2 * rep)) kernels ran in graphs (2 per replay)" r.json || fail "cuda-graphs evidence: $(grep -o '[0-9]* graphs captured[^"]*' r.json)"

# torch.cuda.CUDAGraph: 250 replays of a 2-kernel graph, capture kept out of the steady window, no launch time for
# graph kernels, no advice to capture a graph
"$BIN/cprof-run" -q -o g.db -- "$SIMRUN" "$PY" "$TW" graph 250 > g.out 2> g.err || fail "graph run ($(tail -2 g.err))"
"$BIN/cprof" report g.db --format json > g.json || fail "graph report"
python3 - > gf.txt <<'PY' || fail "graph findings: $(cat gf.txt)"
import json
r = json.load(open("g.json"))
f = {x["id"]: x for x in r["findings"]}
e = f["cuda-graphs"]["evidence"]
assert e.startswith("1 graphs captured, 1 instantiated, 250 replays; 500 kernels ran in graphs (2 per replay);"), e
assert "capture a CUDA graph" not in r["verdict_line"], r["verdict_line"]
assert "sgemm" not in f.get("tiny-kernels", {}).get("evidence", ""), f["tiny-kernels"]
print("ok")
PY
echo ok
