// Launch loops for make bench: hook cost in drained bursts, a paced launcher at a target rate, resident memory.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <time.h>
#include <cuda_runtime.h>

// The same kernel and launch shape as scenarios' rate mode, so the figures compare.
__global__ void bench_kern(int *p) { if (p) p[threadIdx.x] = 1; }

static inline void launch(void) { bench_kern<<<1, 32>>>(nullptr); }

static inline long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_ns(long long ns)
{
	struct timespec t = { (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL) };
	while (nanosleep(&t, &t) == -1 && errno == EINTR)
		;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

// Bursts short enough to fit a thread's event ring, with a gap in which the flusher drains it: the time
// on the application thread per launch, without loss and without the ring-full path. The median burst is
// the figure: a burst that a preemption or a timer interrupt landed in says nothing about the hook.
static int mode_bursts(long n, long burst, long gap_us)
{
	long done = 0, nb = 0, maxb;
	long long busy = 0, *per;

	if (burst < 1 || n < 1)
		return 2;
	maxb = n / burst + 1;
	per = (long long *)calloc(maxb, sizeof(long long));
	if (per == nullptr)
		return 3;
	for (int i = 0; i < 1000; i++)
		launch();
	sleep_ns(gap_us * 1000);
	while (done < n) {
		long k = n - done < burst ? n - done : burst;
		long long t0 = now_ns(), dt;
		for (long i = 0; i < k; i++)
			launch();
		dt = now_ns() - t0;
		busy += dt;
		if (k == burst && nb < maxb)
			per[nb++] = dt;
		done += k;
		sleep_ns(gap_us * 1000);
	}
	qsort(per, nb, sizeof(per[0]), cmp_ll);
	fprintf(stderr, "ns_per_launch %.2f mean_ns_per_launch %.2f\n", nb ? (double)per[nb / 2] / burst : 0.0,
		(double)busy / n);
	printf("launches %ld\n", n + 1000);
	free(per);
	return 0;
}

struct paced {
	double rate;      // this thread's launches per second
	double secs;
	int spin;         // 1: busy-wait for every launch; 0: launch what is due each tick, sleep between ticks
	pthread_barrier_t *go;
	long launches;
	long long late_ns; // how far behind schedule the thread was at the end
};

#define TICK_NS 1000000LL

static void *paced_thread(void *arg)
{
	paced *p = (paced *)arg;
	long long t0, end;
	long i = 0, total = (long)(p->rate * p->secs);
	double period = 1e9 / p->rate;

	pthread_barrier_wait(p->go);
	t0 = now_ns();
	end = t0 + (long long)(p->secs * 1e9);
	while (i < total) {
		long long now = now_ns();
		// launches due by now; catch up at once when behind (the schedule, not the pace, is the target)
		long due = (long)((now - t0) / period) + 1;
		if (due > total)
			due = total;
		if (due <= i) {
			// tick pacing leaves the CPU between ticks to others (the collector), as an application doing
			// other work than launching would; spin pacing keeps this thread's core busy throughout
			if (!p->spin)
				sleep_ns(TICK_NS - (now - t0) % TICK_NS);
			continue;
		}
		while (i < due) {
			launch();
			i++;
		}
	}
	p->launches = i;
	p->late_ns = now_ns() - end;
	return nullptr;
}

// T threads launching R per second between them for S seconds; how many they made is what the profile must hold.
static int mode_paced(double rate, double secs, int threads, int spin)
{
	pthread_t th[64];
	paced p[64];
	pthread_barrier_t go;
	long total = 0;
	long long late = 0, t0, t1;

	if (threads < 1 || threads > 64 || rate <= 0 || secs <= 0)
		return 2;
	launch(); // the kernel handle is cached before the clock starts
	pthread_barrier_init(&go, nullptr, threads + 1);
	for (int i = 0; i < threads; i++) {
		p[i] = paced{ rate / threads, secs, spin, &go, 0, 0 };
		pthread_create(&th[i], nullptr, paced_thread, &p[i]);
	}
	pthread_barrier_wait(&go);
	t0 = now_ns();
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], nullptr);
		total += p[i].launches;
		if (p[i].late_ns > late)
			late = p[i].late_ns;
	}
	t1 = now_ns();
	printf("launches %ld\n", total + 1);
	fprintf(stderr, "achieved_per_s %.0f late_ms %.1f\n", total / ((t1 - t0) / 1e9), late / 1e6);
	return 0;
}

struct rss_arg {
	long n;
	pthread_barrier_t *done, *quit;
};

static void *rss_thread(void *arg)
{
	rss_arg *a = (rss_arg *)arg;
	for (long i = 0; i < a->n; i++)
		launch();
	pthread_barrier_wait(a->done);
	pthread_barrier_wait(a->quit);
	return nullptr;
}

static long status_kb(const char *key)
{
	char line[256];
	long v = -1;
	size_t klen = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':')
			v = atol(line + klen + 1);
	fclose(f);
	return v;
}

// T threads, N launches each, all alive when the resident set is read: what the profiler adds per thread.
static int mode_rss(int threads, long n)
{
	pthread_t th[256];
	rss_arg a;
	pthread_barrier_t done, quit;

	if (threads < 1 || threads > 256)
		return 2;
	launch();
	pthread_barrier_init(&done, nullptr, threads + 1);
	pthread_barrier_init(&quit, nullptr, threads + 1);
	a = rss_arg{ n, &done, &quit };
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], nullptr, rss_thread, &a);
	pthread_barrier_wait(&done);
	sleep_ns(50 * 1000000LL); // the flusher has drained: what stays resident is what stays
	printf("rss_kb %ld hwm_kb %ld\n", status_kb("VmRSS"), status_kb("VmHWM"));
	fflush(stdout);
	pthread_barrier_wait(&quit);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], nullptr);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "bursts") && argc == 5)
		return mode_bursts(atol(argv[2]), atol(argv[3]), atol(argv[4]));
	if (!strcmp(mode, "paced") && argc >= 5)
		return mode_paced(atof(argv[2]), atof(argv[3]), atoi(argv[4]), argc > 5 && !strcmp(argv[5], "spin"));
	if (!strcmp(mode, "rss") && argc == 4)
		return mode_rss(atoi(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: launcher bursts N BURST GAP_US | paced RATE SECS THREADS [spin|tick] | rss THREADS N\n");
	return 2;
}
