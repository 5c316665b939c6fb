/* The hooked CUDA entry points: one id per symbol, shared by preload (recording) and collector/report (naming). */
#ifndef CPROF_COMMON_API_H
#define CPROF_COMMON_API_H

#include <stdint.h>

#include "api-gen.h" /* build/gen: CPROF_API_GEN_LIST, from preload/hooks.spec and the CUDA headers */

/* X(id, symbol, class). Ids are wire values: append only, never renumber. */
#define CPROF_API_LIST(X)                                                          \
	X(CPROF_API_NONE, "none", CPROF_CLASS_OTHER)                               \
	X(CPROF_API___cudaLaunchKernel, "__cudaLaunchKernel", CPROF_CLASS_LAUNCH)   \
	X(CPROF_API___cudaLaunchKernel_ptsz, "__cudaLaunchKernel_ptsz", CPROF_CLASS_LAUNCH) \
	X(CPROF_API_cudaLaunchKernel, "cudaLaunchKernel", CPROF_CLASS_LAUNCH)       \
	X(CPROF_API_cudaLaunchKernel_ptsz, "cudaLaunchKernel_ptsz", CPROF_CLASS_LAUNCH) \
	X(CPROF_API_cudaLaunchKernelExC, "cudaLaunchKernelExC", CPROF_CLASS_LAUNCH) \
	X(CPROF_API_cudaLaunchKernelExC_ptsz, "cudaLaunchKernelExC_ptsz", CPROF_CLASS_LAUNCH) \
	X(CPROF_API_cudaLaunchCooperativeKernel, "cudaLaunchCooperativeKernel", CPROF_CLASS_LAUNCH) \
	X(CPROF_API_cudaLaunchCooperativeKernel_ptsz, "cudaLaunchCooperativeKernel_ptsz", CPROF_CLASS_LAUNCH) \
	X(CPROF_API_cudaGraphLaunch, "cudaGraphLaunch", CPROF_CLASS_LAUNCH)         \
	X(CPROF_API_cudaGraphLaunch_ptsz, "cudaGraphLaunch_ptsz", CPROF_CLASS_LAUNCH) \
	X(CPROF_API_cudaMalloc, "cudaMalloc", CPROF_CLASS_MEMORY)                   \
	X(CPROF_API_cudaFree, "cudaFree", CPROF_CLASS_MEMORY)                       \
	X(CPROF_API_cudaMallocHost, "cudaMallocHost", CPROF_CLASS_MEMORY)           \
	X(CPROF_API_cudaFreeHost, "cudaFreeHost", CPROF_CLASS_MEMORY)               \
	X(CPROF_API_cudaMallocAsync, "cudaMallocAsync", CPROF_CLASS_MEMORY)         \
	X(CPROF_API_cudaFreeAsync, "cudaFreeAsync", CPROF_CLASS_MEMORY)             \
	X(CPROF_API_cudaMemcpy, "cudaMemcpy", CPROF_CLASS_MEMCPY)                   \
	X(CPROF_API_cudaMemcpyAsync, "cudaMemcpyAsync", CPROF_CLASS_MEMCPY)         \
	X(CPROF_API_cudaMemcpyAsync_ptsz, "cudaMemcpyAsync_ptsz", CPROF_CLASS_MEMCPY) \
	X(CPROF_API_cudaMemset, "cudaMemset", CPROF_CLASS_MEMSET)                   \
	X(CPROF_API_cudaMemsetAsync, "cudaMemsetAsync", CPROF_CLASS_MEMSET)         \
	X(CPROF_API_cudaMemsetAsync_ptsz, "cudaMemsetAsync_ptsz", CPROF_CLASS_MEMSET) \
	X(CPROF_API_cudaDeviceSynchronize, "cudaDeviceSynchronize", CPROF_CLASS_SYNC) \
	X(CPROF_API_cudaStreamSynchronize, "cudaStreamSynchronize", CPROF_CLASS_SYNC) \
	X(CPROF_API_cudaStreamSynchronize_ptsz, "cudaStreamSynchronize_ptsz", CPROF_CLASS_SYNC) \
	X(CPROF_API_cudaEventSynchronize, "cudaEventSynchronize", CPROF_CLASS_SYNC) \
	X(CPROF_API_cudaStreamWaitEvent, "cudaStreamWaitEvent", CPROF_CLASS_SYNC)   \
	X(CPROF_API_cudaOccupancyMaxActiveBlocksPerMultiprocessor,                 \
	  "cudaOccupancyMaxActiveBlocksPerMultiprocessor", CPROF_CLASS_QUERY)      \
	X(CPROF_API_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,        \
	  "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", CPROF_CLASS_QUERY) \
	X(CPROF_API___cudaRegisterFunction, "__cudaRegisterFunction", CPROF_CLASS_MODULE) \
	X(CPROF_API___cudaGetKernel, "__cudaGetKernel", CPROF_CLASS_MODULE)         \
	X(CPROF_API_cublasSgemm_v2, "cublasSgemm_v2", CPROF_CLASS_GEMM)             \
	X(CPROF_API_cublasDgemm_v2, "cublasDgemm_v2", CPROF_CLASS_GEMM)             \
	X(CPROF_API_cublasGemmEx, "cublasGemmEx", CPROF_CLASS_GEMM)                 \
	X(CPROF_API_cublasSgemmStridedBatched, "cublasSgemmStridedBatched", CPROF_CLASS_GEMM) \
	X(CPROF_API_cublasGemmStridedBatchedEx, "cublasGemmStridedBatchedEx", CPROF_CLASS_GEMM) \
	X(CPROF_API_cublasGemmBatchedEx, "cublasGemmBatchedEx", CPROF_CLASS_GEMM)   \
	X(CPROF_API_cublasLtMatmul, "cublasLtMatmul", CPROF_CLASS_GEMM)             \
	X(CPROF_API_cublasSetStream_v2, "cublasSetStream_v2", CPROF_CLASS_OTHER)    \
	X(CPROF_API_nvtxRangePush, "nvtxRangePush", CPROF_CLASS_NVTX)              \
	X(CPROF_API_nvtxRangePop, "nvtxRangePop", CPROF_CLASS_NVTX)                \
	X(CPROF_API_nvtxRangeStart, "nvtxRangeStart", CPROF_CLASS_NVTX)            \
	X(CPROF_API_nvtxRangeEnd, "nvtxRangeEnd", CPROF_CLASS_NVTX)                \
	X(CPROF_API_nvtxMark, "nvtxMark", CPROF_CLASS_NVTX)                        \
	X(CPROF_API_nvtxNameOsThread, "nvtxNameOsThread", CPROF_CLASS_NVTX)        \
	X(CPROF_API_nvtxNameCudaStream, "nvtxNameCudaStream", CPROF_CLASS_NVTX)    \
	X(CPROF_API_nvtxNameCudaDevice, "nvtxNameCudaDevice", CPROF_CLASS_NVTX)    \
	X(CPROF_API_nvtxDomainCreate, "nvtxDomainCreate", CPROF_CLASS_NVTX)        \
	X(CPROF_API_cudaGetDeviceCount, "cudaGetDeviceCount", CPROF_CLASS_DEVICE)  \
	X(CPROF_API_cudaGetDevice, "cudaGetDevice", CPROF_CLASS_DEVICE)            \
	X(CPROF_API_cudaSetDevice, "cudaSetDevice", CPROF_CLASS_DEVICE)            \
	X(CPROF_API_cudaSetDeviceFlags, "cudaSetDeviceFlags", CPROF_CLASS_DEVICE)  \
	X(CPROF_API_cudaGetDeviceFlags, "cudaGetDeviceFlags", CPROF_CLASS_DEVICE)  \
	X(CPROF_API_cudaGetDeviceProperties, "cudaGetDeviceProperties", CPROF_CLASS_DEVICE) \
	X(CPROF_API_cudaDeviceGetAttribute, "cudaDeviceGetAttribute", CPROF_CLASS_DEVICE) \
	X(CPROF_API_cudaDriverGetVersion, "cudaDriverGetVersion", CPROF_CLASS_DEVICE) \
	X(CPROF_API_cudaRuntimeGetVersion, "cudaRuntimeGetVersion", CPROF_CLASS_DEVICE) \
	X(CPROF_API_cudaDeviceReset, "cudaDeviceReset", CPROF_CLASS_DEVICE)        \
	X(CPROF_API_cudaInitDevice, "cudaInitDevice", CPROF_CLASS_DEVICE)          \
	X(CPROF_API_cudaChooseDevice, "cudaChooseDevice", CPROF_CLASS_DEVICE)     \
	X(CPROF_API_cudaProfilerStart, "cudaProfilerStart", CPROF_CLASS_OTHER)     \
	X(CPROF_API_cudaProfilerStop, "cudaProfilerStop", CPROF_CLASS_OTHER)       \
	CPROF_API_GEN_LIST(X) /* new hooks go to preload/hooks.spec, after these */

