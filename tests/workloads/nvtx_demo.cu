// NVTX v3 annotations for the tests: `steps N` (nested step/forward/backward ranges, names, a domain, a range
// ended on another thread, a mark), `plain N` (the same GPU work, no NVTX call), `bench N` (N push+pop pairs).
// stdout: one summary line, the same with or without a profiler; exits nonzero on a CUDA error or a wrong level.
#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#define CK(call)                                                                       \
	do {                                                                           \
		cudaError_t e_ = (call);                                               \
		if (e_ != cudaSuccess) {                                               \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,    \
				cudaGetErrorString(e_));                               \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

enum { FWD_KERNELS = 3, BWD_KERNELS = 2, COLD_KERNELS = 4, N_ELEMS = 1 << 16 };

__global__ void forward(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

__global__ void backward(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] - 0.25f;
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void busy_ms(double ms)
{
	double end = now_ns() + ms * 1e6;
	while (now_ns() < end)
		;
}

// Without a tool NVTX returns NVTX_NO_PUSH_POP_TRACKING (-2); with one, the 0-based level.
static void check_level(const char *what, int got, int want)
{
	if (got >= 0 && got != want) {
		fprintf(stderr, "nvtx_demo: %s returned level %d, want %d\n", what, got, want);
		exit(3);
	}
}

static void *end_elsewhere(void *arg)
{
	nvtxRangeEnd(*(nvtxRangeId_t *)arg);
	return nullptr;
}

static int run(int steps, bool annotate)
{
	float *x;
	cudaStream_t s;
	int kernels = 0, blocks = (N_ELEMS + 255) / 256;
	nvtxDomainHandle_t dom = nullptr;
	nvtxStringHandle_t load = nullptr;

	CK(cudaMalloc(&x, N_ELEMS * sizeof(float)));
	CK(cudaMemset(x, 0, N_ELEMS * sizeof(float)));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	if (annotate) {
		nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "main thread");
		nvtxNameCudaStreamA(s, "compute stream");
		dom = nvtxDomainCreateA("demo.io");
		load = nvtxDomainRegisterStringA(dom, "load batch");

		nvtxEventAttributes_t a;
		memset(&a, 0, sizeof(a));
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		a.message.registered = load;
		check_level("nvtxDomainRangePushEx", nvtxDomainRangePushEx(dom, &a), 0);
		busy_ms(1);
		check_level("nvtxDomainRangePop", nvtxDomainRangePop(dom), 0);

		check_level("nvtxRangePushW", nvtxRangePushW(L"wide \u00fcn\u00efcode \u2713"), 0);
		check_level("nvtxRangePop", nvtxRangePop(), 0);
	}
	if (getenv("NVTX_DEMO_WARM")) {
		// warm-up outside the steps: each kernel's first launch (lazy module loading) happens here
		forward<<<blocks, 256, 0, s>>>(x, N_ELEMS);
		backward<<<blocks, 256, 0, s>>>(x, N_ELEMS);
		kernels += 2;
		CK(cudaStreamSynchronize(s));
	}
	for (int i = 0; i < steps; i++) {
		if (annotate)
			check_level("push step", nvtxRangePushA("step"), 0);
		if (annotate)
			check_level("push forward", nvtxRangePushA("forward"), 1);
		for (int k = 0; k < FWD_KERNELS; k++, kernels++)
			forward<<<blocks, 256, 0, s>>>(x, N_ELEMS);
		if (getenv("NVTX_DEMO_WARM"))
			busy_ms(40); // steady host work in every step: a step that a preemption cannot stretch by half.
				     // 1 ms was not (under load the first step took 1.5x the median once, and was called
				     // cold), nor 10 ms with two make checks and two builds on 2 cores (load 5-8): the
				     // rule reads wall time, and a preempted first step does look cold to it
				     // (docs/testing.md)
		if (i == 0 && getenv("NVTX_DEMO_WARM") == NULL) {
			// the cold first step: more work and host time than any later one (NVTX_DEMO_WARM=1: not)
			for (int k = 0; k < COLD_KERNELS; k++, kernels++)
				forward<<<blocks, 256, 0, s>>>(x, N_ELEMS);
			busy_ms(20);
		}
		CK(cudaGetLastError());
		if (annotate)
			check_level("pop forward", nvtxRangePop(), 1);
		if (annotate) {
			nvtxEventAttributes_t a;
			memset(&a, 0, sizeof(a));
			a.version = NVTX_VERSION;
			a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
			a.colorType = NVTX_COLOR_ARGB;
			a.color = 0xff00ff00u;
			a.category = 7;
			a.messageType = NVTX_MESSAGE_TYPE_ASCII;
			a.message.ascii = "backward";
			check_level("push backward", nvtxRangePushEx(&a), 1);
		}
		for (int k = 0; k < BWD_KERNELS; k++, kernels++)
			backward<<<blocks, 256, 0, s>>>(x, N_ELEMS);
		CK(cudaGetLastError());
		if (annotate)
			check_level("pop backward", nvtxRangePop(), 1);
		CK(cudaStreamSynchronize(s));
		if (annotate)
			check_level("pop step", nvtxRangePop(), 0);
	}
	if (annotate) {
		// a range that another thread ends
		nvtxRangeId_t id = nvtxRangeStartA("async io");
		pthread_t t;
		busy_ms(1);
		if (pthread_create(&t, nullptr, end_elsewhere, &id) != 0 || pthread_join(t, nullptr) != 0) {
			fprintf(stderr, "nvtx_demo: pthread failed\n");
			exit(1);
		}
		nvtxMarkA("checkpoint");
		// a pop without a push: NVTX says it returns a negative level
		if (nvtxRangePop() >= 0) {
			fprintf(stderr, "nvtx_demo: an unmatched pop returned a level\n");
			exit(3);
		}
	}
	CK(cudaDeviceSynchronize());
	CK(cudaStreamDestroy(s));
	CK(cudaFree(x));
	printf("steps %d kernels %d\n", steps, kernels);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

// The cost of one push+pop pair as the program sees it: after a first pair (which pays the start-up), in
// bursts of 1000 pairs that fit a profiler's per-thread buffer, with pauses (not timed) for it to drain.
static int bench(long n)
{
	enum { BURST = 1000 };
	long bursts = (n + BURST - 1) / BURST, done = 0;
	double *per = (double *)calloc(bursts, sizeof(double)), t = 0;

	if (per == nullptr)
		return 1;
	nvtxRangePushA("bench");
	nvtxRangePop();
	for (long b = 0; b < bursts; b++) {
		long burst = n - done < BURST ? n - done : BURST;
		double t0 = now_ns();
		for (long i = 0; i < burst; i++) {
			nvtxRangePushA("bench");
			nvtxRangePop();
		}
		double dt = now_ns() - t0;
		t += dt;
		per[b] = dt / burst;
		done += burst;
		usleep(6000);
	}
	qsort(per, bursts, sizeof(double), cmp_double);
	printf("push+pop %.1f ns per pair (median of %ld bursts), %.1f ns mean, %ld pairs\n", per[bursts / 2], bursts,
	       t / n, n);
	free(per);
	return 0;
}

// `signal N`: 8 threads push ranges with new messages (a profiler interns each: its string table's lock) and allocate
// and free 64 KiB blocks (malloc's arena lock), while the main thread signals each of them every millisecond, N
// times; the handler pushes and pops two ranges in a domain past the 31 a thread's fixed level slots hold, with
// messages of their own. A profiler that takes a lock or calls malloc there can deadlock the thread it interrupted
// (2026-12-06: cprof's string table's lock, taken again by the handler on the thread that held it).
static nvtxDomainHandle_t sig_dom;
static volatile sig_atomic_t sig_bad;
static volatile int sig_stop;
enum { SIG_MSGS = 8192 };
static char sig_msg[SIG_MSGS][24]; // made before the signals: a handler cannot format one
static unsigned sig_next;

static void sig_push(int)
{
	nvtxEventAttributes_t a = {};
	int outer, inner;

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	// two messages new to the profiler: the second after the first may have been the thread's first event
	a.message.ascii = sig_msg[__atomic_fetch_add(&sig_next, 1, __ATOMIC_RELAXED) % SIG_MSGS];
	outer = nvtxDomainRangePushEx(sig_dom, &a);
	a.message.ascii = sig_msg[__atomic_fetch_add(&sig_next, 1, __ATOMIC_RELAXED) % SIG_MSGS];
	inner = nvtxDomainRangePushEx(sig_dom, &a);
	if (nvtxDomainRangePop(sig_dom) != inner || nvtxDomainRangePop(sig_dom) != outer)
		sig_bad = 1;
}

static void *sig_worker(void *)
{
	unsigned long n = 0;
	char msg[48];

	// no call before the loop: the thread's first event, and with it its ring, may come from a handler
	while (!sig_stop) {
		char *p = (char *)malloc(65536 + (n & 4095));

		if (p)
			p[0] = 1;
		free(p);
		snprintf(msg, sizeof(msg), "w%p-%lu", (void *)&n, n++);
		nvtxRangePushA(msg);
		nvtxRangePop();
	}
	return nullptr;
}

static int signal_mode(long n)
{
	enum { WORKERS = 8 };
	pthread_t t[WORKERS];
	struct sigaction sa = {};
	char name[16];

	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		nvtxDomainCreateA(name);
	}
	sig_dom = nvtxDomainCreateA("late");
	for (int i = 0; i < SIG_MSGS; i++)
		snprintf(sig_msg[i], sizeof(sig_msg[i]), "in a handler %d", i);
	sa.sa_handler = sig_push;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, nullptr);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], nullptr, sig_worker, nullptr);
	for (long k = 0; k < n; k++) {
		for (int i = 0; i < WORKERS; i++)
			pthread_kill(t[i], SIGUSR1);
		usleep(1000);
	}
	sig_stop = 1;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], nullptr);
	printf("signal %ld%s\n", n, sig_bad ? " (a pop returned another level)" : "");
	return sig_bad;
}

