// Process and thread shapes for the integration tests: threads, fork, exec, a long loop, C++ exceptions.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void kern_a(int *p) { if (p) p[threadIdx.x] = 1; }
__global__ void kern_b(int *p) { if (p) p[threadIdx.x] = 2; }

static void launch_a(int n) { for (int i = 0; i < n; i++) kern_a<<<1, 32>>>(nullptr); }
static void launch_b(int n) { for (int i = 0; i < n; i++) kern_b<<<2, 64>>>(nullptr); }

static void *thread_b(void *arg)
{
	launch_b(*(int *)arg);
	return nullptr;
}

// depth frames of C++, a throw at the bottom, caught at the top: the unwinder must be the target's own
static int deep(int depth)
{
	if (depth == 0) {
		launch_a(1);
		throw std::runtime_error("bottom");
	}
	return deep(depth - 1) + 1;
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
		launch_a(2);
		fflush(stdout);
		execl(argv[0], argv[0], "after-exec", (char *)nullptr);
		perror("execl");
		return 1;
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
		// N launches with US microseconds of host work between them: a rank that is slower than the others
		int n = argc > 2 ? atoi(argv[2]) : 100, us = argc > 3 ? atoi(argv[3]) : 0;
		for (int i = 0; i < n; i++) {
			kern_a<<<8, 128>>>(nullptr);
			if (us > 0)
				usleep(us);
		}
		cudaDeviceSynchronize();
		printf("paced %d\n", n);
		return 0;
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
	fprintf(stderr, "usage: scenarios threads N | fork A B [exit|_exit] | exec | loop S | throw | signal N | rate N |"
			" dtod-gemm N | gemm-only N | variance N | steady N | syncloop N | nosyncloop N | paced N US\n");
	return 2;
}
