// Launches small kernels in a loop for --seconds S (or --steps N NVTX-marked steps) and writes each launch's
// own CLOCK_REALTIME bounds (before the call, after it) to --log: the window tests compare the profile with it.
// Step s (NVTX range "step s") launches --per-step + s % 3 win_a kernels and one win_b, then synchronises.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void win_a(int *p)
{
	if (p)
		p[threadIdx.x] += 1;
}

__global__ void win_b(int *p)
{
	if (p)
		p[threadIdx.x] -= 1;
}

static unsigned long long now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

struct launch {
	unsigned long long t0, t1;
	int step;
};

int main(int argc, char **argv)
{
	double seconds = 0;
	int steps = 0, period_us = 1000, per_step = 3;
	const char *log = NULL;
	std::vector<launch> done;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--period-us") && i + 1 < argc)
			period_us = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--per-step") && i + 1 < argc)
			per_step = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--log") && i + 1 < argc)
			log = argv[++i];
		else {
			fprintf(stderr, "usage: window_loop --seconds S | --steps N [--period-us P] [--per-step K] [--log FILE]\n");
			return 2;
		}
	}
	done.reserve(1 << 16);
	cudaFree(0);
	unsigned long long end = now_ns() + (unsigned long long)(seconds * 1e9);
	for (int s = 1; steps ? s <= steps : now_ns() < end; s++) {
		char name[32];

		if (steps) {
			snprintf(name, sizeof(name), "step %d", s);
			nvtxRangePushA(name);
		}
		/* a count that changes with the step: a window one step off shows in the per-step counts */
		for (int k = 0; k < (steps ? per_step + s % 3 : 1); k++) {
			launch l;

			l.step = s;
			l.t0 = now_ns();
			win_a<<<1, 32>>>(nullptr);
			l.t1 = now_ns();
			done.push_back(l);
		}
		if (steps) {
			launch l;

			l.step = s;
			l.t0 = now_ns();
			win_b<<<2, 32>>>(nullptr);
			l.t1 = now_ns();
			done.push_back(l);
			cudaDeviceSynchronize();
			nvtxRangePop();
		}
		struct timespec ts = { 0, period_us * 1000L };
		if (period_us > 0) /* 0: back to back (a sleep of 0 still takes the timer's slack, ~60 us) */
			nanosleep(&ts, NULL);
	}
	cudaDeviceSynchronize();
	if (log) {
		FILE *f = fopen(log, "w");

		if (f == NULL)
			return 1;
		for (size_t i = 0; i < done.size(); i++)
			fprintf(f, "%zu %llu %llu %d\n", i, done[i].t0, done[i].t1, done[i].step);
		fclose(f);
	}
	printf("launches %zu\n", done.size());
	return 0;
}
