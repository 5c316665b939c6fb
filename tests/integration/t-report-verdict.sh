# Issue 4 / must show 1: matmul_sweep on the simulated GPU: 64x64 only -> overhead-bound, 4096x4096 only
# -> compute-bound, both in one run -> two phases with those verdicts. Also the JSON contract of DESIGN.md.
. "$(dirname "$0")/lib.sh"
need_sim
export SIMGPU_COPY_DATA=0 # timing only: skip moving 64 MiB buffers through this VM's memory
run() { sim "$BIN/cprof-run" -q -o $1.db -- "$WL/matmul_sweep" --sizes $2 --steps 30 > /dev/null || fail "sweep $2"; }
run s64 64
run s4096 4096
run both 64,4096
json() { "$BIN/cprof" report $1.db --format json ${2:-} | python3 -c "import json,sys; d=json.load(sys.stdin); print($3)"; }
assert_eq "$(json s64 '' 'd["verdict"]')" overhead-bound "64x64 verdict"
assert_eq "$(json s64 '' 'd["host_wait_cause"]')" "launch cost inside the CUDA API" "64x64 cause"
assert_eq "$(json s4096 '' 'd["verdict"]')" compute-bound "4096x4096 verdict"
assert_eq "$(json both '' '" ".join(p["verdict"] for p in d["phases"])')" "overhead-bound compute-bound" "phases of 64,4096"
assert_eq "$(json both '' 'd["verdict"]')" mixed "headline of a run whose phases differ"
assert_eq "$(json both '' 'd["phases"][0]["kernels"] + d["phases"][1]["kernels"] >= 100')" True "phases hold the steps"
# the numbers add up: busy + idle = window, less the profiler overhead taken out of idle
json s64 '' 'd["gpu_busy_ns"] + sum(d["idle"].values()) <= d["window_ns"] <= d["gpu_busy_ns"] + sum(d["idle"].values()) + d["profiler_overhead_ns"] + 1' | grep -q True \
	|| fail "busy + idle != window"
# --include-startup puts context creation and warm-up back into the window
a=$(json s4096 '' 'd["window_ns"]'); b=$(json s4096 --include-startup 'd["window_ns"]')
[ "$b" -gt "$a" ] || fail "--include-startup does not widen the window ($a -> $b)"
# thresholds are options
# (compute-bound below it only when the host waited for the GPU longer than the GPU for the host: docs/verdict.md)
assert_eq "$(json s4096 '--compute-pct 99.99' 'd["verdict"] != "compute-bound" or d["gpu_busy_pct"] >= 99.99 or d["queue"]["host_blocked_ns"] > d["queue"]["starved_ns"]')" True "--compute-pct"
assert_eq "$(json s64 '--compute-pct 1' 'd["verdict"]')" compute-bound "--compute-pct 1 makes a 64x64 run compute-bound"
# DESIGN.md's stable keys
"$BIN/cprof" report both.db --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in ["schema", "verdict", "window_ns", "gpu_busy_ns", "gpu_busy_pct", "cpu_api_ns", "gpu_kernel_ns", "idle",
          "counts", "lost_events", "complete", "kernels", "apis", "findings"]:
    assert k in d, k
assert d["schema"] == "cprof.summary/1"
assert set(d["idle"]) >= {"host_wait_ns", "kernel_wait_ns", "other_ns"}
assert set(d["counts"]) >= {"api_calls", "kernels", "memcpys", "memsets", "processes"}
assert d["counts"]["kernels"] == 140, d["counts"]
for k in d["kernels"]:
    assert set(k) >= {"name", "calls", "total_ns", "avg_ns", "min_ns", "max_ns", "std_ns"}, k
assert any(k["name"].startswith("bias_add(") for k in d["kernels"]), "kernel names are demangled"
for f in d["findings"]:
    assert set(f) >= {"id", "severity", "message", "evidence"}, f
assert 0 <= d["gpu_busy_pct"] <= 100
' || fail "JSON contract"
# text: the verdict comes first, as one line
first=$("$BIN/cprof" report s64.db | grep -m1 '^Verdict:')
assert_match "$first" "^Verdict: overhead-bound: GPU busy [0-9]+% of .*median launch call .* vs median kernel .* -> " "verdict line"
"$BIN/cprof" report both.db | grep -q "^Phases" || fail "text report has no phases"
echo ok
