/* The verdict from a profile: union of GPU busy time, HTA-style idle breakdown, Self CPU vs Self GPU, phases. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "common/cuda-errors.h"
#include "report/analysis.h"
#include "report/cprof.h"

#define PHASE_MIN_KERNELS 8   /* a piece between two syncs with fewer kernels is folded into the next */
#define PHASE_MAX_PIECES 128 /* pieces analysed at most */

void cprof_thresholds_default(struct cprof_thresholds *t)
{
	memset(t, 0, sizeof(*t));
	t->compute_pct = 80;
	t->overhead_pct = 50;
	t->host_wait_share = 50;
	/* HTA's default for "kernel wait": gaps under 30 us between kernels on a stream */
	t->kernel_wait_ns = 30000;
	t->include_startup = 0;
}

/* ?1 process (0 = all), ?2 from, ?3 to: the filter every query below shares */
#define PROC_WIN " (?1 = 0 OR processId = ?1) AND start >= ?2 AND start < ?3 "

static sqlite3_stmt *prep(sqlite3 *db, const char *sql, int64_t proc, uint64_t from, uint64_t to)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		pr_err("query failed: %s", sqlite3_errmsg(db));
		return NULL;
	}
	sqlite3_bind_int64(st, 1, proc);
	sqlite3_bind_int64(st, 2, (int64_t)from);
	sqlite3_bind_int64(st, 3, to > INT64_MAX ? INT64_MAX : (int64_t)to);
	return st;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *d, size_t n)
{
	if (n == 0)
		return 0;
	qsort(d, n, sizeof(*d), cmp_double);
	return n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

struct dvec {
	double *d;
	size_t n, cap;
};

static int dvec_push(struct dvec *v, double x)
{
	if (cprof_grow(&v->d, &v->cap, v->n, sizeof(*v->d)) < 0)
		return -ENOMEM;
	v->d[v->n++] = x;
	return 0;
}

struct gap {
	uint64_t s, e;
};

/* Host-wait gaps, then the outermost CUDA calls that overlap them: how much of the GPU's wait was
 * the host inside the CUDA API (launch cost) rather than in its own code. */
static uint64_t api_time_in(sqlite3 *db, int64_t proc, const struct gap *g, size_t n, uint64_t from, uint64_t to)
{
	sqlite3_stmt *st;
	uint64_t sum = 0;
	size_t i = 0;

	if (n == 0)
		return 0;
	st = prep(db, "SELECT start, end FROM CPROF_API WHERE" PROC_WIN "AND nested = 0 ORDER BY start", proc, from, to);
	if (st == NULL)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
		size_t j;

		while (i < n && g[i].e <= s)
			i++;
		for (j = i; j < n && g[j].s < e; j++) {
			uint64_t a = s > g[j].s ? s : g[j].s, b = e < g[j].e ? e : g[j].e;

			if (b > a)
				sum += b - a;
		}
	}
	sqlite3_finalize(st);
	return sum;
}

static void decide(struct cprof_verdict *v, const struct cprof_thresholds *t)
{
	uint64_t idle = v->host_wait_ns + v->kernel_wait_ns + v->other_ns;
	double host_share = idle ? 100.0 * v->host_wait_ns / idle : 0;

	if (v->kernels + v->memcpys + v->memsets == 0) {
		snprintf(v->verdict, sizeof(v->verdict), "no-gpu-activity");
		snprintf(v->advice, sizeof(v->advice), "no GPU work was recorded");
		return;
	}
	if (v->busy_pct >= t->compute_pct) {
		snprintf(v->verdict, sizeof(v->verdict), "compute-bound");
		snprintf(v->advice, sizeof(v->advice),
			 "the GPU is the bottleneck: speed up the top kernels (precision, tensor cores, fusion), not the launches");
	} else if (v->busy_pct < t->overhead_pct && host_share >= t->host_wait_share) {
		snprintf(v->verdict, sizeof(v->verdict), "overhead-bound");
		if (v->api_in_host_wait_ns * 2 >= v->host_wait_ns)
			snprintf(v->advice, sizeof(v->advice),
				 "batch more work per launch, fuse ops, or capture a CUDA graph");
		else
			snprintf(v->advice, sizeof(v->advice),
				 "the host is busy outside CUDA between launches: move that work off the launching thread or overlap it");
	} else {
		snprintf(v->verdict, sizeof(v->verdict), "mixed");
		snprintf(v->advice, sizeof(v->advice),
			 "neither side dominates: see the phases and the idle breakdown");
	}
}

