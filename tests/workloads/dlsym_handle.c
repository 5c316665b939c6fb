/* CUDA functions found with dlsym/dlvsym on the libraries' own RTLD_LOCAL handles (as cuda-python and JIT loaders do). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* usage: dlsym_handle N_MEMSET N_VMEMSET N_GEMM [OTHER_LIB [CTOR_LIB]]; prints what it did; exits 1 on any failed step.
 * OTHER_LIB: a library that is not CUDA's but defines cudaMemset (returning 77): its own function is found.
 * CTOR_LIB: a library whose constructor looks cudaMemset up on libcudart's handle while dlopen holds the
 * loader's lock (ctor_memset() returns it); the program calls it once. */
typedef int (*malloc_fn)(void **p, size_t n);
typedef int (*memset_fn)(void *p, int v, size_t n);
typedef int (*free_fn)(void *p);
typedef int (*sync_fn)(void);
typedef int (*create_fn)(void **h);
typedef int (*sgemm_fn)(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *a, int lda,
			const float *b, int ldb, const float *beta, float *c, int ldc);

static void *need(void *p, const char *what)
{
	if (p == NULL) {
		fprintf(stderr, "dlsym_handle: %s: %s\n", what, dlerror());
		exit(1);
	}
	return p;
}

#define CK(call)                                                                  \
	do {                                                                      \
		int r_ = (call);                                                  \
		if (r_ != 0) {                                                    \
			fprintf(stderr, "dlsym_handle: %s failed: %d\n", #call, r_); \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

int main(int argc, char **argv)
{
	int nm = argc > 1 ? atoi(argv[1]) : 3, nv = argc > 2 ? atoi(argv[2]) : 2, ng = argc > 3 ? atoi(argv[3]) : 4, i;
	void *rt = need(dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL), "dlopen libcudart");
	void *bl = need(dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL), "dlopen libcublas");
	malloc_fn cmalloc = (malloc_fn)need(dlsym(rt, "cudaMalloc"), "cudaMalloc");
	memset_fn cmemset = (memset_fn)need(dlsym(rt, "cudaMemset"), "cudaMemset");
	memset_fn vmemset = (memset_fn)need(dlvsym(rt, "cudaMemset", "libcudart.so.13"), "dlvsym cudaMemset");
	free_fn cfree = (free_fn)need(dlsym(rt, "cudaFree"), "cudaFree");
	sync_fn csync = (sync_fn)need(dlsym(rt, "cudaDeviceSynchronize"), "cudaDeviceSynchronize");
	create_fn bcreate = (create_fn)need(dlsym(bl, "cublasCreate_v2"), "cublasCreate_v2");
	sgemm_fn sgemm = (sgemm_fn)need(dlsym(bl, "cublasSgemm_v2"), "cublasSgemm_v2");
	float one = 1, zero = 0;
	void *a, *h;
	const int n = 32;

	/* a name the library lacks still fails, with glibc's error */
	dlerror();
	if (dlsym(rt, "cudaNoSuchFunction") != NULL || dlerror() == NULL) {
		fprintf(stderr, "dlsym_handle: a missing name did not fail\n");
		return 1;
	}
	/* RTLD_NEXT is resolved from this program, not from a preloaded library: the next dlsym after the
	 * program is the first in the search order (a preloaded one if any), which the program's own
	 * reference to dlsym also binds to */
	if (dlsym(RTLD_NEXT, "dlsym") != (void *)&dlsym) {
		fprintf(stderr, "dlsym_handle: dlsym(RTLD_NEXT, \"dlsym\") is not the program's dlsym\n");
		return 1;
	}
	if (argc > 4) {
		void *other = need(dlopen(argv[4], RTLD_NOW | RTLD_LOCAL), "dlopen other library");
		memset_fn omemset = (memset_fn)need(dlsym(other, "cudaMemset"), "other cudaMemset");

		if (omemset(NULL, 0, 0) != 77) {
			fprintf(stderr, "dlsym_handle: another library's cudaMemset was not its own\n");
			return 1;
		}
	}
	CK(cmalloc(&a, 3 * n * n * sizeof(float)));
	for (i = 0; i < nm; i++)
		CK(cmemset(a, 0, n * n * sizeof(float)));
	if (argc > 5) {
		void *ctor = need(dlopen(argv[5], RTLD_NOW | RTLD_LOCAL), "dlopen constructor library");
		memset_fn (*get)(void) = (memset_fn(*)(void))need(dlsym(ctor, "ctor_memset"), "ctor_memset");

		CK(need((void *)get(), "cudaMemset looked up in a constructor") ? get()(a, 0, 4) : 1);
	}
	for (i = 0; i < nv; i++)
		CK(vmemset(a, 0, n * n * sizeof(float)));
	CK(bcreate(&h));
	for (i = 0; i < ng; i++)
		CK(sgemm(h, 0, 0, n, n, n, &one, (float *)a, n, (float *)a + n * n, n, &zero, (float *)a + 2 * n * n, n));
	CK(csync());
	CK(cfree(a));
	printf("memset %d vmemset %d gemm %d\n", nm, nv, ng);
	return 0;
}
