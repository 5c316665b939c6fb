// Self-test of the simulated GPU: drives cudart, cuBLAS and CUPTI like a profiled program and checks the records.
//
// Run by selftest.sh with LD_LIBRARY_PATH=<build>/simgpu/lib and LD_PRELOAD=libselftest_hook.so; exits nonzero
// with one "selftest: FAIL:" line per broken expectation.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cupti.h>

static int g_failures;

#define CHECK(cond, ...)                                                                                       \
	do {                                                                                                   \
		if (!(cond)) {                                                                                 \
			g_failures++;                                                                          \
			fprintf(stderr, "selftest: FAIL: %s:%d: %s: ", __FILE__, __LINE__, #cond);             \
			fprintf(stderr, __VA_ARGS__);                                                          \
			fputc('\n', stderr);                                                                   \
		}                                                                                              \
	} while (0)

// A failed CUDA/CUPTI call ends the test: nothing after it would mean anything.
#define MUST(call)                                                                                             \
	do {                                                                                                   \
		long r_ = (long)(call);                                                                        \
		if (r_ != 0) {                                                                                 \
			fprintf(stderr, "selftest: FAIL: %s returned %ld\n", #call, r_);                       \
			exit(1);                                                                               \
		}                                                                                              \
	} while (0)

__global__ void kernelA(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] *= 2.0f;
}

__global__ void kernelB(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] += 1.0f;
}

// ------------------------------------------------------------------ record collection

struct api_rec {
	uint32_t kind, cbid, corr, pid, tid, ret;
	uint64_t start, end;
};
struct gpu_rec {
	uint32_t kind, corr, stream, device, context, copy_kind, src_kind, dst_kind;
	uint64_t start, end, bytes;
	int grid[3], block[3], regs;
	std::string name;
};

static std::mutex g_lock;
static std::vector<api_rec> g_api;
static std::vector<gpu_rec> g_gpu;
static std::vector<CUpti_ActivitySynchronization2> g_sync;
static std::vector<CUpti_ActivityExternalCorrelation> g_ext;
static std::vector<CUpti_ActivityOverhead3> g_overhead;
static std::map<int, int> g_kind_count;
static int g_requests, g_completions, g_dummy_calls, g_bad_records;
static size_t g_buf_size = 4096; // small, so buffers fill and complete on CUPTI's own thread

static void CUPTIAPI dummy_request(uint8_t **buffer, size_t *size, size_t *max)
{
	g_dummy_calls++;
	*buffer = nullptr;
	*size = 0;
	*max = 0;
}

static void CUPTIAPI dummy_complete(CUcontext, uint32_t, uint8_t *, size_t, size_t)
{
	g_dummy_calls++;
}

static void CUPTIAPI buffer_request(uint8_t **buffer, size_t *size, size_t *max)
{
	std::lock_guard<std::mutex> g(g_lock);
	g_requests++;
	*buffer = (uint8_t *)aligned_alloc(8, g_buf_size);
	*size = g_buf_size;
	*max = 0;
}