/* Version queries answer without a driver (cudaDriverGetVersion gives 0): their success says nothing. */
static int answers_without_driver(const char *api)
{
	return !strcmp(api, "cudaDriverGetVersion") || !strcmp(api, "cudaRuntimeGetVersion");
}

int cprof_name_code(char *buf, size_t size, const char *api, int code)
{
	const char *name = cprof_error_name(api, code);

	return name ? snprintf(buf, size, "%d (%s)", code, name) : snprintf(buf, size, "%d", code);
}

/* No GPU op in the window: say why. CUDA that never came up (every call failed) is cuda-unavailable, with
 * the calls and their codes; otherwise the reason GPU records are missing, or that there was no GPU work. */
static void explain_no_gpu(sqlite3 *db, int64_t proc, uint64_t from, uint64_t to, struct cprof_verdict *v)
{
	sqlite3_stmt *st;
	char first[160] = "", list[sizeof(v->advice)] = "", note[200];
	uint64_t ok = 0, failed = 0, calls = 0;
	size_t used = 0;

	st = prep(db,
		  "SELECT s.value, a.returnValue, count(*), min(a.start) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"
		  " WHERE (?1 = 0 OR a.processId = ?1) AND a.start >= ?2 AND a.start < ?3 AND a.class IS NOT 'nvtx'"
		  " GROUP BY 1, 2 ORDER BY 4",
		  proc, from, to);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *api = (const char *)sqlite3_column_text(st, 0);
		int code = sqlite3_column_int(st, 1);
		uint64_t n = sqlite3_column_int64(st, 2);
		char nc[96];

		if (api == NULL)
			continue;
		calls += n;
		if (code == 0) {
			if (!answers_without_driver(api))
				ok += n;
			continue;
		}
		failed += n;
		cprof_name_code(nc, sizeof(nc), api, code);
		if (first[0] == '\0')
			snprintf(first, sizeof(first), "%s returned %s", api, nc);
		if (used < sizeof(list) - 1)
			used += snprintf(list + used, sizeof(list) - used, "%s%s %d x%llu", used ? ", " : "", api, code,
					 (unsigned long long)n);
	}
	sqlite3_finalize(st);
	if (used >= sizeof(list) - 1)
		snprintf(list + sizeof(list) - 5, 5, "...");
	if (ok == 0 && failed > 0) {
		snprintf(v->verdict, sizeof(v->verdict), "cuda-unavailable");
		snprintf(v->cause, sizeof(v->cause), "%s", first);
		snprintf(v->advice, sizeof(v->advice), "%llu CUDA call(s), none brought CUDA up; failed: %s",
			 (unsigned long long)calls, list);
		return;
	}
	if (calls == 0) {
		snprintf(v->advice, sizeof(v->advice), "the program made no CUDA call that cprof saw");
		return;
	}
	if (cprof_query_int(db, "SELECT count(*) FROM CPROF_STATUS WHERE code = 'cupti-started'", 0) > 0 &&
	    cprof_query_int(db, "SELECT count(*) FROM CPROF_STATUS WHERE code = 'cupti-conflict'", 0) == 0) {
		snprintf(v->advice, sizeof(v->advice), "the program queued no GPU work (CUPTI was recording)");
		return;
	}
	cprof_meta(db, "gpu_records_note", note, sizeof(note), "");
	snprintf(v->advice, sizeof(v->advice), "no GPU records: %s", note[0] ? note : "CUPTI did not report any");
}

int cprof_analyse(sqlite3 *db, int64_t proc, uint64_t from, uint64_t to, const struct cprof_thresholds *t,
		  struct cprof_verdict *v)
{
	sqlite3_stmt *st = NULL;
	struct dvec kd = { 0 }, ld = { 0 };
	struct gap *gaps = NULL;
	size_t ngaps = 0, capgaps = 0;
	uint64_t cur_s = 0, cur_e = 0, ws, we;
	int explicit_window = from != 0, have = 0, ret = -1;

