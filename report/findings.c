/* The findings of the torch.profiler guide, each a rule over the profile with the evidence it rests on. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "report/analysis.h"
#include "report/cprof.h"

struct flist {
	struct cprof_finding *f;
	size_t n, cap;
};

static void add(struct flist *l, const char *id, const char *sev, const char *evidence, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void add(struct flist *l, const char *id, const char *sev, const char *evidence, const char *fmt, ...)
{
	va_list ap;

	if (cprof_grow(&l->f, &l->cap, l->n, sizeof(*l->f)) < 0)
		return;
	memset(&l->f[l->n], 0, sizeof(l->f[0]));
	snprintf(l->f[l->n].id, sizeof(l->f[0].id), "%s", id);
	snprintf(l->f[l->n].severity, sizeof(l->f[0].severity), "%s", sev);
	snprintf(l->f[l->n].evidence, sizeof(l->f[0].evidence), "%s", evidence);
	va_start(ap, fmt);
	vsnprintf(l->f[l->n].message, sizeof(l->f[0].message), fmt, ap);
	va_end(ap);
	l->n++;
}

/* Appends one piece of evidence, "; "-separated; what does not fit is left out whole. */
static void ev_add(char *ev, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ev_add(char *ev, size_t size, const char *fmt, ...)
{
	char part[256];
	va_list ap;
	size_t n = strlen(ev);

	va_start(ap, fmt);
	vsnprintf(part, sizeof(part), fmt, ap);
	va_end(ap);
	if (n + strlen(part) + 3 < size)
		snprintf(ev + n, size - n, "%s%s", n ? "; " : "", part);
}

static sqlite3_stmt *q(sqlite3 *db, const char *sql, int64_t proc)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		pr_err("finding query failed: %s", sqlite3_errmsg(db));
		return NULL;
	}
	if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, proc);
	return st;
}

#define P(alias) " (?1 = 0 OR " alias "processId = ?1) "

static const char *text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? (const char *)t : "?";
}

static void short_kernel(const char *mangled, char *out, size_t size)
{
	char *d = cprof_demangle(mangled);

	cprof_shorten(d, out, size);
	free(d);
}

/* cold start: a call's first instance far slower than the rest (lazy loading, heuristics, workspace),
 * and the time before the first GPU op (context creation, library loading). */
static void cold_start(sqlite3 *db, int64_t proc, const struct cprof_verdict *v, const struct cprof_step *steps, int n,
		       struct flist *l)
{
	sqlite3_stmt *st = q(db,
		/* one pass: each call next to the first of its name */
		"WITH c AS (SELECT a.nameId, a.end - a.start AS d, row_number() OVER w AS i, first_value(a.end - a.start)"
		" OVER w AS first FROM CPROF_API a WHERE" P("a.") "AND a.nested = 0"
		" WINDOW w AS (PARTITION BY a.processId, a.nameId ORDER BY a.start))"
		" SELECT s.value, max(first), count(*) AS n FROM c JOIN StringIds s ON s.id = c.nameId WHERE c.i > 1"
		" GROUP BY c.nameId HAVING n >= 4",
		proc);
	char ev[400] = "", a[32], b[32];

	if (st == NULL)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = text(st, 0);
		double first = sqlite3_column_double(st, 1);
		sqlite3_stmt *m;
		double med = 0;

