// Seed experiment: eager torch.add(torch.matmul(x, w), b) as cuBLAS SGEMM + a bias kernel, swept over sizes.
//
// Prints one line per (variant, size) with counts only, never timings, so outputs compare run to run; the
// profiler measures the time. Runs unchanged on a real GPU or on the simulated one (LD_LIBRARY_PATH).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CK(call)                                                                                               \
	do {                                                                                                   \
		cudaError_t e_ = (call);                                                                       \
		if (e_ != cudaSuccess) {                                                                       \
			fprintf(stderr, "matmul_sweep: %s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, \
				cudaGetErrorString(e_), (int)e_);                                              \
			exit(1);                                                                               \
		}                                                                                              \
	} while (0)

#define CB(call)                                                                                               \
	do {                                                                                                   \
		cublasStatus_t s_ = (call);                                                                    \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
			fprintf(stderr, "matmul_sweep: %s:%d: %s failed: cublas status %d\n", __FILE__, __LINE__, \
				#call, (int)s_);                                                               \
			exit(1);                                                                               \
		}                                                                                              \
	} while (0)

// y[batch][n][n] += b[n] along rows, as torch.add broadcasts a bias over the last dimension.
__global__ void bias_add(float *y, const float *b, long long total, int n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < total)
		y[i] += b[i % n];
}

struct options {
	std::vector<int> sizes;
	int steps = 50;
	int warmup = 5;
	bool gemm = true;
	bool bmm = false;
	int batch = 4;
};

static void usage(void)
{
	fprintf(stderr, "usage: matmul_sweep [--sizes 64,256,1024,4096] [--steps N] [--warmup N] "
			"[--variant gemm|bmm|both] [--batch B]\n");
	exit(2);
}

static int parse_int(const char *s, int lo)
{
	char *end = nullptr;
	long v = strtol(s, &end, 10);
	if (!end || *end || v < lo || v > 1000000)
		usage();
	return (int)v;
}

static options parse(int argc, char **argv)
{
	options o;
	const char *sizes = "64,256,1024,4096";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (i + 1 >= argc)
			usage();
		if (!strcmp(a, "--sizes"))
			sizes = argv[++i];
		else if (!strcmp(a, "--steps"))
			o.steps = parse_int(argv[++i], 1);
		else if (!strcmp(a, "--warmup"))
			o.warmup = parse_int(argv[++i], 0);
		else if (!strcmp(a, "--batch"))
			o.batch = parse_int(argv[++i], 1);
		else if (!strcmp(a, "--variant")) {
			const char *v = argv[++i];
			o.gemm = !strcmp(v, "gemm") || !strcmp(v, "both");
			o.bmm = !strcmp(v, "bmm") || !strcmp(v, "both");
			if (!o.gemm && !o.bmm)
				usage();
		} else
			usage();
	}
	std::vector<char> buf(sizes, sizes + strlen(sizes) + 1);
	for (char *tok = strtok(buf.data(), ","); tok; tok = strtok(nullptr, ","))
		o.sizes.push_back(parse_int(tok, 1));
	if (o.sizes.empty())
		usage();
	return o;
}

// One size, one variant: returns after the results are back on the host.
static void run(cublasHandle_t handle, int n, int batch, bool bmm, const options &o)
{
	const size_t elems = (size_t)n * n * batch;
	const size_t bytes = elems * sizeof(float);
	std::vector<float> hx(elems), hw(elems), hb(n), hy(elems);
	for (size_t i = 0; i < elems; i++) {
		hx[i] = (float)((i * 7) % 13) / 13.0f;
		hw[i] = (float)((i * 5) % 11) / 11.0f;
	}
	for (int i = 0; i < n; i++)
		hb[i] = (float)i / (float)n;

	float *x, *w, *b, *y;
	CK(cudaMalloc(&x, bytes));
	CK(cudaMalloc(&w, bytes));
	CK(cudaMalloc(&b, n * sizeof(float)));
	CK(cudaMalloc(&y, bytes));
	CK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(w, hw.data(), bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b, hb.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemset(y, 0, bytes));

	const float one = 1.0f, zero = 0.0f;
	const long long total = (long long)elems;
	const unsigned threads = 256;
	const unsigned blocks = (unsigned)((total + threads - 1) / threads);
	long gemm_calls = 0, bias_launches = 0;
	for (int step = 0; step < o.warmup + o.steps; step++) {
		// Row-major y = x @ w is column-major y^T = w^T x^T: swap the operands, no transposes.
		if (bmm) {
			long long stride = (long long)n * n;
			CB(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, w, n, stride, x,
						     n, stride, &zero, y, n, stride, batch));
		} else {
			CB(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, w, n, x, n, &zero, y, n));
		}
		gemm_calls++;
		bias_add<<<blocks, threads>>>(y, b, total, n);
		CK(cudaGetLastError());
		bias_launches++;
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hy.data(), y, bytes, cudaMemcpyDeviceToHost));
	CK(cudaFree(x));
	CK(cudaFree(w));
	CK(cudaFree(b));
	CK(cudaFree(y));
	printf("matmul_sweep: variant=%s size=%d batch=%d warmup=%d steps=%d gemm_calls=%ld bias_launches=%ld\n",
	       bmm ? "bmm" : "gemm", n, batch, o.warmup, o.steps, gemm_calls, bias_launches);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	options o = parse(argc, argv);
	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	CK(cudaSetDevice(0));
	cublasHandle_t handle;
	CB(cublasCreate(&handle));
	for (int n : o.sizes) {
		if (o.gemm)
			run(handle, n, 1, false, o);
		if (o.bmm)
			run(handle, n, o.batch, true, o);
	}
	CB(cublasDestroy(handle));
	printf("matmul_sweep: done sizes=%zu\n", o.sizes.size());
	return 0;
}