int main(int argc, char **argv)
{
	if (argc != 3 || atol(argv[2]) < 1) {
		fprintf(stderr, "usage: %s steps|plain|bench|many|domain|domains|signal N\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "steps") == 0)
		return run(atoi(argv[2]), true);
	if (strcmp(argv[1], "plain") == 0)
		return run(atoi(argv[2]), false);
	if (strcmp(argv[1], "bench") == 0)
		return bench(atol(argv[2]));
	if (strcmp(argv[1], "many") == 0) {
		// N ranges, each with a message of its own ("item 0", "item 1", ...)
		char msg[32];
		long n = atol(argv[2]);

		for (long i = 0; i < n; i++) {
			snprintf(msg, sizeof(msg), "item %ld", i);
			nvtxRangePushA(msg);
			nvtxRangePop();
			if (i % 1000 == 999)
				usleep(20000); // the profiler's rings drain (4096 events a thread)
		}
		// then one launch: its name must still have room in the profiler's string table
		float *x = nullptr;
		if (cudaMalloc(&x, N_ELEMS * sizeof(float)) == cudaSuccess) {
			forward<<<1, 256>>>(x, N_ELEMS);
			cudaDeviceSynchronize();
			cudaFree(x);
		}
		printf("many %ld\n", n);
		return 0;
	}
	if (strcmp(argv[1], "domain") == 0) {
		// In turn: a default-domain range "measure" with 1 backward launch; one named "user@host" with 2; a range
		// "measure" of domain "mydom" whose message is a registered string (the form nsys's NVTX capture matches
		// by default) with 2N forward launches, a default-domain range "other" popped at the same level halfway;
		// then 1 backward launch outside every range
		nvtxDomainHandle_t d = nvtxDomainCreateA("mydom");
		nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "measure");
		nvtxEventAttributes_t ea = {};
		float *x = nullptr;
		long n = atol(argv[2]);

		ea.version = NVTX_VERSION;
		ea.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		ea.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		ea.message.registered = s;
		if (cudaMalloc(&x, N_ELEMS * sizeof(float)) != cudaSuccess)
			return 1;
		nvtxRangePushA("measure");
		backward<<<1, 256>>>(x, N_ELEMS);
		cudaDeviceSynchronize();
		nvtxRangePop();
		nvtxRangePushA("user@host");
		backward<<<1, 256>>>(x, N_ELEMS);
		backward<<<1, 256>>>(x, N_ELEMS);
		cudaDeviceSynchronize();
		nvtxRangePop();
		nvtxDomainRangePushEx(d, &ea);
		nvtxRangePushA("other");
		for (long i = 0; i < n; i++)
			forward<<<1, 256>>>(x, N_ELEMS);
		nvtxRangePop(); // the default domain's level 0: not the end of mydom's range
		for (long i = 0; i < n; i++)
			forward<<<1, 256>>>(x, N_ELEMS);
		cudaDeviceSynchronize();
		nvtxDomainRangePop(d);
		backward<<<1, 256>>>(x, N_ELEMS);
		cudaDeviceSynchronize();
		cudaFree(x);
		printf("domain %ld\n", n);
		return 0;
	}
	if (strcmp(argv[1], "domains") == 0) {
		// 40 domains made first, so "late" and "late2" are past the 31 a thread's fixed level slots hold: "late"'s
		// range "measure" with 2N forward launches, "late2"'s range "other" pushed inside it and popped after it
		// (each domain has its own stack), 1 backward launch between the two pops
		char name[16];
		float *x = nullptr;
		long n = atol(argv[2]);

		for (int i = 0; i < 40; i++) {
			snprintf(name, sizeof(name), "d%d", i);
			nvtxDomainCreateA(name);
		}
		nvtxDomainHandle_t late = nvtxDomainCreateA("late"), late2 = nvtxDomainCreateA("late2");
		nvtxEventAttributes_t a = {};

		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		if (cudaMalloc(&x, N_ELEMS * sizeof(float)) != cudaSuccess)
			return 1;
		a.message.ascii = "measure";
		check_level("nvtxDomainRangePushEx late", nvtxDomainRangePushEx(late, &a), 0);
		a.message.ascii = "other";
		check_level("nvtxDomainRangePushEx late2", nvtxDomainRangePushEx(late2, &a), 0);
		for (long i = 0; i < 2 * n; i++)
			forward<<<1, 256>>>(x, N_ELEMS);
		cudaDeviceSynchronize();
		check_level("nvtxDomainRangePop late", nvtxDomainRangePop(late), 0);
		backward<<<1, 256>>>(x, N_ELEMS);
		cudaDeviceSynchronize();
		check_level("nvtxDomainRangePop late2", nvtxDomainRangePop(late2), 0);
		cudaFree(x);
		printf("domains %ld\n", n);
		return 0;
	}
	if (strcmp(argv[1], "signal") == 0)
		return signal_mode(atol(argv[2]));
	fprintf(stderr, "usage: %s steps|plain|bench|many|domain|domains|signal N\n", argv[0]);
	return 2;
}
