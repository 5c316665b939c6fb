/* Hooks on cuBLAS and cuBLASLt GEMM entry points; their kernels launch inside the libraries, unseen by cudart hooks. */
#include <stddef.h>
#include <stdint.h>

#include <cublas_api.h>
#include <cublasLt.h>

#define PR_FMT "cprof: cublas"
#include "common/log.h"
#include "preload/hook.h"

#define CUBLAS   "libcublas.so.13"
#define CUBLASLT "libcublasLt.so.13"
#define NO_REAL  CUBLAS_STATUS_NOT_INITIALIZED

static uint64_t handle_stream(cublasHandle_t h)
{
	__typeof__(&cublasGetStream_v2) get = CPROF_REAL(cublasGetStream_v2, CUBLAS);
	cudaStream_t s = 0;

	if (get && h && get(h, &s) != CUBLAS_STATUS_SUCCESS)
		s = 0;
	return (uintptr_t)s;
}

static inline void fill_gemm(struct cprof_wire_api *ev, cublasHandle_t h, cublasOperation_t ta,
			     cublasOperation_t tb, int m, int n, int k, int batch, int atype, int ctype)
{
	ev->stream = handle_stream(h);
	ev->ptr = (uintptr_t)h;
	ev->arg[CPROF_ARG_M] = (uint32_t)m;
	ev->arg[CPROF_ARG_N] = (uint32_t)n;
	ev->arg[CPROF_ARG_K] = (uint32_t)k;
	ev->arg[CPROF_ARG_BATCH] = (uint32_t)batch;
	ev->arg[CPROF_ARG_ATYPE] = (uint32_t)atype;
	ev->arg[CPROF_ARG_CTYPE] = (uint32_t)ctype;
	ev->arg[CPROF_ARG_TRANSA] = (uint32_t)ta;
	ev->arg[CPROF_ARG_TRANSB] = (uint32_t)tb;
}

/* every cuBLAS entry point returns a cublasStatus_t */
#define HOOK(sym, soname, params, args, fill) CPROF_HOOK(cublasStatus_t, sym, soname, NO_REAL, params, args, fill)

HOOK(cublasSgemm_v2, CUBLAS,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float *alpha,
      const float *A, int lda, const float *B, int ldb, const float *beta, float *C, int ldc),
     (h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
     fill_gemm(&ev, h, ta, tb, m, n, k, 1, CUDA_R_32F, CUDA_R_32F))
HOOK(cublasDgemm_v2, CUBLAS,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double *alpha,
      const double *A, int lda, const double *B, int ldb, const double *beta, double *C, int ldc),
     (h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
     fill_gemm(&ev, h, ta, tb, m, n, k, 1, CUDA_R_64F, CUDA_R_64F))
HOOK(cublasGemmEx, CUBLAS,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
      const void *A, cudaDataType at, int lda, const void *B, cudaDataType bt, int ldb, const void *beta,
      void *C, cudaDataType ct, int ldc, cublasComputeType_t comp, cublasGemmAlgo_t algo),
     (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, comp, algo),
     fill_gemm(&ev, h, ta, tb, m, n, k, 1, at, ct))
HOOK(cublasSgemmStridedBatched, CUBLAS,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float *alpha,
      const float *A, int lda, long long int sA, const float *B, int ldb, long long int sB, const float *beta,
      float *C, int ldc, long long int sC, int batch),
     (h, ta, tb, m, n, k, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, batch),
     fill_gemm(&ev, h, ta, tb, m, n, k, batch, CUDA_R_32F, CUDA_R_32F))
HOOK(cublasGemmStridedBatchedEx, CUBLAS,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
      const void *A, cudaDataType at, int lda, long long int sA, const void *B, cudaDataType bt, int ldb,
      long long int sB, const void *beta, void *C, cudaDataType ct, int ldc, long long int sC, int batch,
      cublasComputeType_t comp, cublasGemmAlgo_t algo),
     (h, ta, tb, m, n, k, alpha, A, at, lda, sA, B, bt, ldb, sB, beta, C, ct, ldc, sC, batch, comp, algo),
     fill_gemm(&ev, h, ta, tb, m, n, k, batch, at, ct))
