/* What profiling cost the program (CPROF_COST's running totals), spread over the calls of a window. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/wire.h"
#include "report/model/analysis.h"
#include "report/model/model.h"
#include "report/cprof.h"

/* a call longer than its CUPTI record by more than this waited for something else (see cprof_model_cupti_in_calls) */
#define CPROF_CUPTI_IN_CALL_MAX_NS 10000
/* CPROF_COST's columns cprof_model_load_cost reads */
#define CPROF_COST_COLS 20
/* launches timed on each side, at least, for a process's measured in-call cost (about 2 ms of launches passed
 * through at 1 in 64) */
#define CPROF_PASS_MIN 32

static int cost_cmp(const void *pa, const void *pb)
{
	const struct cprof_cost_row *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int counted_cmp(const void *pa, const void *pb)
{
	const struct cprof_counted *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* One scan; one row per (process, name), updated in place by cprofd (a profile of this table's first form has a
 * row each time the totals grew): the largest of each is kept. */
static int load_counts(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	size_t cap = 0, i, n = 0;
	int rc;

	if (!cprof_has_table(db, "CPROF_API_COUNTS"))
		return 0;
	m->counted_table = 1;
	if (sqlite3_prepare_v2(db, "SELECT processId, nameId, calls FROM CPROF_API_COUNTS", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t calls = sqlite3_column_int64(st, 2);

		if (cprof_grow(&m->counted, &cap, m->ncounted, sizeof(*m->counted)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		/* a forged negative or huge total is read as 0, never wrapped in a sum */
		m->counted[m->ncounted++] = (struct cprof_counted){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
								    calls > 0 && calls < (1ll << 50) ? (uint64_t)calls : 0 };
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EIO;
	if (m->ncounted > 1)
		qsort(m->counted, m->ncounted, sizeof(*m->counted), counted_cmp);
	for (i = 0; i < m->ncounted; i++) {
		if (n && m->counted[n - 1].proc == m->counted[i].proc && m->counted[n - 1].name == m->counted[i].name) {
			if (m->counted[i].calls > m->counted[n - 1].calls)
				m->counted[n - 1].calls = m->counted[i].calls;
			continue;
		}
		m->counted[n++] = m->counted[i];
	}
	m->ncounted = n;
	return 0;
}

/* The rows of proc: [*lo, *hi) in the (proc, time, table order) order cprof_model_load_cost sorts them in. */
static void proc_rows(const struct cprof_model *m, int64_t proc, size_t *lo, size_t *hi)
{
	const size_t off = offsetof(struct cprof_cost_row, proc);

	/* both ends searched: a walk to the end was O(rows) a look-up, and a window edge adds a row, so the window
	 * costs were O(windows^2) (8,000 windows: 2x the report's time of 500, 2026-12-07) */
	*lo = cprof_lower_i64(m->cost, m->ncost, sizeof(*m->cost), off, proc);
	*hi = proc == INT64_MAX ? m->ncost : cprof_lower_i64(m->cost, m->ncost, sizeof(*m->cost), off, proc + 1);
}

static int rspan_cmp(const void *pa, const void *pb)
{
	const struct cprof_rec_span *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* A window's outer bounds, CUPTI's switches at its edges with it: its own where not known */
static void window_outer(const struct cprof_window *w, uint64_t *os, uint64_t *oe)
{
	*os = w->ostart && w->ostart <= w->start ? w->ostart : w->start;
	*oe = w->oend >= w->end ? w->oend : w->end;
}

/* Each process's recorded spans: its windows and the run's own (proc 0), overlaps merged, by (proc, start). One walk
 * of the windows (by start), each process's last span and time before it kept by its slot; a run's own window goes
 * to every process (was every window for every process: O(processes x windows)). */
int cprof_model_rec_spans(struct cprof_model *m)
{
	struct slot {
		size_t last; /* its last span + 1 in m->rspan; 0: none yet */
		uint64_t before, obefore;
	} *sl = calloc(m->nprocs ? m->nprocs : 1, sizeof(*sl));
	size_t cap = 0;
	int ret = 0;

	if (sl == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < m->rec.n && ret == 0; i++) {
		const struct cprof_window *w = &m->rec.w[i];
		size_t p = 0, pend = m->nprocs;

		if (w->end <= w->start)
			continue;
		if (w->proc != 0) {
			p = cprof_model_proc_index(m, w->proc);
			if (p == m->nprocs)
				continue; /* a window of no known process */
			pend = p + 1;
		}
		for (; p < pend; p++) {
			struct cprof_rec_span *last = sl[p].last ? &m->rspan[sl[p].last - 1] : NULL;
			uint64_t os, oe;

			window_outer(w, &os, &oe);
			if (last && w->start <= last->end) { /* by start: an overlap only reaches further */
				if (w->end > last->end) {
					sl[p].before += w->end - last->end;
					last->end = w->end;
				}
				if (oe > last->oend) {
					sl[p].obefore += oe - last->oend;
					last->oend = oe;
				}
				continue;
			}
			if (cprof_grow(&m->rspan, &cap, m->nrspan, sizeof(*m->rspan)) < 0) {
				ret = -ENOMEM;
				break;
			}
			m->rspan[m->nrspan++] = (struct cprof_rec_span){ .proc = m->procs[p].id, .start = w->start,
									 .end = w->end, .before = sl[p].before,
									 .ostart = os, .oend = oe, .obefore = sl[p].obefore };
			sl[p].last = m->nrspan;
			sl[p].before += w->end - w->start;
			sl[p].obefore += oe - os;
		}
	}
	free(sl);
	if (ret == 0 && m->nrspan > 1) /* each process's are by start already; interleaved here */
		qsort(m->rspan, m->nrspan, sizeof(*m->rspan), rspan_cmp);
	return ret;
}

int cprof_model_load_cost(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	/* cprofd's own CPU during the run competes with the program unless the writer ran at idle priority */
	if (cprof_has_table(db, "META") &&
	    sqlite3_prepare_v2(db, "SELECT key, value FROM META WHERE key IN ('intake_cpu_ns', 'writer_run_cpu_ns',"
				   " 'writer_priority')", -1, &st, NULL) == SQLITE_OK) {
		uint64_t intake = 0, writer = 0;
		int idle = 0;

		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *k = (const char *)sqlite3_column_text(st, 0);
			const char *v = (const char *)sqlite3_column_text(st, 1);
			int64_t n = sqlite3_column_int64(st, 1);

			if (k == NULL || v == NULL)
				continue;
			if (strcmp(k, "intake_cpu_ns") == 0 && n > 0)
				intake = (uint64_t)n;
			else if (strcmp(k, "writer_run_cpu_ns") == 0 && n > 0)
				writer = (uint64_t)n;
			else if (strcmp(k, "writer_priority") == 0)
				idle = strcmp(v, "normal") != 0;
		}
		sqlite3_finalize(st);
		m->collector_run_cpu_ns = intake + (idle ? 0 : writer);
		m->collector_writer_idle = idle;
	}
	if ((rc = load_counts(db, m)) < 0)
		return rc;
	if (!cprof_has_table(db, "CPROF_COST"))
		return 0;
	/* the table grew columns: lostNested a little after it, countedCalls and countedNs later (2026-12-02), passCalls
	 * passNs and passSq (2026-12-06), passLaunches (2026-12-07). A profile of an older build has fewer, read as 0 */
	{
		static const char *const cols[] = { "processId", "timeNs", "hookCalls", "hookNs", "sampledCalls",
						    "stackCalls", "stackNs", "flusherCpuNs", "appRunNs", "appWaitNs",
						    "lostRingFull", "lostCupti", "lostPipe", "lostNested", "countedCalls",
						    "countedNs", "passCalls", "passNs", "passSq", "passLaunches" };
		_Static_assert(sizeof(cols) / sizeof(cols[0]) == CPROF_COST_COLS, "CPROF_COST columns");
		char sql[512];
		size_t len = (size_t)snprintf(sql, sizeof(sql), "SELECT");

		for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]) && len < sizeof(sql); i++)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s %s", i ? "," : "",
						cprof_has_column(db, "CPROF_COST", cols[i]) ? cols[i] : "0");
		if (len >= sizeof(sql) - sizeof(" FROM CPROF_COST"))
			return -EIO;
		snprintf(sql + len, sizeof(sql) - len, " FROM CPROF_COST");
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
			return -EIO;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_cost_row *c;
		uint64_t v[CPROF_COST_COLS];

		if (cprof_grow(&m->cost, &cap, m->ncost, sizeof(*m->cost)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		/* totals a reader sums: a forged negative or huge value is read as 0, never wrapped */
		for (int i = 1; i < CPROF_COST_COLS; i++) {
			int64_t x = sqlite3_column_int64(st, i);

			v[i] = x > 0 && x < (1ll << 62) ? (uint64_t)x : 0;
		}
		c = &m->cost[m->ncost];
		c->seq = m->ncost++;
		c->proc = sqlite3_column_int64(st, 0);
		c->time = v[1];
		c->hook_calls = v[2];
		c->hook_ns = v[3];
		c->sampled_calls = v[4];
		c->stack_calls = v[5];
		c->stack_ns = v[6];
		c->flusher_cpu_ns = v[7];
		c->app_run_ns = v[8];
		c->app_wait_ns = v[9];
		c->lost_ring_full = v[10];
		c->lost_cupti = v[11];
		c->lost_pipe = v[12];
		c->lost_nested = v[13];
		c->counted_calls = v[14];
		c->counted_ns = v[15];
		c->pass_calls = v[16];
		c->pass_ns = v[17];
		c->pass_sq = v[18];
		c->pass_launches = v[19];
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EIO;
	/* each process's rows together, in time: the readers below look them up, never scan them all per use */
	if (m->ncost > 1) /* an empty array may have no buffer: qsort(NULL) is undefined */
		qsort(m->cost, m->ncost, sizeof(*m->cost), cost_cmp);
	if (m->ncost == 0)
		return 0;
	return cprof_model_rec_spans(m) < 0 ? -ENOMEM : cprof_model_wait_base(m);
}

static void add_totals(struct cprof_cost_row *sum, const struct cprof_cost_row *c)
{
	sum->hook_calls += c->hook_calls;
	sum->hook_ns += c->hook_ns;
	sum->sampled_calls += c->sampled_calls;
	sum->stack_calls += c->stack_calls;
	sum->stack_ns += c->stack_ns;
	sum->flusher_cpu_ns += c->flusher_cpu_ns;
	sum->app_run_ns += c->app_run_ns;
	sum->app_wait_ns += c->app_wait_ns;
	sum->lost_ring_full += c->lost_ring_full;
	sum->lost_cupti += c->lost_cupti;
	sum->lost_pipe += c->lost_pipe;
	sum->lost_nested += c->lost_nested;
	sum->pass_calls += c->pass_calls;
	sum->pass_ns += c->pass_ns;
	sum->pass_sq += c->pass_sq;
	sum->pass_launches += c->pass_launches;
}

/* The last totals of each process (the rows are running totals, sorted: a process's newest is the last of its run).
 * Asked for each window: each process's rows are found by search, not walked. */
static void last_totals(const struct cprof_model *m, int64_t proc, struct cprof_cost_row *sum, size_t *nprocs)
{
	size_t first, end;

	memset(sum, 0, sizeof(*sum));
	*nprocs = 0;
	if (proc != 0) {
		proc_rows(m, proc, &first, &end);
		if (first < end) {
			add_totals(sum, &m->cost[end - 1]);
			*nprocs = 1;
		}
		return;
	}
	for (first = 0; first < m->ncost; first = end) {
		proc_rows(m, m->cost[first].proc, &first, &end);
		add_totals(sum, &m->cost[end - 1]);
		(*nprocs)++;
	}
}

static uint64_t share(uint64_t total, uint64_t part, uint64_t whole)
{
	if (whole == 0)
		return 0;
	if (part >= whole)
		return total;
	return (uint64_t)((double)total * (double)part / (double)whole);
}

/* proc's rows around x: *hi the first after x, *lo the first of the rows at the latest time not after x (NULL: none) */
static void rows_around(const struct cprof_model *m, int64_t proc, uint64_t x, const struct cprof_cost_row **lo,
			const struct cprof_cost_row **hi)
{
	size_t first, end, l, h;

	proc_rows(m, proc, &first, &end);
	for (l = first, h = end; l < h;) {
		size_t mid = l + (h - l) / 2;

		if (m->cost[mid].time <= x)
			l = mid + 1;
		else
			h = mid;
	}
	*hi = l < end ? &m->cost[l] : NULL;
	*lo = NULL;
	if (l > first) {
		for (*lo = &m->cost[l - 1]; *lo > &m->cost[first] && (*lo - 1)->time == (*lo)->time; (*lo)--)
			;
	}
}

static double field_of(const struct cprof_cost_row *r, size_t field)
{
	return (double)*(const uint64_t *)((const char *)r + field);
}

/* A process's running total of field at time x, interpolated between its rows (0 before the first). */
static double at_time(const struct cprof_model *m, int64_t proc, size_t field, uint64_t x)
{
	const struct cprof_cost_row *lo, *hi;
	double a;

	rows_around(m, proc, x, &lo, &hi);
	a = lo ? field_of(lo, field) : 0.0;
	if (hi == NULL)
		return a;
	if (lo == NULL || hi->time == lo->time)
		return lo ? a : 0.0; /* before the first row: nothing known yet, counted from it */
	return a + (field_of(hi, field) - a) * (double)(x - lo->time) / (double)(hi->time - lo->time);
}

/* The first span after (proc, x) in m->rspan's (proc, start) order, by its start or (outer) its outer start: the
 * spans keep the same order either way */
static size_t span_after(const struct cprof_model *m, int64_t proc, uint64_t x, int outer)
{
	size_t l = 0, h = m->nrspan;

	while (l < h) {
		size_t mid = l + (h - l) / 2;
		const struct cprof_rec_span *sp = &m->rspan[mid];

		if (sp->proc < proc || (sp->proc == proc && (outer ? sp->ostart : sp->start) <= x))
			l = mid + 1;
		else
			h = mid;
	}
	return l;
}

/* How long proc was recorded before x; -1 when the profile has no windows for it (recorded whole). outer: inside
 * its windows' outer bounds, CUPTI's switches with them (the spans keep the same order either way). */
static double recorded_before(const struct cprof_model *m, int64_t proc, uint64_t x, int outer)
{
	const struct cprof_rec_span *s;
	size_t l = span_after(m, proc, x, outer);

	if (l == 0 || m->rspan[l - 1].proc != proc) /* x before proc's first span, or proc has none */
		return l < m->nrspan && m->rspan[l].proc == proc ? 0 : -1;
	s = &m->rspan[l - 1];
	if (outer)
		return (double)s->obefore + (double)((x < s->oend ? x : s->oend) - s->ostart);
	return (double)s->before + (double)((x < s->end ? x : s->end) - s->start);
}

/* A process's running total of a field that grows only while cprof records (stack captures, counted calls; unrecorded
 * 0), or only while it does not (passLaunches; unrecorded 1): between two rows it grew over that time, not the
 * clock's. Rows ~100 ms apart around 40 ms windows put half of a window's growth into the unrecorded time beside it,
 * by the clock (the training step's stated cost 0.75x its slowdown, 2026-12-06). The unrecorded time is outside the
 * windows' outer bounds: a thread that switches CUPTI at a window's edge (--steps: the program's own) launches
 * nothing meanwhile, and back-to-back steps had put 3% of the gaps' launches into those switches (t-cost-pace,
 * 2026-12-07). With no windows, or none of that time between the rows, by the clock. */
static double at_spread(const struct cprof_model *m, int64_t proc, size_t field, uint64_t x, int unrecorded)
{
	const struct cprof_cost_row *lo, *hi;
	double a, rx, rl, rh;

	rows_around(m, proc, x, &lo, &hi);
	/* recorded_before is -1 only for a process with no window at all, whatever the time */
	if (lo == NULL || hi == NULL || (rx = recorded_before(m, proc, x, unrecorded)) < 0)
		return at_time(m, proc, field, x);
	rl = recorded_before(m, proc, lo->time, unrecorded);
	rh = recorded_before(m, proc, hi->time, unrecorded);
	if (unrecorded) {
		rx = (double)x - rx;
		rl = (double)lo->time - rl;
		rh = (double)hi->time - rh;
	}
	if (rh <= rl)
		return at_time(m, proc, field, x);
	a = field_of(lo, field);
	return a + (field_of(hi, field) - a) * (rx - rl) / (rh - rl);
}

/* The growth of field over [ws, we], summed over the processes of the filter; recorded: it grows only while cprof
 * records (at_spread). */
static uint64_t grew(const struct cprof_model *m, int64_t proc, size_t field, uint64_t ws, uint64_t we, int recorded)
{
	double sum = 0;

	for (size_t i = 0; i < m->nprocs; i++) {
		int64_t p = m->procs[i].id;

		if (proc != 0 && p != proc)
			continue;
		double d = recorded ? at_spread(m, p, field, we, 0) - at_spread(m, p, field, ws, 0)
				    : at_time(m, p, field, we) - at_time(m, p, field, ws);

		sum += d > 0 ? d : 0;
	}
	return (uint64_t)sum;
}

/* Each process's run-queue wait per ns its threads ran in the gaps between its recording windows (m->wait_base).
 * Beside a CPU-bound neighbour the program's threads wait for a core whether cprof runs or not: 1.8 ms of a 4.5 ms
 * training step beside one `yes` (2026-12-06, simulated GPU), so all of a window's wait up to cprof's threads' CPU
 * had stated 45-55 us a step where the wait grew 13-25 (the stated cost 1.25-1.45x the slowdown). The gaps are the
 * same program at the same pace, unrecorded; the rows at each window's edges (the flusher's) bound them. Before the
 * first window is the program's start-up, another pace, and is left out. */
#define WAIT_BASE_MIN_RUN_NS 1000000.0 /* less run than this in the gaps: no baseline */

int cprof_model_wait_base(struct cprof_model *m)
{
	size_t cap = 0;
	const size_t frun = offsetof(struct cprof_cost_row, app_run_ns), fwait = offsetof(struct cprof_cost_row, app_wait_ns);

	free(m->wait_base);
	m->wait_base = NULL;
	m->nwait_base = 0;
	for (size_t i = 0; i < m->nrspan;) {
		int64_t proc = m->rspan[i].proc;
		double run = 0, wait = 0;

		for (; i + 1 < m->nrspan && m->rspan[i + 1].proc == proc; i++) {
			uint64_t gs = m->rspan[i].oend, ge = m->rspan[i + 1].ostart; /* the program alone: no switch */
			double r = at_time(m, proc, frun, ge) - at_time(m, proc, frun, gs),
			       w = at_time(m, proc, fwait, ge) - at_time(m, proc, fwait, gs);

			run += r > 0 ? r : 0;
			wait += w > 0 ? w : 0;
		}
		i++;
		if (run < WAIT_BASE_MIN_RUN_NS)
			continue;
		if (cprof_grow(&m->wait_base, &cap, m->nwait_base, sizeof(*m->wait_base)) < 0)
			return -ENOMEM;
		m->wait_base[m->nwait_base++] = (struct cprof_wait_base){ .proc = proc, .per_run = wait / run };
	}
	return 0;
}

/* m->wait_base is by process (made in m->rspan's order): a search, not a walk per process of each window */
static double wait_per_run(const struct cprof_model *m, int64_t proc)
{
	size_t lo = cprof_lower_i64(m->wait_base, m->nwait_base, sizeof(*m->wait_base),
				    offsetof(struct cprof_wait_base, proc), proc);

	return lo < m->nwait_base && m->wait_base[lo].proc == proc ? m->wait_base[lo].per_run : 0;
}

/* A kernel launch the pace counts: one the hooks recorded (a graph's launch is another cost), as preload's
 * passLaunches counts those it passed through */
static int pace_launch(const struct cprof_call *c)
{
	return c->launch && c->graph == CPROF_GRAPH_NONE;
}

/* a window or gap with fewer launches than this is no sample of the pace (two windows back to back: 40 us apart) */
#define CPROF_PACE_MIN_SAMPLE 8
/* for a measured pace: launches in the windows, and windows with a gap beside them, at least */
#define CPROF_PACE_MIN 256
#define CPROF_PACE_MIN_WINDOWS 4

static int pace_proc_cmp(const void *pa, const void *pb)
{
	const struct cprof_pace_proc *a = pa, *b = pb;

	return a->proc < b->proc ? -1 : a->proc > b->proc;
}

/* The slowdown cprof's recording shows in the program's own pace, where the run has windows with launches passed
 * through between them (cprof-run --capture-range, --steps FIRST:LAST:every=N, cprof capture): each window's wall
 * time per launch from its first launch to its last less that of the nearest gaps with launches on each side (a
 * machine's pace drifts: 24 to 37 us an eager step within one run, 2026-12-07; the gaps, between the windows' outer
 * bounds, hold no CUPTI switch, preload/capture.c). It takes
 * in what no part of the stated cost times (CUPTI's work outside the calls and at the edges, the caches the rings and
 * buffers take, a core lost to cprof's threads) and measures on the program's own work rather than on cprof's. It
 * holds only where the gaps run the same work as the windows (a training loop's steps); the start-up before the first
 * window and the time after the last are left out, and so is a process that lost events (its windows did less work
 * than they took) or whose profile has no passLaunches. m->rspan is by (process, start). */
int cprof_model_pace(struct cprof_model *m)
{
	const size_t fpass = offsetof(struct cprof_cost_row, pass_launches);
	double sum_l = 0, sum_d = 0, sum_in = 0, sum_out = 0, sq = 0, *d = NULL, *wl = NULL, *gp = NULL, *left = NULL;
	uint64_t *wfirst = NULL, *wlast = NULL;
	size_t n = 0, cap = 0, dcap = 0, nd = 0, pcap = 0;
	int ret = -ENOMEM;

	memset(&m->pace, 0, sizeof(m->pace));
	free(m->pace_proc);
	m->pace_proc = NULL;
	m->npace_proc = 0;
	for (size_t i = 0, j; i < m->nrspan; i = j) {
		const struct cprof_rec_span *sp = &m->rspan[i];
		int64_t proc = sp->proc;
		struct cprof_cost_row t;
		size_t nprocs, ns, k, c, first_d = nd;
		double pl = 0, pdl = 0, right;

		for (j = i; j < m->nrspan && m->rspan[j].proc == proc; j++)
			;
		ns = j - i;
		last_totals(m, proc, &t, &nprocs);
		if (ns < 2 || t.pass_launches == 0 || t.lost_ring_full || t.lost_cupti || t.lost_pipe || t.lost_nested)
			continue;
		if (ns > cap) {
			free(wl);
			free(gp);
			free(left);
			free(wfirst);
			free(wlast);
			cap = ns;
			wl = calloc(cap, sizeof(*wl));
			gp = calloc(cap, sizeof(*gp));
			left = calloc(cap, sizeof(*left));
			wfirst = calloc(cap, sizeof(*wfirst));
			wlast = calloc(cap, sizeof(*wlast));
			if (wl == NULL || gp == NULL || left == NULL || wfirst == NULL || wlast == NULL)
				goto out;
		}
		/* each window's launches, its first and its last: one walk of the calls over the process's spans (they do
		 * not overlap) */
		memset(wl, 0, ns * sizeof(*wl));
		k = 0;
		for (c = cprof_first_at(m->calls, m->ncalls, sizeof(*m->calls), sp[0].start);
		     c < m->ncalls && m->calls[c].start < sp[ns - 1].end; c++) {
			while (k < ns && m->calls[c].start >= sp[k].end)
				k++;
			if (k < ns && m->calls[c].start >= sp[k].start && m->calls[c].proc == proc && pace_launch(&m->calls[c])) {
				wfirst[k] = wl[k]++ ? wfirst[k] : m->calls[c].start;
				wlast[k] = m->calls[c].start;
			}
		}
		/* each gap's pace (-1: too few launches), and the nearest usable one left of each window */
		for (k = 0; k + 1 < ns; k++) {
			uint64_t gs = sp[k].oend, ge = sp[k + 1].ostart; /* CUPTI's switches are the windows' */
			double gl = at_spread(m, proc, fpass, ge, 1) - at_spread(m, proc, fpass, gs, 1);

			gp[k] = gl >= CPROF_PACE_MIN_SAMPLE && ge > gs ? (double)(ge - gs) / gl : -1;
			if (gp[k] >= 0)
				m->pace.launches_out += (uint64_t)gl;
		}
		for (k = 0; k < ns; k++)
			left[k] = k == 0 ? -1 : gp[k - 1] >= 0 ? gp[k - 1] : left[k - 1];
		/* right to left: the nearest usable gap right of each window, then its sample */
		right = -1;
		for (k = ns; k-- > 0;) {
			double off, pace, w;
			int sides;

			if (k + 1 < ns && gp[k] >= 0)
				right = gp[k];
			sides = (left[k] >= 0) + (right >= 0);
			/* the window from its first launch to its last: what its edges cost once (CUPTI's first records
			 * after its kinds came on, the statuses and the COST row sent then) is a window's cost, not a
			 * launch's; a 10-step training window beside a CPU-bound process had put three times the
			 * per-step slowdown into its launches (2026-12-07) */
			if (wl[k] < CPROF_PACE_MIN_SAMPLE + 1 || sides == 0 || wlast[k] <= wfirst[k])
				continue;
			off = ((left[k] >= 0 ? left[k] : 0) + (right >= 0 ? right : 0)) / sides;
			w = wl[k] - 1; /* the launches' intervals */
			pace = (double)(wlast[k] - wfirst[k]) / w;

			if (cprof_grow(&d, &dcap, nd + 2, sizeof(*d)) < 0)
				goto out;
			d[nd++] = w;
			d[nd++] = pace - off;
			sum_l += w;
			sum_d += w * (pace - off);
			sum_in += w * pace;
			sum_out += w * off;
			pl += w;
			pdl += w * (pace - off);
			n++;
		}
		if (nd > first_d) {
			if (cprof_grow(&m->pace_proc, &pcap, m->npace_proc, sizeof(*m->pace_proc)) < 0)
				goto out;
			m->pace_proc[m->npace_proc++] = (struct cprof_pace_proc){ .proc = proc, .diff_ns = pdl / pl };
		}
	}
	ret = 0;
	if (n == 0)
		goto out;
	for (size_t k = 0; k < nd; k += 2)
		sq += d[k] * d[k] * (d[k + 1] - sum_d / sum_l) * (d[k + 1] - sum_d / sum_l);
	{
		double diff = sum_d / sum_l, se = n > 1 ? sqrt(sq * (double)n / (double)(n - 1)) / sum_l : 0;

		m->pace.launches_in = (uint64_t)sum_l;
		m->pace.windows = n;
		m->pace.in_ns = (uint64_t)(sum_in / sum_l);
		m->pace.out_ns = (uint64_t)(sum_out / sum_l);
		m->pace.diff_ns = (int64_t)diff;
		m->pace.se_ns = (uint64_t)se;
		m->pace.measured = n >= CPROF_PACE_MIN_WINDOWS && sum_l >= CPROF_PACE_MIN && diff > 0 && diff > 2 * se;
	}
	if (m->npace_proc > 1)
		qsort(m->pace_proc, m->npace_proc, sizeof(*m->pace_proc), pace_proc_cmp);
out:
	free(d);
	free(wl);
	free(gp);
	free(left);
	free(wfirst);
	free(wlast);
	if (ret < 0 || n == 0) {
		memset(&m->pace, 0, sizeof(m->pace));
		free(m->pace_proc);
		m->pace_proc = NULL;
		m->npace_proc = 0;
	}
	return ret;
}

/* What the pace says recording cost the window's launches (its calls [lo, hi)): each launch of a process the pace was
 * measured on times that process's own difference (another process's, or one recorded whole, gets none); 0 unless
 * measured */
static uint64_t paced_in(const struct cprof_model *m, int64_t proc, size_t lo_call, size_t hi_call, uint64_t *launches)
{
	double ns = 0;

	*launches = 0;
	if (m->npace_proc == 0)
		return 0;
	for (size_t i = lo_call; i < hi_call; i++) {
		const struct cprof_call *c = &m->calls[i];
		size_t lo;

		if ((proc != 0 && c->proc != proc) || !pace_launch(c))
			continue;
		lo = cprof_lower_i64(m->pace_proc, m->npace_proc, sizeof(*m->pace_proc),
				     offsetof(struct cprof_pace_proc, proc), c->proc);
		if (lo < m->npace_proc && m->pace_proc[lo].proc == c->proc) {
			(*launches)++;
			ns += m->pace_proc[lo].diff_ns > 0 ? m->pace_proc[lo].diff_ns : 0;
		}
	}
	return m->pace.measured && ns < 4.0e18 ? (uint64_t)ns : 0;
}

/* The window's run and wait, and the wait its processes' baselines expect of it: *expected for the run less cprof's
 * part (own_ns, cprof's work on the program's threads), *part for cprof's part (its CPU waits for a core as the rest;
 * divided as the excess is, for the bound). *excess: the wait over that expectation, each process's divided by how
 * many of its threads were runnable at a time ((run + wait) / wall, at least 1). Waits are summed over threads, and a
 * program delays by the wait of the thread it waits for: the training step's main thread and autograd's were both
 * runnable 44% of the time (bare, 2-core VM, 2026-12-07), and beside a `yes` their waits grew 480 us a step in the
 * profiled blocks where the step took 300 us more, hooks and CUPTI included (the wait stated without this: 234 us a
 * step, the whole cost 1.33x the slowdown). */
static void wait_expected(const struct cprof_model *m, int64_t proc, uint64_t ws, uint64_t we, uint64_t own_ns,
			  uint64_t *run, uint64_t *wait, uint64_t *expected, uint64_t *part, int64_t *excess)
{
	const size_t frun = offsetof(struct cprof_cost_row, app_run_ns), fwait = offsetof(struct cprof_cost_row, app_wait_ns);
	double all = 0, waited = 0, e = 0, own, wall = we > ws ? (double)(we - ws) : 0, w_one = 0, e_one = 0, x;
	/* one process's window: its slot alone; the run's own: every process */
	size_t i = proc != 0 ? cprof_model_proc_index(m, proc) : 0, n = proc != 0 ? i + (i < m->nprocs) : m->nprocs;

	for (; i < n; i++) {
		int64_t p = m->procs[i].id;
		double d, w, threads, per_run = wait_per_run(m, p);

		d = at_time(m, p, frun, we) - at_time(m, p, frun, ws);
		d = d > 0 ? d : 0;
		w = at_time(m, p, fwait, we) - at_time(m, p, fwait, ws);
		w = w > 0 ? w : 0;
		threads = wall > 0 && d + w > wall ? (d + w) / wall : 1;
		all += d;
		waited += w;
		e += d * per_run;
		w_one += w / threads;
		e_one += d * per_run / threads;
	}
	*run = (uint64_t)all;
	*wait = (uint64_t)waited;
	if (e > 4.0e18) /* a forged profile's rows: below 2^62, as every total here */
		e = 4.0e18;
	own = all > 0 ? ((double)own_ns < all ? (double)own_ns : all) / all : 0;
	*expected = (uint64_t)(e * (1 - own));
	/* the bound's part in the excess's measure: divided alike */
	*part = (uint64_t)((e_one < 4.0e18 ? e_one : 4.0e18) * own);
	x = w_one - e_one * (1 - own);
	*excess = (int64_t)(x > 4.0e18 ? 4.0e18 : x < -4.0e18 ? -4.0e18 : x);
}

/* The wait cprof caused and the total, from the parts: a window's and phases' summed alike (a bound taken per
 * window and then added would turn each window's noise into cost). */
static void cost_settle(struct cprof_cost *c)
{
	/* in double: a forged profile's totals near 2^62 must not wrap the bound (below the excess it fits) */
	double cap = (double)c->flusher_cpu_ns + (double)c->collector_cpu_ns + (double)c->wait_part_ns;

	c->wait_attributed_ns = c->wait_excess_ns <= 0 ? 0 :
				(double)c->wait_excess_ns < cap ? (uint64_t)c->wait_excess_ns : (uint64_t)cap;
	c->total_ns = c->hook_ns + c->stack_ns + c->counted_ns + c->wait_attributed_ns + c->cupti_overhead_ns +
		      c->cupti_calls_ns;
}

struct rt_dur {
	int64_t proc, ext;
	uint64_t dur;
};

static int rt_dur_cmp(const void *pa, const void *pb)
{
	const struct rt_dur *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->ext < b->ext ? -1 : a->ext > b->ext;
}

static int runtime_api(const char *name)
{
	return name && (strncmp(name, "cuda", 4) == 0 || strncmp(name, "__cuda", 6) == 0);
}

static int pt_cmp(const void *pa, const void *pb)
{
	const int64_t *a = pa, *b = pb;

	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* A CUPTI buffer flush on cprof's flusher (or CUPTI's own thread) is CPU cprof's threads took, counted where it
 * made the program wait for a core; only what CUPTI did on the program's threads is the program's cost. The
 * program's threads are those CUPTI recorded runtime calls of. */
static int mark_background_overhead(struct cprof_model *m)
{
	int64_t (*pt)[2];
	size_t n = 0, i, matched = 0;

	if (m->novh == 0 || m->nrt == 0)
		return 0; /* no thread known to be the program's: every record counts */
	if ((pt = malloc(m->nrt * sizeof(*pt))) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nrt; i++) {
		pt[n][0] = m->rt[i].proc;
		pt[n++][1] = m->rt[i].tid;
	}
	cprof_sort(pt, n, sizeof(*pt), pt_cmp);
	for (i = 0; i < m->novh; i++) {
		int64_t key[2] = { m->ovh[i].proc, m->ovh[i].tid };

		m->ovh[i].background = m->ovh[i].tid != 0 && bsearch(key, pt, n, sizeof(*pt), pt_cmp) == NULL;
		matched += m->ovh[i].tid != 0 && !m->ovh[i].background;
	}
	/* no record on a thread that made calls: the two records may number threads differently; none is
	 * taken off (the cost is never stated smaller than it may be) */
	for (i = 0; matched == 0 && i < m->novh; i++)
		m->ovh[i].background = 0;
	free(pt);
	return 0;
}

/* the span of proc that holds x, by search (m->rspan is by (proc, start)); NULL: none */
static const struct cprof_rec_span *span_at(const struct cprof_model *m, int64_t proc, uint64_t x)
{
	size_t l = span_after(m, proc, x, 0);

	return l > 0 && m->rspan[l - 1].proc == proc && x <= m->rspan[l - 1].end ? &m->rspan[l - 1] : NULL;
}

void cprof_cost_outer(const struct cprof_model *m, int64_t proc, uint64_t *ws, uint64_t *we)
{
	for (size_t i = 0; i < (proc ? 1 : m->nprocs); i++) {
		int64_t p = proc ? proc : m->procs[i].id;
		const struct cprof_rec_span *s = span_at(m, p, *ws), *e = span_at(m, p, *we);

		/* a span's outer bounds hold its own (window_outer) */
		if (s && *ws == s->start)
			*ws = s->ostart;
		if (e && *we == e->end)
			*we = e->oend;
	}
}

uint64_t cprof_cost_overhead(const struct cprof_model *m, int64_t proc, uint64_t ws, uint64_t hi, int program_only)
{
	uint64_t o = 0;

	/* the records are by start: the window's first found by search (asked for each window, a walk from the run's
	 * start was O(windows x records)) */
	for (size_t i = cprof_first_at(m->ovh, m->novh, sizeof(*m->ovh), ws); i < m->novh && m->ovh[i].start < hi; i++)
		if ((proc == 0 || m->ovh[i].proc == proc) && !(program_only && m->ovh[i].background))
			o += (m->ovh[i].end < hi ? m->ovh[i].end : hi) - m->ovh[i].start;
	return o;
}

struct pass_dur {
	int64_t proc;
	uint64_t dur;
};

static int pass_dur_cmp(const void *pa, const void *pb)
{
	const struct pass_dur *a = pa, *b = pb;

	return a->proc < b->proc ? -1 : a->proc > b->proc;
}

/* A sample's mean and the variance of that mean, from its count, sum and sum of squares. */
static void mean_var(double n, double sum, double sq, double *mean, double *var_of_mean)
{
	double var;

	*mean = sum / n;
	var = n > 1 ? (sq - sum * sum / n) / (n - 1) : 0;
	*var_of_mean = var > 0 ? var / n : 0;
}

/* CUPTI's time in a call, measured where the run allows it: the kernel launches recorded with their one CUPTI record
 * (p: their durations, gathered in the estimate's pass) against the launches of the same process passed through
 * while a window was closed and CUPTI recorded nothing (preload's CPROF_PASS, about one in 64 timed), both timed by
 * the same two reads around the real call. The
 * difference of the means is all CUPTI did inside the call, before, inside and after its record; the estimate
 * (the call less its record) counts cudart's own work outside the record and misses CUPTI's inside it. As the
 * estimate, a recorded call 10 us or more over its record is left out (CUPTI's buffer request: its overhead record
 * counts it), and on both sides a call of CPROF_PASS_MAX_NS or more (it lost its core). Each process with enough
 * of both weighs by its recorded launches. The measurement replaces the estimate only when it is more than twice
 * its standard error above 0: the two sides run at different times, and a difference lost in their spread (or one
 * a fuller launch queue outside the windows made) says nothing of CUPTI. */
static void cupti_in_call_measured(struct cprof_model *m, struct pass_dur *p, size_t n)
{
	size_t i, j;
	double weighted = 0, weights = 0, var = 0;
	uint64_t passed = 0;

	cprof_sort(p, n, sizeof(*p), pass_dur_cmp);
	for (i = 0; i < n; i = j) {
		struct cprof_cost_row t;
		size_t nprocs;
		double on = 0, on_sq = 0, on_mean, on_var, off_mean, off_var, k;

		for (j = i; j < n && p[j].proc == p[i].proc; j++) {
			on += (double)p[j].dur;
			on_sq += (double)p[j].dur * (double)p[j].dur;
		}
		last_totals(m, p[i].proc, &t, &nprocs);
		if (j - i < CPROF_PASS_MIN || t.pass_calls < CPROF_PASS_MIN)
			continue;
		k = (double)(j - i);
		mean_var(k, on, on_sq, &on_mean, &on_var);
		mean_var((double)t.pass_calls, (double)t.pass_ns, (double)t.pass_sq, &off_mean, &off_var);
		weighted += (on_mean - off_mean) * k;
		weights += k;
		var += k * k * (on_var + off_var);
		passed += t.pass_calls;
	}
	if (weights > 0) {
		double diff = weighted / weights, se = sqrt(var) / weights;

		m->in_call.passed = passed;
		m->in_call.diff_ns = (int64_t)diff;
		m->in_call.se_ns = (uint64_t)se;
		if (diff > 2 * se && diff > 0) {
			m->in_call.ns = (uint64_t)diff;
			m->in_call.measured = 1;
		}
	}
}

int cprof_model_cupti_in_calls(struct cprof_model *m)
{
	struct rt_dur *r = NULL;
	struct pass_dur *p = NULL;
	int64_t *d = NULL;
	size_t nr = 0, nd = 0, np = 0, i, lo;
	struct cprof_hint hint = { 0 };
	int ret = -ENOMEM, passed = 0;

	if (mark_background_overhead(m) < 0)
		return -ENOMEM;
	memset(&m->in_call, 0, sizeof(m->in_call));
	for (i = 0; i < m->ncalls; i++)
		m->calls[i].rt1 = 0; /* the loader fills the fields it knows */
	if (m->nrt == 0 || m->ncalls == 0)
		return 0;
	/* launches timed outside a window (none in a whole-run profile or one of an older build): the measurement */
	for (i = 0; i < m->ncost && !passed; i++)
		passed = m->cost[i].pass_calls > 0;
	if ((r = malloc(m->nrt * sizeof(*r))) == NULL || (d = malloc(m->ncalls * sizeof(*d))) == NULL ||
	    (passed && (p = malloc(m->ncalls * sizeof(*p))) == NULL))
		goto out;
	for (i = 0; i < m->nrt; i++)
		if (m->rt[i].ext != CPROF_NO_ID)
			r[nr++] = (struct rt_dur){ .proc = m->rt[i].proc, .ext = m->rt[i].ext,
						   .dur = m->rt[i].end - m->rt[i].start };
	/* stable radix passes, minor key first: what the stable qsort gave, in a fraction of its time */
	if (cprof_radix_sort_at(r, nr, sizeof(*r), offsetof(struct rt_dur, ext)) < 0 ||
	    cprof_radix_sort_at(r, nr, sizeof(*r), offsetof(struct rt_dur, proc)) < 0)
		cprof_sort(r, nr, sizeof(*r), rt_dur_cmp);
	for (i = 0; i < m->ncalls; i++) {
		struct cprof_call *c = &m->calls[i];

		if (c->corr == CPROF_NO_ID || !runtime_api(cprof_model_string(m, c->name)))
			continue;
		lo = cprof_lower_pk(r, nr, sizeof(*r), c->proc, c->corr, &hint);
		/* one record: a library's call (cuBLAS) has several inside, and its own work between them */
		if (lo >= nr || r[lo].proc != c->proc || r[lo].ext != c->corr ||
		    (lo + 1 < nr && r[lo + 1].proc == c->proc && r[lo + 1].ext == c->corr))
			continue;
		c->rt1 = 1;
		d[nd] = (int64_t)(c->end - c->start) - (int64_t)r[lo].dur;
		/* the measurement's side of the windows: kernel launches, the same rule on buffer requests as below, and
		 * on both of its sides no call of CPROF_PASS_MAX_NS or more (it lost its core) */
		if (p && c->launch && c->graph == CPROF_GRAPH_NONE && c->end > c->start &&
		    c->end - c->start < CPROF_PASS_MAX_NS && d[nd] < CPROF_CUPTI_IN_CALL_MAX_NS)
			p[np++] = (struct pass_dur){ .proc = c->proc, .dur = c->end - c->start };
		nd++;
	}
	if (nd) {
		/* CUPTI's work is paid in every call, its tail too (the buffer's lock taken while the flusher reads
		 * it, a cold line of a reused buffer): the mean, not the median, which left a quarter of it out on
		 * the eager PyTorch step. Only calls longer by far than the work itself are left out: CUPTI's
		 * buffer request (its overhead record counts it) or the thread losing its core (the wait counts it). */
		int64_t sum = 0;
		size_t n = 0;

		for (i = 0; i < nd; i++)
			if (d[i] < CPROF_CUPTI_IN_CALL_MAX_NS) {
				sum += d[i];
				n++;
			}
		m->in_call.ns = n && sum > 0 ? (uint64_t)(sum / (int64_t)n) : 0;
	}
	m->in_call.estimate_ns = m->in_call.ns;
	if (p)
		cupti_in_call_measured(m, p, np);
	ret = 0;
out:
	free(r);
	free(d);
	free(p);
	return ret;
}

static uint64_t proc_ncalls(const struct cprof_model *m, int64_t proc)
{
	size_t p = cprof_model_proc_index(m, proc);

	return p < m->nprocs ? m->procs[p].ncalls : 0;
}

void cprof_cost_window(const struct cprof_model *m, int64_t proc, uint64_t ws, uint64_t we, uint64_t cupti_ns,
		       struct cprof_cost *out)
{
	struct cprof_cost_row t;
	uint64_t calls = 0, all = 0;
	size_t nprocs, lo, hi;

	memset(out, 0, sizeof(*out));
	out->cupti_overhead_ns = cupti_ns;
	last_totals(m, proc, &t, &nprocs);
	out->measured = nprocs > 0;
	/* the window's calls [lo, hi): the calls are by start, found by two searches (a walk per phase was
	 * O(calls x phases)); rows.c: cost.c sits below model.c */
	lo = cprof_first_at(m->calls, m->ncalls, sizeof(*m->calls), ws);
	hi = we > ws ? cprof_first_at(m->calls, m->ncalls, sizeof(*m->calls), we) : lo;
	if (proc == 0 || (m->calls_proc != 0 && m->calls_proc == proc)) {
		all = m->ncalls; /* every call counts */
		calls = hi - lo;
	} else {
		/* a walk of the window's calls for its own; the process's from the model's count */
		for (size_t i = lo; i < hi; i++)
			calls += m->calls[i].proc == proc;
		all = proc_ncalls(m, proc);
	}
	/* CUPTI does that work in every runtime call it records, not only in those the median is measured on: the
	 * calls a library makes inside a hooked one (cuBLAS's launch and occupancy query inside cublasGemmEx) and
	 * those only CUPTI saw count as well */
	if (we > ws) {
		size_t lo = cprof_first_at(m->rt, m->nrt, sizeof(*m->rt), ws), hi = cprof_first_at(m->rt, m->nrt, sizeof(*m->rt), we);

		for (size_t i = lo; i < hi; i++)
			out->cupti_calls += proc == 0 || m->rt[i].proc == proc;
	}
	out->cupti_calls_ns = out->cupti_calls * m->in_call.ns;
	out->in_call = m->in_call;
	out->pace = m->pace;
	out->paced_ns = paced_in(m, proc, lo, hi, &out->pace_launches);
	out->calls = calls;
	if (out->measured) {
		/* the hooks' cost is per call: the run's per-call cost times the window's calls */
		uint64_t base = t.hook_calls > all ? t.hook_calls : all;

		out->hook_ns = share(t.hook_ns, calls, base);
		/* a capture is timed itself: where in time they were taken, as the CPU below (a site's first captures,
		 * libunwind's first reads of the unwind tables, are at the start, not spread over every call) */
		out->stack_ns = grew(m, proc, offsetof(struct cprof_cost_row, stack_ns), ws, we, 1);
		out->stacks = grew(m, proc, offsetof(struct cprof_cost_row, stack_calls), ws, we, 1);
		out->sampled_calls = t.sampled_calls;
		/* the threads' CPU and waiting are read in time (about ten rows a second): their growth over the window */
		out->flusher_cpu_ns = grew(m, proc, offsetof(struct cprof_cost_row, flusher_cpu_ns), ws, we, 0);
		/* the counted calls are not in the calls' table: their totals' growth over the window, as the CPU's */
		out->counted_ns = grew(m, proc, offsetof(struct cprof_cost_row, counted_ns), ws, we, 1);
		out->counted_calls = grew(m, proc, offsetof(struct cprof_cost_row, counted_calls), ws, we, 1);
		/* cprofd's CPU is known for the whole run only: its intake grows with the events, as the calls do */
		out->collector_cpu_ns = proc == 0 || m->nprocs <= 1 ? share(m->collector_run_cpu_ns, calls, base) : 0;
		/* the program's threads waited for a core: what they wait anyway (the baseline) is not cprof's doing;
		 * the rest is, up to the CPU cprof's own threads took meanwhile (an idle-priority writer takes none) and
		 * the wait of cprof's part of the run (cost_settle) */
		wait_expected(m, proc, ws, we,
			      out->hook_ns + out->stack_ns + out->counted_ns + out->cupti_overhead_ns + out->cupti_calls_ns,
			      &out->app_run_ns, &out->app_wait_ns, &out->wait_expected_ns, &out->wait_part_ns,
			      &out->wait_excess_ns);
		out->lost_ring_full = t.lost_ring_full;
		out->lost_cupti = t.lost_cupti;
		out->lost_pipe = t.lost_pipe;
		out->lost_nested = t.lost_nested;
	}
	cost_settle(out);
	out->window_ns = we > ws ? we - ws : 0;
}

/* Phases of one verdict add up; the run-wide loss counts are the same in each and are not. */
void cprof_cost_add(struct cprof_cost *to, const struct cprof_cost *c)
{
	to->window_ns += c->window_ns;
	to->calls += c->calls;
	to->hook_ns += c->hook_ns;
	to->stack_ns += c->stack_ns;
	to->stacks += c->stacks;
	to->counted_ns += c->counted_ns;
	to->counted_calls += c->counted_calls;
	to->cupti_overhead_ns += c->cupti_overhead_ns;
	to->cupti_calls_ns += c->cupti_calls_ns;
	to->cupti_calls += c->cupti_calls;
	to->flusher_cpu_ns += c->flusher_cpu_ns;
	to->collector_cpu_ns += c->collector_cpu_ns;
	to->app_run_ns += c->app_run_ns;
	to->app_wait_ns += c->app_wait_ns;
	to->wait_expected_ns += c->wait_expected_ns;
	to->wait_part_ns += c->wait_part_ns;
	to->wait_excess_ns += c->wait_excess_ns;
	to->in_call = c->in_call; /* one figure for the run */
	to->pace = c->pace;
	to->pace_launches += c->pace_launches;
	to->paced_ns += c->paced_ns;
	cost_settle(to);
}

/* A window's wait over its process's baseline is mostly noise (a 40 ms training block's wait wanders by a
 * millisecond beside a `yes`), and bounded window by window that noise adds up (a window under its baseline counts
 * 0, one over it counts): the block-by-block figure
 * came out 1.50x the slowdown where the run's was 1.05x (2026-12-06). Each window gets its process's wait,
 * bounded over all its windows, in proportion to what bounds it there (cprof's threads' CPU and its part's wait). */
void cprof_model_window_costs(struct cprof_model *m)
{
	/* sums by the windows' process index; the last slot, nprocs, for the run's own windows (proc 0) */
	struct cprof_cost *c = calloc(m->rec.n ? m->rec.n : 1, sizeof(*c)), *sum = calloc(m->nprocs + 1, sizeof(*sum));

	for (size_t i = 0; i < m->rec.n; i++) {
		struct cprof_window *w = &m->rec.w[i];
		struct cprof_cost one, *ci = c ? &c[i] : &one;
		uint64_t os, oe;

		/* with CUPTI's switches at its edges: cprof's cost to the program, though nothing was recorded there */
		window_outer(w, &os, &oe);
		cprof_cost_window(m, w->proc, os, oe, cprof_cost_overhead(m, w->proc, os, oe, 1), ci);
		w->cost_ns = ci->total_ns;
		w->cost_measured = ci->measured;
		if (sum)
			cprof_cost_add(&sum[cprof_model_proc_index(m, w->proc)], ci);
	}
	if (c == NULL || sum == NULL)
		goto out; /* each window's own bound: an over-statement, not a failure */
	for (size_t i = 0; i < m->rec.n; i++) {
		const struct cprof_cost *s = &sum[cprof_model_proc_index(m, m->rec.w[i].proc)];
		double cap = (double)(s->flusher_cpu_ns + s->collector_cpu_ns + s->wait_part_ns),
		       mine = (double)(c[i].flusher_cpu_ns + c[i].collector_cpu_ns + c[i].wait_part_ns);

		if (!c[i].measured)
			continue;
		m->rec.w[i].cost_ns = c[i].total_ns - c[i].wait_attributed_ns +
				      (uint64_t)(cap > 0 ? (double)s->wait_attributed_ns * mine / cap : 0);
	}
out:
	free(c);
	free(sum);
}