enum cprof_api_class {
	CPROF_CLASS_OTHER = 0,
	CPROF_CLASS_LAUNCH,
	CPROF_CLASS_MEMORY,
	CPROF_CLASS_MEMCPY,
	CPROF_CLASS_MEMSET,
	CPROF_CLASS_SYNC,
	CPROF_CLASS_QUERY,
	CPROF_CLASS_MODULE,
	CPROF_CLASS_GEMM,
	CPROF_CLASS_NVTX, /* user annotations: stored as NVTX_EVENTS, not as calls */
	CPROF_CLASS_DEVICE, /* start-up, version and device queries: no GPU work of their own */
	CPROF_CLASS_STREAM, /* streams, events, host functions queued on a stream */
	CPROF_CLASS_GRAPH,  /* building and instantiating CUDA graphs, stream capture */
	CPROF_CLASS_LIBRARY, /* library handles and settings (cublasCreate...) */
	CPROF_CLASS_BLAS,   /* cuBLAS calls other than GEMMs: level-2, vector and matrix transfers */
};


#define CPROF_API_ENUM(id, sym, cls) id,
enum cprof_api { CPROF_API_LIST(CPROF_API_ENUM) CPROF_API__COUNT };
#undef CPROF_API_ENUM

/* The class of an id; inline so that a constant id folds to a constant class. */
static inline enum cprof_api_class cprof_api_class_of(unsigned api)
{
#define CPROF_API_CASE(id, sym, cls) case id: return cls;
	switch (api) {
	CPROF_API_LIST(CPROF_API_CASE)
	}
#undef CPROF_API_CASE
	return CPROF_CLASS_OTHER;
}

