# Issue 15: functions the simulator does not implement are generated stubs: each returns its API's
# "not supported" code every time, names itself once on stderr, and is exported under the library's
# version node; build/simgpu/coverage.txt counts hand-written functions and stubs.
. "$(dirname "$0")/lib.sh"
need_sim
cov=$BUILD/simgpu/coverage.txt
[ -f "$cov" ] || fail "no $cov"
hand=$(awk '$1 == "total" { print $2 }' "$cov"); stubs=$(awk '$1 == "total" { print $4 }' "$cov")
assert_ge "$hand" 150 "hand-written functions"
assert_ge "$stubs" 1000 "generated stubs"
# a stub is in the generated source, not the hand-written one, and exported with its version node
grep -q '^SG_STUB(cudaArrayGetInfo, 801)$' "$BUILD/simgpu/gen/cudart_stubs.c" || fail "cudaArrayGetInfo is not a stub"
grep -q 'cudaArrayGetInfo' "$ROOT/tests/simgpu/cudart.c" && fail "cudaArrayGetInfo is hand-written: pick another stub for this test"
nm -D --defined-only "$SIMLIB/libcudart.so.13" | grep -q ' cudaArrayGetInfo@@libcudart.so.13$' || fail "stub not under libcudart.so.13"
nm -D --defined-only "$SIMLIB/libcublas.so.13" | grep -q ' cublasSsyr2k_v2@@libcublas.so.13$' || fail "cuBLAS stub not under libcublas.so.13"
# hand-written functions are not stubs
grep -q '^SG_STUB(cudaMalloc,' "$BUILD/simgpu/gen/cudart_stubs.c" && fail "cudaMalloc generated as a stub"
cat > stub.py <<'PY'
import ctypes, sys
rt = ctypes.CDLL(sys.argv[1] + "/libcudart.so.13")
blas = ctypes.CDLL(sys.argv[1] + "/libcublas.so.13")
codes = [rt.cudaArrayGetInfo(None, None, None, None) for _ in range(3)]
codes += [blas.cublasSsyr2k_v2(None) for _ in range(2)]
print(codes)
PY
python3 stub.py "$SIMLIB" > out.txt 2> err.txt || fail "stub calls: $(cat err.txt)"
assert_eq "$(cat out.txt)" "[801, 801, 801, 15, 15]" "stub return codes"
assert_eq "$(grep -c 'cudaArrayGetInfo is not simulated, returned 801' err.txt)" 1 "cudart stub named once"
assert_eq "$(grep -c 'cublasSsyr2k_v2 is not simulated, returned 15' err.txt)" 1 "cuBLAS stub named once"
assert_eq "$(wc -l < err.txt)" 2 "nothing else on stderr"
echo ok
