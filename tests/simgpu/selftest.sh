#!/bin/sh
# Self-test of the simulated GPU: library ABI (sonames, version nodes, exports, no PLT self-calls) and behaviour.
# usage: selftest.sh BUILD_DIR CUDA_HOME        exits nonzero on the first failed group, listing every failure
set -u
build=${1:-build}
cuda=${2:-/usr/local/cuda}
lib=$build/simgpu/lib
bin=$build/simgpu/test
here=$(dirname "$0")
fails=0

fail() {
	echo "simgpu-test: FAIL: $*" >&2
	fails=$((fails + 1))
}

# Names each library must export (the rest must at least exist in the real library).
req_cudart="cudaGetDeviceCount cudaSetDevice cudaGetDevice cudaGetDeviceProperties cudaDeviceGetAttribute
cudaRuntimeGetVersion cudaDriverGetVersion cudaMalloc cudaFree cudaMallocHost cudaFreeHost cudaMallocAsync
cudaFreeAsync cudaMemcpy cudaMemcpyAsync cudaMemset cudaMemsetAsync cudaStreamCreate cudaStreamCreateWithFlags
cudaStreamDestroy cudaStreamSynchronize cudaStreamWaitEvent cudaEventCreate cudaEventCreateWithFlags
cudaEventRecord cudaEventSynchronize cudaEventElapsedTime cudaEventDestroy cudaDeviceSynchronize cudaDeviceReset
cudaGetLastError cudaPeekAtLastError cudaGetErrorString cudaGetErrorName cudaFuncGetAttributes
cudaOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
cudaLaunchKernel cudaLaunchKernelExC cudaLaunchKernel_ptsz cudaLaunchKernelExC_ptsz cudaMemcpyAsync_ptsz
cudaMemsetAsync_ptsz cudaStreamSynchronize_ptsz cudaGraphLaunch __cudaRegisterFatBinary __cudaRegisterFatBinaryEnd
__cudaUnregisterFatBinary __cudaRegisterFunction __cudaRegisterVar __cudaInitModule __cudaPushCallConfiguration
__cudaPopCallConfiguration __cudaGetKernel __cudaLaunchKernel __cudaLaunchKernel_ptsz"
req_cublas="cublasCreate_v2 cublasDestroy_v2 cublasSetStream_v2 cublasGetStream_v2 cublasSetMathMode
cublasGetMathMode cublasSetWorkspace_v2 cublasSgemm_v2 cublasDgemm_v2 cublasGemmEx cublasSgemmStridedBatched
cublasGemmStridedBatchedEx cublasGemmBatchedEx"
req_cublasLt="cublasLtCreate cublasLtDestroy cublasLtMatmulDescCreate cublasLtMatmulDescDestroy
cublasLtMatmulDescSetAttribute cublasLtMatrixLayoutCreate cublasLtMatrixLayoutDestroy cublasLtMatmulPreferenceCreate
cublasLtMatmulPreferenceDestroy cublasLtMatmulPreferenceSetAttribute cublasLtMatmulAlgoGetHeuristic cublasLtMatmul"
req_cupti="cuptiActivityEnable cuptiActivityDisable cuptiActivityRegisterCallbacks cuptiActivityFlushAll
cuptiActivityGetNextRecord cuptiActivityGetNumDroppedRecords cuptiActivityPushExternalCorrelationId
cuptiActivityPopExternalCorrelationId cuptiGetResultString cuptiGetTimestamp cuptiGetVersion cuptiSubscribe
cuptiUnsubscribe cuptiFinalize cuptiGetCallbackName cuptiGetThreadIdType cuptiSetThreadIdType"