	memset(v, 0, sizeof(*v));
	v->step_re = t->step_re;
	/* the run: first to last CUDA activity, calls or GPU ops */
	st = prep(db,
		  "SELECT min(s), max(e) FROM (SELECT min(start) s, max(end) e FROM CPROF_API WHERE" PROC_WIN
		  " UNION ALL SELECT min(start), max(end) FROM GPU_OPS WHERE" PROC_WIN ")",
		  proc, from, to);
	if (st == NULL)
		goto out;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		v->run_start = sqlite3_column_int64(st, 0);
		v->run_end = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	st = prep(db, "SELECT min(start), max(end), sum(kind='kernel'), sum(kind='memcpy'), sum(kind='memset'),"
		      " sum(end - start), sum(CASE WHEN kind='kernel' THEN end - start END) FROM GPU_OPS WHERE" PROC_WIN,
		  proc, from, to);
	if (st == NULL)
		goto out;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		v->gpu_span_start = sqlite3_column_int64(st, 0);
		v->gpu_span_end = sqlite3_column_int64(st, 1);
		v->kernels = sqlite3_column_int64(st, 2);
		v->memcpys = sqlite3_column_int64(st, 3);
		v->memsets = sqlite3_column_int64(st, 4);
		v->self_gpu_ns = sqlite3_column_int64(st, 5);
		v->kernel_ns = sqlite3_column_int64(st, 6);
	}
	sqlite3_finalize(st);
	st = NULL;

	if (explicit_window) {
		ws = from;
		we = to;
		if (to != UINT64_MAX && v->run_end > we)
			v->run_end = we;
	} else {
		ws = v->run_start;
		we = v->run_end;
		/* cold start (context creation, library loading) is not the steady state */
		if (!t->include_startup && v->gpu_span_start > v->run_start) {
			v->startup_ns = v->gpu_span_start - v->run_start;
			ws = v->gpu_span_start;
		}
	}
	if (!t->include_startup && v->kernels >= 10) {
		/* warm-up: the first instance of each repeating kernel pays lazy module loading, library
		 * heuristics, workspace allocation. Steady state starts once all of them ran once, as long as
		 * that is early (at most a fifth of the kernels). */
		st = prep(db,
			  "SELECT max(fe) FROM (SELECT min(end) fe, count(*) c FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE"
			  PROC_WIN "GROUP BY nameId) WHERE c >= 3",
			  proc, ws, we);
		if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
			uint64_t warm = sqlite3_column_int64(st, 0);
			sqlite3_stmt *c;

			sqlite3_finalize(st);
			st = NULL;
			c = prep(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE" PROC_WIN, proc, ws, warm);
			if (c && sqlite3_step(c) == SQLITE_ROW && warm > ws && warm < we &&
			    (uint64_t)sqlite3_column_int64(c, 0) * 5 <= v->kernels) {
				v->warmup_ns = warm - ws;
				ws = warm;
			}
			sqlite3_finalize(c);
		}
		sqlite3_finalize(st);
		st = NULL;
		if (v->warmup_ns) {
			/* the counts describe the steady window */
			st = prep(db, "SELECT sum(kind='kernel'), sum(kind='memcpy'), sum(kind='memset'), sum(end - start),"
				      " sum(CASE WHEN kind='kernel' THEN end - start END) FROM GPU_OPS WHERE" PROC_WIN,
				  proc, ws, we);
			if (st && sqlite3_step(st) == SQLITE_ROW) {
				v->kernels = sqlite3_column_int64(st, 0);
				v->memcpys = sqlite3_column_int64(st, 1);
				v->memsets = sqlite3_column_int64(st, 2);
				v->self_gpu_ns = sqlite3_column_int64(st, 3);
				v->kernel_ns = sqlite3_column_int64(st, 4);
			}
			sqlite3_finalize(st);
			st = NULL;
		}
	}
	v->start = ws;
	v->end = we;

	/* union of GPU ops, and what each gap before an op was waiting for */
	st = prep(db,
		  "SELECT o.start, o.end, o.kind, coalesce("
		  "(SELECT min(r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.processId = o.processId AND"
		  " r.correlationId = o.correlationId),"
		  "(SELECT min(d.start) FROM CUPTI_ACTIVITY_KIND_DRIVER d WHERE d.processId = o.processId AND"
		  " d.correlationId = o.correlationId), 0)"
		  " FROM GPU_OPS o WHERE (?1 = 0 OR processId = ?1) AND start >= ?2 AND start < ?3 ORDER BY o.start",
		  proc, ws, we);
	if (st == NULL)
		goto out;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
		uint64_t launch = sqlite3_column_int64(st, 3);
		const char *kind = (const char *)sqlite3_column_text(st, 2);

		if (e > we)
			e = we;
		if (kind && !strcmp(kind, "kernel") && dvec_push(&kd, (double)(e - s)) < 0)
			goto out;
		if (!have) {
			cur_s = ws;
			cur_e = ws;
			have = 1;
		}
		if (s > cur_e) {
			uint64_t gap = s - cur_e;

			/* HTA: the GPU waited for the host when the op was launched after the GPU went idle */
			if (launch == 0 || launch > cur_e) {
				v->host_wait_ns += gap;
				if (cprof_grow(&gaps, &capgaps, ngaps, sizeof(*gaps)) < 0)
					goto out;
				gaps[ngaps].s = cur_e;
				gaps[ngaps++].e = s;
			} else if (gap < t->kernel_wait_ns) {
				v->kernel_wait_ns += gap;
			} else {
				v->other_ns += gap;
			}
			v->busy_ns += cur_e - cur_s;
			cur_s = s;
			cur_e = e;
		} else if (e > cur_e) {
			cur_e = e;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (have) {
		v->busy_ns += cur_e - cur_s;
		if (we > cur_e)
			v->host_wait_ns += we - cur_e; /* nothing left queued: the GPU waits for the host */
	} else if (we > ws) {
		v->host_wait_ns = we - ws;
	}
	/* what CUPTI itself cost is shown apart, not blamed on the program */
	st = prep(db, "SELECT coalesce(sum(min(end, ?3) - start), 0) FROM CUPTI_ACTIVITY_KIND_OVERHEAD WHERE" PROC_WIN
		      "AND overheadKind IN " CPROF_PROFILER_OVERHEAD_KINDS, proc, ws, we);
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		uint64_t o = sqlite3_column_int64(st, 0);

		v->overhead_ns = o;
		if (o > v->host_wait_ns)
			o = v->host_wait_ns;
		v->host_wait_ns -= o;
	}
	sqlite3_finalize(st);
	st = prep(db, "SELECT coalesce(sum(end - start), 0), count(*) FROM CPROF_API WHERE" PROC_WIN "AND nested = 0",
		  proc, ws, we);
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		v->self_cpu_ns = sqlite3_column_int64(st, 0);
		v->api_calls = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	/* launch calls of the whole window: when the GPU is behind, they all happen before the warm-up ends */
	st = prep(db, "SELECT end - start FROM CPROF_API WHERE" PROC_WIN "AND class = 'launch'", proc,
		  v->warmup_ns ? ws - v->warmup_ns : ws, we);
	if (st == NULL)
		goto out;
	while (sqlite3_step(st) == SQLITE_ROW)
		if (dvec_push(&ld, (double)sqlite3_column_int64(st, 0)) < 0)
			goto out;
	sqlite3_finalize(st);
	st = NULL;
	if (ld.n == 0) {
		/* all launches came before the window (queued ahead of a busy GPU): take the run's */
		st = prep(db, "SELECT end - start FROM CPROF_API WHERE" PROC_WIN "AND class = 'launch'", proc, 0, UINT64_MAX);
		while (st && sqlite3_step(st) == SQLITE_ROW)
			if (dvec_push(&ld, (double)sqlite3_column_int64(st, 0)) < 0)
				goto out;
		sqlite3_finalize(st);
		st = NULL;
	}
	v->med_kernel_ns = median(kd.d, kd.n);
	v->med_launch_ns = median(ld.d, ld.n);
	v->api_in_host_wait_ns = api_time_in(db, proc, gaps, ngaps, ws, we);
	v->busy_pct = we > ws ? 100.0 * v->busy_ns / (double)(we - ws) : 0;
	snprintf(v->cause, sizeof(v->cause), "%s",
		 v->api_in_host_wait_ns * 2 >= v->host_wait_ns ? "launch cost inside the CUDA API"
							       : "host work between launches");
	decide(v, t);
	if (!strcmp(v->verdict, "no-gpu-activity"))
		explain_no_gpu(db, proc, from, to, v);
	ret = 0;
