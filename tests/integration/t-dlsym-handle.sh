# Issue 19: a program that finds CUDA functions with dlsym/dlvsym on the libraries' own RTLD_LOCAL handles
# has every call recorded (simulated GPU); RTLD_NEXT still resolves from the program, a missing name still
# fails, another library's function of a hooked name is its own, a lookup made in a library constructor
# (under the loader's lock) is answered, and the program's output is unchanged.
. "$(dirname "$0")/lib.sh"
need_sim
${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -O2 -o dlh "$ROOT/tests/workloads/dlsym_handle.c" -ldl || fail "dlsym_handle does not build"
# named as cuBLAS is, but cudaMemset is a cudart hook: never given for another library's handle
mkdir other
echo 'int cudaMemset(void *p, int v, unsigned long n) { (void)p; (void)v; (void)n; return 77; }' > other.c
${CC:-cc} -shared -fPIC -o other/libcublas.so.13 other.c || fail "other library does not build"
cat > ctor.c <<'EOF'
#include <dlfcn.h>
static void *found;
__attribute__((constructor)) static void look(void)
{
	void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);

	found = h ? dlsym(h, "cudaMemset") : 0;
}
void *ctor_memset(void) { return found; }
EOF
${CC:-cc} -shared -fPIC -o libctor.so ctor.c -ldl || fail "libctor.so does not build"
args="3 2 4 $T/other/libcublas.so.13 $T/libctor.so"
assert_eq "$(sim ./dlh $args)" "memset 3 vmemset 2 gemm 4" "bare run"
sim "$BIN/cprof-run" -q -o p.db -- ./dlh $args > out.txt || fail "profiled run: $(cat out.txt)"
assert_eq "$(cat out.txt)" "memset 3 vmemset 2 gemm 4" "profiled run's output"
calls() { q p.db "SELECT count(*) FROM API_CALLS WHERE name = '$1'"; }
assert_eq "$(calls cudaMalloc)" 1 "cudaMalloc through dlsym"
assert_eq "$(calls cudaMemset)" 6 "cudaMemset through dlsym (3), dlvsym (2) and a constructor's dlsym (1)"
assert_eq "$(calls cublasSgemm_v2)" 4 "cublasSgemm_v2 through dlsym on libcublas"
assert_eq "$(calls cudaDeviceSynchronize)" 1 "cudaDeviceSynchronize"
assert_eq "$(q p.db "SELECT count(*) FROM API_GPU WHERE api = 'cublasSgemm_v2'")" 4 "GEMMs joined to their kernels"
echo ok