/* Calls that never bring the driver up (cudart answers them itself): they do not start CUPTI. */
static inline int cprof_api_inits_driver(unsigned api)
{
	return api != CPROF_API_cudaDriverGetVersion && api != CPROF_API_cudaRuntimeGetVersion &&
	       cprof_api_class_of(api) != CPROF_CLASS_NVTX;
}

/* The calls counted and not recorded, in the order of a ring's counters (preload/cprof.h): first the queries
 * whose CUPTI records cprof switches off (preload/cupti.c), then cuBLAS's handle settings. The collector takes
 * COUNTS records of these only. */
#define CPROF_COUNTED_QUERIES(X)                                                                          \
	X(cudaGetDevice) X(cudaGetDeviceFlags) X(cudaDeviceGetAttribute) X(cudaDriverGetVersion)          \
	X(cudaRuntimeGetVersion) X(cudaGetLastError) X(cudaPeekAtLastError)
#define CPROF_COUNTED_SETTINGS(X) X(cublasSetStream_v2) X(cublasSetWorkspace_v2) X(cublasSetMathMode)
#define CPROF_COUNTED_CASE_(s) case CPROF_API_##s:
static inline int cprof_api_counted(unsigned api)
{
	switch (api) {
	CPROF_COUNTED_QUERIES(CPROF_COUNTED_CASE_)
	CPROF_COUNTED_SETTINGS(CPROF_COUNTED_CASE_)
		return 1;
	default:
		return 0;
	}
}

const char *cprof_api_name(unsigned api);
/* the hooked entry point of a name, the symbol's (cublasSgemm_v2) or CUPTI's (cudaLaunchKernel_v7000: the symbol and
 * the CUDA version it came with); CPROF_API_NONE: none */
unsigned cprof_api_by_name(const char *name);
enum cprof_api_class cprof_api_class(unsigned api);
const char *cprof_api_class_name(enum cprof_api_class cls);

#endif
