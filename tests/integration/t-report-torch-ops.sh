# Issue 23, the rules on a hand-made profile (tests/golden/torch-ops.sql): per op Self CPU = its range less its
# child ops', Self CUDA = GPU work launched in it and in no child op, totals over the op and its children, ops on
# two threads kept apart, an op nested in one of the same name counted twice, a user's range and a never-ended op
# not counted; the verdict names the ops; the trace's cpu_op spans and the External id of the calls and GPU work
# inside them.
. "$(dirname "$0")/lib.sh"
"$BIN/cprof-run" -q -o f.db -- /bin/true || fail "empty profile"
sqlite3 f.db < "$ROOT/tests/golden/torch-ops.sql" > load.txt 2>&1 || fail "torch-ops.sql does not load: $(head -3 load.txt)"
"$BIN/cprof" report f.db --by op --format csv > ops.csv || fail "report --by op --format csv"
cat > want.csv <<'EOF'
name,calls,self_cpu_ns,cpu_total_ns,self_cuda_ns,cuda_total_ns,gpu_ops
aten::linear,1,6900,30000,3500,8000,1
aten::addmm,1,23000,23000,4500,4500,1
aten::copy_,1,18100,18100,2000,2000,1
aten::sum,2,10000,14500,0,0,0
aten::add,1,5600,5600,500,500,1
aten::empty,1,100,100,0,0,0
EOF
diff want.csv ops.csv > d.txt || fail "op table: $(cat d.txt)"
"$BIN/cprof" report f.db --by op > ops.txt || fail "report --by op"
grep -q "^ATen ops" ops.txt || fail "no ATen ops table"
grep -q "^ aten::sum  .* 2  " ops.txt || fail "text row of aten::sum: $(grep aten::sum ops.txt)"
grep -q "^ step " ops.txt && fail "a user's range in the op table"
grep -q "^Self CPU time total: 63.700 us" ops.txt || fail "Self CPU total: $(grep 'Self CPU time total' ops.txt)"
grep -q "^Self CUDA time total: 10.500 us" ops.txt || fail "Self CUDA total: $(grep 'Self CUDA time total' ops.txt)"
"$BIN/cprof" report f.db > all.txt || fail "report"
grep -q "^Verdict: overhead-bound" all.txt || fail "fixture verdict: $(grep Verdict all.txt)"
grep -q "^  host time in ATen ops 45.600 us (67% of the window), most of it in aten::addmm Self CPU 23.000 us in 1 call, aten::sum Self CPU 10.000 us in 2 calls, aten::linear Self CPU 6900 ns in 1 call$" all.txt ||
	fail "op evidence: $(grep 'host time in ATen ops' all.txt)"
"$BIN/cprof" report f.db --format json > r.json || fail "json"
python3 - r.json <<'EOF' || fail "JSON torch_ops"
import json, sys
d = json.load(open(sys.argv[1]))
ops = {o["name"]: o for o in d["torch_ops"]}
assert ops["aten::linear"] == {"name": "aten::linear", "calls": 1, "self_cpu_ns": 6900, "cpu_total_ns": 30000,
                               "self_cuda_ns": 3500, "cuda_total_ns": 8000, "gpu_ops": 1}, ops
assert "aten::addmm" in d["torch_ops_evidence"], d["torch_ops_evidence"]
EOF
"$BIN/cprof" trace f.db -o f.json || fail "trace"
python3 - f.json <<'EOF' || fail "trace cpu_op spans"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
cats = {}
for e in ev:
    if e.get("cat") in ("cpu_op", "user_annotation", "gpu_user_annotation"):
        cats.setdefault(e["cat"], []).append(e["name"])
assert sorted(cats["cpu_op"]) == ["aten::add", "aten::addmm", "aten::copy_", "aten::empty", "aten::linear",
                                  "aten::mm", "aten::sum", "aten::sum"], cats
assert cats["user_annotation"] == ["step"] and cats["gpu_user_annotation"] == ["step"], cats
op_id = {e["name"]: e["args"]["External id"] for e in ev if e.get("cat") == "cpu_op"}
ext = {(e["cat"], e["name"]): e["args"].get("External id") for e in ev
       if e.get("cat") in ("cuda_runtime", "kernel", "gpu_memcpy", "gpu_memset")}
# the innermost ended op that was open at the call
assert ext[("cuda_runtime", "cublasSgemm_v2")] == op_id["aten::addmm"], ext
assert ext[("kernel", "ampere_sgemm_32x32_sliced1x4_nn")] == op_id["aten::addmm"], ext
assert ext[("cuda_runtime", "cudaMemcpy")] == op_id["aten::copy_"], ext
assert ext[("gpu_memset", "Memset (Unknown)")] == op_id["aten::add"], ext
launches = sorted(e["args"]["External id"] for e in ev if e.get("name") == "__cudaLaunchKernel")
assert launches == [op_id["aten::linear"], 106], launches  # the last launch is in no op: its own id
EOF
echo ok
