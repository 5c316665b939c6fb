/* The hooks' clock: the TSC where the kernel keeps time with it, mapped to CLOCK_REALTIME ns when events leave the rings. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <unistd.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "preload/cprof.h"

/*
 * A hook reads the clock twice a call. clock_gettime(CLOCK_REALTIME) through the vDSO is ~25 ns here, the
 * TSC alone ~12 ns: a quarter of what the hook adds to a launch (docs/bench.md, item 1). The TSC is used
 * only where the kernel itself keeps time with it (clocksource "tsc": invariant and synchronised across
 * CPUs, or the kernel would not use it), so a tick means the same on every core; elsewhere (kvm-clock,
 * hpet, other architectures) the hooks read CLOCK_REALTIME as before and the map is the identity. The
 * clocksource is read once, at start: a kernel that gives the TSC up later (its watchdog) is not followed.
 *
 * Anchors are a TSC reading and a CLOCK_REALTIME reading taken back to back, by the flusher at each drain
 * round, before it looks at the rings; the last ANCHORS are kept. An event is mapped by the line through
 * the two anchors around it (the kernel's own TSC-to-ns slope moves with NTP between its ticks: one line
 * from the start of the run put 6.5% of the hooked calls up to 100 ns before the CUPTI record they
 * contain; the nearest two keep them inside, t-tick-clock), so a ring drained rounds late (a flood, a full
 * pipe) is mapped by the anchors of when its events were made. Older than every anchor kept, or newer than
 * the last: from the nearest one with the rate, which is measured from the first anchor since the wall
 * clock last stepped. A step (settimeofday, a VM resumed: the clock moved more than 1% or 100 us off what
 * the ticks say) drops the anchors before it and keeps the rate: the events of the round it happened in
 * take the clock after it. An anchor whose reads were more than 20 us apart (the flusher preempted between
 * them) is not kept.
 *
 * The wall clock is a line in the TSC only while nothing steers it: an NTP daemon that moves the kernel's
 * frequency (chrony's slews, a PLL) bends it between two anchors, and the events of that round land up to
 * microseconds off the CUPTI records and the program's own CLOCK_REALTIME reads (seen on CI: a third of
 * 100,000 launches outside their runtime record; reproduced here by moving adjtimex's frequency +-20 ppm
 * every 130 ms). So the hooks start on CLOCK_REALTIME and take the TSC only where the kernel reports a clock
 * no one steers (adjtimex: unsynchronised, no frequency offset, the nominal tick, no PLL offset) and after
 * the anchors have kept to one line for TRIAL_NS; from the first sign of steering (adjtimex changed, an
 * anchor off the line by more than its reads' width allows, a step) they read CLOCK_REALTIME for the rest of
 * the run. Events already holding ticks keep being mapped; a CLOCK_REALTIME reading is told from a tick by
 * its size (CPROF_TICK_NS_MIN), so the switch needs no flag on the events. CPROF_TSC=1 takes the TSC
 * without the adjtimex rule, CPROF_TSC=0 never.
 */
CPROF_HIDDEN int cprof_tick_tsc;

#define ANCHORS 16
#define TRIAL_NS 100000000.0 /* the anchors' time on one line before the hooks take the TSC */
#define LINE_SLACK_NS 200.0  /* an anchor off the line by more than this (and its reads' width): steered */

/* the TSC: not usable here, on trial (the hooks read CLOCK_REALTIME while the anchors are watched), the
 * hooks' clock, given up for the rest of the run */
static enum { TSC_NO, TSC_TRIAL, TSC_ON, TSC_GIVEN_UP } tsc_state;
static uint64_t read_tsc, read_ns; /* cprof_tick_read in each clock */
static struct cprof_tick_kclock kclock_start; /* adjtimex at the start */
static int tsc_forced;                        /* CPROF_TSC=1: adjtimex is not asked */

