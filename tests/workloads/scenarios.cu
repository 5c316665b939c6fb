// Process and thread shapes for the integration tests: threads, fork, exec, a long loop, C++ exceptions, crashes.
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cublas_v2.h>
#include <signal.h>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void kern_a(int *p) { if (p) p[threadIdx.x] = 1; }
__global__ void kern_b(int *p) { if (p) p[threadIdx.x] = 2; }
__global__ void kern_c(int *p) { if (p) p[threadIdx.x] = 3; }

static void launch_a(int n) { for (int i = 0; i < n; i++) kern_a<<<1, 32>>>(nullptr); }
static void launch_b(int n) { for (int i = 0; i < n; i++) kern_b<<<2, 64>>>(nullptr); }

static void *thread_b(void *arg)
{
	launch_b(*(int *)arg);
	return nullptr;
}

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *burst_thread(void *arg)
{
	launch_a(*(int *)arg);
	return nullptr;
}

static void *one_launch(void *arg)
{
	(void)arg;
	launch_a(1);
	return nullptr;
}

struct pace_arg {
	double rate, secs; // per thread
};

static void *pace_thread(void *arg)
{
	const pace_arg *p = (const pace_arg *)arg;
	double t0 = now_us();
	long done = 0, total = (long)(p->rate * p->secs);
	while (done < total) {
		long due = (long)((now_us() - t0) * p->rate / 1e6) + 1;
		if (due > total)
			due = total;
		if (due > done) {
			launch_a((int)(due - done));
			done = due;
		}
		usleep(1000);
	}
	return (void *)(intptr_t)done;
}

// The program's own crash handler (mode die): says it ran, then lets the signal do what it does by default.
static void app_crash_handler(int sig)
{
	static const char msg[] = "app handler ran\n";
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(99);
	signal(sig, SIG_DFL);
	if (sig == SIGABRT)
		raise(sig); // a raised signal is not raised again by returning
}

static void install_app_handler(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = app_crash_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, nullptr);
}

static std::atomic<int> stop_flag;
static void *launch_until_stopped(void *arg)
{
	long *n = (long *)arg;
	while (!stop_flag.load()) {
		launch_b(1);
		++*n;
	}
	return nullptr;
}

static volatile sig_atomic_t got_term;
static void on_term(int sig) { (void)sig; got_term = 1; }

extern char **environ;