		/* median of the later calls of this name */
		m = q(db,
		      "WITH c AS (SELECT a.end - a.start AS d, row_number() OVER (PARTITION BY a.processId ORDER BY a.start) AS i"
		      " FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE" P("a.") "AND s.value = ?2 AND a.nested = 0)"
		      " SELECT d FROM c WHERE i > 1 ORDER BY d LIMIT 1 OFFSET (SELECT count(*) FROM c WHERE i > 1) / 2",
		      proc);
		if (m) {
			sqlite3_bind_text(m, 2, name, -1, SQLITE_STATIC);
			if (sqlite3_step(m) == SQLITE_ROW)
				med = sqlite3_column_double(m, 0);
			sqlite3_finalize(m);
		}
		if (first >= 100000 && first >= 10 * (med > 0 ? med : 1)) {
			cprof_fmt_dur(a, sizeof(a), first);
			cprof_fmt_dur(b, sizeof(b), med);
			ev_add(ev, sizeof(ev), "first %s %s vs median %s", name, a, b);
		}
	}
	sqlite3_finalize(st);
	/* the first CUDA call creates the context and loads libraries: it stands out on its own */
	(void)v;
	st = q(db,
	       "SELECT name, d FROM (SELECT s.value AS name, a.start, a.end - a.start AS d FROM CPROF_API a JOIN StringIds s"
	       " ON s.id = a.nameId WHERE" P("a.") "UNION ALL SELECT rtrim(rtrim(s.value, '0123456789'), '_v'), r.start,"
	       " r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE" P("r.")
	       ") ORDER BY start LIMIT 1",
	       proc);
	if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 1) >= 10000000) {
		cprof_fmt_dur(a, sizeof(a), sqlite3_column_double(st, 1));
		ev_add(ev, sizeof(ev), "the first CUDA call (%s) took %s: context creation", text(st, 0), a);
	}
	sqlite3_finalize(st);
	/* steps the program marked: the first one against the others */
	if (n > 2 && cprof_steps_cold(steps, n)) {
		cprof_fmt_dur(a, sizeof(a), (double)(steps[0].end - steps[0].start));
		cprof_fmt_dur(b, sizeof(b), (double)cprof_steps_median(steps, n, 1));
		ev_add(ev, sizeof(ev), "first step (NVTX range \"%.40s\") took %s vs median %s of the other %d steps%s",
		       steps[0].name, a, b, n - 1, v->cold_step ? ": excluded from the verdict" : "");
	}
	if (ev[0])
		add(l, "cold-start", "info", ev,
		    "cold start: first calls pay context creation, lazy module loading and library set-up; they are "
		    "excluded from the verdict (profile more steps, or warm up before measuring)");
}

/* an occupancy query right before a launch: the sign of a heavy, adaptive kernel (GEMM, conv) */
static void occupancy(sqlite3 *db, int64_t proc, struct flist *l)
{
	/* one pass: each runtime record next to the one before it on its thread */
	sqlite3_stmt *st = q(db,
		"WITH r AS (SELECT r.processId, r.start, r.correlationId, s.value AS name, lag(s.value) OVER w AS prevname,"
		" lag(r.end) OVER w AS prevend FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
		" WHERE" P("r.") "WINDOW w AS (PARTITION BY r.processId, r.threadId ORDER BY r.start))"
		" SELECT count(*), group_concat(DISTINCT kn.value) FROM r JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
		" ON k.processId = r.processId AND k.correlationId = r.correlationId LEFT JOIN StringIds kn ON kn.id = k.nameId"
		" WHERE r.prevname LIKE 'cudaOccupancy%' AND r.name LIKE 'cudaLaunch%' AND r.start - r.prevend < 50000",
		proc);
	char ev[400];

	if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
		snprintf(ev, sizeof(ev), "%lld occupancy queries each followed within 50 us by a launch of: %.300s",
			 (long long)sqlite3_column_int64(st, 0), text(st, 1));
		add(l, "occupancy-before-launch", "info", ev,
		    "an occupancy query precedes launches: a library picks its kernel at run time (GEMM/conv); "
		    "their time is in the library call, not in your code");
	}
	sqlite3_finalize(st);
}

static void batched_gemm(sqlite3 *db, int64_t proc, struct flist *l)
{
	sqlite3_stmt *st = q(db,
		"SELECT api, count(*), max(batch), m || 'x' || n || 'x' || k FROM GEMMS WHERE" P("")
		" AND (batch > 1 OR api LIKE '%Batched%') GROUP BY api ORDER BY count(*) DESC LIMIT 1",
		proc);
	char ev[400];

	if (st && sqlite3_step(st) == SQLITE_ROW) {
		snprintf(ev, sizeof(ev), "%lld calls of %s, batch %lld, m x n x k %s", (long long)sqlite3_column_int64(st, 1),
			 text(st, 0), (long long)sqlite3_column_int64(st, 2), text(st, 3));
		add(l, "batched-gemm", "info", ev,
		    "batched GEMM (the aten::bmm case): one launch does many small matrix products; good for launch "
		    "overhead, check its kernel's efficiency in the kernel table");
	}
	sqlite3_finalize(st);
}

