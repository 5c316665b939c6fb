/* Hooks on libcudart.so.13 entry points: time each call, keep its arguments, forward it unchanged. */
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#define PR_FMT "cprof: cudart"
#include "common/log.h"
#include "preload/hook.h"

#define CUDART "libcudart.so.13"

/* Entry points nvcc-generated code and per-thread-stream builds use; not all are in the public headers. */
extern cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
				      size_t sharedMem, cudaStream_t stream);
extern cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
					   size_t sharedMem, cudaStream_t stream);
extern cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
extern void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
				   const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
				   dim3 *bDim, dim3 *gDim, int *wSize);
extern cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
					 size_t sharedMem, cudaStream_t stream);
extern cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args);
extern cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
						    void **args, size_t sharedMem, cudaStream_t stream);
extern cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
extern cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
					cudaStream_t stream);
extern cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream);
extern cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);

/* What a hook returns when the real function is nowhere: an error, never a crash. */
#define NO_REAL cudaErrorSharedObjectSymbolNotFound

static inline void fill_launch(struct cprof_wire_api *ev, const void *key, dim3 g, dim3 b, size_t shmem,
			       cudaStream_t stream)
{
	/* the name is looked up by the flusher: a lookup in a 4 MiB table is a cache miss we keep off the
	 * launching thread */
	ev->flags |= CPROF_API_F_KERNEL_KEY;
	ev->ptr = (uintptr_t)key;
	ev->stream = (uintptr_t)stream;
	ev->arg[CPROF_ARG_GRID_X] = g.x;
	ev->arg[CPROF_ARG_GRID_Y] = g.y;
	ev->arg[CPROF_ARG_GRID_Z] = g.z;
	ev->arg[CPROF_ARG_BLOCK_X] = b.x;
	ev->arg[CPROF_ARG_BLOCK_Y] = b.y;
	ev->arg[CPROF_ARG_BLOCK_Z] = b.z;
	ev->arg[CPROF_ARG_SHMEM] = (uint32_t)shmem;
}

