/* Simulated libcublas.so.13: handles and GEMMs that launch their kernels internally, as the real static-cudart build does. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <library_types.h>

#include "engine.h"

#define HANDLE_MAGIC 0x43424c53u

struct cublasContext {
	uint32_t magic;
	cudaStream_t stream;
	cublasMath_t math;
	cublasPointerMode_t pointer_mode;
	void *workspace;
	size_t workspace_size;
	atomic_int first_gemm_done;
};

enum dclass { DC_F32, DC_F64, DC_F16, DC_BF16 };

static int handle_ok(cublasHandle_t h)
{
	return h && h->magic == HANDLE_MAGIC;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
	if (!handle)
		return CUBLAS_STATUS_INVALID_VALUE;
	/* The real library initialises the context through its static cudart: no hook sees it. */
	if (simgpu_ctx_ensure())
		return CUBLAS_STATUS_NOT_INITIALIZED;
	struct cublasContext *h = calloc(1, sizeof(*h));
	if (!h)
		return CUBLAS_STATUS_ALLOC_FAILED;
	h->magic = HANDLE_MAGIC;
	h->math = CUBLAS_DEFAULT_MATH;
	h->pointer_mode = CUBLAS_POINTER_MODE_HOST;
	simgpu_spin(simgpu_cfg()->cublas_create_ns);
	*handle = h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->magic = 0;
	free(handle);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!version)
		return CUBLAS_STATUS_INVALID_VALUE;
	*version = CUBLAS_VERSION;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
	if (!value)
		return CUBLAS_STATUS_INVALID_VALUE;
	switch (type) {
	case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; break;
	case MINOR_VERSION: *value = CUBLAS_VER_MINOR; break;
	case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; break;
	default: return CUBLAS_STATUS_INVALID_VALUE;
	}
	return CUBLAS_STATUS_SUCCESS;
}

static const char *status_name(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
	case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
	case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
	case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
	case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
	case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
	case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
	case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
	case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
	default: return "<unknown>";
	}
}

const char *cublasGetStatusName(cublasStatus_t status)
{
	return status_name(status);
}

const char *cublasGetStatusString(cublasStatus_t status)
{
	switch (status) {
	case CUBLAS_STATUS_SUCCESS: return "success";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
	case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
	case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
	case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
	case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
	default: return status_name(status);
	}
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->stream = streamId;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!streamId)
		return CUBLAS_STATUS_INVALID_VALUE;
	*streamId = handle->stream;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->math = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!mode)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = handle->math;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->pointer_mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!mode)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = handle->pointer_mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (workspaceSizeInBytes && !workspace)
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->workspace = workspace;
	handle->workspace_size = workspaceSizeInBytes;
	return CUBLAS_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- GEMM */

static char op_char(cublasOperation_t op)
{
	return op == CUBLAS_OP_N ? 'n' : 't';
}

struct gemm_args {
	cublasOperation_t ta, tb;
	long long m, n, k, lda, ldb, ldc, batch;
	enum dclass dc;
	int tf32;
	int batched;
};

/*
 * Kernel choice mirrors what an H100/H200 profile shows: small problems get an Ampere SIMT kernel launched
 * with cudaLaunchKernel, large ones an SM90 warp-group kernel launched with cluster attributes.
 */