out:
	sqlite3_finalize(st);
	free(kd.d);
	free(ld.d);
	free(gaps);
	return ret;
}

void cprof_verdict_line(const struct cprof_verdict *v, char *buf, size_t size)
{
	char win[32], ml[32], mk[32];
	uint64_t idle = v->host_wait_ns + v->kernel_wait_ns + v->other_ns;

	cprof_fmt_dur(win, sizeof(win), (double)(v->end - v->start));
	if (!strcmp(v->verdict, "no-gpu-activity")) {
		snprintf(buf, size, "no-gpu-activity: %s", v->advice);
		return;
	}
	if (!strcmp(v->verdict, "cuda-unavailable")) {
		snprintf(buf, size, "cuda-unavailable: %s; %s", v->cause, v->advice);
		return;
	}
	cprof_fmt_dur(ml, sizeof(ml), v->med_launch_ns);
	cprof_fmt_dur(mk, sizeof(mk), v->med_kernel_ns);
	if (!strcmp(v->verdict, "overhead-bound"))
		snprintf(buf, size,
			 "overhead-bound: GPU busy %.0f%% of %s; %.0f%% of idle time the GPU waited for the host (%s); "
			 "median launch call %s vs median kernel %s -> %s",
			 v->busy_pct, win, idle ? 100.0 * v->host_wait_ns / idle : 0.0, v->cause, ml, mk, v->advice);
	else if (!strcmp(v->verdict, "compute-bound"))
		snprintf(buf, size, "compute-bound: GPU busy %.0f%% of %s; median kernel %s vs median launch call %s -> %s",
			 v->busy_pct, win, mk, ml, v->advice);
	else
		snprintf(buf, size,
			 "mixed: GPU busy %.0f%% of %s; idle: host wait %.0f%%, kernel wait %.0f%%, other %.0f%% -> %s",
			 v->busy_pct, win, idle ? 100.0 * v->host_wait_ns / idle : 0.0,
			 idle ? 100.0 * v->kernel_wait_ns / idle : 0.0, idle ? 100.0 * v->other_ns / idle : 0.0, v->advice);
}

