# Issue 23: cprof-run --torch-ops (and CPROF_TORCH_OPS=1) records PyTorch 2.15's ATen ops from an unmodified program
# cprof-test-timeout: 600
# on the simulated GPU: per-op counts equal torch.profiler's key_averages(), Self CPU <= CPU total, aten::mm's CUDA
# time is its GEMM kernels'; stdout unchanged; no ops without the switch; a too-old torch is named once on stderr
# and the run goes on; a program that never imports torch sees the same sys.path and modules.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
[ -f "$BUILD/lib/cprof/python/sitecustomize.py" ] || fail "no $BUILD/lib/cprof/python/sitecustomize.py"
S=300
opcsv() { "$BIN/cprof" report "$1" --by op --format csv || fail "report --by op $1"; }
field() { awk -F, -v n="$2" -v c="$3" '$1 == n { print $c }' "$1"; } # file op column

# the seed's loop, with and without the switch; stdout must be the plain run's
"$SIMRUN" "$PY" "$TW" seed 64 $S > plain.out 2> plain.err || fail "plain run: $(tail -2 plain.err)"
"$BIN/cprof-run" -q -o ops.db --torch-ops -- "$SIMRUN" "$PY" "$TW" seed 64 $S > ops.out 2> ops.err; rc=$?
assert_eq "$rc" 0 "exit status with --torch-ops ($(tail -2 ops.err))"
cmp -s plain.out ops.out || fail "stdout differs with --torch-ops: $(cat ops.out)"
grep -q "cprof: --torch-ops" ops.err && fail "torch 2.15 said to be unsupported: $(grep 'cprof: --torch-ops' ops.err)"
grep -q "Leaked callback" ops.err && fail "the op callbacks were left registered at exit"
opcsv ops.db > ops.csv
for op in aten::matmul aten::mm aten::add; do
	assert_eq "$(field ops.csv $op 2)" $S "calls of $op"
done
# torch.profiler's own counts, run separately (CPU activity only), for every op name
"$SIMRUN" "$PY" "$TW" opcounts seed $S 2> k.err | grep -v '^seed ' | sort > torch.counts || fail "opcounts: $(tail -2 k.err)"
assert_ge "$(wc -l < torch.counts)" 6 "ops in torch.profiler's table"
tail -n +2 ops.csv | cut -d, -f1,2 | sort > cprof.counts
diff torch.counts cprof.counts > counts.diff || fail "op counts differ from torch.profiler's key_averages(): $(cat counts.diff)"
awk -F, 'NR > 1 && ($3 <= 0 || $3 > $4 || $5 > $6) { print; bad = 1 } END { exit bad }' ops.csv > bad.txt ||
	fail "Self CPU not in (0, CPU total] or Self CUDA > CUDA total: $(cat bad.txt)"
gemm=$(q ops.db "SELECT sum(end - start) FROM KERNELS WHERE name LIKE '%gemm%'")
assert_ge "$gemm" 1 "GEMM kernel time"
assert_eq "$(field ops.csv aten::mm 6)" "$gemm" "aten::mm CUDA total vs its GEMM kernels"
assert_eq "$(field ops.csv aten::mm 5)" "$gemm" "aten::mm Self CUDA vs its GEMM kernels"
assert_eq "$(field ops.csv aten::mm 7)" $S "GPU ops launched inside aten::mm"
assert_eq "$(field ops.csv aten::matmul 5)" 0 "aten::matmul Self CUDA (its GEMMs are aten::mm's)"
assert_eq "$(field ops.csv aten::matmul 6)" "$gemm" "aten::matmul CUDA total"
"$BIN/cprof" report ops.db --by op > byop.txt || fail "report --by op"
grep -q "^ATen ops" byop.txt || fail "no ATen ops table: $(head -20 byop.txt)"
grep -q "seq = \|op_id = " byop.txt && fail "torch's decorations left in op names"
assert_eq "$(q ops.db "SELECT count(DISTINCT textId) FROM NVTX_EVENTS")" 6 "one string per op name, not per call"
"$BIN/cprof" report ops.db --format json | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
ops = {o["name"]: o for o in d["torch_ops"]}
assert ops["aten::add"]["calls"] == '$S', ops
' || fail "JSON torch_ops"

# the verdict of this overhead-bound loop names the ops whose host time the window was
"$BIN/cprof" report ops.db > all.txt || fail "report"
grep -q "^Verdict: overhead-bound" all.txt || fail "verdict: $(grep Verdict all.txt)"
grep -Eq "^  host time in ATen ops .* most of it in aten::(mm|add|matmul) Self CPU" all.txt ||
	fail "no op evidence under the verdict: $(sed -n '/^Verdict/,/^$/p' all.txt)"
# the trace: one cpu_op span per op call; the calls and kernels inside aten::mm carry its External id (Kineto)
"$BIN/cprof" trace ops.db -o ops.json || fail "trace"
"$PY" - ops.json $S <<'PYEOF' || fail "cpu_op spans in the trace"
import collections, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
n = int(sys.argv[2])
ops = [e for e in ev if e.get("cat") == "cpu_op"]
count = collections.Counter(e["name"] for e in ops)
assert count["aten::mm"] == n and count["aten::add"] == n and count["aten::matmul"] == n, count
assert not [e for e in ev if e.get("cat") == "user_annotation"], "op ranges also written as user annotations"
by_ext = collections.defaultdict(list)
for e in ev:
    if e.get("cat") in ("cuda_runtime", "kernel"):
        by_ext[e["args"].get("External id")].append(e)