static void CUPTIAPI buffer_complete(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid)
{
	std::lock_guard<std::mutex> g(g_lock);
	g_completions++;
	CUpti_Activity *r = nullptr;
	CUptiResult st;
	while ((st = cuptiActivityGetNextRecord(buffer, valid, &r)) == CUPTI_SUCCESS) {
		g_kind_count[r->kind]++;
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_RUNTIME:
		case CUPTI_ACTIVITY_KIND_DRIVER: {
			auto *a = (CUpti_ActivityAPI *)r;
			g_api.push_back({ (uint32_t)a->kind, a->cbid, a->correlationId, a->processId, a->threadId,
					  a->returnValue, a->start, a->end });
			break;
		}
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		case CUPTI_ACTIVITY_KIND_KERNEL: {
			auto *k = (CUpti_ActivityKernel10 *)r;
			gpu_rec g{};
			g.kind = k->kind;
			g.corr = k->correlationId;
			g.stream = k->streamId;
			g.device = k->deviceId;
			g.context = k->contextId;
			g.start = k->start;
			g.end = k->end;
			g.grid[0] = k->gridX, g.grid[1] = k->gridY, g.grid[2] = k->gridZ;
			g.block[0] = k->blockX, g.block[1] = k->blockY, g.block[2] = k->blockZ;
			g.regs = k->registersPerThread;
			g.name = k->name ? k->name : "";
			g_gpu.push_back(g);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMCPY: {
			auto *m = (CUpti_ActivityMemcpy6 *)r;
			gpu_rec g{};
			g.kind = m->kind;
			g.corr = m->correlationId;
			g.stream = m->streamId;
			g.device = m->deviceId;
			g.context = m->contextId;
			g.start = m->start;
			g.end = m->end;
			g.bytes = m->bytes;
			g.copy_kind = m->copyKind;
			g.src_kind = m->srcKind;
			g.dst_kind = m->dstKind;
			g_gpu.push_back(g);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMSET: {
			auto *m = (CUpti_ActivityMemset4 *)r;
			gpu_rec g{};
			g.kind = m->kind;
			g.corr = m->correlationId;
			g.stream = m->streamId;
			g.device = m->deviceId;
			g.context = m->contextId;
			g.start = m->start;
			g.end = m->end;
			g.bytes = m->bytes;
			g_gpu.push_back(g);
			break;
		}
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
			g_sync.push_back(*(CUpti_ActivitySynchronization2 *)r);
			break;
		case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
			g_ext.push_back(*(CUpti_ActivityExternalCorrelation *)r);
			break;
		case CUPTI_ACTIVITY_KIND_OVERHEAD:
			g_overhead.push_back(*(CUpti_ActivityOverhead3 *)r);
			break;
		default:
			g_bad_records++;
			break;
		}
	}
	if (st != CUPTI_ERROR_MAX_LIMIT_REACHED)
		g_bad_records++;
	free(buffer);
}

// ------------------------------------------------------------------ callback API

static int g_cb_enter, g_cb_exit;
static std::string g_cb_symbol, g_cb_function;
static uint32_t g_cb_corr;

static void CUPTIAPI on_callback(void *, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	auto *d = (const CUpti_CallbackData *)data;
	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || cbid != CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
		return;
	if (d->callbackSite == CUPTI_API_ENTER) {
		if (g_cb_enter++ == 0) {
			g_cb_symbol = d->symbolName ? d->symbolName : "";
			g_cb_function = d->functionName ? d->functionName : "";
			g_cb_corr = d->correlationId;
		}
	} else {
		g_cb_exit++;
	}
}

// ------------------------------------------------------------------ helpers

static long hook_count(const char *name)
{
	static long (*fn)(const char *) = (long (*)(const char *))dlsym(RTLD_DEFAULT, "selftest_hook_count");
	return fn ? fn(name) : -1;
}

static uint64_t ts(void)
{
	uint64_t t = 0;
	MUST(cuptiGetTimestamp(&t));
	return t;
}

static const api_rec *api_by_corr(uint32_t corr)
{
	for (auto &a : g_api)
		if (a.corr == corr)
			return &a;
	return nullptr;
}

static void *thread_main(void *arg)
{
	float *p = (float *)arg;
	for (int i = 0; i < 25; i++)
		kernelB<<<1, 32>>>(p, 32);
	return nullptr;
}

__global__ void bias_add(float *y, const float *b, long long total, int n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < total)
		y[i] += b[i % n];
}

