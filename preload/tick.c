/* The hooks' clock: the TSC where the kernel keeps time with it, mapped to CLOCK_REALTIME ns when events leave the rings. */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "preload/cprof.h"

/*
 * A hook reads the clock twice a call. clock_gettime(CLOCK_REALTIME) through the vDSO is ~25 ns here, the
 * TSC alone ~12 ns: a quarter of what the hook adds to a launch (docs/bench.md, item 1). The TSC is used
 * only where the kernel itself keeps time with it (clocksource "tsc": invariant and synchronised across
 * CPUs, or the kernel would have left it), so a tick means the same on every core; elsewhere (kvm-clock,
 * hpet, other architectures) the hooks read CLOCK_REALTIME as before and the map is the identity.
 *
 * Anchors are a TSC reading and a CLOCK_REALTIME reading taken back to back, by the flusher at each drain
 * round, before it looks at the rings: the events of a round were recorded between the round's anchor and
 * the one before, and are mapped by the line through those two. The kernel's own TSC-to-ns slope moves with
 * NTP between its ticks: one line from the start of the run put 6.5% of the hooked calls up to 100 ns before
 * the CUPTI record they contain; the line through the two nearest anchors keeps them inside (t-tick-clock).
 * An event outside the span (a ring drained in two rounds, the crash path) is mapped from the nearest anchor
 * with the rate from the first anchor to the latest. A step of the wall clock (settimeofday) moves the
 * events of the round it happened in with it.
 */
CPROF_HIDDEN int cprof_tick_tsc;

static struct {
	_Atomic uint32_t seq; /* odd while the flusher writes (a seqlock: the crash path reads it from a handler) */
	uint64_t t0, n0;      /* the first anchor */
	uint64_t tp, np;      /* the one before the latest */
	uint64_t t1, n1;      /* the latest */
	double rate;          /* ns a tick, from the first to the latest */
} map;

#if defined(__x86_64__)
#include <x86intrin.h>

static int kernel_uses_tsc(void)
{
	char buf[32] = "";
	ssize_t n;
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

static void anchor(uint64_t *t, uint64_t *n)
{
	uint64_t best = UINT64_MAX;

	/* the TSC read on both sides of the clock read, the middle kept; of three tries the tightest, so a
	 * flusher preempted between two reads does not put the whole round's events off by its time slice */
	for (int i = 0; i < 3; i++) {
		uint64_t a = __rdtsc(), ns = cprof_now_ns(), b = __rdtsc();

		if (b - a < best) {
			best = b - a;
			*n = ns;
			*t = a + (b - a) / 2;
		}
	}
}
#else
static int kernel_uses_tsc(void)
{
	return 0;
}

static void anchor(uint64_t *t, uint64_t *n)
{
	*n = cprof_now_ns();
	*t = *n;
}
#endif

void cprof_tick_init(void)
{
	/* CPROF_TSC=0 keeps CLOCK_REALTIME in the hooks (a machine whose TSC one does not trust) */
	const char *e = getenv("CPROF_TSC");

	cprof_tick_tsc = kernel_uses_tsc() && !(e && strcmp(e, "0") == 0);
	pr_dbg("the hooks read %s", cprof_tick_tsc ? "the TSC" : "CLOCK_REALTIME");
	atomic_store(&map.seq, 0);
	if (!cprof_tick_tsc) {
		map.rate = 1.0;
		return;
	}
	/* a first guess of the rate over ~50 us, replaced at the first round by the longer span */
	anchor(&map.t0, &map.n0);
	do
		anchor(&map.t1, &map.n1);
	while (map.n1 - map.n0 < 50000 && map.n1 >= map.n0);
	map.rate = map.t1 > map.t0 && map.n1 > map.n0 ? (double)(map.n1 - map.n0) / (double)(map.t1 - map.t0) : 1.0;
	map.tp = map.t0;
	map.np = map.n0;
}

void cprof_tick_anchor(void)
{
	uint64_t t, n;

	if (!cprof_tick_tsc)
		return;
	anchor(&t, &n);
	atomic_fetch_add_explicit(&map.seq, 1, memory_order_acq_rel);
	map.tp = map.t1;
	map.np = map.n1;
	map.t1 = t;
	map.n1 = n;
	/* a clock stepped back before the first anchor leaves the old rate */
	if (t > map.t0 && n > map.n0)
		map.rate = (double)(n - map.n0) / (double)(t - map.t0);
	atomic_fetch_add_explicit(&map.seq, 1, memory_order_release);
}

struct map_view {
	uint64_t tp, np, t1, n1;
	double rate;
};

/* Async-signal-safe: a handler that interrupted the flusher's update takes the map as it finds it. */
static void read_map(struct map_view *v)
{
	for (int tries = 0;; tries++) {
		uint32_t s = atomic_load_explicit(&map.seq, memory_order_acquire);

		v->tp = map.tp;
		v->np = map.np;
		v->t1 = map.t1;
		v->n1 = map.n1;
		v->rate = map.rate;
		atomic_thread_fence(memory_order_acquire);
		if ((!(s & 1) && atomic_load_explicit(&map.seq, memory_order_relaxed) == s) || tries > 100)
			return;
	}
}

static uint64_t from(uint64_t n, uint64_t t_at, uint64_t t, double rate)
{
	double d = t >= t_at ? (double)(t - t_at) * rate : -(double)(t_at - t) * rate;

	if (d >= 0)
		return n + (uint64_t)d;
	return n > (uint64_t)-d ? n - (uint64_t)-d : 0;
}

uint64_t cprof_tick_ns(uint64_t t)
{
	struct map_view v;

	if (!cprof_tick_tsc)
		return t;
	read_map(&v);
	if (t >= v.tp && t <= v.t1 && v.t1 > v.tp && v.n1 >= v.np)
		return v.np + (uint64_t)((double)(t - v.tp) * (double)(v.n1 - v.np) / (double)(v.t1 - v.tp));
	return t < v.tp ? from(v.np, v.tp, t, v.rate) : from(v.n1, v.t1, t, v.rate);
}

uint64_t cprof_tick_dur_ns(uint64_t dt)
{
	struct map_view v;

	if (!cprof_tick_tsc)
		return dt;
	read_map(&v);
	return (uint64_t)((double)dt * v.rate);
}