static int phases_of(sqlite3 *db, int64_t proc, const struct cprof_thresholds *t, const struct cprof_verdict *whole,
		     const struct cprof_step *steps, int nsteps, struct cprof_phase **out);

int cprof_headline(sqlite3 *db, int64_t proc, const struct cprof_thresholds *t, struct cprof_verdict *v,
		   struct cprof_phase **phases)
{
	struct cprof_verdict whole;
	struct cprof_step *steps = NULL;
	int n, i, same = 1, nsteps;

	*phases = NULL;
	if (cprof_analyse(db, proc, 0, UINT64_MAX, t, &whole) < 0)
		return -1;
	nsteps = cprof_steps_load(db, proc, t->step_re, &steps);
	whole.steps = nsteps > 1 ? nsteps : 0;
	whole.cold_step = whole.steps && !t->include_startup && cprof_steps_cold(steps, nsteps);
	n = t->include_startup ? 0 : phases_of(db, proc, t, &whole, steps, nsteps, phases);
	free(steps);
	if (n <= 0) {
		*v = whole;
		return n < 0 ? -1 : 0;
	}
	/* the steady state is what the phases cover; setup between them is not the program's pace, so
	 * the numbers are the phases' own, added up */
	*v = (*phases)[0].v;
	for (i = 1; i < n; i++) {
		const struct cprof_verdict *p = &(*phases)[i].v;

		v->busy_ns += p->busy_ns;
		v->host_wait_ns += p->host_wait_ns;
		v->kernel_wait_ns += p->kernel_wait_ns;
		v->other_ns += p->other_ns;
		v->overhead_ns += p->overhead_ns;
		v->self_cpu_ns += p->self_cpu_ns;
		v->self_gpu_ns += p->self_gpu_ns;
		v->kernel_ns += p->kernel_ns;
		v->kernels += p->kernels;
		v->memcpys += p->memcpys;
		v->memsets += p->memsets;
		v->api_calls += p->api_calls;
		v->warmup_ns += p->warmup_ns;
		v->api_in_host_wait_ns += p->api_in_host_wait_ns;
		v->end += p->end - p->start; /* the window's length is the phases' lengths added up */
	}
	v->busy_pct = v->end > v->start ? 100.0 * v->busy_ns / (double)(v->end - v->start) : 0;
	v->run_start = whole.run_start;
	v->run_end = whole.run_end;
	v->steps = whole.steps;
	v->cold_step = whole.cold_step;
	v->startup_ns = (*phases)[0].start - whole.run_start;
	for (i = 1; i < n; i++)
		same &= !strcmp((*phases)[i].v.verdict, (*phases)[0].v.verdict);
	if (!same) {
		uint64_t ob = 0, cb = 0, tot = v->end - v->start;

		for (i = 0; i < n; i++) {
			uint64_t len = (*phases)[i].v.end - (*phases)[i].v.start;

			if (!strcmp((*phases)[i].v.verdict, "overhead-bound"))
				ob += len;
			else if (!strcmp((*phases)[i].v.verdict, "compute-bound"))
				cb += len;
		}
		snprintf(v->verdict, sizeof(v->verdict), "mixed");
		snprintf(v->advice, sizeof(v->advice),
			 "the phases differ (%.0f%% of their time compute-bound, %.0f%% overhead-bound): see each below",
			 tot ? 100.0 * cb / tot : 0.0, tot ? 100.0 * ob / tot : 0.0);
	}
	return n;
}