HOOK(cublasGemmBatchedEx, CUBLAS,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
      const void *const A[], cudaDataType at, int lda, const void *const B[], cudaDataType bt, int ldb,
      const void *beta, void *const C[], cudaDataType ct, int ldc, int batch, cublasComputeType_t comp,
      cublasGemmAlgo_t algo),
     (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, batch, comp, algo),
     fill_gemm(&ev, h, ta, tb, m, n, k, batch, at, ct))
CPROF_HOOK_COUNTED(cublasStatus_t, cublasSetStream_v2, CUBLAS, CUBLAS_STATUS_NOT_INITIALIZED,
		   (cublasHandle_t h, cudaStream_t s), (h, s))

/* m, n, k of a cuBLASLt matmul live in its descriptors; reading them costs a few host calls. */
static void fill_lt(struct cprof_wire_api *ev, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
		    cublasLtMatrixLayout_t d, cudaStream_t s)
{
	__typeof__(&cublasLtMatrixLayoutGetAttribute) lget = CPROF_REAL(cublasLtMatrixLayoutGetAttribute, CUBLASLT);
	__typeof__(&cublasLtMatmulDescGetAttribute) dget = CPROF_REAL(cublasLtMatmulDescGetAttribute, CUBLASLT);
	uint64_t drows = 0, dcols = 0, arows = 0, acols = 0;
	int32_t ta = 0, tb = 0, batch = 1;
	uint32_t atype = 0, dtype = 0;
	size_t w;

	ev->stream = (uintptr_t)s;
	if (lget == NULL || dget == NULL)
		return;
	lget(d, CUBLASLT_MATRIX_LAYOUT_ROWS, &drows, sizeof(drows), &w);
	lget(d, CUBLASLT_MATRIX_LAYOUT_COLS, &dcols, sizeof(dcols), &w);
	lget(d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch), &w);
	lget(d, CUBLASLT_MATRIX_LAYOUT_TYPE, &dtype, sizeof(dtype), &w);
	lget(a, CUBLASLT_MATRIX_LAYOUT_ROWS, &arows, sizeof(arows), &w);
	lget(a, CUBLASLT_MATRIX_LAYOUT_COLS, &acols, sizeof(acols), &w);
	lget(a, CUBLASLT_MATRIX_LAYOUT_TYPE, &atype, sizeof(atype), &w);
	dget(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta), &w);
	dget(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb), &w);
	ev->arg[CPROF_ARG_M] = (uint32_t)drows;
	ev->arg[CPROF_ARG_N] = (uint32_t)dcols;
	ev->arg[CPROF_ARG_K] = (uint32_t)(ta == CUBLAS_OP_N ? acols : arows);
	ev->arg[CPROF_ARG_BATCH] = (uint32_t)(batch > 0 ? batch : 1);
	ev->arg[CPROF_ARG_ATYPE] = atype;
	ev->arg[CPROF_ARG_CTYPE] = dtype;
	ev->arg[CPROF_ARG_TRANSA] = (uint32_t)ta;
	ev->arg[CPROF_ARG_TRANSB] = (uint32_t)tb;
}

HOOK(cublasLtMatmul, CUBLASLT,
     (cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, const void *alpha, const void *A, cublasLtMatrixLayout_t ad,
      const void *B, cublasLtMatrixLayout_t bd, const void *beta, const void *C, cublasLtMatrixLayout_t cd,
      void *D, cublasLtMatrixLayout_t dd, const cublasLtMatmulAlgo_t *algo, void *ws, size_t wss,
      cudaStream_t s),
     (lt, desc, alpha, A, ad, B, bd, beta, C, cd, D, dd, algo, ws, wss, s),
     { fill_lt(&ev, desc, ad, dd, s); ev.ptr = (uintptr_t)lt; ev.bytes = wss; })
