# Issue 27 item 3: the guide's torch.add(torch.matmul(x, w), b) under torch.compile, b shaped like the output:
# cprof-test-timeout: 600
# inductor fuses it into one aten::addmm that copies b into the output (Memcpy DtoD) before each GEMM, and the
# dtod-before-gemm finding counts exactly those copies; the torch-compile-host-cost finding counts the compiled
# calls; cprof diff of the eager run against the compiled one puts the compiled call's host cost beside the
# eager step's host time (text and JSON). (Simulated GPU: kernels do not compute, times are modelled.)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
G=$ROOT/tests/workloads/torch_compile_guide.py
export TORCHINDUCTOR_CACHE_DIR=$T/inductor TRITON_CACHE_DIR=$T/triton
S=20
for m in eager compiled; do
	"$SIMRUN" "$PY" "$G" $m $S > $m.plain 2> $m.plain.err || fail "$m without cprof ($(tail -3 $m.plain.err))"
	assert_eq "$(cat $m.plain)" "$m steps=$S shape=(64, 64)" "$m output without cprof"
	"$BIN/cprof-run" -q --torch-ops -o $m.db -- "$SIMRUN" "$PY" "$G" $m $S > $m.out 2> $m.err; rc=$?
	assert_eq "$rc" 0 "$m: exit status under cprof-run ($(tail -3 $m.err))"
	cmp -s $m.plain $m.out || fail "$m: stdout differs under cprof-run: $(cat $m.out)"
	grep -q "is not simulated" $m.err && fail "$m: reached a simulator stub: $(grep "is not simulated" $m.err)"
	"$BIN/cprof" report --format json $m.db > $m.json || fail "$m: report json"
done
# 3 warm-up calls and 20 steps: one 64x64 float copy (16384 bytes) before each GEMM, in aten::addmm
assert_eq "$(q compiled.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 8")" 23 "compiled: DtoD copies"
python3 - eager.json compiled.json <<'PY' || fail "findings"
import json, sys
eager, comp = (json.load(open(p)) for p in sys.argv[1:3])
f = {x["id"]: x for x in comp["findings"]}
assert "dtod-before-gemm" in f, sorted(f)
assert f["dtod-before-gemm"]["evidence"].startswith("23 device-to-device copies (376832 bytes) each directly before a GEMM kernel"), f["dtod-before-gemm"]
h = f["torch-compile-host-cost"]["evidence"]
assert h.startswith("23 calls of 1 compiled regions, 22 after each region's first; per call (median): Dynamo cache lookup "), h
assert "; 1 kernels per call, " in h, h
e = {x["id"] for x in eager["findings"]}
assert not e & {"dtod-before-gemm", "torch-compile-host-cost", "torch-compile-recompiles"}, sorted(e)
PY
"$BIN/cprof" diff eager.db compiled.db > d.txt || fail "diff"
grep -q "^  compiled call on the host *- -> [0-9.]* [mun]*s   (new: Dynamo cache lookup [0-9.]* [mun]*s + compiled region [0-9.]* [mun]*s, median of 22 calls; 1 kernels, " d.txt ||
	fail "diff: no compiled-call line: $(cat d.txt)"
grep -q "^  eager host time per step [0-9.]* [mun]*s (old, no compiled region) vs the compiled call's [0-9.]* [mun]*s on the host: [0-9.]*x$" d.txt ||
	fail "diff: no eager-step line: $(cat d.txt)"
"$BIN/cprof" diff --format json eager.db compiled.db > d.json || fail "diff json"
python3 - d.json <<'PY' || fail "diff json"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["torch_compile_call_host_ns"]
assert c["old"] is None and c["new"]["calls"] == 22 and c["new"]["kernels"] == 1, c
assert abs(c["new"]["total"] - c["new"]["cache_lookup"] - c["new"]["compiled_region"]) <= 1, c
assert c["new"]["compiled_region"] > 0 and d["median_step_ns"]["old"] > 0, d
PY
echo ok