// "busy N": GPU busy share of the steady state of N x N SGEMM + bias-add steps, as the profiler's verdict uses.
static int busy(int n)
{
	g_buf_size = 8 << 20; // one buffer: buffer requests stay out of the measured window
	MUST(cuptiActivityRegisterCallbacks(buffer_request, buffer_complete));
	float *x, *w, *b, *y;
	size_t bytes = (size_t)n * n * sizeof(float);
	MUST(cudaMalloc(&x, bytes));
	MUST(cudaMalloc(&w, bytes));
	MUST(cudaMalloc(&b, n * sizeof(float)));
	MUST(cudaMalloc(&y, bytes));
	cublasHandle_t h;
	MUST(cublasCreate(&h));
	const float one = 1.0f, zero = 0.0f;
	long long total = (long long)n * n;
	unsigned blocks = (unsigned)((total + 255) / 256);
	for (int step = 0; step < 105; step++) {
		if (step == 5) { // warm-up done: first-use costs stay out of the window
			MUST(cudaDeviceSynchronize());
			MUST(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
			MUST(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
		}
		MUST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, w, n, x, n, &zero, y, n));
		bias_add<<<blocks, 256>>>(y, b, total, n);
	}
	MUST(cudaDeviceSynchronize());
	MUST(cuptiActivityFlushAll(1));
	std::lock_guard<std::mutex> g(g_lock);
	uint64_t w0 = UINT64_MAX, w1 = 0, busy_ns = 0, cur_s = 0, cur_e = 0;
	std::vector<std::pair<uint64_t, uint64_t>> iv;
	for (auto &a : g_api)
		if (a.cbid != CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 && a.start < w0)
			w0 = a.start;
	for (auto &k : g_gpu) {
		iv.push_back({ k.start, k.end });
		if (k.end > w1)
			w1 = k.end;
	}
	std::sort(iv.begin(), iv.end());
	for (auto &p : iv) {
		if (p.first > cur_e) {
			busy_ns += cur_e - cur_s;
			cur_s = p.first;
			cur_e = p.second;
		} else if (p.second > cur_e) {
			cur_e = p.second;
		}
	}
	busy_ns += cur_e - cur_s;
	if (getenv("SELFTEST_DEBUG")) {
		std::map<uint32_t, std::pair<int, uint64_t>> per;
		for (auto &a : g_api) {
			per[a.cbid].first++;
			per[a.cbid].second += a.end - a.start;
		}
		for (auto &p : per)
			fprintf(stderr, "cbid %u: %d calls, avg %llu ns\n", p.first, p.second.first,
				(unsigned long long)(p.second.second / p.second.first));
		fprintf(stderr, "window %llu ns\n", (unsigned long long)(w1 - w0));
	}
	printf("selftest: busy size=%d kernels=%zu busy_pct=%.1f\n", n, g_gpu.size(),
	       100.0 * (double)busy_ns / (double)(w1 - w0));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "busy"))
		return busy(atoi(argv[2]));
	CHECK(dlsym(RTLD_DEFAULT, "selftest_hook_count") != nullptr, "run with LD_PRELOAD=libselftest_hook.so");

	// CUPTI set-up, with a first registration that must be replaced by the second.
	MUST(cuptiActivityRegisterCallbacks(dummy_request, dummy_complete));
	MUST(cuptiActivityRegisterCallbacks(buffer_request, buffer_complete));
	const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
					     CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
					     CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
					     CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_OVERHEAD };
	for (auto k : kinds)
		MUST(cuptiActivityEnable(k));
	CHECK(cuptiActivityEnable((CUpti_ActivityKind)100000) == CUPTI_ERROR_INVALID_KIND, "bad kind accepted");

	CUpti_SubscriberHandle sub, sub2;
	MUST(cuptiSubscribe(&sub, on_callback, nullptr));
	CUptiResult second = cuptiSubscribe(&sub2, on_callback, nullptr);
	CHECK(second == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "second subscriber got %d", (int)second);
	const char *str = nullptr;
	MUST(cuptiGetResultString(second, &str));
	CHECK(!strcmp(str, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"), "result string %s", str);
	MUST(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &str));
	CHECK(!strcmp(str, "cudaLaunchKernel_v7000"), "callback name %s", str);

	const uint64_t t_begin = ts();
	const int N = 1024;
	std::vector<float> host(N, 1.0f);
	float *da, *db;
	MUST(cudaMalloc(&da, N * sizeof(float)));
	MUST(cudaMalloc(&db, N * sizeof(float)));
	MUST(cudaMemcpy(da, host.data(), N * sizeof(float), cudaMemcpyHostToDevice));
	MUST(cudaMemset(db, 7, N * sizeof(float)));
	cudaStream_t s;
	MUST(cudaStreamCreate(&s));

	MUST(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
	MUST(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 4242));
	kernelA<<<4, 128>>>(da, N);
	uint64_t popped = 0;
	MUST(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &popped));
	CHECK(popped == 4242, "popped %llu", (unsigned long long)popped);
	CHECK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &popped) ==
		      CUPTI_ERROR_QUEUE_EMPTY,
	      "pop of an empty stack");
	MUST(cudaGetLastError());
	kernelB<<<2, 64, 0, s>>>(db, N);
	kernelA<<<4, 128>>>(da, N);
	MUST(cuptiEnableCallback(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
	MUST(cuptiUnsubscribe(sub));

	cublasHandle_t h;
	MUST(cublasCreate(&h));
	const float one = 1.0f, zero = 0.0f;
	long hooks_before[4] = { hook_count("cudaLaunchKernel"), hook_count("cudaLaunchKernelExC"),
				 hook_count("cudaOccupancyMaxActiveBlocksPerMultiprocessor"),
				 hook_count("cudaMalloc") };
	const uint64_t t_gemm0 = ts();
	MUST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, da, 16, da, 16, &zero, db, 16));
	const uint64_t t_gemm1 = ts();
	long hooks_after[4] = { hook_count("cudaLaunchKernel"), hook_count("cudaLaunchKernelExC"),
				hook_count("cudaOccupancyMaxActiveBlocksPerMultiprocessor"),
				hook_count("cudaMalloc") };
	for (int i = 0; i < 4; i++)
		CHECK(hooks_before[i] == hooks_after[i], "cuBLAS reached a cudart export (hook %d: %ld -> %ld)", i,
		      hooks_before[i], hooks_after[i]);
	CHECK(hook_count("cublasSgemm_v2") == 1, "cublasSgemm_v2 hook saw %ld calls", hook_count("cublasSgemm_v2"));

	MUST(cudaMemcpy(host.data(), db, N * sizeof(float), cudaMemcpyDeviceToHost));
	CHECK(((unsigned char *)host.data())[0] == 7, "memset value did not reach the host copy");
	MUST(cudaStreamSynchronize(s));
	MUST(cudaDeviceSynchronize());
	const uint64_t t_synced = ts();

	pthread_t th[4];
	for (auto &t : th)
		MUST(pthread_create(&t, nullptr, thread_main, db));
	for (auto &t : th)
		MUST(pthread_join(t, nullptr));
	MUST(cudaDeviceSynchronize());

	// cuBLASLt: one nvjet kernel, launched internally with cluster attributes.
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t heur;
	int nheur = 0;
	MUST(cublasLtCreate(&lt));
	MUST(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	int32_t trans = CUBLAS_OP_T;
	MUST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
	MUST(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 16, 32, 16)); // op(A) = A^T: 32 x 16
	MUST(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 16, 16, 16));
	MUST(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, 32, 16, 32));
	MUST(cublasLtMatmulPreferenceCreate(&pref));
	MUST(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &nheur));
	CHECK(nheur == 1 && heur.state == CUBLAS_STATUS_SUCCESS, "heuristic results %d", nheur);
	MUST(cublasLtMatmul(lt, op, &one, da, la, da, lb, &zero, db, lc, db, lc, &heur.algo, nullptr, 0, s));
	MUST(cublasLtMatmulPreferenceDestroy(pref));
	MUST(cublasLtMatrixLayoutDestroy(la));
	MUST(cublasLtMatrixLayoutDestroy(lb));
	MUST(cublasLtMatrixLayoutDestroy(lc));
	MUST(cublasLtMatmulDescDestroy(op));
	MUST(cublasLtDestroy(lt));
	MUST(cudaStreamSynchronize(s));

	MUST(cublasDestroy(h));
	MUST(cudaStreamDestroy(s));
	MUST(cudaFree(da));
	MUST(cudaFree(db));
	const uint64_t t_end = ts();
	MUST(cuptiActivityFlushAll(0));

	std::lock_guard<std::mutex> g(g_lock);

	// Counts by kind and, for runtime records, by callback id.
	CHECK(g_dummy_calls == 0, "replaced callbacks were called %d times", g_dummy_calls);
	CHECK(g_bad_records == 0, "%d unexpected records or iteration errors", g_bad_records);
	size_t dropped = 1;
	MUST(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
	CHECK(dropped == 0, "%zu dropped records", dropped);
	CHECK(g_requests >= 2 && g_completions == g_requests, "requests %d completions %d", g_requests,
	      g_completions);
	CHECK(g_kind_count[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] == 105, "kernels %d",
	      g_kind_count[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
	CHECK(g_kind_count[CUPTI_ACTIVITY_KIND_MEMCPY] == 2, "memcpys %d", g_kind_count[CUPTI_ACTIVITY_KIND_MEMCPY]);
	CHECK(g_kind_count[CUPTI_ACTIVITY_KIND_MEMSET] == 1, "memsets %d", g_kind_count[CUPTI_ACTIVITY_KIND_MEMSET]);
	CHECK(g_kind_count[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION] == 4, "syncs %d",
	      g_kind_count[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]);
	CHECK(g_kind_count[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION] == 1, "external correlations %d",
	      g_kind_count[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION]);
	CHECK(g_kind_count[CUPTI_ACTIVITY_KIND_DRIVER] == 0, "driver records %d",
	      g_kind_count[CUPTI_ACTIVITY_KIND_DRIVER]);
	std::map<uint32_t, int> cb;
	for (auto &a : g_api)
		cb[a.cbid]++;
	const std::map<uint32_t, int> want = {
		{ CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 3 }, // two here, one inside cuBLAS (workspace)
		{ CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 2 },
		{ CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, 1 },
		{ CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020, 1 },
		{ CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 104 },
		{ CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020, 1 },
		{ CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000, 1 },
		{ CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 2 },
		{ CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, 1 }, // inside cublasLtMatmul
		{ CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 2 },
		{ CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050, 1 },
		{ CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, 2 },
	};
	CHECK(cb == want, "runtime records by cbid differ (%zu cbids, %zu records)", cb.size(), g_api.size());
	for (auto &w : want)
		CHECK(cb[w.first] == w.second, "cbid %u: %d records, want %d", w.first, cb[w.first], w.second);

	// What the hooks saw: <<<>>> goes through __cudaLaunchKernel only; cuBLAS internals never show.
	CHECK(hook_count("__cudaLaunchKernel") == 103, "__cudaLaunchKernel hook %ld", hook_count("__cudaLaunchKernel"));
	CHECK(hook_count("cudaLaunchKernel") == 0, "cudaLaunchKernel hook %ld", hook_count("cudaLaunchKernel"));
	CHECK(hook_count("cudaMalloc") == 2, "cudaMalloc hook %ld", hook_count("cudaMalloc"));
	CHECK(hook_count("cudaOccupancyMaxActiveBlocksPerMultiprocessor") == 0, "occupancy hook %ld",
	      hook_count("cudaOccupancyMaxActiveBlocksPerMultiprocessor"));

	// Callback API: three launches seen while enabled, named, with the correlation id of the records.
	CHECK(g_cb_enter == 3 && g_cb_exit == 3, "callbacks enter %d exit %d", g_cb_enter, g_cb_exit);
	CHECK(g_cb_symbol == "_Z7kernelAPfi", "callback symbol '%s'", g_cb_symbol.c_str());
	CHECK(g_cb_function == "cudaLaunchKernel", "callback function '%s'", g_cb_function.c_str());

	// API records: ordered times inside the run, this process, unique correlation ids.
	std::set<uint32_t> corrs;
	std::set<uint32_t> tids;
	const uint32_t main_tid = (uint32_t)pthread_self();
	for (auto &a : g_api) {
		CHECK(a.start <= a.end, "api cbid %u start > end", a.cbid);
		CHECK(a.start >= t_begin && a.end <= t_end, "api cbid %u outside the run", a.cbid);
		CHECK(a.pid == (uint32_t)getpid(), "api pid %u", a.pid);
		CHECK(a.ret == 0, "api cbid %u returned %u", a.cbid, a.ret);
		CHECK(corrs.insert(a.corr).second, "duplicate correlation id %u", a.corr);
		tids.insert(a.tid);
	}
	CHECK(tids.count(main_tid) == 1 && tids.size() == 5, "%zu distinct thread ids (main %s)", tids.size(),
	      tids.count(main_tid) ? "present" : "missing");

	// GPU records: each joins a runtime record, starts after its call began, lies inside the run.
	const gpu_rec *first_a = nullptr, *second_a = nullptr, *kb = nullptr, *gemm = nullptr, *ltk = nullptr;
	uint64_t last_end_before_sync = 0;
	for (auto &gr : g_gpu) {
		const api_rec *a = api_by_corr(gr.corr);
		CHECK(a != nullptr, "gpu record (kind %u) with correlation %u has no runtime record", gr.kind, gr.corr);
		CHECK(gr.start <= gr.end, "gpu record start > end");
		CHECK(!a || gr.start >= a->start, "gpu record starts before its API call");
		CHECK(gr.device == 0 && gr.context == 1, "device %u context %u", gr.device, gr.context);
		CHECK(gr.end <= t_end + 1000000000ull, "gpu record ends long after the run");
		if (a && a->end <= t_synced && gr.end > last_end_before_sync)
			last_end_before_sync = gr.end;
		if (gr.kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		if (gr.name.rfind("nvjet_sss_64x64", 0) == 0) {
			ltk = &gr;
			CHECK(a && a->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, "nvjet not from ExC");
			CHECK(gr.grid[0] == 1 && gr.grid[1] == 1, "nvjet grid %d x %d", gr.grid[0], gr.grid[1]);
			continue;
		}
		CHECK(a && a->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "kernel not from cudaLaunchKernel");
		if (gr.name == "_Z7kernelAPfi")
			(first_a ? second_a : first_a) = &gr;
		else if (gr.name == "_Z7kernelBPfi" && gr.grid[0] == 2)
			kb = &gr;
		else if (gr.name.rfind("ampere_sgemm_32x32_sliced1x4_nn", 0) == 0)
			gemm = &gr;
		else
			CHECK(gr.name == "_Z7kernelBPfi", "unexpected kernel '%s'", gr.name.c_str());
	}
	CHECK(ltk && kb && ltk->stream == kb->stream, "cublasLtMatmul kernel missing or not on its stream");
	CHECK(t_synced >= last_end_before_sync, "cudaDeviceSynchronize returned before the GPU was done");
	CHECK(first_a && second_a && kb && gemm, "kernels missing (A %p/%p B %p gemm %p)", (void *)first_a,
	      (void *)second_a, (void *)kb, (void *)gemm);
	if (first_a && second_a && kb && gemm) {
		CHECK(first_a->grid[0] == 4 && first_a->grid[1] == 1 && first_a->block[0] == 128 &&
			      first_a->block[1] == 1,
		      "kernelA geometry");
		CHECK(first_a->regs > 0, "registers per thread");
		CHECK(first_a->end - first_a->start == second_a->end - second_a->start,
		      "same launch, different durations (%llu vs %llu)",
		      (unsigned long long)(first_a->end - first_a->start),
		      (unsigned long long)(second_a->end - second_a->start));
		CHECK(kb->stream != first_a->stream, "kernelB on stream %u like kernelA", kb->stream);
		CHECK(first_a->corr == g_cb_corr, "callback correlation %u vs record %u", g_cb_corr, first_a->corr);
		// The external id joins the first launch's runtime record to its kernel.
		CHECK(g_ext.size() == 1 && g_ext[0].externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 &&
			      g_ext[0].externalId == 4242 && g_ext[0].correlationId == first_a->corr,
		      "external correlation does not join kernelA");
		// The GEMM: occupancy query then launch, both inside the cublasSgemm call, no export reached.
		const api_rec *ga = api_by_corr(gemm->corr);
		const api_rec *occ = nullptr;
		for (auto &a : g_api)
			if (a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000)
				occ = &a;
		CHECK(ga && occ && occ->corr < ga->corr && occ->start >= t_gemm0 && ga->end <= t_gemm1,
		      "GEMM records not inside the cublasSgemm call");
	}
	for (auto &m : g_gpu) {
		if (m.kind != CUPTI_ACTIVITY_KIND_MEMCPY)
			continue;
		bool h2d = m.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		CHECK(m.bytes == N * sizeof(float), "memcpy bytes %llu", (unsigned long long)m.bytes);
		CHECK(h2d || m.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, "copy kind %u", m.copy_kind);
		CHECK(m.src_kind == (h2d ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) &&
			      m.dst_kind ==
				      (h2d ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE),
		      "memory kinds %u -> %u", m.src_kind, m.dst_kind);
	}
	for (auto &sy : g_sync)
		CHECK(sy.start <= sy.end && api_by_corr(sy.correlationId), "sync record without its API record");
	int lazy = 0, request = 0;
	for (auto &o : g_overhead) {
		lazy += o.overheadKind == CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING;
		request += o.overheadKind == CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
		CHECK(o.start <= o.end, "overhead start > end");
	}
	CHECK(lazy == 4, "lazy loading overheads %d, want 4 (kernelA, kernelB, the GEMM, nvjet)", lazy);
	CHECK(request == g_requests, "buffer request overheads %d, requests %d", request, g_requests);

	if (g_failures) {
		fprintf(stderr, "selftest: %d failure(s)\n", g_failures);
		return 1;
	}
	printf("selftest: ok (%zu runtime, %zu gpu, %zu sync, %zu overhead records in %d buffers)\n", g_api.size(),
	       g_gpu.size(), g_sync.size(), g_overhead.size(), g_completions);
	return 0;
}