/* a device-to-device copy then a GEMM on the same stream: the compiled addmm bias epilogue */
static void dtod_before_gemm(sqlite3 *db, int64_t proc, struct flist *l)
{
	sqlite3_stmt *st = q(db,
		"SELECT count(*), coalesce(sum(m.bytes), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY m"
		" JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.processId = m.processId AND k.streamId = m.streamId"
		"  AND k.start >= m.end AND NOT EXISTS (SELECT 1 FROM GPU_OPS o WHERE o.processId = m.processId"
		"  AND o.streamId = m.streamId AND o.start >= m.end AND o.start < k.start)"
		" JOIN StringIds n ON n.id = k.nameId"
		" WHERE" P("m.") "AND m.copyKind = 8 AND (n.value LIKE '%gemm%' OR n.value LIKE '%xmma%'"
		" OR n.value LIKE '%nvjet%' OR n.value LIKE '%cutlass%')",
		proc);
	char ev[400];

	if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
		snprintf(ev, sizeof(ev), "%lld device-to-device copies (%lld bytes) each directly before a GEMM kernel on the same stream",
			 (long long)sqlite3_column_int64(st, 0), (long long)sqlite3_column_int64(st, 1));
		add(l, "dtod-before-gemm", "warn", ev,
		    "a device-to-device copy feeds each GEMM (the compiled addmm bias epilogue): the bias is copied "
		    "into the output first; fuse the bias into the GEMM epilogue (cuBLASLt) to save the copy");
	}
	sqlite3_finalize(st);
}

/* The run from its first GPU op on: host set-up before it (context creation, reading data, building
 * inputs) says nothing about how far the CPU ran ahead or what the profiler cost the GPU work. */
static uint64_t active_window(const struct cprof_verdict *v)
{
	uint64_t from = v->gpu_span_start > v->run_start ? v->gpu_span_start : v->run_start;

	return v->run_end > from ? v->run_end - from : 0;
}

/* the last synchronisation waited long: the GPU was behind and work drained at the end */
static void final_sync(sqlite3 *db, int64_t proc, const struct cprof_verdict *v, struct flist *l)
{
	sqlite3_stmt *st = q(db,
		"SELECT s.value, a.end - a.start, a.end FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"
		" WHERE" P("a.") "AND a.class = 'sync' AND a.nested = 0 ORDER BY a.end DESC LIMIT 1",
		proc);
	uint64_t win;
	char ev[400], d[32];

	if (st && sqlite3_step(st) == SQLITE_ROW) {
		uint64_t dur = sqlite3_column_int64(st, 1);

		win = active_window(v);

		if (dur >= 1000000 && win && dur * 10 >= win) {
			cprof_fmt_dur(d, sizeof(d), (double)dur);
			snprintf(ev, sizeof(ev), "the last %s waited %s (%.0f%% of the run from its first GPU op)", text(st, 0), d,
				 100.0 * dur / win);
			add(l, "long-final-sync", "info", ev,
			    "queued GPU work drained at the end: the CPU ran ahead of the GPU (fine when compute-bound; "
			    "step times measured on the CPU without a sync are misleading)");
		}
	}
	sqlite3_finalize(st);
}

static void cupti_overhead(sqlite3 *db, int64_t proc, const struct cprof_verdict *v, struct flist *l)
{
	sqlite3_stmt *st = q(db,
		"SELECT count(*), coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_OVERHEAD WHERE" P("")
		" AND overheadKind IN " CPROF_PROFILER_OVERHEAD_KINDS,
		proc);
	uint64_t win = active_window(v);
	char ev[400], d[32];

	if (st && sqlite3_step(st) == SQLITE_ROW) {
		uint64_t tot = sqlite3_column_int64(st, 1);

		if (win && tot * 100 >= 15 * win) { /* 15% of the run: real flush times vary with load */
			cprof_fmt_dur(d, sizeof(d), (double)tot);
			snprintf(ev, sizeof(ev), "%lld CUPTI overhead records (buffer requests/flushes), %s, %.1f%% of the run from its first GPU op",
				 (long long)sqlite3_column_int64(st, 0), d, win ? 100.0 * tot / win : 0.0);
			add(l, "cupti-overhead", "info", ev,
			    "the profiler's own activity-buffer work left gaps; they are excluded from idle time");
		}
	}
	sqlite3_finalize(st);
}

/* the same kernel with very different run times: shapes change, or contention */
static void variance(sqlite3 *db, int64_t proc, struct flist *l)
{
	sqlite3_stmt *st = q(db,
		"SELECT n.value, count(*), avg(d), sqrt(max(avg(d * d) - avg(d) * avg(d), 0)), min(d), max(d) FROM"
		" (SELECT nameId, end - start AS d FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE" P("") ") k"
		" JOIN StringIds n ON n.id = k.nameId GROUP BY k.nameId HAVING count(*) >= 5",
		proc);
	char ev[400] = "", k[100], a[32], b[32];
	int hits = 0;

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		double mean = sqlite3_column_double(st, 2), sd = sqlite3_column_double(st, 3);

		if (mean > 0 && sd / mean > 0.5) {
			short_kernel(text(st, 0), k, sizeof(k));
			cprof_fmt_dur(a, sizeof(a), sqlite3_column_double(st, 4));
			cprof_fmt_dur(b, sizeof(b), sqlite3_column_double(st, 5));
			ev_add(ev, sizeof(ev), "%s: CV %.2f over %lld runs (%s .. %s)", k, sd / mean,
			       (long long)sqlite3_column_int64(st, 1), a, b);
			hits++;
		}
	}
	sqlite3_finalize(st);
	if (hits)
		add(l, "kernel-variance", "warn", ev,
		    "kernel run times vary a lot between repetitions (coefficient of variation > 0.5): input shapes "
		    "change, or something competes for the GPU");
}