static void pick_kernel(const struct gemm_args *a, struct simgpu_gemm *g)
{
	char name[256];
	char ta = op_char(a->ta), tb = op_char(a->tb);
	const char *b = a->batched ? "_batched" : "";
	long long work = a->m * a->n * a->k;
	int small = (a->m <= 128 && a->n <= 128) || work <= 128LL * 128 * 128;
	int medium = !small && work <= 512LL * 512 * 512;
	const struct simgpu_config *cfg = simgpu_cfg();
	if (small || medium) {
		const char *fam;
		switch (a->dc) {
		case DC_F64: fam = "ampere_dgemm"; break;
		case DC_F16: fam = "ampere_fp16_s16816gemm_fp16"; break;
		case DC_BF16: fam = "ampere_bf16_s16816gemm_bf16"; break;
		default: fam = "ampere_sgemm"; break;
		}
		if (small)
			snprintf(name, sizeof(name), "%s_32x32_sliced1x4%s_%c%c", fam, b, ta, tb);
		else
			snprintf(name, sizeof(name), "%s_128x64%s_%c%c", fam, b, ta, tb);
		g->tile_m = small ? 32 : 128;
		g->tile_n = small ? 32 : 64;
		g->block = small ? 128 : 256;
		g->regs = small ? 86 : 128;
		g->static_smem = small ? 16384 : 32768;
		g->dyn_smem = 0;
		g->launch_ex = 0;
	} else {
		const char *types;
		switch (a->dc) {
		case DC_F64: types = "f64f64_f64f64_f64"; break;
		case DC_F16: types = "f16f16_f16f32_f32"; break;
		case DC_BF16: types = "bf16bf16_bf16f32_f32"; break;
		default: types = "f32f32_tf32f32_f32"; break;
		}
		snprintf(name, sizeof(name),
			 "sm90_xmma_gemm_%s_%c%c_n_tilesize128x128x32_warpgroupsize1x1x1%s_execute_segment_k_off_kernel__5x_cublas",
			 types, ta, tb, b);
		g->tile_m = 128;
		g->tile_n = 128;
		g->block = 384;
		g->regs = 168;
		g->static_smem = 0;
		g->dyn_smem = 196608;
		g->launch_ex = 1;
	}
	g->name = simgpu_intern(name);
	switch (a->dc) {
	case DC_F64: g->tflops = cfg->fp64_tflops; break;
	case DC_F16:
	case DC_BF16: g->tflops = cfg->tensor_tflops; break;
	default: g->tflops = a->tf32 ? cfg->tensor_tflops : cfg->peak_tflops; break;
	}
}

