# Issue 15 item 1: PyTorch's wheels (cudart and CUPTI 13.2) on a machine without a driver. cprof starts at
# cprof-test-timeout: 600
# torch's first CUDA call (a device-count query), records the failed calls, leaves CUPTI alone (the wheel's
# CUPTI overflows its stack when started without a driver), and the verdict says CUDA was unavailable.
. "$(dirname "$0")/lib.sh"
nvidia-smi > /dev/null 2>&1 && skip "a CUDA driver is present: this test is for machines without one"
need_torch
[ -f "$TORCH_LIB/libcupti.so.13" ] || fail "the wheel has no libcupti.so.13 in $TORCH_LIB"

# the hazard is real here: the wheel's CUPTI, asked anything without a driver, dies (or, in a fixed
# release, answers with an error); either way cprof must not call it
"$TORCH_PY" -c 'import ctypes, sys; v = ctypes.c_uint32(); print(ctypes.CDLL(sys.argv[1]).cuptiGetVersion(ctypes.byref(v)))' \
	"$TORCH_LIB/libcupti.so.13" > cupti.out 2>&1
echo "the wheel's cuptiGetVersion without a driver: exit $?, $(tail -1 cupti.out)"

# 1. a program that calls the wheel's cudaMalloc through the global scope (as a linked program would)
cat > ctm.py <<'PY'
import ctypes, os, sys
ctypes.CDLL(os.path.join(sys.argv[1], "libcudart.so.13"), mode=ctypes.RTLD_GLOBAL)
p = ctypes.c_void_p()
print(ctypes.CDLL(None).cudaMalloc(ctypes.byref(p), 1024))
PY
"$TORCH_PY" ctm.py "$TORCH_LIB" > bare.out; bare_rc=$?
"$BIN/cprof-run" -q -o m.db -- "$TORCH_PY" ctm.py "$TORCH_LIB" > prof.out 2> prof.err; rc=$?
assert_eq "$rc" "$bare_rc" "exit status under cprof-run (the wheel's CUPTI must not be started)"
cmp -s bare.out prof.out || fail "stdout differs: $(cat bare.out) vs $(cat prof.out)"
assert_eq "$(cat prof.out)" 35 "cudaMalloc without a driver"
assert_eq "$(q m.db "SELECT returnValue FROM API_CALLS WHERE name = 'cudaMalloc'")" 35 "recorded return code"
assert_eq "$(q m.db "SELECT code FROM CPROF_STATUS")" cupti-no-driver "CUPTI left alone, and why"
assert_eq "$(grep -c 'no CUDA driver' prof.err)" 1 "one line on stderr"
"$BIN/cprof" report m.db > m.txt || fail "report"
assert_match "$(grep '^Verdict' m.txt)" "cuda-unavailable: cudaMalloc returned 35 \(cudaErrorInsufficientDriver\)" "verdict"

# 2. import torch; is_available(): torch's own first calls are device and version queries
cmd='import torch; print(torch.cuda.is_available())'
"$TORCH_PY" -c "$cmd" > tbare.out 2> /dev/null; bare_rc=$?
"$BIN/cprof-run" -q -o t.db -- "$TORCH_PY" -c "$cmd" > tprof.out 2> /dev/null; rc=$?
assert_eq "$rc" "$bare_rc" "torch: exit status"
cmp -s tbare.out tprof.out || fail "torch: stdout differs"
assert_eq "$(cat tprof.out)" False "is_available"
assert_eq "$(q t.db "SELECT count(*) FROM PROCESSES")" 1 "torch: the process is in the profile"
assert_eq "$(q t.db "SELECT returnValue FROM API_CALLS WHERE name = 'cudaGetDeviceCount'")" 35 "cudaGetDeviceCount code"
assert_eq "$(q t.db "SELECT count(*) FROM API_CALLS WHERE returnValue = 0 AND name NOT LIKE 'cuda%GetVersion'")" 0 "no call succeeded"
"$BIN/cprof" report t.db --format json > t.json || fail "report json"
python3 - t.json <<'PY' || fail "torch: JSON verdict"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "cuda-unavailable", d["verdict"]
assert "cudaGetDeviceCount returned 35 (cudaErrorInsufficientDriver)" in d["verdict_line"], d["verdict_line"]
assert d["counts"]["api_calls"] >= 1, d["counts"]
assert "CUPTI" not in d["advice"] and "?" not in d["verdict_line"], d["verdict_line"]
PY
echo ok