double cprof_hta_idle_pct(sqlite3 *db, int64_t proc)
{
	sqlite3_stmt *st = prep(db, "SELECT start, end FROM GPU_OPS WHERE" PROC_WIN "ORDER BY start", proc, 0, UINT64_MAX);
	int64_t first = -1, last = 0, cur_s = 0, cur_e = 0, busy = 0;
	int have = 0;

	if (st == NULL)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		/* as HTA: each op rounded inward to whole microseconds, then the union over all streams */
		int64_t s = (sqlite3_column_int64(st, 0) + 999) / 1000, e = sqlite3_column_int64(st, 1) / 1000;

		if (first < 0 || s < first)
			first = s;
		if (e > last)
			last = e;
		if (e <= s)
			continue;
		if (!have || s > cur_e) {
			if (have)
				busy += cur_e - cur_s;
			cur_s = s;
			cur_e = e;
			have = 1;
		} else if (e > cur_e) {
			cur_e = e;
		}
	}
	sqlite3_finalize(st);
	if (have)
		busy += cur_e - cur_s;
	if (first < 0 || last <= first)
		return -1;
	return 100.0 * (double)(last - first - busy) / (double)(last - first);
}

struct seg {
	uint64_t s, e;
	uint64_t kernels;
};

/* Phases: the run cut at synchronising calls — or at the program's NVTX steps when it has them — short
 * pieces folded into their neighbours, neighbours with the same verdict merged. Returns the number of
 * phases (caller frees *out) or -1. */