/* step times that wander: the program's pace is not steady (data loading, allocator, Python GC, contention) */
static void step_variance(const struct cprof_step *steps, int n, struct flist *l)
{
	int i, from, slow = 0;
	double sum = 0, sq = 0, mean, sd;
	char ev[400], a[32], b[32], c[32];

	if (n < 5)
		return;
	from = cprof_steps_cold(steps, n) ? 1 : 0;
	if (n - from < 4)
		return;
	for (i = from; i < n; i++) {
		double d = (double)(steps[i].end - steps[i].start);

		sum += d;
		sq += d * d;
		if (d > (double)(steps[slow].end - steps[slow].start) || slow < from)
			slow = i;
	}
	mean = sum / (n - from);
	sd = sq / (n - from) - mean * mean > 0 ? __builtin_sqrt(sq / (n - from) - mean * mean) : 0;
	if (mean > 0 && sd / mean > 0.25) {
		cprof_fmt_dur(a, sizeof(a), (double)cprof_steps_median(steps, n, from));
		cprof_fmt_dur(b, sizeof(b), (double)(steps[slow].end - steps[slow].start));
		cprof_fmt_dur(c, sizeof(c), sd);
		snprintf(ev, sizeof(ev), "%d steps%s: median %s, std %s (CV %.2f), slowest step %d (\"%.40s\") %s", n - from,
			 from ? " after the first" : "", a, c, sd / mean, slow + 1, steps[slow].name, b);
		add(l, "step-variance", "warn", ev,
		    "step times vary (coefficient of variation > 0.25): the steady state is not steady; look at the slow "
		    "steps for data loading, host work, allocator growth or synchronisation");
	}
}

/* kernels launched through the driver API, as Triton and torch.compile do: no hook sees them */
static void driver_api(sqlite3 *db, int64_t proc, struct flist *l)
{
	sqlite3_stmt *st = q(db,
		"SELECT count(*), group_concat(DISTINCT n.value) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
		" JOIN CUPTI_ACTIVITY_KIND_DRIVER d ON d.processId = k.processId AND d.correlationId = k.correlationId"
		" LEFT JOIN StringIds n ON n.id = k.nameId WHERE" P("k.") "AND NOT EXISTS (SELECT 1 FROM"
		" CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.processId = k.processId AND r.correlationId = k.correlationId)",
		proc);
	char ev[400];

	if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
		snprintf(ev, sizeof(ev), "%lld kernels launched with cuLaunchKernel*: %.300s",
			 (long long)sqlite3_column_int64(st, 0), text(st, 1));
		add(l, "driver-api-kernels", "info", ev,
		    "kernels launched through the driver API (Triton / torch.compile): cprof sees them through "
		    "CUPTI only, so they have no host call site");
	}
	sqlite3_finalize(st);
}

/* kernels that end sooner than it takes to launch them */
static void tiny_kernels(sqlite3 *db, int64_t proc, struct flist *l)
{
	sqlite3_stmt *st = q(db,
		/* the launch's typical cost leaves out its slowest instance, the cold first one */
		"SELECT name, count(*), avg(end - start), (sum(apiEnd - apiStart) - max(apiEnd - apiStart)) / (count(*) - 1.0) AS l"
		" FROM API_GPU WHERE gpuKind = 'kernel' AND" P("") "GROUP BY name HAVING count(*) >= 10 AND avg(end - start) < l"
		" ORDER BY count(*) DESC",
		proc);
	char ev[400] = "", k[100], a[32], b[32];
	int hits = 0;

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		short_kernel(text(st, 0), k, sizeof(k));
		cprof_fmt_dur(a, sizeof(a), sqlite3_column_double(st, 2));
		cprof_fmt_dur(b, sizeof(b), sqlite3_column_double(st, 3));
		ev_add(ev, sizeof(ev), "%lld x %s: %s on the GPU, %s to launch", (long long)sqlite3_column_int64(st, 1), k,
		       a, b);
		hits++;
	}
	sqlite3_finalize(st);
	if (hits)
		add(l, "tiny-kernels", "warn", ev,
		    "many kernels are shorter than their own launch call: the GPU idles between them; fuse them, "
		    "batch the work, or capture a CUDA graph");
}