static cublasStatus_t gemm(cublasHandle_t h, const struct gemm_args *a)
{
	if (!handle_ok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	long long rows_a = a->ta == CUBLAS_OP_N ? a->m : a->k;
	long long rows_b = a->tb == CUBLAS_OP_N ? a->k : a->n;
	if (a->m < 0 || a->n < 0 || a->k < 0 || a->batch < 0 || a->lda < (rows_a > 1 ? rows_a : 1) ||
	    a->ldb < (rows_b > 1 ? rows_b : 1) || a->ldc < (a->m > 1 ? a->m : 1))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (a->m == 0 || a->n == 0 || a->batch == 0)
		return CUBLAS_STATUS_SUCCESS;
	const struct simgpu_config *cfg = simgpu_cfg();
	/* First GEMM on a handle: heuristics, and a workspace from the library's own cudaMalloc. */
	if (!atomic_exchange(&h->first_gemm_done, 1)) {
		simgpu_spin(cfg->cublas_first_ns);
		if (!h->workspace)
			simgpu_cupti_internal_api(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, cfg->malloc_ns, 0);
	}
	simgpu_spin(cfg->cublas_ns);
	struct simgpu_gemm g = {
		.stream = h->stream,
		.m = a->m,
		.n = a->n,
		.k = a->k,
		.batch = a->batch,
		.occupancy_query = 1,
	};
	pick_kernel(a, &g);
	return simgpu_gemm_launch(&g) ? CUBLAS_STATUS_EXECUTION_FAILED : CUBLAS_STATUS_SUCCESS;
}

static int math_tf32(cublasHandle_t h)
{
	return handle_ok(h) && (h->math & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH;
}

static int ex_class(cudaDataType t, cublasComputeType_t ct, cublasHandle_t h, enum dclass *dc, int *tf32)
{
	*tf32 = 0;
	switch (t) {
	case CUDA_R_32F:
		*dc = DC_F32;
		*tf32 = ct == CUBLAS_COMPUTE_32F_FAST_TF32 || ct == CUBLAS_COMPUTE_32F_FAST_16F ||
			ct == CUBLAS_COMPUTE_32F_FAST_16BF || math_tf32(h);
		return 0;
	case CUDA_R_64F: *dc = DC_F64; return 0;
	case CUDA_R_16F: *dc = DC_F16; return 0;
	case CUDA_R_16BF: *dc = DC_BF16; return 0;
	default: return -1;
	}
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
			      int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
			      const float *beta, float *C, int ldc)
{
	(void)alpha, (void)A, (void)B, (void)beta, (void)C;
	struct gemm_args a = { transa, transb, m, n, k, lda, ldb, ldc, 1, DC_F32, math_tf32(handle), 0 };
	return gemm(handle, &a);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
			      int k, const double *alpha, const double *A, int lda, const double *B, int ldb,
			      const double *beta, double *C, int ldc)
{
	(void)alpha, (void)A, (void)B, (void)beta, (void)C;
	struct gemm_args a = { transa, transb, m, n, k, lda, ldb, ldc, 1, DC_F64, 0, 0 };
	return gemm(handle, &a);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
			    int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
			    cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
			    cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
	(void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)Btype, (void)Ctype, (void)algo;
	struct gemm_args a = { transa, transb, m, n, k, lda, ldb, ldc, 1, DC_F32, 0, 0 };
	if (ex_class(Atype, computeType, handle, &a.dc, &a.tf32))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	return gemm(handle, &a);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					 int m, int n, int k, const float *alpha, const float *A, int lda,
					 long long int strideA, const float *B, int ldb, long long int strideB,
					 const float *beta, float *C, int ldc, long long int strideC, int batchCount)
{
	(void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)strideA, (void)strideB, (void)strideC;
	struct gemm_args a = { transa, transb, m, n, k, lda, ldb, ldc, batchCount, DC_F32, math_tf32(handle), 1 };
	return gemm(handle, &a);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					 int m, int n, int k, const double *alpha, const double *A, int lda,
					 long long int strideA, const double *B, int ldb, long long int strideB,
					 const double *beta, double *C, int ldc, long long int strideC, int batchCount)
{
	(void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)strideA, (void)strideB, (void)strideC;
	struct gemm_args a = { transa, transb, m, n, k, lda, ldb, ldc, batchCount, DC_F64, 0, 1 };
	return gemm(handle, &a);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					  int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
					  int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
					  long long int strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
					  long long int strideC, int batchCount, cublasComputeType_t computeType,
					  cublasGemmAlgo_t algo)
{
	(void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)Btype, (void)Ctype, (void)algo;
	(void)strideA, (void)strideB, (void)strideC;
	struct gemm_args a = { transa, transb, m, n, k, lda, ldb, ldc, batchCount, DC_F32, 0, 1 };
	if (ex_class(Atype, computeType, handle, &a.dc, &a.tf32))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	return gemm(handle, &a);
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
				  int n, int k, const float *alpha, const float *const Aarray[], int lda,
				  const float *const Barray[], int ldb, const float *beta, float *const Carray[],
				  int ldc, int batchCount)
{
	(void)alpha, (void)Aarray, (void)Barray, (void)beta, (void)Carray;
	struct gemm_args a = { transa, transb, m, n, k, lda, ldb, ldc, batchCount, DC_F32, math_tf32(handle), 1 };
	return gemm(handle, &a);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
				   int n, int k, const void *alpha, const void *const Aarray[], cudaDataType Atype,
				   int lda, const void *const Barray[], cudaDataType Btype, int ldb, const void *beta,
				   void *const Carray[], cudaDataType Ctype, int ldc, int batchCount,
				   cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
	(void)alpha, (void)Aarray, (void)Barray, (void)beta, (void)Carray, (void)Btype, (void)Ctype, (void)algo;
	struct gemm_args a = { transa, transb, m, n, k, lda, ldb, ldc, batchCount, DC_F32, 0, 1 };
	if (ex_class(Atype, computeType, handle, &a.dc, &a.tf32))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	return gemm(handle, &a);
}

/* ---------------------------------------------------------------- vectors, matrices, level-2 BLAS */

/* cublasSet/GetVector and Set/GetMatrix: the real library copies with its static cudart's cudaMemcpy2D on
 * the legacy stream and waits; here the strided bytes move for real and CUPTI sees that internal copy. */
static cublasStatus_t strided_copy(long long rows, long long cols, int elem, const void *src, long long lds,
				   void *dst, long long ldd, int h2d)
{
	if (rows < 0 || cols < 0 || elem <= 0 || lds < 1 || ldd < 1 || (cols > 1 && (lds < rows || ldd < rows)))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!rows || !cols)
		return CUBLAS_STATUS_SUCCESS;
	if (!src || !dst)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (simgpu_ctx_ensure())
		return CUBLAS_STATUS_NOT_INITIALIZED;
	struct simgpu_stream *s;
	if (simgpu_stream_resolve(NULL, 0, &s))
		return CUBLAS_STATUS_INTERNAL_ERROR;
	if (simgpu_cfg()->copy_data) {
		for (long long c = 0; c < cols; c++) {
			for (long long r = 0; r < rows; r++) {
				/* a vector is one column whose stride is its increment */
				long long si = cols == 1 ? r * lds : c * lds + r, di = cols == 1 ? r * ldd : c * ldd + r;
				memcpy((char *)dst + di * elem, (const char *)src + si * elem, (size_t)elem);
			}
		}
	}
	struct simgpu_call c;
	simgpu_api_enter(&c, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020, SIMGPU_ENTER_INTERNAL, NULL);
	uint64_t end = simgpu_copy(&c, s, (size_t)(rows * cols * elem),
				   h2d ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
				   h2d ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
				   h2d ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 0);
	simgpu_wait_until(end);
	simgpu_api_exit(&c, 0);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetVector(int n, int elemSize, const void *x, int incx, void *devicePtr, int incy)
{
	return strided_copy(n, 1, elemSize, x, incx, devicePtr, incy, 1);
}

cublasStatus_t cublasGetVector(int n, int elemSize, const void *x, int incx, void *y, int incy)
{
	return strided_copy(n, 1, elemSize, x, incx, y, incy, 0);
}

cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize, const void *A, int lda, void *B, int ldb)
{
	return strided_copy(rows, cols, elemSize, A, lda, B, ldb, 1);
}

cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize, const void *A, int lda, void *B, int ldb)
{
	return strided_copy(rows, cols, elemSize, A, lda, B, ldb, 0);
}

