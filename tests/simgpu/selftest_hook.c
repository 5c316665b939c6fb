/* Self-test preload: counts calls that reach cudart/cuBLAS exports, as a profiler's hooks would see them. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
			       cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
				    cudaStream_t stream);
long selftest_hook_count(const char *name);

enum {
	H_cudaLaunchKernel,
	H_cudaLaunchKernel_ptsz,
	H_cudaLaunchKernelExC,
	H___cudaLaunchKernel,
	H___cudaLaunchKernel_ptsz,
	H_cudaOccupancyMaxActiveBlocksPerMultiprocessor,
	H_cudaMalloc,
	H_cudaMemcpy,
	H_cublasSgemm_v2,
	H_COUNT
};

static const char *const g_names[H_COUNT] = {
	"cudaLaunchKernel",
	"cudaLaunchKernel_ptsz",
	"cudaLaunchKernelExC",
	"__cudaLaunchKernel",
	"__cudaLaunchKernel_ptsz",
	"cudaOccupancyMaxActiveBlocksPerMultiprocessor",
	"cudaMalloc",
	"cudaMemcpy",
	"cublasSgemm_v2",
};

static atomic_long g_counts[H_COUNT];

long selftest_hook_count(const char *name)
{
	for (int i = 0; i < H_COUNT; i++)
		if (!strcmp(name, g_names[i]))
			return atomic_load(&g_counts[i]);
	return -1;
}

/* Forward the way the design says a profiler must: the versioned symbol of the next object. */
static void *next(int id, const char *version)
{
	void *p = dlvsym(RTLD_NEXT, g_names[id], version);
	if (!p) {
		fprintf(stderr, "selftest_hook: no %s@%s\n", g_names[id], version);
		abort();
	}
	atomic_fetch_add(&g_counts[id], 1);
	return p;
}

#define RT "libcudart.so.13"

cudaError_t cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s)
{
	cudaError_t (*f)(const void *, dim3, dim3, void **, size_t, cudaStream_t) = next(H_cudaLaunchKernel, RT);
	return f(func, g, b, args, smem, s);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s)
{
	cudaError_t (*f)(const void *, dim3, dim3, void **, size_t, cudaStream_t) = next(H_cudaLaunchKernel_ptsz, RT);
	return f(func, g, b, args, smem, s);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	cudaError_t (*f)(const cudaLaunchConfig_t *, const void *, void **) = next(H_cudaLaunchKernelExC, RT);
	return f(config, func, args);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s)
{
	cudaError_t (*f)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t) = next(H___cudaLaunchKernel, RT);
	return f(k, g, b, args, smem, s);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s)
{
	cudaError_t (*f)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t) =
		next(H___cudaLaunchKernel_ptsz, RT);
	return f(k, g, b, args, smem, s);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int bs, size_t smem)
{
	cudaError_t (*f)(int *, const void *, int, size_t) = next(H_cudaOccupancyMaxActiveBlocksPerMultiprocessor, RT);
	return f(n, func, bs, smem);
}

cudaError_t cudaMalloc(void **p, size_t size)
{
	cudaError_t (*f)(void **, size_t) = next(H_cudaMalloc, RT);
	return f(p, size);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	cudaError_t (*f)(void *, const void *, size_t, enum cudaMemcpyKind) = next(H_cudaMemcpy, RT);
	return f(dst, src, count, kind);
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
			      const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta,
			      float *C, int ldc)
{
	cublasStatus_t (*f)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float *,
			    const float *, int, const float *, int, const float *, float *, int) =
		next(H_cublasSgemm_v2, "libcublas.so.13");
	return f(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