static struct {
	_Atomic uint32_t seq; /* odd while the flusher writes (a seqlock: the crash path reads it from a handler) */
	uint64_t t[ANCHORS], n[ANCHORS];
	unsigned head;  /* the newest anchor */
	unsigned count; /* anchors kept since the last step, at most ANCHORS */
	uint64_t tb, nb; /* the rate's base: the first anchor since the last step */
	double rate;     /* ns a tick */
	double wb, wl;   /* the widths (ns) of the base's and the newest anchor's reads */
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

/* the TSC read on both sides of the clock read, the middle kept; of three tries the tightest; returns how
 * many ticks the tightest took */
static uint64_t anchor(uint64_t *t, uint64_t *n)
{
	uint64_t best = UINT64_MAX;

	*t = *n = 0;
	for (int i = 0; i < 3; i++) {
		uint64_t a = __rdtsc(), ns = cprof_now_ns(), b = __rdtsc();

		if (b - a < best) {
			best = b - a;
			*n = ns;
			*t = a + (b - a) / 2;
		}
	}
	return best;
}
#else
static int kernel_uses_tsc(void)
{
	return 0;
}

static uint64_t anchor(uint64_t *t, uint64_t *n)
{
	*n = cprof_now_ns();
	*t = *n;
	return 0;
}
#endif

static void reset_to(uint64_t t, uint64_t n)
{
	map.head = 0;
	map.count = 1;
	map.t[0] = t;
	map.n[0] = n;
	map.tb = t;
	map.nb = n;
}

/* the TSC's state changes on the flusher's thread only; the hooks see cprof_tick_tsc */
static void tsc_set(int state, const char *why)
{
	tsc_state = state;
	cprof_tick_tsc = state == TSC_ON;
	cprof_tick_read = cprof_tick_tsc ? read_tsc : read_ns;
	if (why)
		pr_dbg("the hooks read %s: %s", cprof_tick_tsc ? "the TSC" : "CLOCK_REALTIME", why);
}

int cprof_tick_steered(const struct cprof_tick_kclock *k, long nominal_tick)
{
	/* STA_UNSYNC (0x40) clear: a daemon keeps the clock in sync, moving its frequency as it goes */
	return !(k->status & 0x40) || k->freq != 0 || k->tick != nominal_tick || k->offset != 0;
}

static int kclock_read(struct cprof_tick_kclock *k)
{
	struct timex tx = { .modes = 0 };

	if (adjtimex(&tx) < 0)
		return -errno;
	*k = (struct cprof_tick_kclock){ .status = tx.status, .freq = tx.freq, .tick = tx.tick,
					 .offset = tx.offset };
	return 0;
}

static long nominal_tick(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return hz > 0 ? 1000000 / hz : 10000;
}

CPROF_HIDDEN uint64_t cprof_tick_read;

static uint64_t read_cost(void)
{
	uint64_t d[63], t;
	int n = 0;

	/* what one read costs: the median of two back to back (a timed stretch has one read's worth in it, the end
	 * of the read at one end and the start of the read at the other). The least of them, taken off before
	 * 2026-12-06, left 10 ns a stretch in on this VM's CLOCK_REALTIME (least 28, median 38) */
	for (int i = 0; i < 16; i++) /* the first reads miss the caches */
		(void)cprof_tick();
	for (int i = 0; i < 63; i++) {
		uint64_t a = cprof_tick(), b = cprof_tick();

		if (b < a)
			continue;
		t = b - a;
		int j = n++;

		for (; j > 0 && d[j - 1] > t; j--)
			d[j] = d[j - 1];
		d[j] = t;
	}
	return n ? d[n / 2] : 0;
}

void cprof_tick_init(void)
{
	/* CPROF_TSC=0 keeps CLOCK_REALTIME in the hooks (a machine whose TSC one does not trust); CPROF_TSC=1
	 * takes the TSC on a clock a daemon steers (its rounds may then be off: the comment above) */
	const char *e = getenv("CPROF_TSC");
	int force = e && strcmp(e, "1") == 0, off = e && strcmp(e, "0") == 0, capable = kernel_uses_tsc() && !off;
	uint64_t t0, n0, t1, n1;

	atomic_store(&map.seq, 0);
	map.rate = 1.0;
	cprof_tick_tsc = 0;
	read_ns = read_cost();
	tsc_set(TSC_NO, NULL);
	if (!capable) {
		pr_dbg("the hooks read CLOCK_REALTIME: %s", off ? "CPROF_TSC=0" : "the kernel does not keep time with the TSC");
		return;
	}
	cprof_tick_tsc = 1;
	read_tsc = read_cost();
	/* a first guess of the rate over ~50 us, refined from the flusher's anchors */
	anchor(&t0, &n0);
	do
		anchor(&t1, &n1);
	while (n1 - n0 < 50000 && n1 >= n0);
	cprof_tick_tsc = 0;
	/* a TSC this far on could be taken for a CLOCK_REALTIME reading (decades of uptime): never */
	if (t1 >= CPROF_TICK_NS_MIN / 4) {
		pr_dbg("the hooks read CLOCK_REALTIME: the TSC is too far on to tell from ns");
		return;
	}
	cprof_tick_start(force ? 1 : 2, t1, n1, t1 > t0 && n1 > n0 ? (double)(n1 - n0) / (double)(t1 - t0) : 1.0);
	tsc_forced = force;
	if (force) {
		pr_dbg("the hooks read the TSC (CPROF_TSC=1)");
	} else if (kclock_read(&kclock_start) < 0 || cprof_tick_steered(&kclock_start, nominal_tick())) {
		tsc_set(TSC_GIVEN_UP, "the kernel's clock is steered (adjtimex: synchronised, or a frequency offset)");
	} else {
		pr_dbg("the hooks read CLOCK_REALTIME until the wall clock has kept to one line in the TSC for %.0f ms",
		       TRIAL_NS / 1e6);
	}
}

void cprof_tick_start(int mode, uint64_t t, uint64_t n, double rate)
{
	atomic_store(&map.seq, 0);
	map.rate = rate;
	map.wb = map.wl = 0;
	reset_to(t, n);
	tsc_set(mode == 1 ? TSC_ON : mode == 2 ? TSC_TRIAL : TSC_NO, NULL);
}

/* the TSC on trial or taken: what the anchors may still take away */
static int tsc_watched(void)
{
	return tsc_state == TSC_TRIAL || tsc_state == TSC_ON;
}

void cprof_tick_anchor(void)
{
	uint64_t t, n, width;
	struct cprof_tick_kclock k;

	if (tsc_state == TSC_NO)
		return;
	width = anchor(&t, &n);
	/* a daemon that starts steering (or moves the frequency) mid-run: from now on CLOCK_REALTIME */
	if (!tsc_forced && tsc_watched() && kclock_read(&k) == 0 &&
	    memcmp(&k, &kclock_start, sizeof(k)) != 0)
		tsc_set(TSC_GIVEN_UP, "adjtimex says the kernel's clock is being steered now");
	cprof_tick_add_anchor(t, n, width);
}

void cprof_tick_add_anchor(uint64_t t, uint64_t n, uint64_t width)
{
	uint64_t tl, nl;
	double expect, got, w = (double)width * map.rate, slack;
	const char *why = NULL;
	int rate_known;

	if (w > 20000.0)
		return; /* preempted between the reads: the last anchor serves on */
	tl = map.t[map.head];
	nl = map.n[map.head];
	if (t <= tl)
		return;
	expect = (double)(t - tl) * map.rate;
	got = (double)n - (double)nl;
	/* the rate is known to within the base's and the newest anchor's widths over the time between them */
	rate_known = (double)(tl - map.tb) * map.rate >= 1e7;
	slack = LINE_SLACK_NS + (w + map.wl) / 2 +
		(rate_known ? expect * (map.wb + map.wl) / ((double)(tl - map.tb) * map.rate) : 0);
	atomic_fetch_add_explicit(&map.seq, 1, memory_order_acq_rel);
	if (got - expect > expect / 100 + 100000.0 || expect - got > expect / 100 + 100000.0) {
		reset_to(t, n); /* the wall clock stepped: nothing before it maps across */
		map.wb = w;
		why = "the wall clock stepped";
	} else {
		if (rate_known && (got - expect > slack || expect - got > slack))
			why = "the wall clock is not one line in the TSC (a daemon steers it)";
		map.head = (map.head + 1) % ANCHORS;
		map.t[map.head] = t;
		map.n[map.head] = n;
		if (map.count < ANCHORS)
			map.count++;
		/* over at least 10 ms, or the first guess stays */
		if ((double)(t - map.tb) * map.rate >= 1e7 && n > map.nb)
			map.rate = (double)(n - map.nb) / (double)(t - map.tb);
	}
	map.wl = w;
	atomic_fetch_add_explicit(&map.seq, 1, memory_order_release);
	if (!tsc_watched())
		return;
	if (why) {
		pr_dbg("an anchor %.0f ns off the wall clock's line in the TSC, %.1f ms after the last", got - expect,
		       expect / 1e6);
		tsc_set(TSC_GIVEN_UP, why);
	} else if (tsc_state == TSC_TRIAL && rate_known && (double)(t - map.tb) * map.rate >= TRIAL_NS) {
		tsc_set(TSC_ON, "the wall clock kept to one line in the TSC");
	}
}

static uint64_t from(uint64_t n, uint64_t t_at, uint64_t t, double rate)
{
	double d = t >= t_at ? (double)(t - t_at) * rate : -(double)(t_at - t) * rate;

	if (d >= 0)
		return n + (uint64_t)d;
	return n > (uint64_t)-d ? n - (uint64_t)-d : 0;
}

/* the map m (the live one on the flusher's thread, a copy elsewhere) at tick t */
static uint64_t map_at(const __typeof__(map) *m, uint64_t t)
{
	unsigned i = m->head, k;

	if (t >= m->t[i])
		return from(m->n[i], m->t[i], t, m->rate);
	for (k = 1; k < m->count; k++) {
		unsigned j = (i + ANCHORS - 1) % ANCHORS;

		if (t >= m->t[j]) {
			if (m->t[i] > m->t[j] && m->n[i] >= m->n[j])
				return m->n[j] + (uint64_t)((double)(t - m->t[j]) * (double)(m->n[i] - m->n[j]) /
							    (double)(m->t[i] - m->t[j]));
			return from(m->n[j], m->t[j], t, m->rate);
		}
		i = j;
	}
	return from(m->n[i], m->t[i], t, m->rate);
}

/* a reading the hooks took on CLOCK_REALTIME: ns already, nothing to map */
static int already_ns(uint64_t t)
{
	return tsc_state == TSC_NO || t >= CPROF_TICK_NS_MIN;
}

uint64_t cprof_tick_ns(uint64_t t)
{
	/* the flusher is the map's only writer: on its thread the map is read as it is */
	return already_ns(t) ? t : map_at(&map, t);
}

/* Async-signal-safe, any thread: a copy under the seqlock; a handler that interrupted the flusher's update
 * takes the copy as it finds it. */
uint64_t cprof_tick_ns_any(uint64_t t)
{
	__typeof__(map) v;

	if (already_ns(t))
		return t;
	for (int tries = 0;; tries++) {
		uint32_t s = atomic_load_explicit(&map.seq, memory_order_acquire);

		memcpy((char *)&v + sizeof(v.seq), (const char *)&map + sizeof(map.seq), sizeof(map) - sizeof(map.seq));
		atomic_thread_fence(memory_order_acquire);
		if ((!(s & 1) && atomic_load_explicit(&map.seq, memory_order_relaxed) == s) || tries > 100)
			break;
	}
	if (v.count == 0 || v.count > ANCHORS || v.head >= ANCHORS)
		return t;
	return map_at(&v, t);
}

uint64_t cprof_tick_dur_ns(uint64_t dt)
{
	return cprof_tick_tsc ? (uint64_t)((double)dt * map.rate) : dt;
}