/* y = alpha op(A) x + beta y: one gemv kernel, costed as 2*m*n flops. */
static cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t trans, int m, int n, int lda, int incx, int incy,
			   enum dclass dc)
{
	if (!handle_ok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || !incx || !incy)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!m || !n)
		return CUBLAS_STATUS_SUCCESS;
	const struct simgpu_config *cfg = simgpu_cfg();
	simgpu_spin(cfg->cublas_ns);
	long long rows = trans == CUBLAS_OP_N ? m : n, cols = trans == CUBLAS_OP_N ? n : m;
	char name[160];
	snprintf(name, sizeof(name), "void gemv2%c_kernel_val<int, int, %s, 128, 16, 4, 4, false, false>",
		 trans == CUBLAS_OP_N ? 'N' : 'T', dc == DC_F64 ? "double, double, double" : "float, float, float");
	struct simgpu_gemm g = {
		.stream = h->stream,
		.name = simgpu_intern(name),
		.tile_m = 128,
		.tile_n = 1,
		.block = 128,
		.regs = 40,
		.m = rows,
		.n = 1,
		.k = cols,
		.batch = 1,
		.tflops = dc == DC_F64 ? cfg->fp64_tflops : cfg->peak_tflops,
	};
	return simgpu_gemm_launch(&g) ? CUBLAS_STATUS_EXECUTION_FAILED : CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float *alpha,
			      const float *A, int lda, const float *x, int incx, const float *beta, float *y, int incy)
{
	(void)alpha, (void)A, (void)x, (void)beta, (void)y;
	return gemv(handle, trans, m, n, lda, incx, incy, DC_F32);
}

cublasStatus_t cublasDgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const double *alpha,
			      const double *A, int lda, const double *x, int incx, const double *beta, double *y,
			      int incy)
{
	(void)alpha, (void)A, (void)x, (void)beta, (void)y;
	return gemv(handle, trans, m, n, lda, incx, incy, DC_F64);
}