linked = 0
for op in ops:
    if op["name"] == "aten::mm":
        kernels = [e for e in by_ext[op["args"]["External id"]] if e["cat"] == "kernel"]
        assert len(kernels) == 1 and "gemm" in kernels[0]["name"], (op, kernels)
        runtime = [e for e in by_ext[op["args"]["External id"]] if e["cat"] == "cuda_runtime"]
        assert any(e["name"] == "cublasGemmEx" for e in runtime), runtime
        assert all(op["ts"] <= e["ts"] <= op["ts"] + op["dur"] for e in runtime), (op, runtime)
        linked += 1
assert linked == n, linked
PYEOF

# without the switch: no op ranges, and the same stdout
"$BIN/cprof-run" -q -o plain.db -- "$SIMRUN" "$PY" "$TW" seed 64 $S > off.out 2> off.err || fail "run without the switch"
cmp -s plain.out off.out || fail "stdout differs without the switch"
assert_eq "$(q plain.db "SELECT count(*) FROM NVTX_EVENTS")" 0 "NVTX ranges without --torch-ops"

# a training loop, switched on from the environment (launchers): forward, backward and optimizer ops per step
L=20
CPROF_TORCH_OPS=1 "$BIN/cprof-run" -q -o train.db -- "$SIMRUN" "$PY" "$TW" linear $L > train.out 2> train.err ||
	fail "training loop with CPROF_TORCH_OPS=1: $(tail -2 train.err)"
assert_eq "$(cat train.out)" "linear steps=$L grad=(128, 256)" "training loop output"
opcsv train.db > train.csv
for op in aten::linear aten::addmm aten::mm AddmmBackward0 Optimizer.step#SGD.step Optimizer.zero_grad#SGD.zero_grad; do
	assert_eq "$(field train.csv "$op" 2)" $L "calls of $op per training run"
done
# the backward ops run on autograd's own thread: they are recorded there too
assert_ge "$(q train.db "SELECT count(DISTINCT tid) FROM NVTX_EVENTS")" 2 "threads with op ranges (main + autograd)"

# --steps and nvtx:NAME match PyTorch's step ranges as the report names them: its NVTX text is "ProfilerStep#2, op_id =
# 9" (neither window opened on it until 2026-12-06). One GEMM a step; step 3 of the report is ProfilerStep#2
cat > steps.py <<'EOF'
import torch
x = torch.randn(64, 64, device="cuda")
for i in range(6):
    with torch.autograd.profiler.record_function("ProfilerStep#%d" % i):
        y = x @ x
torch.cuda.synchronize()
EOF
for r in "--steps 3:4 2 ProfilerStep#2" "--capture-range nvtx:ProfilerStep#4 1 ProfilerStep#4"; do
	set -- $r
	"$BIN/cprof-run" -q -f -o steps.db --torch-ops "$1" "$2" -- "$SIMRUN" "$PY" steps.py > steps.out 2> steps.err ||
		fail "$1 $2: $(tail -2 steps.err)"
	assert_eq "$(q steps.db "SELECT count(*) FROM CPROF_WINDOWS")/$(q steps.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%gemm%'")" \
		"1/$3" "$1 $2: windows / GEMM kernels recorded"
	q steps.db "SELECT why FROM CPROF_WINDOWS" | grep -q "$4" || fail "$1 $2: the window's why: $(q steps.db "SELECT why FROM CPROF_WINDOWS")"
done

# a fake torch too old for the method: one line on stderr, the program runs on; the user's sitecustomize still runs
mkdir -p old/torch
echo '__version__ = "1.2.0"' > old/torch/__init__.py
echo 'import sys; sys.stderr.write("user sitecustomize ran\n")' > old/sitecustomize.py
cat > old.py <<'EOF'
import sys
import torch
print("torch", torch.__version__, any(p.endswith("cprof/python") for p in sys.path))
EOF
PYTHONPATH=$T/old "$BIN/cprof-run" -q -o old.db --torch-ops -- "$PY" old.py > old.out 2> old.err; rc=$?
assert_eq "$rc" 0 "exit status with an old torch ($(cat old.err))"
assert_eq "$(cat old.out)" "torch 1.2.0 False" "program output with an old torch"
assert_eq "$(grep -c 'cprof: --torch-ops: no ATen op ranges from torch 1.2.0' old.err)" 1 "one line naming the old torch"
assert_eq "$(grep -c 'user sitecustomize ran' old.err)" 1 "the user's own sitecustomize ran"

# a program that never imports torch sees what it sees without cprof
cat > plainpy.py <<'EOF'
import sys
print(sys.path)
print(sorted(m for m in sys.modules if "torch" in m or "cprof" in m))
EOF
"$PY" plainpy.py > np.plain 2>&1
"$BIN/cprof-run" -q -o np.db --torch-ops -- "$PY" plainpy.py > np.ops 2> np.err || fail "no-torch program: $(cat np.err)"
diff np.plain np.ops > np.diff || fail "a program without torch sees a difference: $(cat np.diff)"
[ -s np.err ] && fail "stderr of a program without torch: $(cat np.err)"
echo ok
