/* cprof report: the verdict and its evidence first, then the tables (kernels, copies, API, torch-style), as text, JSON or CSV. */
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "report/analysis.h"
#include "report/cprof.h"
#include "report/ops-nvtx.h"
#include "report/ranges.h"
#include "report/stacks.h"

enum fmt { FMT_TEXT, FMT_JSON, FMT_CSV };
enum by { BY_ALL, BY_KERNEL, BY_API, BY_STREAM, BY_PROCESS, BY_OP, BY_CALLSITE, BY_RANGE };

struct row {
	char *name;  /* full (demangled) name */
	char tag;    /* '*' for API calls only CUPTI saw */
	struct cprof_stats st;
	double bytes;
	double extra; /* torch view: CUDA time launched by this call */
};

struct table {
	struct row *rows;
	size_t n, cap;
	double total;
};

struct proc {
	int64_t id;
	int64_t pid, ppid, rank;
	char *exe, *argv, *host, *bye;
	int64_t recorded, lost;
	struct table apis;
	struct cprof_verdict v;
};

struct ctx {
	struct table *t;
	char tag;
	int demangle;
};

static int add_row(void *arg, int64_t key, const char *label, const struct cprof_stats *st)
{
	struct ctx *c = arg;
	struct table *t = c->t;

	(void)key;
	if (cprof_grow(&t->rows, &t->cap, t->n, sizeof(*t->rows)) < 0)
		return -1;
	memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
	t->rows[t->n].name = c->demangle ? cprof_demangle(label) : strdup(label);
	t->rows[t->n].tag = c->tag;
	t->rows[t->n].st = *st;
	t->total += st->total;
	t->n++;
	return 0;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->st.total != y->st.total)
		return x->st.total < y->st.total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void table_sort(struct table *t)
{
	if (t->n)
		qsort(t->rows, t->n, sizeof(t->rows[0]), by_total_desc);
}

static void table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->rows[i].name);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

static int load(sqlite3 *db, const char *sql, int64_t proc, struct table *t, char tag, int demangle)
{
	struct ctx c = { t, tag, demangle };

	return cprof_group_stats(db, sql, proc, add_row, &c);
}

/* API calls: what the hooks saw, plus what only CUPTI saw (calls made inside libraries, APIs without
 * a hook). A CUPTI record carrying our external id is a hooked call: counted once, as the hook's. */
static int load_apis(sqlite3 *db, int64_t proc, struct table *t)
{
	if (load(db, cprof_sql_api_hooked, proc, t, 0, 0) < 0 || load(db, cprof_sql_api_cupti_only, proc, t, '*', 0) < 0 ||
	    load(db, cprof_sql_api_driver_only, proc, t, '*', 0) < 0)
		return -1;
	table_sort(t);
	return 0;
}

static int load_kernels(sqlite3 *db, int64_t proc, struct table *t)
{
	if (load(db,
		 "SELECT k.nameId, s.value, k.end - k.start AS d FROM CUPTI_ACTIVITY_KIND_KERNEL k"
		 " LEFT JOIN StringIds s ON s.id = k.nameId WHERE (?1 = 0 OR k.processId = ?1) ORDER BY k.nameId, d",
		 proc, t, 0, 1) < 0)
		return -1;
	table_sort(t);
	return 0;
}