static int phases_of(sqlite3 *db, int64_t proc, const struct cprof_thresholds *t, const struct cprof_verdict *whole,
		     const struct cprof_step *steps, int nsteps, struct cprof_phase **out)
{
	struct cprof_verdict all = *whole;
	struct seg *seg = NULL, *fold = NULL;
	struct cprof_phase *ph = NULL;
	size_t nseg = 0, cap = 0, nfold = 0, nph = 0, i, k;
	sqlite3_stmt *st = NULL;
	uint64_t start, prev;
	int ret = -1;

	*out = NULL;
	if (all.kernels == 0)
		return 0;
	start = all.start;
	if (whole->steps > 1) {
		/* the program marked its steps (NVTX): they are the pieces, each up to the next one's start;
		 * the last keeps what follows it (the GPU draining its queue); a cold first step is setup */
		int n = nsteps, j;
		uint64_t drain = 0;

		/* the last step ends when the GPU work queued before its end is done, not with the teardown */
		if (n > 0 && (st = prep(db, "SELECT max(end) FROM API_GPU WHERE (?1 = 0 OR processId = ?1) AND apiStart >= ?2"
					 " AND apiStart < ?3", proc, steps[n - 1].start,
					 steps[n - 1].end)) != NULL) {
			if (sqlite3_step(st) == SQLITE_ROW)
				drain = (uint64_t)sqlite3_column_int64(st, 0) + 1;
			sqlite3_finalize(st);
			st = NULL;
		}
		for (j = whole->cold_step ? 1 : 0; j < n; j++) {
			if (cprof_grow(&fold, &cap, nfold, sizeof(*fold)) < 0)
				goto out;
			fold[nfold].s = steps[j].start;
			fold[nfold].e = j + 1 < n ? steps[j + 1].start : (drain > steps[j].end ? drain : steps[j].end);
			fold[nfold++].kernels = 1;
		}
		goto pieces;
	}
	/* cut at every synchronising call: the host waited for the GPU there, a natural step edge */
	st = prep(db,
		  "SELECT DISTINCT a.end FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE" PROC_WIN
		  " AND a.nested = 0 AND (a.class = 'sync' OR s.value = 'cudaMemcpy') ORDER BY a.end",
		  proc, start, all.end);
	if (st == NULL)
		goto out;
	prev = start;
	for (;;) {
		int rc = sqlite3_step(st);
		uint64_t b = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : all.end + 1;

		if (b > all.end + 1)
			b = all.end + 1;
		if (b <= prev) {
			if (rc != SQLITE_ROW)
				break;
			continue;
		}
		if (cprof_grow(&seg, &cap, nseg, sizeof(*seg)) < 0)
			goto out;
		seg[nseg].s = prev;
		seg[nseg].e = b;
		seg[nseg++].kernels = 0;
		prev = b;
		if (rc != SQLITE_ROW)
			break;
	}
	sqlite3_finalize(st);
	/* kernels per piece, one pass over kernel start times */
	st = prep(db, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE" PROC_WIN "ORDER BY start", proc, start,
		  all.end + 1);
	if (st == NULL)
		goto out;
	k = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t s = sqlite3_column_int64(st, 0);

		while (k < nseg && seg[k].e <= s)
			k++;
		if (k < nseg)
			seg[k].kernels++;
	}
	sqlite3_finalize(st);
	st = NULL;
	/* fold pieces with too few kernels into the next one (the last into the previous) */
	fold = calloc(nseg ? nseg : 1, sizeof(*fold));
	if (fold == NULL)
		goto out;
	for (i = 0; i < nseg; i++) {
		/* a piece without kernels is setup or transfer (allocation, copies, host work): no phase */
		if (seg[i].kernels == 0 && (nfold == 0 || fold[nfold - 1].kernels >= PHASE_MIN_KERNELS))
			continue;
		if (nfold == 0 || fold[nfold - 1].kernels >= PHASE_MIN_KERNELS) {
			fold[nfold++] = seg[i];
		} else {
			fold[nfold - 1].e = seg[i].e;
			fold[nfold - 1].kernels += seg[i].kernels;
		}
	}
	if (nfold > 1 && fold[nfold - 1].kernels < PHASE_MIN_KERNELS) {
		fold[nfold - 2].e = fold[nfold - 1].e;
		fold[nfold - 2].kernels += fold[nfold - 1].kernels;
		nfold--;
	}
pieces:
	/* a run that syncs every step would give thousands of pieces: phases are its coarse shape, so
	 * neighbouring pieces are grouped to at most PHASE_MAX_PIECES before any is analysed */
	if (nfold > PHASE_MAX_PIECES) {
		size_t per = (nfold + PHASE_MAX_PIECES - 1) / PHASE_MAX_PIECES, n = 0;

		for (i = 0; i < nfold; i += per) {
			size_t last = i + per - 1 < nfold ? i + per - 1 : nfold - 1;

			fold[n].s = fold[i].s;
			fold[n].e = fold[last].e;
			fold[n++].kernels = 0;
		}
		nfold = n;
	}
	/* neighbours with the same verdict are one phase, analysed once as a whole */
	ph = calloc(nfold ? nfold : 1, sizeof(*ph));
	if (ph == NULL)
		goto out;
	for (i = 0; i < nfold; i++) {
		struct cprof_verdict v;

		if (cprof_analyse(db, proc, fold[i].s, fold[i].e, t, &v) < 0)
			goto out;
		if (nph > 0 && !strcmp(ph[nph - 1].v.verdict, v.verdict) && ph[nph - 1].end == fold[i].s) {
			ph[nph - 1].end = fold[i].e;
			ph[nph - 1].v.kernels = 0; /* marks a merged phase: analysed again below */
			continue;
		}
		ph[nph].start = fold[i].s;
		ph[nph].end = fold[i].e;
		ph[nph].v = v;
		nph++;
	}
	for (i = 0; i < nph; i++)
		if (ph[i].v.kernels == 0 && cprof_analyse(db, proc, ph[i].start, ph[i].end, t, &ph[i].v) < 0)
			goto out;
	*out = ph;
	ph = NULL;
	ret = (int)nph;
out:
	sqlite3_finalize(st);
	free(seg);
	free(fold);
	free(ph);
	return ret;
}