/* synchronising calls with launches between them, again and again: a sync inside the loop */
static void sync_in_loop(sqlite3 *db, int64_t proc, struct flist *l)
{
	sqlite3_stmt *st = q(db,
		"WITH s AS (SELECT a.processId, a.tid, a.start, a.end, n.value AS name, lag(a.end) OVER"
		" (PARTITION BY a.processId, a.tid ORDER BY a.start) AS prev FROM CPROF_API a JOIN StringIds n"
		" ON n.id = a.nameId WHERE" P("a.") "AND a.nested = 0 AND (a.class = 'sync' OR (n.value = 'cudaMemcpy'"
		" AND a.a0 IN (2, 4))))"
		" SELECT name, count(*) FROM s WHERE prev IS NOT NULL AND EXISTS (SELECT 1 FROM CPROF_API l"
		" WHERE l.processId = s.processId AND l.tid = s.tid AND l.class IN ('launch', 'gemm')"
		" AND l.start > s.prev AND l.start < s.start) GROUP BY name ORDER BY count(*) DESC LIMIT 1",
		proc);
	char ev[400];

	if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 1) >= 10) {
		snprintf(ev, sizeof(ev), "%s called %lld times, each after new launches since the previous one",
			 text(st, 0), (long long)sqlite3_column_int64(st, 1));
		add(l, "sync-in-loop", "warn", ev,
		    "a synchronising call inside the loop makes the CPU wait for the GPU every iteration (.item(), "
		    ".cpu(), printing a tensor): move it out of the loop or make it asynchronous");
	}
	sqlite3_finalize(st);
}

/* one rank much slower than the others: in a data-parallel job everyone waits for it */
static void straggler(sqlite3 *db, int64_t proc, struct flist *l)
{
	sqlite3_stmt *st = q(db,
		"SELECT p.rank, max(a.end) - min(a.start) AS run FROM CPROF_API a JOIN PROCESSES p ON p.id = a.processId"
		" WHERE" P("a.") "AND p.rank IS NOT NULL GROUP BY p.rank ORDER BY run",
		proc);
	int64_t rank[1024], last_rank = -1;
	double run[1024], med;
	int n = 0;
	char ev[400], a[32], b[32];

	while (st && sqlite3_step(st) == SQLITE_ROW && n < 1024) {
		rank[n] = sqlite3_column_int64(st, 0);
		run[n++] = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	if (n < 2)
		return;
	last_rank = rank[n - 1];
	med = n % 2 ? run[n / 2] : (run[n / 2 - 1] + run[n / 2]) / 2;
	if (run[n - 1] >= 1.25 * med && run[n - 1] - med >= 1e6) {
		cprof_fmt_dur(a, sizeof(a), run[n - 1]);
		cprof_fmt_dur(b, sizeof(b), med);
		snprintf(ev, sizeof(ev), "rank %lld ran %s (first to last CUDA call) vs a median of %s over %d ranks (+%.0f%%)",
			 (long long)last_rank, a, b, n, 100 * (run[n - 1] / med - 1));
		add(l, "straggler", "warn", ev,
		    "one rank is much slower than the others: in a data-parallel job every rank waits for it at each "
		    "collective; look at that rank's host (data loading, CPU contention) and its kernels");
	}
}

int cprof_findings(sqlite3 *db, int64_t proc, const struct cprof_verdict *v, struct cprof_finding **out)
{
	struct flist l = { 0 };
	struct cprof_step *steps = NULL;
	/* the steps the verdict found, read once for the rules about them */
	int nsteps = v->steps > 2 ? cprof_steps_load(db, proc, v->step_re, &steps) : 0;

	if (nsteps < 0)
		nsteps = 0;
	cold_start(db, proc, v, steps, nsteps, &l);
	occupancy(db, proc, &l);
	batched_gemm(db, proc, &l);
	dtod_before_gemm(db, proc, &l);
	final_sync(db, proc, v, &l);
	cupti_overhead(db, proc, v, &l);
	variance(db, proc, &l);
	step_variance(steps, nsteps, &l);
	driver_api(db, proc, &l);
	tiny_kernels(db, proc, &l);
	sync_in_loop(db, proc, &l);
	straggler(db, proc, &l);
	free(steps);
	*out = l.f;
	return (int)l.n;
}