/* copies by kind and memsets, as nsys's cuda_gpu_mem_time_sum, with bytes and bandwidth */
static int load_memops(sqlite3 *db, int64_t proc, struct table *t)
{
	sqlite3_stmt *st;
	size_t i;

	if (load(db,
		 "SELECT copyKind, copyKind, end - start AS d FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE (?1 = 0 OR processId = ?1)"
		 " ORDER BY copyKind, d",
		 proc, t, 0, 0) < 0)
		return -1;
	for (i = 0; i < t->n; i++) {
		char *n = strdup(cprof_copy_kind_name(atoi(t->rows[i].name)));

		free(t->rows[i].name);
		t->rows[i].name = n;
	}
	if (load(db,
		 "SELECT -1, '[CUDA memset]', end - start AS d FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE (?1 = 0 OR processId = ?1)"
		 " ORDER BY d",
		 proc, t, 0, 0) < 0)
		return -1;
	if (sqlite3_prepare_v2(db,
			       "SELECT copyKind, sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE (?1 = 0 OR processId = ?1)"
			       " GROUP BY copyKind UNION ALL SELECT -1, sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMSET"
			       " WHERE (?1 = 0 OR processId = ?1)",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, proc);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int k = sqlite3_column_int(st, 0);
		const char *name = k < 0 ? "[CUDA memset]" : cprof_copy_kind_name(k);

		for (i = 0; i < t->n; i++)
			if (!strcmp(t->rows[i].name, name))
				t->rows[i].bytes = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	table_sort(t);
	return 0;
}

/* torch.profiler's view: each hooked call name with its Self CPU and the CUDA time it launched, and
 * each kernel with its Self CUDA */
static int load_torch(sqlite3 *db, int64_t proc, struct table *apis, struct table *kernels, struct table *t)
{
	sqlite3_stmt *st;
	size_t i;

	if (load(db,
		 "SELECT a.nameId, s.value, a.end - a.start AS d FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"
		 " WHERE (?1 = 0 OR a.processId = ?1) AND a.nested = 0 ORDER BY a.nameId, d",
		 proc, t, 0, 0) < 0)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT api, sum(end - start) FROM API_GPU WHERE (?1 = 0 OR processId = ?1) GROUP BY api",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, proc);
	while (sqlite3_step(st) == SQLITE_ROW)
		for (i = 0; i < t->n; i++)
			if (!strcmp(t->rows[i].name, (const char *)sqlite3_column_text(st, 0)))
				t->rows[i].extra = sqlite3_column_double(st, 1);
	sqlite3_finalize(st);
	(void)apis;
	(void)kernels;
	table_sort(t);
	return 0;
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

static int load_procs(sqlite3 *db, struct proc **out, size_t *n)
{
	sqlite3_stmt *st;
	struct proc *p = NULL;
	size_t cnt = 0;

	if (sqlite3_prepare_v2(db, "SELECT id, pid, ppid, coalesce(rank, -1), exe, argv, host,"
				   " coalesce(byeReason, ''), coalesce(eventsRecorded, 0), coalesce(lostEvents, 0)"
				   " FROM PROCESSES ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct proc *np = realloc(p, (cnt + 1) * sizeof(*p));

		if (np == NULL)
			break;
		p = np;
		memset(&p[cnt], 0, sizeof(p[cnt]));
		p[cnt].id = sqlite3_column_int64(st, 0);
		p[cnt].pid = sqlite3_column_int64(st, 1);
		p[cnt].ppid = sqlite3_column_int64(st, 2);
		p[cnt].rank = sqlite3_column_int64(st, 3);
		p[cnt].exe = col_text(st, 4);
		p[cnt].argv = col_text(st, 5);
		p[cnt].host = col_text(st, 6);
		p[cnt].bye = col_text(st, 7);
		p[cnt].recorded = sqlite3_column_int64(st, 8);
		p[cnt].lost = sqlite3_column_int64(st, 9);
		cnt++;
	}
	sqlite3_finalize(st);
	*out = p;
	*n = cnt;
	return 0;
}

/* ---- text ---- */

static size_t shown(const struct table *t, size_t top)
{
	return top && top < t->n ? top : t->n;
}

static void print_stats_table(const char *title, const struct table *t, size_t top, int with_bytes)
{
	double maxv = 0;
	enum cprof_unit u;
	size_t i, n = shown(t, top);
	char tot[32], avg[32], med[32], mn[32], mx[32], sd[32], name[96];
	const char *un;
	int tagged = 0;

	if (t->n == 0)
		return;
	for (i = 0; i < n; i++)
		if (t->rows[i].st.total > maxv)
			maxv = t->rows[i].st.total;
	/* one unit for the whole table, as nsys stats does, picked from the largest value shown */
	u = cprof_unit_for(maxv);
	un = cprof_unit_name(u);
	printf("\n%s\n\n", title);
	printf(" Time (%%)  Total (%s)  Instances  Avg (%s)   Med (%s)   Min (%s)   Max (%s)  StdDev (%s)%s  Name\n", un,
	       un, un, un, un, un, with_bytes ? "       Total MB   GB/s" : "");
	printf(" --------  ----------  ---------  ---------  ---------  ---------  ---------  -----------%s  ----\n",
	       with_bytes ? "  -------------  -----" : "");
	for (i = 0; i < n; i++) {
		const struct cprof_stats *s = &t->rows[i].st;

		cprof_fmt_in(tot, sizeof(tot), s->total, u);
		cprof_fmt_in(avg, sizeof(avg), s->avg, u);
		cprof_fmt_in(med, sizeof(med), s->med, u);
		cprof_fmt_in(mn, sizeof(mn), s->min, u);
		cprof_fmt_in(mx, sizeof(mx), s->max, u);
		cprof_fmt_in(sd, sizeof(sd), s->std, u);
		cprof_shorten(t->rows[i].name, name, sizeof(name));
		printf(" %8.1f  %10s  %9llu  %9s  %9s  %9s  %9s  %11s", t->total > 0 ? 100.0 * s->total / t->total : 0.0,
		       tot, (unsigned long long)s->n, avg, med, mn, mx, sd);
		if (with_bytes)
			printf("  %13.3f  %5.1f", t->rows[i].bytes / 1e6,
			       s->total > 0 ? t->rows[i].bytes / s->total : 0.0);
		printf("  %s%s\n", name, t->rows[i].tag ? "*" : "");
		tagged |= t->rows[i].tag != 0;
	}
	if (n < t->n)
		printf(" (%zu more; --top 0 shows all)\n", t->n - n);
	if (tagged)
		printf(" * seen only by CUPTI: called inside a library (cuBLAS, cuDNN) or not hooked\n");
}

static void print_torch(const struct table *calls, const struct table *kernels, size_t top)
{
	size_t i, n;
	double cpu = 0, cuda = 0;
	char a[32], b[32], name[72];

	if (calls->n == 0 && kernels->n == 0)
		return;
	printf("\nSelf CPU and Self CUDA by name (as torch.profiler's table; CUDA launched = GPU time of the work a call queued)\n\n");
	printf(" %-60s  %12s  %12s  %13s  %9s\n", "Name", "Self CPU", "Self CUDA", "CUDA launched", "# Calls");
	printf(" %-60s  %12s  %12s  %13s  %9s\n", "----", "--------", "---------", "-------------", "-------");
	n = shown(calls, top);
	for (i = 0; i < n; i++) {
		cprof_fmt_dur(a, sizeof(a), calls->rows[i].st.total);
		cprof_fmt_dur(b, sizeof(b), calls->rows[i].extra);
		cprof_shorten(calls->rows[i].name, name, sizeof(name));
		printf(" %-60.60s  %12s  %12s  %13s  %9llu\n", name, a, "0", b, (unsigned long long)calls->rows[i].st.n);
	}
	for (i = 0; i < calls->n; i++)
		cpu += calls->rows[i].st.total;
	n = shown(kernels, top);
	for (i = 0; i < n; i++) {
		cprof_fmt_dur(b, sizeof(b), kernels->rows[i].st.total);
		cprof_shorten(kernels->rows[i].name, name, sizeof(name));
		printf(" %-60.60s  %12s  %12s  %13s  %9llu\n", name, "0", b, "-", (unsigned long long)kernels->rows[i].st.n);
	}
	for (i = 0; i < kernels->n; i++)
		cuda += kernels->rows[i].st.total;
	cprof_fmt_dur(a, sizeof(a), cpu);
	cprof_fmt_dur(b, sizeof(b), cuda);
	printf("Self CPU time total: %s\nSelf CUDA time total: %s\n", a, b);
}

static void print_verdict_text(const struct cprof_verdict *v, const struct cprof_phase *ph, int nph,
			       const struct cprof_finding *f, int nf, const char *op_evidence)
{
	char line[1024], a[32], b[32], c[32], d[32], e[32];
	uint64_t idle = v->host_wait_ns + v->kernel_wait_ns + v->other_ns;
	int i;

	cprof_verdict_line(v, line, sizeof(line));
	printf("\nVerdict: %s\n", line);
	if (strcmp(v->verdict, "no-gpu-activity") != 0) {
		cprof_fmt_dur(a, sizeof(a), (double)(v->end - v->start));
		cprof_fmt_dur(b, sizeof(b), (double)v->busy_ns);
		cprof_fmt_dur(c, sizeof(c), (double)(v->startup_ns + v->warmup_ns));
		printf("  window %s%s (startup and warm-up %s excluded; --include-startup counts them), GPU busy %s (%.1f%%)\n",
		       a, nph > 1 ? " (the phases together)" : "", c, b, v->busy_pct);
		cprof_fmt_dur(a, sizeof(a), (double)idle);
		cprof_fmt_dur(b, sizeof(b), (double)v->host_wait_ns);
		cprof_fmt_dur(c, sizeof(c), (double)v->kernel_wait_ns);
		cprof_fmt_dur(d, sizeof(d), (double)v->other_ns);
		cprof_fmt_dur(e, sizeof(e), (double)v->overhead_ns);
		printf("  idle %s: host wait %s (%.0f%%), kernel wait %s, other %s; profiler overhead %s excluded\n", a, b,
		       idle ? 100.0 * v->host_wait_ns / idle : 0.0, c, d, e);
		cprof_fmt_dur(a, sizeof(a), (double)v->self_cpu_ns);
		cprof_fmt_dur(b, sizeof(b), (double)v->self_gpu_ns);
		printf("  Self CPU (time in CUDA calls) %s vs Self GPU (GPU op time) %s: ratio %.2f\n", a, b,
		       v->self_gpu_ns ? (double)v->self_cpu_ns / v->self_gpu_ns : 0.0);
	}
	if (op_evidence[0])
		printf("  %s\n", op_evidence);
	if (nph > 1) {
		printf("\nPhases\n");
		for (i = 0; i < nph; i++) {
			cprof_fmt_dur(a, sizeof(a), (double)(ph[i].start - v->run_start));
			cprof_fmt_dur(b, sizeof(b), (double)(ph[i].end - ph[i].start));
			printf("  %d  at %-12s %-12s %-15s GPU busy %5.1f%%  %6llu kernels, median %s\n", i + 1, a, b,
			       ph[i].v.verdict, ph[i].v.busy_pct, (unsigned long long)ph[i].v.kernels,
			       (cprof_fmt_dur(c, sizeof(c), ph[i].v.med_kernel_ns), c));
		}
	}
	if (nf > 0) {
		printf("\nFindings\n");
		for (i = 0; i < nf; i++)
			printf("  [%s] %s: %s\n         evidence: %s\n", f[i].severity, f[i].id, f[i].message, f[i].evidence);
	}
}

/* ---- ranks: the job's view, slowest rank and spread ---- */

static const char rank_sql[] =
	"SELECT p.rank, count(DISTINCT p.id), group_concat(DISTINCT p.host), max(a.e) - min(a.s),"
	" (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN PROCESSES q ON q.id = k.processId WHERE q.rank = p.rank),"
	" (SELECT coalesce(sum(k.end - k.start), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN PROCESSES q"
	"  ON q.id = k.processId WHERE q.rank = p.rank)"
	" FROM PROCESSES p JOIN (SELECT processId, min(start) s, max(end) e FROM CPROF_API GROUP BY processId) a"
	" ON a.processId = p.id WHERE p.rank IS NOT NULL GROUP BY p.rank ORDER BY p.rank";

/* A rank's verdict: its process's (the one with the most recorded events when it has several). */
static const char *rank_verdict(const struct proc *procs, size_t nprocs, int64_t rank)
{
	const struct proc *best = NULL;
	size_t i;

	for (i = 0; i < nprocs; i++)
		if (procs[i].rank == rank && (best == NULL || procs[i].recorded > best->recorded))
			best = &procs[i];
	return best ? best->v.verdict : "?";
}

static void print_ranks(sqlite3 *db, const struct proc *procs, size_t nprocs)
{
	sqlite3_stmt *st;
	int n = 0;
	char run[32], gpu[32];

	if (sqlite3_prepare_v2(db, rank_sql, -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n++ == 0)
			printf("\nPer rank\n\n  Rank  Processes  Host              Run (first to last call)  Kernels  Kernel time  Verdict\n");
		cprof_fmt_dur(run, sizeof(run), sqlite3_column_double(st, 3));
		cprof_fmt_dur(gpu, sizeof(gpu), sqlite3_column_double(st, 5));
		printf("  %4lld  %9lld  %-16.16s  %24s  %7lld  %11s  %s\n", (long long)sqlite3_column_int64(st, 0),
		       (long long)sqlite3_column_int64(st, 1), (const char *)sqlite3_column_text(st, 2), run,
		       (long long)sqlite3_column_int64(st, 4), gpu,
		       rank_verdict(procs, nprocs, sqlite3_column_int64(st, 0)));
	}
	sqlite3_finalize(st);
}

static void json_ranks(sqlite3 *db, const struct proc *procs, size_t nprocs)
{
	sqlite3_stmt *st;
	int n = 0;

	printf(",\"ranks\":[");
	if (sqlite3_prepare_v2(db, rank_sql, -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			printf("%s{\"rank\":%lld,\"processes\":%lld,\"hosts\":", n++ ? "," : "",
			       (long long)sqlite3_column_int64(st, 0), (long long)sqlite3_column_int64(st, 1));
			cprof_json_str(stdout, (const char *)sqlite3_column_text(st, 2));
			printf(",\"run_ns\":%lld,\"kernels\":%lld,\"kernel_ns\":%lld,\"verdict\":\"%s\"}",
			       (long long)sqlite3_column_int64(st, 3), (long long)sqlite3_column_int64(st, 4),
			       (long long)sqlite3_column_int64(st, 5), rank_verdict(procs, nprocs, sqlite3_column_int64(st, 0)));
		}
		sqlite3_finalize(st);
	}
	printf("]");
}

/* ---- JSON ---- */

static void json_table(const struct table *t, size_t top, int kernels)
{
	size_t i, n = shown(t, top);

	printf("[");
	for (i = 0; i < n; i++) {
		const struct cprof_stats *s = &t->rows[i].st;

		printf("%s{\"name\":", i ? "," : "");
		cprof_json_str(stdout, t->rows[i].name);
		if (kernels) {
			char sh[120];

			cprof_shorten(t->rows[i].name, sh, sizeof(sh));
			printf(",\"short_name\":");
			cprof_json_str(stdout, sh);
		}
		printf(",\"calls\":%llu,\"total_ns\":%.0f,\"avg_ns\":%.1f,\"med_ns\":%.1f,\"min_ns\":%.0f,"
		       "\"max_ns\":%.0f,\"std_ns\":%.1f,\"time_pct\":%.2f",
		       (unsigned long long)s->n, s->total, s->avg, s->med, s->min, s->max, s->std,
		       t->total > 0 ? 100.0 * s->total / t->total : 0.0);
		if (t->rows[i].bytes > 0)
			printf(",\"bytes\":%.0f", t->rows[i].bytes);
		if (t->rows[i].tag)
			printf(",\"source\":\"cupti\"");
		printf("}");
	}
	printf("]");
}

static void json_verdict_fields(const struct cprof_verdict *v)
{
	char line[1024];

	cprof_verdict_line(v, line, sizeof(line));
	printf("\"verdict\":\"%s\",\"verdict_line\":", v->verdict);
	cprof_json_str(stdout, line);
	printf(",\"advice\":");
	cprof_json_str(stdout, v->advice);
	printf(",\"window_ns\":%llu,\"run_window_ns\":%llu,\"startup_ns\":%llu,\"warmup_ns\":%llu,"
	       "\"gpu_busy_ns\":%llu,\"gpu_busy_pct\":%.2f,\"cpu_api_ns\":%llu,\"gpu_op_ns\":%llu,\"gpu_kernel_ns\":%llu,"
	       "\"self_cpu_gpu_ratio\":%.3f,\"idle\":{\"host_wait_ns\":%llu,\"kernel_wait_ns\":%llu,\"other_ns\":%llu},"
	       "\"profiler_overhead_ns\":%llu,\"host_wait_cause\":",
	       (unsigned long long)(v->end - v->start), (unsigned long long)(v->run_end - v->run_start),
	       (unsigned long long)v->startup_ns, (unsigned long long)v->warmup_ns, (unsigned long long)v->busy_ns,
	       v->busy_pct, (unsigned long long)v->self_cpu_ns, (unsigned long long)v->self_gpu_ns,
	       (unsigned long long)v->kernel_ns, v->self_gpu_ns ? (double)v->self_cpu_ns / v->self_gpu_ns : 0.0,
	       (unsigned long long)v->host_wait_ns, (unsigned long long)v->kernel_wait_ns,
	       (unsigned long long)v->other_ns, (unsigned long long)v->overhead_ns);
	cprof_json_str(stdout, v->cause);
	printf(",\"median_launch_ns\":%.0f,\"median_kernel_ns\":%.0f", v->med_launch_ns, v->med_kernel_ns);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cprof report PROFILE.db [--format text|json|csv] [--top N] [--by kernel|api|op|callsite|range|stream|process]\n"
		   "                    [--include-startup] [--compute-pct P] [--overhead-pct P] [--kernel-wait-us U]\n"
		   "                    [--step-range REGEX]   NVTX ranges that mark steps (default: ProfilerStep#N, step)\n");
}

static int parse_double(const char *opt, const char *arg, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (*arg == '\0' || *end != '\0' || v < lo || v > hi) {
		pr_err("%s wants a number in %g..%g, got '%s'", opt, lo, hi, arg);
		return -1;
	}
	*out = v;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },      { "top", required_argument, NULL, 't' },
		{ "by", required_argument, NULL, 'b' },          { "include-startup", no_argument, NULL, 'i' },
		{ "compute-pct", required_argument, NULL, 'c' }, { "overhead-pct", required_argument, NULL, 'o' },
		{ "kernel-wait-us", required_argument, NULL, 'k' }, { "help", no_argument, NULL, 'h' },
		{ "step-range", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	enum fmt fmt = FMT_TEXT;
	enum by by = BY_ALL;
	size_t top = 15, nprocs = 0, i;
	int top_set = 0;
	struct proc *procs = NULL;
	struct table apis = { 0 }, kernels = { 0 }, memops = { 0 }, torch = { 0 };
	struct cprof_thresholds th;
	struct cprof_stacks stacks = { 0 };
	struct cprof_attr_table ops = { 0 }, sites = { 0 }, chains = { 0 };
	struct cprof_range_table ranges = { 0 };
	struct cprof_op_table tops = { 0 };
	char op_evidence[512] = "";
	struct cprof_verdict v;
	struct cprof_phase *ph = NULL;
	struct cprof_finding *fd = NULL;
	int nph = 0, nf = 0;
	sqlite3 *db;
	int opt, ret = CPROF_EXIT_OK, complete;
	int64_t lost, api_calls;
	char reason[256], command[1024], simulated[16], gpu_note[256];
	char *end;
	double d;

	cprof_thresholds_default(&th);
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (!strcmp(optarg, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "csv"))
				fmt = FMT_CSV;
			else {
				pr_err("unknown --format '%s' (text, json or csv)", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 't':
			top = strtoul(optarg, &end, 10);
			top_set = 1;
			if (*optarg == '\0' || *end != '\0') {
				pr_err("--top wants a number, got '%s'", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'b':
			if (!strcmp(optarg, "api"))
				by = BY_API;
			else if (!strcmp(optarg, "kernel"))
				by = BY_KERNEL;
			else if (!strcmp(optarg, "stream"))
				by = BY_STREAM;
			else if (!strcmp(optarg, "process"))
				by = BY_PROCESS;
			else if (!strcmp(optarg, "op"))
				by = BY_OP;
			else if (!strcmp(optarg, "callsite"))
				by = BY_CALLSITE;
			else if (!strcmp(optarg, "range"))
				by = BY_RANGE;
			else {
				pr_err("--by %s: expected kernel, api, op, callsite, range, stream or process", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'i':
			th.include_startup = 1;
			break;
		case 's': {
			char err[128];

			if (cprof_step_re_check(optarg, err, sizeof(err)) < 0) {
				pr_err("--step-range '%s': %s", optarg, err);
				return CPROF_EXIT_USAGE;
			}
			th.step_re = optarg;
			break;
		}
		case 'c':
			if (parse_double("--compute-pct", optarg, 0, 100, &th.compute_pct) < 0)
				return CPROF_EXIT_USAGE;
			break;
		case 'o':
			if (parse_double("--overhead-pct", optarg, 0, 100, &th.overhead_pct) < 0)
				return CPROF_EXIT_USAGE;
			break;
		case 'k':
			if (parse_double("--kernel-wait-us", optarg, 0, 1e9, &d) < 0)
				return CPROF_EXIT_USAGE;
			th.kernel_wait_ns = (uint64_t)(d * 1000);
			break;
		case 'h':
			usage(stdout);
			return CPROF_EXIT_OK;
		default:
			usage(stderr);
			return CPROF_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return CPROF_EXIT_USAGE;
	}
	if (fmt == FMT_JSON && !top_set)
		top = 0; /* JSON carries everything unless asked otherwise */
	db = cprof_profile_open(argv[optind]);
	if (db == NULL)
		return CPROF_EXIT_USAGE;
	complete = cprof_meta_int(db, "complete", 0) == 1;
	lost = cprof_meta_int(db, "lost_events", 0);
	cprof_meta(db, "incomplete_reason", reason, sizeof(reason), "");
	cprof_meta(db, "command", command, sizeof(command), "?");
	cprof_meta(db, "simulated_gpu", simulated, sizeof(simulated), "0");
	cprof_meta(db, "gpu_records_note", gpu_note, sizeof(gpu_note), "");
	api_calls = cprof_query_int(db, "SELECT count(*) FROM CPROF_API", 0);
	if (load_procs(db, &procs, &nprocs) < 0 || load_apis(db, 0, &apis) < 0 || load_kernels(db, 0, &kernels) < 0 ||
	    load_memops(db, 0, &memops) < 0 || load_torch(db, 0, &apis, &kernels, &torch) < 0 ||
	    (nph = cprof_headline(db, 0, &th, &v, &ph)) < 0) {
		pr_err("%s: cannot read the profile: %s", argv[optind], sqlite3_errmsg(db));
		ret = CPROF_EXIT_USAGE;
		goto out;
	}
	nf = cprof_findings(db, 0, &v, &fd);
	if (cprof_stacks_load(db, &stacks) < 0 || cprof_attr_build(db, &stacks, CPROF_BY_OP, 0, &ops) < 0 ||
	    cprof_attr_build(db, &stacks, CPROF_BY_CALLSITE, 0, &sites) < 0 ||
	    cprof_attr_build(db, &stacks, CPROF_BY_CHAIN, 0, &chains) < 0) {
		pr_err("%s: cannot read the call stacks: %s", argv[optind], sqlite3_errmsg(db));
		ret = CPROF_EXIT_USAGE;
		goto out;
	}
	/* an overhead-bound window names the ops whose host time it was */
	if (!strcmp(v.verdict, "overhead-bound") && cprof_ops_evidence(db, 0, v.start, v.end, op_evidence,
								       sizeof(op_evidence)) < 0)
		op_evidence[0] = '\0';
	if (cprof_ops_build(db, 0, &tops) < 0) {
		pr_err("%s: cannot read the op ranges: %s", argv[optind], sqlite3_errmsg(db));
		ret = CPROF_EXIT_USAGE;
		goto out;
	}
	if (cprof_ranges_build(db, 0, &ranges) < 0) {
		ret = CPROF_EXIT_USAGE; /* cprof_ranges_build said why */
		goto out;
	}
	for (i = 0; i < nprocs; i++) {
		struct cprof_phase *pp = NULL;

		/* with one process its verdict is the run's: no second pass over the profile */
		if (nprocs == 1) {
			procs[i].v = v;
			if (load_apis(db, procs[i].id, &procs[i].apis) < 0) {
				ret = CPROF_EXIT_USAGE;
				goto out;
			}
			continue;
		}
		if (load_apis(db, procs[i].id, &procs[i].apis) < 0 ||
		    cprof_headline(db, procs[i].id, &th, &procs[i].v, &pp) < 0) {
			ret = CPROF_EXIT_USAGE;
			goto out;
		}
		free(pp);
	}

	if (fmt == FMT_JSON) {
		printf("{\"schema\":\"cprof.summary/1\",\"profile\":");
		cprof_json_str(stdout, argv[optind]);
		printf(",\"command\":");
		cprof_json_str(stdout, command);
		printf(",\"simulated_gpu\":%s,", strcmp(simulated, "1") == 0 ? "true" : "false");
		json_verdict_fields(&v);
		if (gpu_note[0]) {
			printf(",\"gpu_records_note\":");
			cprof_json_str(stdout, gpu_note);
		}
		{
			double hta = cprof_hta_idle_pct(db, 0);

			if (hta >= 0)
				printf(",\"hta_idle_pct\":%.4f", hta);
		}
		printf(",\"counts\":{\"api_calls\":%lld,\"kernels\":%lld,\"memcpys\":%lld,\"memsets\":%lld,"
		       "\"processes\":%zu,\"launch_calls\":%lld,\"memcpy_calls\":%lld,\"memset_calls\":%lld}",
		       (long long)api_calls, (long long)cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", 0),
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY", 0),
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET", 0), nprocs,
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CPROF_API WHERE class='launch'", 0),
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CPROF_API WHERE class='memcpy'", 0),
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CPROF_API WHERE class='memset'", 0));
		printf(",\"lost_events\":%lld,\"complete\":%s,\"incomplete_reason\":", (long long)lost,
		       complete ? "true" : "false");
		cprof_json_str(stdout, complete ? "" : reason);
		printf(",\"kernels\":");
		json_table(&kernels, top, 1);
		printf(",\"memops\":");
		json_table(&memops, top, 0);
		printf(",\"apis\":");
		json_table(&apis, top, 0);
		printf(",\"stacks\":%zu,\"ops\":", stacks.n);
		cprof_attr_json(&ops, CPROF_BY_OP, top);
		printf(",\"torch_ops_evidence\":");
		cprof_json_str(stdout, op_evidence);
		printf(",\"torch_ops\":");
		cprof_ops_json(&tops, top);
		printf(",\"callsites\":");
		cprof_attr_json(&sites, CPROF_BY_CALLSITE, top);
		printf(",\"chains\":");
		cprof_attr_json(&chains, CPROF_BY_CHAIN, top);
		printf(",\"nvtx\":{\"ranges\":%llu,\"open_ranges\":%llu,\"marks\":%llu},\"ranges\":",
		       (unsigned long long)ranges.ranges, (unsigned long long)ranges.open_ranges,
		       (unsigned long long)ranges.marks);
		cprof_ranges_json(&ranges, top);
		json_ranks(db, procs, nprocs);
		cprof_steps_print(db, 0, &th, 1, top);
		printf(",\"phases\":[");
		for (i = 0; i < (size_t)nph; i++) {
			printf("%s{\"start_ns\":%llu,\"end_ns\":%llu,", i ? "," : "", (unsigned long long)ph[i].start,
			       (unsigned long long)ph[i].end);
			json_verdict_fields(&ph[i].v);
			printf(",\"kernels\":%llu}", (unsigned long long)ph[i].v.kernels);
		}
		printf("],\"findings\":[");
		for (i = 0; i < (size_t)nf; i++) {
			printf("%s{\"id\":\"%s\",\"severity\":\"%s\",\"message\":", i ? "," : "", fd[i].id, fd[i].severity);
			cprof_json_str(stdout, fd[i].message);
			printf(",\"evidence\":");
			cprof_json_str(stdout, fd[i].evidence);
			printf("}");
		}
		printf("],\"processes\":[");
		for (i = 0; i < nprocs; i++) {
			printf("%s{\"pid\":%lld,\"ppid\":%lld,\"exe\":", i ? "," : "", (long long)procs[i].pid,
			       (long long)procs[i].ppid);
			cprof_json_str(stdout, procs[i].exe);
			printf(",\"argv\":");
			cprof_json_str(stdout, procs[i].argv);
			printf(",\"host\":");
			cprof_json_str(stdout, procs[i].host);
			if (procs[i].rank >= 0)
				printf(",\"rank\":%lld", (long long)procs[i].rank);
			printf(",\"events\":%lld,\"lost_events\":%lld,", (long long)procs[i].recorded, (long long)procs[i].lost);
			json_verdict_fields(&procs[i].v);
			printf(",\"apis\":");
			json_table(&procs[i].apis, top, 0);
			printf("}");
		}
		printf("]}\n");
	} else if (fmt == FMT_CSV && by == BY_RANGE) {
		cprof_ranges_csv(&ranges, top_set ? top : 0);
	} else if (fmt == FMT_CSV && by == BY_OP && tops.n) {
		cprof_ops_csv(&tops, top_set ? top : 0);
	} else if (fmt == FMT_CSV && (by == BY_OP || by == BY_CALLSITE)) {
		cprof_attr_csv(by == BY_OP ? &ops : &sites, by == BY_OP ? CPROF_BY_OP : CPROF_BY_CALLSITE, top_set ? top : 0);
	} else if (fmt == FMT_CSV) {
		const struct table *t = by == BY_KERNEL ? &kernels : &apis;

		printf("time_pct,total_ns,calls,avg_ns,med_ns,min_ns,max_ns,std_ns,name\n");
		for (i = 0; i < shown(t, top_set ? top : 0); i++) {
			const struct cprof_stats *s = &t->rows[i].st;

			printf("%.2f,%.0f,%llu,%.1f,%.1f,%.0f,%.0f,%.1f,", t->total > 0 ? 100.0 * s->total / t->total : 0.0,
			       s->total, (unsigned long long)s->n, s->avg, s->med, s->min, s->max, s->std);
			cprof_csv_str(stdout, t->rows[i].name);
			putchar('\n');
		}
	} else {
		char dur[32];

		printf("cprof report: %s\n", argv[optind]);
		printf("Command: %s\n", command);
		if (strcmp(simulated, "1") == 0)
			printf("GPU: simulated GPU (tests/simgpu) - timings are modelled, not measured\n");
		if (gpu_note[0])
			printf("GPU records: %s\n", gpu_note);
		cprof_fmt_dur(dur, sizeof(dur), (double)(v.run_end - v.run_start));
		printf("Processes: %zu   API calls: %lld   run: %s   lost events: %lld   %s%s%s\n", nprocs,
		       (long long)api_calls, dur, (long long)lost, complete ? "complete" : "INCOMPLETE",
		       complete ? "" : " - ", complete ? "" : reason);
		print_verdict_text(&v, ph, nph, fd, nf, op_evidence);
		if (by == BY_ALL)
			cprof_steps_print(db, 0, &th, 0, top_set ? top : 0);
		if (nprocs > 1) {
			printf("\nPer process\n");
			for (i = 0; i < nprocs; i++) {
				char line[1024];

				cprof_verdict_line(&procs[i].v, line, sizeof(line));
				printf("  %lld%s: %.200s\n", (long long)procs[i].pid, procs[i].rank >= 0 ? " (rank)" : "", line);
			}
		}
		print_ranks(db, procs, nprocs);
		if (by == BY_ALL || by == BY_KERNEL)
			print_stats_table("GPU kernels", &kernels, by == BY_KERNEL && !top_set ? 0 : top, 0);
		if (by == BY_ALL)
			print_stats_table("GPU memory operations", &memops, top, 1);
		if (by == BY_ALL || by == BY_API)
			print_stats_table(nprocs > 1 ? "CUDA API, all processes" : "CUDA API", &apis,
					  by == BY_API && !top_set ? 0 : top, 0);
		if (by == BY_API && nprocs > 1)
			for (i = 0; i < nprocs; i++) {
				char title[200];

				snprintf(title, sizeof(title), "CUDA API, process %lld: %.100s", (long long)procs[i].pid,
					 procs[i].argv[0] ? procs[i].argv : procs[i].exe);
				print_stats_table(title, &procs[i].apis, top_set ? top : 0, 0);
			}
		if (by == BY_ALL)
			print_torch(&torch, &kernels, top);
		if ((by == BY_ALL && ranges.n) || by == BY_RANGE)
			cprof_ranges_print(&ranges, by == BY_RANGE && !top_set ? 0 : top);
		if (by == BY_ALL && chains.n)
			cprof_attr_print(&chains, CPROF_BY_CHAIN, top);
		if (by == BY_ALL && sites.n)
			cprof_attr_print(&sites, CPROF_BY_CALLSITE, top);
		/* op rows from PyTorch's own ranges; kernels keep their own table */
		if ((by == BY_ALL || by == BY_OP) && tops.n)
			cprof_ops_print(&tops, by == BY_OP && !top_set ? 0 : top);
		if ((by == BY_OP && !tops.n) || by == BY_CALLSITE) {
			if (stacks.n == 0)
				printf("\nNo call stacks in this profile (recorded with --stacks off, or by an older cprof).\n");
			else
				cprof_attr_print(by == BY_OP ? &ops : &sites, by == BY_OP ? CPROF_BY_OP : CPROF_BY_CALLSITE,
						 top_set ? top : 0);
		}
		if (by == BY_STREAM) {
			sqlite3_stmt *st;

			printf("\nGPU streams\n\n  Device  Stream       Ops    Kernels  GPU time\n");
			if (sqlite3_prepare_v2(db, "SELECT deviceId, streamId, count(*), sum(kind='kernel'), sum(end - start)"
						   " FROM GPU_OPS GROUP BY 1, 2 ORDER BY 5 DESC", -1, &st, NULL) == SQLITE_OK) {
				while (sqlite3_step(st) == SQLITE_ROW) {
					cprof_fmt_dur(dur, sizeof(dur), sqlite3_column_double(st, 4));
					printf("  %6lld  %6lld  %8lld  %9lld  %s\n", (long long)sqlite3_column_int64(st, 0),
					       (long long)sqlite3_column_int64(st, 1), (long long)sqlite3_column_int64(st, 2),
					       (long long)sqlite3_column_int64(st, 3), dur);
				}
				sqlite3_finalize(st);
			}
		}
		if (by == BY_PROCESS) {
			printf("\n     PID     PPID  Rank     Events    API time  Lost  End     Verdict          Command\n");
			printf(" -------  -------  ----  ---------  ----------  ----  ------  ---------------  -------\n");
			for (i = 0; i < nprocs; i++) {
				char r[24] = "-";

				if (procs[i].rank >= 0)
					snprintf(r, sizeof(r), "%lld", (long long)procs[i].rank);
				cprof_fmt_dur(dur, sizeof(dur), procs[i].apis.total);
				printf(" %7lld  %7lld  %4s  %9lld  %10s  %4lld  %-6s  %-15s  %.60s\n", (long long)procs[i].pid,
				       (long long)procs[i].ppid, r, (long long)procs[i].recorded, dur,
				       (long long)procs[i].lost, procs[i].bye[0] ? procs[i].bye : "killed", procs[i].v.verdict,
				       procs[i].argv[0] ? procs[i].argv : procs[i].exe);
			}
		}
		if (nprocs == 0)
			printf("\nNo process made a CUDA call under cprof.\n");
	}
out:
	for (i = 0; i < nprocs; i++) {
		free(procs[i].exe);
		free(procs[i].argv);
		free(procs[i].host);
		free(procs[i].bye);
		table_free(&procs[i].apis);
	}
	free(procs);
	free(ph);
	free(fd);
	table_free(&apis);
	table_free(&kernels);
	table_free(&memops);
	table_free(&torch);
	cprof_attr_free(&ops);
	cprof_attr_free(&sites);
	cprof_attr_free(&chains);
	cprof_ranges_free(&ranges);
	cprof_ops_free(&tops);
	cprof_stacks_free(&stacks);
	sqlite3_close(db);
	return ret;
}