/* A launch-shaped hook: (func, grid, block, args, shmem, stream). */
#define HOOK_LAUNCH(sym, keytype)                                                                    \
	CPROF_EXPORT cudaError_t sym(keytype func, dim3 gridDim, dim3 blockDim, void **args,         \
				     size_t sharedMem, cudaStream_t stream)                          \
	{                                                                                            \
		__typeof__(&sym) real = CPROF_REAL(sym, CUDART);                                     \
		struct cprof_wire_api ev = { 0 };                                                    \
		struct cprof_call c;                                                                 \
		cudaError_t ret;                                                                     \
                                                                                                     \
		if (unlikely(real == NULL))                                                          \
			return NO_REAL;                                                              \
		if (!cprof_enter(&c, CPROF_API_##sym))                                             \
			return CPROF_PASS(CPROF_API_##sym, real(func, gridDim, blockDim, args, sharedMem, stream)); \
		ret = real(func, gridDim, blockDim, args, sharedMem, stream);                        \
		fill_launch(&ev, (const void *)func, gridDim, blockDim, sharedMem, stream);          \
		cprof_leave(&c, &ev, CPROF_API_##sym, ret);                                          \
		return ret;                                                                          \
	}

HOOK_LAUNCH(__cudaLaunchKernel, cudaKernel_t)
HOOK_LAUNCH(__cudaLaunchKernel_ptsz, cudaKernel_t)
HOOK_LAUNCH(cudaLaunchKernel, const void *)
HOOK_LAUNCH(cudaLaunchKernel_ptsz, const void *)
HOOK_LAUNCH(cudaLaunchCooperativeKernel, const void *)
HOOK_LAUNCH(cudaLaunchCooperativeKernel_ptsz, const void *)

#define HOOK_LAUNCH_EXC(sym)                                                                         \
	CPROF_EXPORT cudaError_t sym(const cudaLaunchConfig_t *config, const void *func, void **args) \
	{                                                                                            \
		__typeof__(&sym) real = CPROF_REAL(sym, CUDART);                                     \
		struct cprof_wire_api ev = { 0 };                                                    \
		struct cprof_call c;                                                                 \
		cudaError_t ret;                                                                     \
                                                                                                     \
		if (unlikely(real == NULL))                                                          \
			return NO_REAL;                                                              \
		if (!cprof_enter(&c, CPROF_API_##sym))                                             \
			return CPROF_PASS(CPROF_API_##sym, real(config, func, args));                \
		ret = real(config, func, args);                                                      \
		if (config)                                                                          \
			fill_launch(&ev, func, config->gridDim, config->blockDim,                    \
				    config->dynamicSmemBytes, config->stream);                       \
		cprof_leave(&c, &ev, CPROF_API_##sym, ret);                                          \
		return ret;                                                                          \
	}

HOOK_LAUNCH_EXC(cudaLaunchKernelExC)
HOOK_LAUNCH_EXC(cudaLaunchKernelExC_ptsz)

#define HOOK CPROF_HOOK

HOOK(cudaError_t, cudaGraphLaunch, CUDART, NO_REAL, (cudaGraphExec_t g, cudaStream_t s), (g, s),
     { ev.ptr = (uintptr_t)g; ev.stream = (uintptr_t)s; })
HOOK(cudaError_t, cudaGraphLaunch_ptsz, CUDART, NO_REAL, (cudaGraphExec_t g, cudaStream_t s), (g, s),
     { ev.ptr = (uintptr_t)g; ev.stream = (uintptr_t)s; })

/* memory */
HOOK(cudaError_t, cudaMalloc, CUDART, NO_REAL, (void **p, size_t size), (p, size),
     { ev.bytes = size; ev.ptr = (ret == cudaSuccess && p) ? (uintptr_t)*p : 0; })
HOOK(cudaError_t, cudaFree, CUDART, NO_REAL, (void *p), (p), { ev.ptr = (uintptr_t)p; })
HOOK(cudaError_t, cudaMallocHost, CUDART, NO_REAL, (void **p, size_t size), (p, size),
     { ev.bytes = size; ev.ptr = (ret == cudaSuccess && p) ? (uintptr_t)*p : 0; })
HOOK(cudaError_t, cudaFreeHost, CUDART, NO_REAL, (void *p), (p), { ev.ptr = (uintptr_t)p; })
HOOK(cudaError_t, cudaMallocAsync, CUDART, NO_REAL, (void **p, size_t size, cudaStream_t s), (p, size, s),
     { ev.bytes = size; ev.stream = (uintptr_t)s; ev.ptr = (ret == cudaSuccess && p) ? (uintptr_t)*p : 0; })
HOOK(cudaError_t, cudaFreeAsync, CUDART, NO_REAL, (void *p, cudaStream_t s), (p, s),
     { ev.ptr = (uintptr_t)p; ev.stream = (uintptr_t)s; })

/* copies and memsets */
HOOK(cudaError_t, cudaMemcpy, CUDART, NO_REAL, (void *dst, const void *src, size_t n, enum cudaMemcpyKind k),
     (dst, src, n, k), { ev.bytes = n; ev.arg[CPROF_ARG_KIND] = k; })
HOOK(cudaError_t, cudaMemcpyAsync, CUDART, NO_REAL,
     (void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s), (dst, src, n, k, s),
     { ev.bytes = n; ev.arg[CPROF_ARG_KIND] = k; ev.stream = (uintptr_t)s; })
HOOK(cudaError_t, cudaMemcpyAsync_ptsz, CUDART, NO_REAL,
     (void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s), (dst, src, n, k, s),
     { ev.bytes = n; ev.arg[CPROF_ARG_KIND] = k; ev.stream = (uintptr_t)s; })
HOOK(cudaError_t, cudaMemset, CUDART, NO_REAL, (void *p, int v, size_t n), (p, v, n),
     { ev.bytes = n; ev.ptr = (uintptr_t)p; ev.arg[CPROF_ARG_VALUE] = (uint32_t)v; })
HOOK(cudaError_t, cudaMemsetAsync, CUDART, NO_REAL, (void *p, int v, size_t n, cudaStream_t s), (p, v, n, s),
     { ev.bytes = n; ev.ptr = (uintptr_t)p; ev.arg[CPROF_ARG_VALUE] = (uint32_t)v; ev.stream = (uintptr_t)s; })
HOOK(cudaError_t, cudaMemsetAsync_ptsz, CUDART, NO_REAL, (void *p, int v, size_t n, cudaStream_t s),
     (p, v, n, s),
     { ev.bytes = n; ev.ptr = (uintptr_t)p; ev.arg[CPROF_ARG_VALUE] = (uint32_t)v; ev.stream = (uintptr_t)s; })

/* synchronisation */
HOOK(cudaError_t, cudaDeviceSynchronize, CUDART, NO_REAL, (void), (), {})
HOOK(cudaError_t, cudaStreamSynchronize, CUDART, NO_REAL, (cudaStream_t s), (s), { ev.stream = (uintptr_t)s; })
HOOK(cudaError_t, cudaStreamSynchronize_ptsz, CUDART, NO_REAL, (cudaStream_t s), (s),
     { ev.stream = (uintptr_t)s; })
HOOK(cudaError_t, cudaEventSynchronize, CUDART, NO_REAL, (cudaEvent_t e), (e), { ev.ptr = (uintptr_t)e; })
HOOK(cudaError_t, cudaStreamWaitEvent, CUDART, NO_REAL, (cudaStream_t s, cudaEvent_t e, unsigned int f),
     (s, e, f), { ev.stream = (uintptr_t)s; ev.ptr = (uintptr_t)e; ev.arg[0] = f; })

/* start-up, version and device queries: cheap (no stack), but recorded with their return codes, so that a
 * run where CUDA never came up says which call failed and how; the pure queries only until CUPTI is on
 * (CPROF_HOOK_QUERY): from then on CUPTI's runtime records carry them */
HOOK(cudaError_t, cudaGetDeviceCount, CUDART, NO_REAL, (int *n), (n),
     { ev.arg[0] = (ret == cudaSuccess && n) ? (uint32_t)*n : 0; })
CPROF_HOOK_QUERY(cudaError_t, cudaGetDevice, CUDART, NO_REAL, (int *d), (d),
     { ev.arg[0] = (ret == cudaSuccess && d) ? (uint32_t)*d : 0; })
HOOK(cudaError_t, cudaSetDevice, CUDART, NO_REAL, (int d), (d), { ev.arg[0] = (uint32_t)d; })
HOOK(cudaError_t, cudaInitDevice, CUDART, NO_REAL, (int d, unsigned int df, unsigned int f), (d, df, f),
     { ev.arg[0] = (uint32_t)d; ev.arg[1] = df; ev.arg[2] = f; })
HOOK(cudaError_t, cudaSetDeviceFlags, CUDART, NO_REAL, (unsigned int f), (f), { ev.arg[0] = f; })
CPROF_HOOK_QUERY(cudaError_t, cudaGetDeviceFlags, CUDART, NO_REAL, (unsigned int *f), (f), {})
HOOK(cudaError_t, cudaGetDeviceProperties, CUDART, NO_REAL, (struct cudaDeviceProp *p, int d), (p, d),
     { ev.arg[0] = (uint32_t)d; })
CPROF_HOOK_QUERY(cudaError_t, cudaDeviceGetAttribute, CUDART, NO_REAL, (int *v, enum cudaDeviceAttr a, int d), (v, a, d),
     { ev.arg[0] = (uint32_t)d; ev.arg[1] = (uint32_t)a; })
HOOK(cudaError_t, cudaChooseDevice, CUDART, NO_REAL, (int *d, const struct cudaDeviceProp *p), (d, p), {})
CPROF_HOOK_QUERY(cudaError_t, cudaDriverGetVersion, CUDART, NO_REAL, (int *v), (v),
     { ev.arg[0] = (ret == cudaSuccess && v) ? (uint32_t)*v : 0; })
CPROF_HOOK_QUERY(cudaError_t, cudaRuntimeGetVersion, CUDART, NO_REAL, (int *v), (v),
     { ev.arg[0] = (ret == cudaSuccess && v) ? (uint32_t)*v : 0; })
HOOK(cudaError_t, cudaDeviceReset, CUDART, NO_REAL, (void), (), {})

/* occupancy queries: the sign of an adaptive (GEMM/conv) kernel about to launch */
HOOK(cudaError_t, cudaOccupancyMaxActiveBlocksPerMultiprocessor, CUDART, NO_REAL,
     (int *nb, const void *func, int bs, size_t smem), (nb, func, bs, smem),
     { ev.name = cprof_kernel_name_id(func); ev.ptr = (uintptr_t)func; ev.arg[CPROF_ARG_BLOCK_X] = bs;
       ev.arg[CPROF_ARG_SHMEM] = (uint32_t)smem; })
HOOK(cudaError_t, cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, CUDART, NO_REAL,
     (int *nb, const void *func, int bs, size_t smem, unsigned int flags), (nb, func, bs, smem, flags),
     { ev.name = cprof_kernel_name_id(func); ev.ptr = (uintptr_t)func; ev.arg[CPROF_ARG_BLOCK_X] = bs;
       ev.arg[CPROF_ARG_SHMEM] = (uint32_t)smem; })

/* __cudaGetKernel maps a host stub to the cudaKernel_t that __cudaLaunchKernel receives */
HOOK(cudaError_t, __cudaGetKernel, CUDART, NO_REAL, (cudaKernel_t *k, const void *hostFun), (k, hostFun),
     {
	     if (ret == cudaSuccess && k && *k)
		     cprof_kernel_alias(*k, hostFun);
	     ev.name = cprof_kernel_name_id(hostFun);
	     ev.ptr = (uintptr_t)hostFun;
     })

/* Registration happens in static constructors before main: keep it cheap and record no event
 * (there is no collector-visible work), but remember the name. */
CPROF_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
					 const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
					 dim3 *bDim, dim3 *gDim, int *wSize)
{
	__typeof__(&__cudaRegisterFunction) real = CPROF_REAL(__cudaRegisterFunction, CUDART);

	if (atomic_load_explicit(&cprof_state, memory_order_relaxed) != CPROF_ST_OFF)
		cprof_kernel_register(hostFun, deviceName ? deviceName : deviceFun);
	if (real)
		real(fatCubinHandle, hostFun, deviceFun, deviceName, thread_limit, tid, bid, bDim, gDim, wSize);
}
