/* Simulated libcublasLt.so.13: descriptors, heuristics and cublasLtMatmul launching one nvjet kernel per call. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "engine.h"

#define LT_MAGIC 0x43424c54u

struct cublasLtContext {
	uint32_t magic;
};

/* What we keep inside the caller-visible opaque descriptors (they may live on the caller's stack). */
struct lt_desc {
	int32_t compute;
	int32_t scale;
	int32_t transa;
	int32_t transb;
	uint32_t epilogue;
};

struct lt_layout {
	int32_t type;
	uint64_t rows;
	uint64_t cols;
	int64_t ld;
	int32_t batch;
	int64_t stride;
};

_Static_assert(sizeof(struct lt_desc) <= sizeof(cublasLtMatmulDescOpaque_t), "desc fits the opaque type");
_Static_assert(sizeof(struct lt_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout fits the opaque type");

static struct lt_desc *desc_of(cublasLtMatmulDesc_t d)
{
	return (struct lt_desc *)(void *)d->data;
}

static struct lt_layout *layout_of(cublasLtMatrixLayout_t l)
{
	return (struct lt_layout *)(void *)l->data;
}

/* The real cuBLAS handle is a cuBLASLt handle too: PyTorch passes its cublasHandle_t to cublasLtMatmul* and
 * never calls cublasLtCreate. Both simulated handles start with their magic word (cublas.c: 0x43424c53). */
#define CUBLAS_HANDLE_MAGIC 0x43424c53u

static int handle_ok(cublasLtHandle_t h)
{
	return h && (h->magic == LT_MAGIC || h->magic == CUBLAS_HANDLE_MAGIC);
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle)
{
	if (!lightHandle)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (simgpu_ctx_ensure())
		return CUBLAS_STATUS_NOT_INITIALIZED;
	struct cublasLtContext *h = calloc(1, sizeof(*h));
	if (!h)
		return CUBLAS_STATUS_ALLOC_FAILED;
	h->magic = LT_MAGIC;
	simgpu_spin(simgpu_cfg()->cublas_create_ns);
	*lightHandle = h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle)
{
	if (!lightHandle || lightHandle->magic != LT_MAGIC)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	lightHandle->magic = 0;
	free(lightHandle);
	return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void)
{
	return CUBLAS_VERSION;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
					cudaDataType_t scaleType)
{
	if (!matmulDesc)
		return CUBLAS_STATUS_INVALID_VALUE;
	cublasLtMatmulDesc_t d = calloc(1, sizeof(*d));
	if (!d)
		return CUBLAS_STATUS_ALLOC_FAILED;
	desc_of(d)->compute = computeType;
	desc_of(d)->scale = scaleType;
	desc_of(d)->transa = CUBLAS_OP_N;
	desc_of(d)->transb = CUBLAS_OP_N;
	desc_of(d)->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
	*matmulDesc = d;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
	free(matmulDesc);
	return CUBLAS_STATUS_SUCCESS;
}

static int read_i32(const void *buf, size_t size, int32_t *out)
{
	if (!buf || size != sizeof(int32_t))
		return -1;
	memcpy(out, buf, sizeof(*out));
	return 0;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
					      const void *buf, size_t sizeInBytes)
{
	if (!matmulDesc)
		return CUBLAS_STATUS_INVALID_VALUE;
	struct lt_desc *d = desc_of(matmulDesc);
	int32_t v;
	switch (attr) {
	case CUBLASLT_MATMUL_DESC_TRANSA:
		if (read_i32(buf, sizeInBytes, &v))
			return CUBLAS_STATUS_INVALID_VALUE;
		d->transa = v;
		break;
	case CUBLASLT_MATMUL_DESC_TRANSB:
		if (read_i32(buf, sizeInBytes, &v))
			return CUBLAS_STATUS_INVALID_VALUE;
		d->transb = v;
		break;
	case CUBLASLT_MATMUL_DESC_EPILOGUE:
		if (read_i32(buf, sizeInBytes, &v))
			return CUBLAS_STATUS_INVALID_VALUE;
		d->epilogue = (uint32_t)v;
		break;
	default:
		/* Pointers, scale modes and the rest change nothing the simulator models. */
		if (!buf && sizeInBytes)
			return CUBLAS_STATUS_INVALID_VALUE;
		break;
	}
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type, uint64_t rows,
					  uint64_t cols, int64_t ld)
{
	if (!matLayout)
		return CUBLAS_STATUS_INVALID_VALUE;
	cublasLtMatrixLayout_t l = calloc(1, sizeof(*l));
	if (!l)
		return CUBLAS_STATUS_ALLOC_FAILED;
	struct lt_layout *p = layout_of(l);
	p->type = type;
	p->rows = rows;
	p->cols = cols;
	p->ld = ld;
	p->batch = 1;
	*matLayout = l;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
	free(matLayout);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout, cublasLtMatrixLayoutAttribute_t attr,
						const void *buf, size_t sizeInBytes)
{
	if (!matLayout || !buf)
		return CUBLAS_STATUS_INVALID_VALUE;
	struct lt_layout *l = layout_of(matLayout);
	int32_t v;
	switch (attr) {
	case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
		if (read_i32(buf, sizeInBytes, &v) || v < 1)
			return CUBLAS_STATUS_INVALID_VALUE;
		l->batch = v;
		break;
	case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
		if (sizeInBytes != sizeof(int64_t))
			return CUBLAS_STATUS_INVALID_VALUE;
		memcpy(&l->stride, buf, sizeof(l->stride));
		break;
	case CUBLASLT_MATRIX_LAYOUT_ROWS:
		if (sizeInBytes != sizeof(uint64_t))
			return CUBLAS_STATUS_INVALID_VALUE;
		memcpy(&l->rows, buf, sizeof(l->rows));
		break;
	case CUBLASLT_MATRIX_LAYOUT_COLS:
		if (sizeInBytes != sizeof(uint64_t))
			return CUBLAS_STATUS_INVALID_VALUE;
		memcpy(&l->cols, buf, sizeof(l->cols));
		break;
	case CUBLASLT_MATRIX_LAYOUT_LD:
		if (sizeInBytes != sizeof(int64_t))
			return CUBLAS_STATUS_INVALID_VALUE;
		memcpy(&l->ld, buf, sizeof(l->ld));
		break;
	default:
		break;
	}
	return CUBLAS_STATUS_SUCCESS;
}

/* Attribute reads: what the simulator keeps, in the attribute's own width (PyTorch reads them back). */
static cublasStatus_t put_attr(const void *v, size_t n, void *buf, size_t sizeInBytes, size_t *sizeWritten)
{
	if (sizeWritten)
		*sizeWritten = n;
	if (!buf && !sizeInBytes)
		return sizeWritten ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
	if (!buf || sizeInBytes < n)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(buf, v, n);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
					      void *buf, size_t sizeInBytes, size_t *sizeWritten)
{
	if (!matmulDesc)
		return CUBLAS_STATUS_INVALID_VALUE;
	const struct lt_desc *d = desc_of(matmulDesc);
	switch (attr) {
	case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return put_attr(&d->compute, sizeof(d->compute), buf, sizeInBytes, sizeWritten);
	case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return put_attr(&d->scale, sizeof(d->scale), buf, sizeInBytes, sizeWritten);
	case CUBLASLT_MATMUL_DESC_TRANSA: return put_attr(&d->transa, sizeof(d->transa), buf, sizeInBytes, sizeWritten);
	case CUBLASLT_MATMUL_DESC_TRANSB: return put_attr(&d->transb, sizeof(d->transb), buf, sizeInBytes, sizeWritten);
	case CUBLASLT_MATMUL_DESC_EPILOGUE:
		return put_attr(&d->epilogue, sizeof(d->epilogue), buf, sizeInBytes, sizeWritten);
	default: return CUBLAS_STATUS_INVALID_VALUE; /* not kept by the simulator */
	}
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout, cublasLtMatrixLayoutAttribute_t attr,
						void *buf, size_t sizeInBytes, size_t *sizeWritten)
{
	if (!matLayout)
		return CUBLAS_STATUS_INVALID_VALUE;
	const struct lt_layout *l = layout_of(matLayout);
	uint32_t type = (uint32_t)l->type;
	switch (attr) {
	case CUBLASLT_MATRIX_LAYOUT_TYPE: return put_attr(&type, sizeof(type), buf, sizeInBytes, sizeWritten);
	case CUBLASLT_MATRIX_LAYOUT_ROWS: return put_attr(&l->rows, sizeof(l->rows), buf, sizeInBytes, sizeWritten);
	case CUBLASLT_MATRIX_LAYOUT_COLS: return put_attr(&l->cols, sizeof(l->cols), buf, sizeInBytes, sizeWritten);
	case CUBLASLT_MATRIX_LAYOUT_LD: return put_attr(&l->ld, sizeof(l->ld), buf, sizeInBytes, sizeWritten);
	case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return put_attr(&l->batch, sizeof(l->batch), buf, sizeInBytes, sizeWritten);
	case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
		return put_attr(&l->stride, sizeof(l->stride), buf, sizeInBytes, sizeWritten);
	default: return CUBLAS_STATUS_INVALID_VALUE; /* not kept by the simulator */
	}
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
	if (!pref)
		return CUBLAS_STATUS_INVALID_VALUE;
	*pref = calloc(1, sizeof(**pref));
	return *pref ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
	free(pref);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
						    cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
						    size_t sizeInBytes)
{
	(void)attr;
	if (!pref || (!buf && sizeInBytes))
		return CUBLAS_STATUS_INVALID_VALUE;
	return CUBLAS_STATUS_SUCCESS;
}

/* m, n, k and batch of D = op(A) op(B), checked against the layouts. */
static int shape(cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
		 cublasLtMatrixLayout_t d, long long *m, long long *n, long long *k, long long *batch)
{
	if (!op || !a || !b || !d)
		return -1;
	const struct lt_desc *o = desc_of(op);
	const struct lt_layout *la = layout_of(a), *lb = layout_of(b), *ld = layout_of(d);
	*m = (long long)ld->rows;
	*n = (long long)ld->cols;
	*k = (long long)(o->transa == CUBLAS_OP_N ? la->cols : la->rows);
	long long kb = (long long)(o->transb == CUBLAS_OP_N ? lb->rows : lb->cols);
	long long ma = (long long)(o->transa == CUBLAS_OP_N ? la->rows : la->cols);
	*batch = ld->batch;
	return (kb == *k && ma == *m) ? 0 : -1;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
					      cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
					      cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
					      cublasLtMatmulPreference_t preference, int requestedAlgoCount,
					      cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
					      int *returnAlgoCount)
{
	(void)Cdesc, (void)preference;
	long long m, n, k, batch;
	if (!handle_ok(lightHandle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (requestedAlgoCount < 1 || !heuristicResultsArray || !returnAlgoCount)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (shape(operationDesc, Adesc, Bdesc, Ddesc, &m, &n, &k, &batch))
		return CUBLAS_STATUS_INVALID_VALUE;
	simgpu_spin(simgpu_cfg()->cublaslt_heuristic_ns);
	memset(&heuristicResultsArray[0], 0, sizeof(heuristicResultsArray[0]));
	heuristicResultsArray[0].algo.data[0] = 0x6e766a6574ull; /* "nvjet" */
	heuristicResultsArray[0].workspaceSize = 0;
	heuristicResultsArray[0].state = CUBLAS_STATUS_SUCCESS;
	heuristicResultsArray[0].wavesCount = 1.0f;
	*returnAlgoCount = 1;
	return CUBLAS_STATUS_SUCCESS;
}

static const char *type_tag(int type, int compute)
{
	switch (type) {
	case CUDA_R_16F: return "hsh";
	case CUDA_R_16BF: return "bsb";
	case CUDA_R_64F: return "ddd";
	default: return compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? "tst" : "sss";
	}
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
			      const void *A, cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
			      const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
			      cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
			      size_t workspaceSizeInBytes, cudaStream_t stream)
{
	(void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)Cdesc, (void)D, (void)algo, (void)workspace;
	(void)workspaceSizeInBytes;
	long long m, n, k, batch;
	if (!handle_ok(lightHandle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (shape(computeDesc, Adesc, Bdesc, Ddesc, &m, &n, &k, &batch))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (m == 0 || n == 0)
		return CUBLAS_STATUS_SUCCESS;
	const struct simgpu_config *cfg = simgpu_cfg();
	const struct lt_desc *o = desc_of(computeDesc);
	int type = layout_of(Adesc)->type;
	simgpu_spin(cfg->cublaslt_ns);
	char name[160];
	int big = m * n >= 1024LL * 1024;
	snprintf(name, sizeof(name), "nvjet_%s_%s_64x4_%s_v_bz%s_%c%cT", type_tag(type, o->compute),
		 big ? "256x128" : "64x64", big ? "2x1" : "1x1",
		 (o->epilogue & CUBLASLT_EPILOGUE_BIAS) == CUBLASLT_EPILOGUE_BIAS ? "_bias" : "",
		 o->transa == CUBLAS_OP_N ? 'N' : 'T', o->transb == CUBLAS_OP_N ? 'N' : 'T');
	double tflops = type == CUDA_R_64F ? cfg->fp64_tflops
			: (type == CUDA_R_16F || type == CUDA_R_16BF || o->compute == CUBLAS_COMPUTE_32F_FAST_TF32)
				? cfg->tensor_tflops
				: cfg->peak_tflops;
	struct simgpu_gemm g = {
		.stream = stream,
		.name = simgpu_intern(name),
		.tile_m = big ? 256 : 64,
		.tile_n = big ? 128 : 64,
		.block = 384,
		.regs = 168,
		.static_smem = 0,
		.dyn_smem = big ? 213504 : 98304,
		.m = m,
		.n = n,
		.k = k,
		.batch = batch,
		.tflops = tflops,
		.launch_ex = 1,
		.occupancy_query = 0,
	};
	return simgpu_gemm_launch(&g) ? CUBLAS_STATUS_EXECUTION_FAILED : CUBLAS_STATUS_SUCCESS;
}
