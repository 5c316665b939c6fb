# Issue 19: a program that finds CUDA functions with dlsym/dlvsym on the libraries' own RTLD_LOCAL handles
# has every call recorded (simulated GPU); RTLD_NEXT still resolves from the program, a missing name still
# fails, another library's function of a hooked name is its own, and the program's output is unchanged.
. "$(dirname "$0")/lib.sh"
need_sim
${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -O2 -o dlh "$ROOT/tests/workloads/dlsym_handle.c" -ldl || fail "dlsym_handle does not build"
# named as cuBLAS is, but cudaMemset is a cudart hook: never given for another library's handle
mkdir other
echo 'int cudaMemset(void *p, int v, unsigned long n) { (void)p; (void)v; (void)n; return 77; }' > other.c
${CC:-cc} -shared -fPIC -o other/libcublas.so.13 other.c || fail "other library does not build"
assert_eq "$(sim ./dlh 3 2 4 "$T/other/libcublas.so.13")" "memset 3 vmemset 2 gemm 4" "bare run"
sim "$BIN/cprof-run" -q -o p.db -- ./dlh 3 2 4 "$T/other/libcublas.so.13" > out.txt || fail "profiled run: $(cat out.txt)"
assert_eq "$(cat out.txt)" "memset 3 vmemset 2 gemm 4" "profiled run's output"
calls() { q p.db "SELECT count(*) FROM API_CALLS WHERE name = '$1'"; }
assert_eq "$(calls cudaMalloc)" 1 "cudaMalloc through dlsym"
assert_eq "$(calls cudaMemset)" 5 "cudaMemset through dlsym (3) and dlvsym (2)"
assert_eq "$(calls cublasSgemm_v2)" 4 "cublasSgemm_v2 through dlsym on libcublas"
assert_eq "$(calls cudaDeviceSynchronize)" 1 "cudaDeviceSynchronize"
assert_eq "$(q p.db "SELECT count(*) FROM API_GPU WHERE api = 'cublasSgemm_v2'")" 4 "GEMMs joined to their kernels"
echo ok