# ------------------------------------------------------------------ ABI of each public library
for name in cudart cublas cublasLt cupti; do
	so=lib$name.so.13
	f=$lib/$so
	[ -f "$f" ] || { fail "$f missing"; continue; }
	soname=$(readelf -d "$f" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
	[ "$soname" = "$so" ] || fail "$so: soname is '$soname'"
	nodes=$(readelf -V "$f" | awk '/Version definition/{d=1} /Version needs/{d=0} d && /Flags: none/ {print $NF}')
	[ "$nodes" = "$so" ] || fail "$so: version nodes '$nodes', want exactly '$so'"
	exports=$(nm -D --defined-only "$f" | awk '$2 != "A" {print $3}')
	bad=$(printf '%s\n' "$exports" | grep -v "@@$so\$")
	[ -z "$bad" ] || fail "$so: exports outside the $so node: $bad"
	names=$(printf '%s\n' "$exports" | sed 's/@@.*//')
	eval req=\$req_$name
	for r in $req; do
		printf '%s\n' "$names" | grep -qx "$r" || fail "$so: does not export $r"
	done
	if [ -f "$cuda/lib64/$so" ]; then
		real=$(nm -D --defined-only "$cuda/lib64/$so" | awk '{print $3}' | sed 's/@.*//')
		for n in $names; do
			printf '%s\n' "$real" | grep -qx "$n" || fail "$so: exports $n, which the real $so does not"
		done
	fi
	# A hooked export must never be reached from inside the simulator: no CUDA-named imports, no such PLT calls.
	imports=$(nm -D --undefined-only "$f" | awk '{print $2}' | grep -E '^(cuda|__cuda|cublas|cupti|cu[A-Z])')
	[ -z "$imports" ] || fail "$so imports CUDA names: $imports"
	plt=$(objdump -d --no-show-raw-insn "$f" | grep -E '(call|jmp)[a-z]* .*<(cuda|__cuda|cublas|cupti|cu[A-Z])[A-Za-z0-9_]*@plt>')
	[ -z "$plt" ] || fail "$so calls exports through the PLT: $plt"
	[ -L "$lib/lib$name.so" ] || fail "lib$name.so symlink missing"
done
# The driver library: unversioned like the real one, only names the real driver (stub) exports.
f=$lib/libcuda.so.1
if [ -f "$f" ]; then
	soname=$(readelf -d "$f" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
	[ "$soname" = libcuda.so.1 ] || fail "libcuda.so.1: soname is '$soname'"
	readelf -V "$f" | grep -q 'Version definition' && fail "libcuda.so.1 defines symbol versions"
	names=$(nm -D --defined-only "$f" | awk '$2 != "A" {print $3}')
	if [ -f "$cuda/lib64/stubs/libcuda.so" ]; then
		real=$(nm -D --defined-only "$cuda/lib64/stubs/libcuda.so" | awk '{print $3}')
		for n in $names; do
			printf '%s\n' "$real" | grep -qx "$n" || fail "libcuda.so.1: exports $n, which the real driver does not"
		done
	fi
	imports=$(nm -D --undefined-only "$f" | awk '{print $2}' | grep -E '^(cuda|__cuda|cublas|cupti|cu[A-Z])')
	[ -z "$imports" ] || fail "libcuda.so.1 imports CUDA names: $imports"
else
	fail "$f missing"
fi
eng=$lib/libsimgpu_engine.so
bad=$(nm -D --defined-only "$eng" | awk '$2 != "A" {print $3}' | grep -v '^simgpu_')
[ -z "$bad" ] || fail "engine exports non-simgpu names: $bad"
imports=$(nm -D --undefined-only "$eng" | awk '{print $2}' | grep -E '^(cuda|__cuda|cublas|cupti|cu[A-Z])')
[ -z "$imports" ] || fail "engine imports CUDA names: $imports"
readelf -d "$lib/libcublas.so.13" | grep -q 'RUNPATH.*\$ORIGIN' || fail "libcublas.so.13 has no \$ORIGIN runpath"

# Every knob is documented with its default.
for k in $(sed -n 's/.*KNOB("\(SIMGPU_[A-Z0-9_]*\)".*/\1/p' "$here/engine.c"); do
	grep -q "$k" "$here/README.md" || fail "README.md does not document $k"
done
[ "$fails" -eq 0 ] || { echo "simgpu-test: $fails ABI failure(s)" >&2; exit 1; }

# ------------------------------------------------------------------ behaviour
run() {
	LD_LIBRARY_PATH=$lib LD_PRELOAD=$bin/libselftest_hook.so "$@"
}
out=$(run "$bin/selftest" 2>&1) || fail "selftest failed:
$out"
echo "$out" | grep -q '^selftest: ok' || fail "selftest did not report ok"

# The test itself must be able to fail: without a driver it has to.
if nd=$(SIMGPU_NO_DRIVER=1 run "$bin/selftest" 2>&1); then
	fail "selftest passed with SIMGPU_NO_DRIVER=1"
fi
echo "$nd" | grep -q 'returned 999' || fail "without a driver CUPTI did not return 999: $nd"

# Launch-bound small steps, GPU-bound large ones, with the default cost model.
b64=$(run "$bin/selftest" busy 64 | sed -n 's/.*busy_pct=\([0-9.]*\).*/\1/p')
b4k=$(run "$bin/selftest" busy 4096 | sed -n 's/.*busy_pct=\([0-9.]*\).*/\1/p')
awk -v b="$b64" 'BEGIN { exit !(b != "" && b < 50) }' || fail "64x64 step GPU busy ${b64}%, want < 50%"
awk -v b="$b4k" 'BEGIN { exit !(b != "" && b > 80) }' || fail "4096x4096 step GPU busy ${b4k}%, want > 80%"

# The seed workload: deterministic output, every size reported, driver errors surfaced.
sweep=$build/tests/matmul_sweep
o1=$(LD_LIBRARY_PATH=$lib "$sweep" --sizes 64,256 --steps 3 --warmup 1 --variant both 2>&1) || fail "matmul_sweep failed: $o1"
o2=$(LD_LIBRARY_PATH=$lib "$sweep" --sizes 64,256 --steps 3 --warmup 1 --variant both 2>&1)
[ "$o1" = "$o2" ] || fail "matmul_sweep output differs between runs"
[ "$(echo "$o1" | grep -c 'gemm_calls=4 bias_launches=4')" -eq 4 ] || fail "matmul_sweep lines: $o1"
if o3=$(SIMGPU_NO_DRIVER=1 LD_LIBRARY_PATH=$lib "$sweep" --sizes 64 --steps 1 2>&1); then
	fail "matmul_sweep succeeded without a driver"
fi
echo "$o3" | grep -q '(35)' || fail "matmul_sweep without a driver did not report error 35: $o3"
# Nothing the simulator prints may pass for a real GPU's output.
o4=$(SIMGPU_VERBOSE=1 LD_LIBRARY_PATH=$lib "$sweep" --sizes 64 --steps 1 2>&1 >/dev/null)
bad=$(echo "$o4" | grep -v '^simgpu (simulated GPU): ')
[ -z "$bad" ] || fail "unmarked simulator output: $bad"

# Driver-API program: cuInit loads CUDA_INJECTION64_PATH, whose CUPTI consumer gets DRIVER + kernel records.
o5=$(CUDA_INJECTION64_PATH=$bin/libselftest_inject.so LD_LIBRARY_PATH=$lib "$build/tests/driver_launch" \
	--steps 50 2>&1) || fail "driver_launch failed: $o5"
echo "$o5" | grep -q 'launches=100 kernels=100 joined=100 memcpys=3 bad=0' || fail "driver records: $o5"
nd=$(echo "$o5" | sed -n 's/.*driver=\([0-9]*\).*/\1/p')
[ "${nd:-0}" -ge 120 ] || fail "only ${nd:-0} DRIVER records: $o5"

if [ "$fails" -ne 0 ]; then
	echo "simgpu-test: $fails failure(s)" >&2
	exit 1
fi
echo "simgpu-test: ok ($(echo "$out" | sed -n 's/^selftest: ok //p'); busy 64: ${b64}%, 4096: ${b4k}%)"