// depth frames of C++, a throw at the bottom, caught at the top: the unwinder must be the target's own
// (noinline and the barrier keep the compiler from turning the recursion into a loop: 20 real frames)
__attribute__((noinline)) static int deep(int depth)
{
	int r;

	if (depth == 0) {
		launch_a(1);
		throw std::runtime_error("bottom");
	}
	r = deep(depth - 1);
	asm volatile("" : "+r"(r)::"memory");
	return r + 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "threads")) {
		// N launches: half from the main thread (kern_a), half from a second thread (kern_b)
		int n = argc > 2 ? atoi(argv[2]) : 1000, half = n / 2, rest = n - n / 2;
		pthread_t t;
		pthread_create(&t, nullptr, thread_b, &rest);
		launch_a(half);
		pthread_join(t, nullptr);
		cudaDeviceSynchronize();
		printf("threads launched %d\n", n);
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		int a = atoi(argv[2]), b = atoi(argv[3]), status = 0;
		const char *how = argc > 4 ? argv[4] : "exit";
		launch_a(a);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			launch_b(b);
			printf("child %d launched %d\n", (int)getpid(), b);
			fflush(stdout);
			if (!strcmp(how, "_exit"))
				_exit(0);
			exit(0);
		}
		waitpid(pid, &status, 0);
		printf("parent launched %d, child pid %d status %d\n", a, (int)pid, WEXITSTATUS(status));
		printf("CHILDPID %d\n", (int)pid);
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		// exec [N]: N launches (2 unless given), then exec "after-exec"
		launch_a(argc > 2 ? atoi(argv[2]) : 2);
		fflush(stdout);
		execl(argv[0], argv[0], "after-exec", (char *)nullptr);
		perror("execl");
		return 1;
	}
	if (!strcmp(mode, "exec-fail")) {
		// exec-fail N M: N launches, an exec that fails (no such file), then M launches and exit 0
		launch_a(atoi(argv[2]));
		execl("/nonexistent/cprof-test", "cprof-test", (char *)nullptr);
		launch_b(atoi(argv[3]));
		cudaDeviceSynchronize();
		printf("exec failed: %s\n", strerror(errno));
		return 0;
	}
	if (!strcmp(mode, "exit-threads")) {
		// N launches on the main thread while two threads launch without end, then exit(3) (or execs
		// "after-exec" with "exec"): the other threads are still launching as the process ends
		int n = atoi(argv[2]);
		static long bg[2];
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], nullptr, launch_until_stopped, &bg[i]);
		launch_a(n);
		printf("exiting\n");
		fflush(stdout);
		if (argc > 3 && !strcmp(argv[3], "exec")) {
			execl(argv[0], argv[0], "after-exec", (char *)nullptr);
			return 1;
		}
		exit(3);
	}
	if (!strcmp(mode, "sigign-exec")) {
		// SIGFPE ignored (after cprof started), then exec: the new image must still ignore it
		launch_a(1);
		signal(SIGFPE, SIG_IGN);
		fflush(stdout);
		execl(argv[0], argv[0], "sigign-show", (char *)nullptr);
		return 1;
	}
	if (!strcmp(mode, "sigign-show")) {
		struct sigaction cur;
		sigaction(SIGFPE, nullptr, &cur);
		printf("SIGFPE %s\n", cur.sa_handler == SIG_IGN ? "ignored" : cur.sa_handler == SIG_DFL ? "default" : "handled");
		return 0;
	}
	if (!strcmp(mode, "after-exec")) {
		launch_b(3);
		printf("after exec\n");
		return 0;
	}
	if (!strcmp(mode, "loop")) {
		// launch for S seconds, then print and exit 7
		double secs = argc > 2 ? atof(argv[2]) : 1.0;
		struct timespec t0, t;
		long n = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			launch_a(100);
			n += 100;
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
		printf("loop done\n");
		return 7;
	}
	if (!strcmp(mode, "rate")) {
		// N launches in a tight loop; ns per launch on stderr (stdout stays comparable)
		long n = argc > 2 ? atol(argv[2]) : 1000000;
		struct timespec t0, t1;
		launch_a(1000);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		launch_a(n);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		fprintf(stderr, "ns_per_launch %.1f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
		return 0;
	}
	if (!strcmp(mode, "queries")) {
		// N device queries (as PyTorch asks cudaGetDevice before most calls), then one launch; then N/10
		// cuBLAS handle settings of each kind, as PyTorch makes them around every GEMM
		int n = argc > 2 ? atoi(argv[2]) : 1000, dev = -1, sum = 0, ok = 0;
		cublasHandle_t h;
		for (int i = 0; i < n; i++)
			if (cudaGetDevice(&dev) == cudaSuccess)
				sum += dev + 1;
		launch_a(1);
		cudaDeviceSynchronize();
		// a thread whose only CUDA calls are N/10 device queries (it gets no ring of its own)
		{
			static int q10;
			pthread_t qt;
			q10 = n / 10;
			if (pthread_create(&qt, nullptr, [](void *a) -> void * {
				    int d;
				    for (int i = 0; i < *(int *)a; i++)
					    cudaGetDevice(&d);
				    return nullptr;
			    }, &q10) == 0)
				pthread_join(qt, nullptr);
		}
		if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
			for (int i = 0; i < n / 10; i++)
				ok += cublasSetStream(h, 0) == CUBLAS_STATUS_SUCCESS &&
				      cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS &&
				      cublasSetWorkspace(h, nullptr, 0) == CUBLAS_STATUS_SUCCESS;
			cublasDestroy(h);
		}
		// and N/10 error checks, as PyTorch makes after each launch; the last after a launch that failed
		int errs = 0;
		for (int i = 0; i < n / 10 - 1; i++)
			errs += cudaGetLastError() != cudaSuccess;
		kern_a<<<1, 0>>>(nullptr); // a block of no threads: cudaErrorInvalidConfiguration
		errs += cudaGetLastError() != cudaSuccess;
		// a query and a cuBLAS setting that fail (a device that is not there, no handle): in the profile
		int v = 0;
		errs += cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 77) != cudaSuccess;
		errs += cublasSetStream(nullptr, 0) != CUBLAS_STATUS_SUCCESS;
		printf("queries %d settings %d errors %d\n", sum, ok, errs);
		fflush(stdout);
		if (argc > 3 && !strcmp(argv[3], "segv"))
			raise(SIGSEGV); // a crash: the counts must reach the profile without an exit's last COST
		return 0;
	}
	if (!strcmp(mode, "rate-paced")) {
		// RATE launches a second for SECS seconds from THREADS threads, in 1 ms ticks (a steady producer the
		// flusher can keep up with: any loss is the flusher's, not the rate's)
		double rate = argc > 2 ? atof(argv[2]) : 100000, secs = argc > 3 ? atof(argv[3]) : 1;
		int nt = argc > 4 ? atoi(argv[4]) : 1;
		pthread_t th[16];
		pace_arg pa = { rate / (nt > 0 ? nt : 1), secs };
		long total = 0;
		if (nt < 1 || nt > 16)
			return 2;
		launch_a(1);
		for (int i = 0; i < nt; i++)
			pthread_create(&th[i], nullptr, pace_thread, &pa);
		for (int i = 0; i < nt; i++) {
			void *r;
			pthread_join(th[i], &r);
			total += (long)(intptr_t)r;
		}
		cudaDeviceSynchronize();
		printf("rate-paced %ld\n", total + 1);
		return 0;
	}
	if (!strcmp(mode, "torch-shaped")) {
		// N steps as PyTorch makes them: before each launch the caching allocator and the stream guard ask
		// the driver (found through cudaGetDriverEntryPoint, as torch does) about the current context; those
		// driver calls are in no hooked call, and there are as many as launches. (torch's own,
		// cuDevicePrimaryCtxGetState, cprof has CUPTI make no record of, as Kineto does: cuCtxGetDevice keeps
		// the shape in the profile.)
		int n = argc > 2 ? atoi(argv[2]) : 100;
		CUresult (*get_dev)(CUdevice *) = nullptr;
		enum cudaDriverEntryPointQueryResult q;
		CUdevice dev;
		int *buf, *dst;
		cudaMalloc(&buf, 4096);
		cudaMalloc(&dst, 4096);
		if (cudaGetDriverEntryPointByVersion("cuCtxGetDevice", (void **)&get_dev, CUDART_VERSION, cudaEnableDefault,
						      &q) != cudaSuccess || get_dev == nullptr) {
			fprintf(stderr, "scenarios: no cuCtxGetDevice\n");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			for (int j = 0; j < 10; j++) {
				get_dev(&dev);
				kern_a<<<1, 32>>>(buf);
				get_dev(&dev);
				kern_b<<<2, 64>>>(buf);
			}
			cudaMemcpyAsync(dst, buf, 4096, cudaMemcpyDeviceToDevice, 0);
			cudaStreamSynchronize(0);
		}
		printf("torch-shaped %d\n", n);
		return 0;
	}
	if (!strcmp(mode, "dtod-gemm") || !strcmp(mode, "gemm-only")) {
		// the compiled addmm: the bias copied device-to-device into the output, then the GEMM (beta = 1)
		int n = argc > 2 ? atoi(argv[2]) : 20, dim = 256, dtod = !strcmp(mode, "dtod-gemm");
		float *a, *b, *c, *bias, one = 1.0f;
		cublasHandle_t h;
		cudaMalloc(&a, dim * dim * sizeof(float));
		cudaMalloc(&b, dim * dim * sizeof(float));
		cudaMalloc(&c, dim * dim * sizeof(float));
		cudaMalloc(&bias, dim * dim * sizeof(float));
		cublasCreate(&h);
		for (int i = 0; i < n; i++) {
			if (dtod)
				cudaMemcpyAsync(c, bias, dim * dim * sizeof(float), cudaMemcpyDeviceToDevice, 0);
			cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &one, a, dim, b, dim, &one, c, dim);
		}
		cudaDeviceSynchronize();
		cublasDestroy(h);
		printf("%s %d\n", mode, n);
		return 0;
	}
	if (!strcmp(mode, "graphed-gemm")) {
		// make_graphed_callables' shape: a GEMM captured in a graph, each replay after a device-to-device
		// copy of the new input into the graph's static input buffer
		int n = argc > 2 ? atoi(argv[2]) : 20, dim = 256;
		float *a, *b, *c, *src, one = 1.0f;
		cublasHandle_t h;
		cudaStream_t s;
		cudaGraph_t g;
		cudaGraphExec_t ge;
		cudaMalloc(&a, dim * dim * sizeof(float));
		cudaMalloc(&b, dim * dim * sizeof(float));
		cudaMalloc(&c, dim * dim * sizeof(float));
		cudaMalloc(&src, dim * dim * sizeof(float));
		cudaStreamCreate(&s);
		cublasCreate(&h);
		cublasSetStream(h, s);
		cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &one, a, dim, b, dim, &one, c, dim); // warm-up
		cudaStreamSynchronize(s);
		cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
		cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &one, a, dim, b, dim, &one, c, dim);
		cudaStreamEndCapture(s, &g);
		cudaGraphInstantiate(&ge, g, 0);
		for (int i = 0; i < n; i++) {
			cudaMemcpyAsync(a, src, dim * dim * sizeof(float), cudaMemcpyDeviceToDevice, s);
			cudaGraphLaunch(ge, s);
		}
		cudaStreamSynchronize(s);
		cudaGraphExecDestroy(ge);
		cudaGraphDestroy(g);
		cublasDestroy(h);
		printf("%s %d\n", mode, n);
		return 0;
	}
	if (!strcmp(mode, "waitloop")) {
		// two streams ordered by an event after each launch: cudaStreamWaitEvent does not block the host
		int n = argc > 2 ? atoi(argv[2]) : 30;
		cudaStream_t s1, s2;
		cudaEvent_t e;
		cudaStreamCreate(&s1);
		cudaStreamCreate(&s2);
		cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
		for (int i = 0; i < n; i++) {
			kern_a<<<64, 128, 0, s1>>>(nullptr);
			cudaEventRecord(e, s1);
			cudaStreamWaitEvent(s2, e, 0);
			kern_a<<<64, 128, 0, s2>>>(nullptr);
		}
		cudaDeviceSynchronize();
		printf("%s %d\n", mode, n);
		return 0;
	}
	if (!strcmp(mode, "variance") || !strcmp(mode, "steady")) {
		// the same kernel with run times that vary (grid size changes) or do not
		int n = argc > 2 ? atoi(argv[2]) : 40;
		for (int i = 0; i < n; i++) {
			int grid = !strcmp(mode, "variance") ? (i % 2 ? 65536 : 16) : 1024;
			kern_a<<<grid, 256>>>(nullptr);
		}
		cudaDeviceSynchronize();
		printf("%s %d\n", mode, n);
		return 0;
	}
	if (!strcmp(mode, "paced")) {
		// N launches with US microseconds of host work between them: a rank that is slower than the others;
		// WAIT_MS: a rank that made its first CUDA call, then waited at the rendezvous before its steps;
		// STATUS: the exit status (a rank that failed after its steps)
		int n = argc > 2 ? atoi(argv[2]) : 100, us = argc > 3 ? atoi(argv[3]) : 0;
		int wait_ms = argc > 4 ? atoi(argv[4]) : 0, status = argc > 5 ? atoi(argv[5]) : 0;
		if (wait_ms > 0) {
			cudaFree(nullptr);
			usleep(wait_ms * 1000);
		}
		for (int i = 0; i < n; i++) {
			kern_a<<<8, 128>>>(nullptr);
			if (us > 0)
				usleep(us);
		}
		cudaDeviceSynchronize();
		printf("paced %d\n", n);
		return status;
	}
	if (!strcmp(mode, "syncloop") || !strcmp(mode, "nosyncloop")) {
		// a sync in every iteration (.item() in a training loop), or one after the loop
		int n = argc > 2 ? atoi(argv[2]) : 30, every = !strcmp(mode, "syncloop");
		for (int i = 0; i < n; i++) {
			kern_a<<<64, 256>>>(nullptr);
			kern_b<<<64, 256>>>(nullptr);
			if (every)
				cudaStreamSynchronize(0);
		}
		cudaDeviceSynchronize();
		printf("%s %d\n", mode, n);
		return 0;
	}
	if (!strcmp(mode, "throw")) {
		int caught = 0;
		for (int i = 0; i < 100; i++) {
			try {
				deep(20);
			} catch (const std::runtime_error &e) {
				caught += !strcmp(e.what(), "bottom");
			}
		}
		printf("caught %d\n", caught);
		return caught == 100 ? 0 : 1;
	}
	if (!strcmp(mode, "signal")) {
		launch_a(5);
		fflush(stdout);
		raise(atoi(argv[2]));
		return 0;
	}
	if (!strcmp(mode, "pace")) {
		// launches for S seconds; the longest single launch call and the longest gap between two returns
		// say whether the thread was ever held up (by a stalled collector, say)
		double secs = argc > 2 ? atof(argv[2]) : 1.0, t0 = now_us(), prev = t0, max_call = 0, max_gap = 0;
		long n = 0;
		launch_a(1);
		n++;
		for (;;) {
			double a = now_us(), b;
			kern_a<<<1, 32>>>(nullptr);
			b = now_us();
			n++;
			if (b - a > max_call)
				max_call = b - a;
			if (b - prev > max_gap)
				max_gap = b - prev;
			prev = b;
			if (b - t0 > secs * 1e6)
				break;
		}
		printf("launches %ld\n", n);
		fprintf(stderr, "max_call_us %.0f max_gap_us %.0f\n", max_call, max_gap);
		return 0;
	}
	if (!strcmp(mode, "burst")) {
		// T threads, N launches each, as fast as they go; one launch first so the kernel handle is cached
		int t = atoi(argv[2]), n = atoi(argv[3]);
		pthread_t th[64];
		launch_a(1);
		for (int i = 0; i < t && i < 64; i++)
			pthread_create(&th[i], nullptr, burst_thread, &n);
		for (int i = 0; i < t && i < 64; i++)
			pthread_join(th[i], nullptr);
		printf("launches %ld\n", 1 + (long)t * n);
		return 0;
	}
	if (!strcmp(mode, "manythreads")) {
		// N short-lived threads, W alive at a time, one launch each (after one launch of our own)
		int n = atoi(argv[2]), w = argc > 3 ? atoi(argv[3]) : 8;
		pthread_t th[256];
		launch_a(1);
		for (int done = 0; done < n;) {
			int k = n - done < w ? n - done : w;
			for (int i = 0; i < k; i++)
				if (pthread_create(&th[i], nullptr, one_launch, nullptr) != 0)
					return 3;
			for (int i = 0; i < k; i++)
				pthread_join(th[i], nullptr);
			done += k;
		}
		printf("threads %d\n", n);
		return 0;
	}
	if (!strcmp(mode, "crash")) {
		// N launches, a pause longer than the flush period, then the crash; the disposition of the
		// crash signal is printed first: cprof must not have changed it
		int n = atoi(argv[2]);
		const char *how = argv[3];
		struct sigaction cur;
		launch_a(n);
		sigaction(!strcmp(how, "segv") ? SIGSEGV : SIGABRT, nullptr, &cur);
		printf("disposition %s\n", cur.sa_handler == SIG_DFL ? "default" : "changed");
		fflush(stdout);
		usleep(200 * 1000);
		if (!strcmp(how, "segv"))
			*(volatile int *)(uintptr_t)argc = 1; // argc is a small number: not a mapped address
		if (!strcmp(how, "abort"))
			abort();
		if (!strcmp(how, "kill9"))
			raise(SIGKILL);
		return 1;
	}
	if (!strcmp(mode, "die")) {
		// N steps (two launches and a sync each), then at once the end named: segv, abort, bus (a page of
		// a truncated file), throw (an exception escapes main), kill9; no pause for the flusher. With a
		// third argument "before"/"after", the program installs its own handler for the signal before
		// its first CUDA call or after its last.
		int n = atoi(argv[2]);
		const char *how = argv[3];
		const char *own = argc > 4 ? argv[4] : "";
		int sig = !strcmp(how, "segv") || !strcmp(how, "in-cuda") ? SIGSEGV : !strcmp(how, "bus") ? SIGBUS : SIGABRT;
		struct sigaction cur;
		static long bg;
		pthread_t t;
		if (!strcmp(own, "before"))
			install_app_handler(sig);
		// "thread": another thread launches all along, and goes on while this one dies
		if (!strcmp(own, "thread"))
			pthread_create(&t, nullptr, launch_until_stopped, &bg);
		for (int i = 0; i < n; i++) {
			kern_a<<<1, 32>>>(nullptr);
			kern_b<<<2, 64>>>(nullptr);
			cudaDeviceSynchronize();
		}
		if (!strcmp(own, "after"))
			install_app_handler(sig);
		sigaction(sig, nullptr, &cur);
		printf("disposition %s\n", cur.sa_handler == SIG_DFL ? "default" :
					    cur.sa_handler == app_crash_handler ? "own" : "changed");
		fflush(stdout);
		if (!strcmp(how, "segv"))
			*(volatile int *)(uintptr_t)argc = 1;
		if (!strcmp(how, "abort"))
			abort();
		if (!strcmp(how, "bus")) {
			char path[] = "/tmp/cprof-bus-XXXXXX";
			int fd = mkstemp(path);
			if (fd < 0 || ftruncate(fd, 4096) < 0)
				return 2;
			volatile char *m = (volatile char *)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m == (volatile char *)MAP_FAILED || ftruncate(fd, 0) < 0)
				return 2;
			unlink(path);
			m[0] = 1; // the page is past the end of the file now
		}
		if (!strcmp(how, "throw"))
			throw std::runtime_error("escapes main");
		if (!strcmp(how, "in-cuda")) {
			// the fault happens inside a CUDA call: a copy to a host address that is not mapped
			void *d = nullptr;
			cudaMalloc(&d, 64);
			cudaMemcpy((void *)(uintptr_t)16, d, 64, cudaMemcpyDeviceToHost);
		}
		if (!strcmp(how, "kill9"))
			raise(SIGKILL);
		return 1;
	}
	if (!strcmp(mode, "cuda-error")) {
		// N steps: kern_a and kern_b on stream s, kern_c on stream s2, then cudaStreamSynchronize(s);
		// when that sync fails (on the simulated GPU: SIMGPU_FAIL_SYNC_AFTER) the program does what
		// programs do: "abort" prints the error and aborts, "exit" destroys the stream (which fails
		// too: the error is sticky) and exits 1. Without an error it exits 0. "launch": the last step's
		// kern_b asks for 2048 threads a block, its launch fails (9), and the program exits 1.
		int n = atoi(argv[2]);
		const char *how = argv[3];
		cudaStream_t s, s2;
		cudaStreamCreate(&s);
		cudaStreamCreate(&s2);
		for (int i = 0; i < n; i++) {
			kern_a<<<1, 32, 0, s>>>(nullptr);
			if (!strcmp(how, "launch") && i == n - 1) {
				kern_b<<<2, 2048, 0, s>>>(nullptr);
				cudaError_t e = cudaGetLastError();
				printf("step %d: launch: %s\n", i + 1, cudaGetErrorName(e));
				fflush(stdout);
				exit(e == cudaSuccess ? 0 : 1);
			}
			kern_b<<<2, 64, 0, s>>>(nullptr);
			kern_c<<<1, 32, 0, s2>>>(nullptr);
			cudaError_t e = cudaStreamSynchronize(s);
			if (e == cudaSuccess)
				continue;
			printf("step %d: cudaStreamSynchronize: %s\n", i + 1, cudaGetErrorName(e));
			fflush(stdout);
			if (!strcmp(how, "abort"))
				abort();
			cudaStreamDestroy(s);
			exit(1);
		}
		return 0;
	}
	if (!strcmp(mode, "exit3")) {
		// N launches then exit(3), _exit(3) or _Exit(3), at once: the exit paths flush
		int n = atoi(argv[2]);
		const char *how = argv[3];
		launch_a(n);
		printf("exiting\n");
		fflush(stdout);
		if (!strcmp(how, "_exit"))
			_exit(3);
		if (!strcmp(how, "_Exit"))
			_Exit(3);
		if (!strcmp(how, "quick_exit"))
			quick_exit(3);
		exit(3);
	}
	if (!strcmp(mode, "forkstress")) {
		// R forks while another thread is inside hooked calls all the time; each child launches once
		int r = atoi(argv[2]), bad = 0;
		long bg = 0;
		pthread_t t;
		launch_a(1);
		pthread_create(&t, nullptr, launch_until_stopped, &bg);
		for (int i = 0; i < r; i++) {
			int status = 0;
			pid_t pid = fork();
			if (pid == 0) {
				launch_a(1);
				if (i % 10 == 0)
					exit(0);
				_exit(0);
			}
			if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
				bad++;
		}
		stop_flag = 1;
		pthread_join(t, nullptr);
		printf("forks %d bad %d\n", r, bad);
		return bad != 0;
	}
	if (!strcmp(mode, "multi")) {
		// P children at once, N launches each, all writing the one FIFO
		int p = atoi(argv[2]), n = atoi(argv[3]), go[2], bad = 0;
		launch_a(1);
		if (pipe(go) < 0)
			return 3;
		fflush(stdout);
		for (int i = 0; i < p; i++) {
			if (fork() == 0) {
				char c;
				close(go[1]);
				if (read(go[0], &c, 1) < 0) // everyone starts when the pipe closes
					_exit(4);
				launch_b(n);
				exit(0);
			}
		}
		close(go[0]);
		close(go[1]);
		for (int i = 0; i < p; i++) {
			int status;
			if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
				bad++;
		}
		printf("children %d bad %d\n", p, bad);
		return bad != 0;
	}
	if (!strcmp(mode, "closefds")) {
		// like a daemon: close every descriptor above stderr, open files that reuse the numbers, keep
		// launching; the files must hold exactly what we wrote
		const char *dir = argv[2];
		int fds[8];
		launch_a(50);
		usleep(50 * 1000);
		if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
			return 3;
		for (int i = 0; i < 8; i++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/f%d", dir, i);
			fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fds[i] < 0)
				return 3;
		}
		for (int round = 0; round < 3; round++) {
			launch_a(50);
			for (int i = 0; i < 8; i++) {
				char line[32];
				int len = snprintf(line, sizeof(line), "app %d\n", i);
				if (write(fds[i], line, len) != len)
					return 4;
			}
			usleep(50 * 1000);
		}
		for (int i = 0; i < 8; i++)
			close(fds[i]);
		printf("fds %d..%d\n", fds[0], fds[7]);
		return 0;
	}
	if (!strcmp(mode, "spawn")) {
		// children made without fork's full copy: posix_spawn, vfork + exec, vfork + a failing exec
		char *args[] = { argv[0], (char *)"after-exec", nullptr };
		char *missing[] = { (char *)"/nonexistent/cprof-test", nullptr };
		pid_t pid;
		int st1 = -1, st2 = -1, st3 = -1;
		launch_a(2);
		fflush(stdout);
		if (posix_spawn(&pid, argv[0], nullptr, nullptr, args, environ) == 0)
			waitpid(pid, &st1, 0);
		pid = vfork();
		if (pid == 0) {
			execve(argv[0], args, environ);
			_exit(127);
		}
		waitpid(pid, &st2, 0);
		pid = vfork();
		if (pid == 0) {
			execve(missing[0], missing, environ);
			_exit(127);
		}
		waitpid(pid, &st3, 0);
		launch_a(3);
		printf("spawn %d vfork %d failed-exec %d\n", WEXITSTATUS(st1), WEXITSTATUS(st2), WEXITSTATUS(st3));
		return 0;
	}
	if (!strcmp(mode, "exec-empty")) {
		// exec with an empty environment: the new image is not profiled, and says so
		char *args[] = { (char *)"sh", (char *)"-c", (char *)"echo empty-env:${LD_PRELOAD:-none}:${CPROF_FIFO:-none}", nullptr };
		char *env[] = { nullptr };
		launch_a(2);
		fflush(stdout);
		execve("/bin/sh", args, env);
		perror("execve");
		return 1;
	}
	if (!strcmp(mode, "waitsig")) {
		// launches until a signal ends it (SIGINT and SIGTERM at their default disposition)
		launch_a(1);
		printf("ready\n");
		fflush(stdout);
		for (;;) {
			launch_a(10);
			usleep(1000);
		}
	}
	if (!strcmp(mode, "graceful")) {
		// launches until SIGTERM, then finishes normally with status 9
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_term;
		sigaction(SIGTERM, &sa, nullptr);
		launch_a(1);
		printf("ready\n");
		fflush(stdout);
		while (!got_term) {
			launch_a(10);
			usleep(1000);
		}
		printf("graceful\n");
		return 9;
	}
	fprintf(stderr, "usage: scenarios threads N | fork A B [exit|_exit] | exec | loop S | throw | signal N | rate N |"
			" torch-shaped N | dtod-gemm N | gemm-only N | graphed-gemm N | waitloop N | variance N | steady N | syncloop N | nosyncloop N | paced N US [WAIT_MS [STATUS]] | rate-paced RATE SECS [THREADS] | queries N\n");
	return 2;
}
