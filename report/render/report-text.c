/* cprof report as text and CSV: the verdict and its evidence, phases, findings, tables, ranks. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "common/wire.h"
#include "report/model/report.h"
#include "report/term.h"


/* What cprof cost the program in the window, measured (issue 26). */
static void report_text_cost(const struct cprof_cost *c)
{
	char t[32], h[32], s[32], u[32], w[32];

	cprof_fmt_dur(t, sizeof(t), (double)c->total_ns);
	cprof_fmt_dur(h, sizeof(h), (double)c->hook_ns);
	cprof_fmt_dur(s, sizeof(s), (double)c->stack_ns);
	cprof_fmt_dur(u, sizeof(u), (double)c->cupti_overhead_ns);
	cprof_fmt_dur(w, sizeof(w), (double)c->wait_attributed_ns);
	if (!c->measured) {
		printf("  cprof's own cost: CUPTI %s; the rest was not measured (a profile from before CPROF_COST)\n", u);
		return;
	}
	/* a lower bound: CUPTI's work inside each CUDA call and cache effects are not timed (docs/bench.md) */
	printf("  cprof's own cost: at least %s (%.1f%% of the window): hooks %s (%llu calls, 1 in %d timed), stacks %s (%llu),"
	       " CUPTI %s, waiting for a core while cprof's threads ran %s\n",
	       t, c->window_ns ? 100.0 * c->total_ns / c->window_ns : 0.0, h, (unsigned long long)c->calls,
	       CPROF_COST_SAMPLE, s, (unsigned long long)c->stacks, u, w);
}
/* ---- text ---- */

size_t report_shown(const struct table *t, size_t top)
{
	return top && top < t->n ? top : t->n;
}

void report_print_stats_table(const char *title, const struct table *t, size_t top, int with_bytes)
{
	double maxv = 0;
	enum cprof_unit u;
	size_t i, n = report_shown(t, top);
	char tot[32], avg[32], med[32], mn[32], mx[32], sd[32], name[96];
	const char *un, *shown;
	int tagged = 0;

	if (t->n == 0)
		return;
	for (i = 0; i < n; i++)
		if (t->rows[i].st.total > maxv)
			maxv = t->rows[i].st.total;
	/* one unit for the whole table, as nsys stats does, picked from the largest value shown */
	u = report_timeunit >= 0 ? (enum cprof_unit)report_timeunit : cprof_unit_for(maxv);
	un = cprof_unit_name(u);
	printf("\n%s\n\n", cprof_tx(title));
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
		shown = cprof_term_name(t->rows[i].name, with_bytes ? 115 : 93, name, sizeof(name));
		printf(" %8.1f  %10s  %9llu  %9s  %9s  %9s  %9s  %11s", t->total > 0 ? 100.0 * s->total / t->total : 0.0,
		       tot, (unsigned long long)s->n, avg, med, mn, mx, sd);
		if (with_bytes)
			printf("  %13.3f  %5.1f", t->rows[i].bytes / 1e6,
			       s->total > 0 ? t->rows[i].bytes / s->total : 0.0);
		printf("  %s%s\n", cprof_tx(shown), t->rows[i].tag ? "*" : "");
		tagged |= t->rows[i].tag != 0;
	}
	if (n < t->n)
		printf(" (%zu more; --top 0 shows all)\n", t->n - n);
	if (tagged)
		printf(" * seen only by CUPTI: called inside a library (cuBLAS, cuDNN) or not hooked\n");
}

void report_print_torch(const struct table *calls, const struct table *kernels, size_t top)
{
	size_t i, n;
	double cpu = 0, cuda = 0;
	char a[32], b[32], name[72];

	if (calls->n == 0 && kernels->n == 0)
		return;
	printf("\nSelf CPU and Self CUDA by name (as torch.profiler's table; CUDA launched = GPU time of the work a call queued)\n\n");
	printf(" %-60s  %12s  %12s  %13s  %9s\n", "Name", "Self CPU", "Self CUDA", "CUDA launched", "# Calls");
	printf(" %-60s  %12s  %12s  %13s  %9s\n", "----", "--------", "---------", "-------------", "-------");
	n = report_shown(calls, top);
	for (i = 0; i < n; i++) {
		cprof_fmt_dur(a, sizeof(a), calls->rows[i].st.total);
		cprof_fmt_dur(b, sizeof(b), calls->rows[i].extra);
		cprof_shorten(calls->rows[i].name, name, sizeof(name));
		printf(" %-60.60s  %12s  %12s  %13s  %9llu\n", cprof_tx(name), a, "0", b, (unsigned long long)calls->rows[i].st.n);
	}
	for (i = 0; i < calls->n; i++)
		cpu += calls->rows[i].st.total;
	n = report_shown(kernels, top);
	for (i = 0; i < n; i++) {
		cprof_fmt_dur(b, sizeof(b), kernels->rows[i].st.total);
		cprof_shorten(kernels->rows[i].name, name, sizeof(name));
		printf(" %-60.60s  %12s  %12s  %13s  %9llu\n", cprof_tx(name), "0", b, "-", (unsigned long long)kernels->rows[i].st.n);
	}
	for (i = 0; i < kernels->n; i++)
		cuda += kernels->rows[i].st.total;
	cprof_fmt_dur(a, sizeof(a), cpu);
	cprof_fmt_dur(b, sizeof(b), cuda);
	printf("Self CPU time total: %s\nSelf CUDA time total: %s\n", a, b);
}

void report_print_verdict_text(const struct cprof_verdict *v, const struct cprof_phase *ph, int nph,
			       const struct cprof_finding *f, int nf, const char *op_evidence)
{
	char line[1024], a[32], b[32], c[32], d[32], e[32];
	uint64_t idle = v->host_wait_ns + v->kernel_wait_ns + v->other_ns;
	int i;

	cprof_verdict_line(v, line, sizeof(line));
	/* the verdict word in its colour on a terminal; the same bytes as ever elsewhere */
	printf("\nVerdict: %s%.*s%s%s\n", cprof_hue_verdict(v->verdict), (int)strcspn(line, ":"), line,
	       cprof_hue(CPROF_HUE_RESET), cprof_tx(line + strcspn(line, ":")));
	if (!cprof_verdict_no_gpu(v)) {
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
		printf("  idle %s: host wait %s (%.0f%%), kernel wait %s, other %s; CUPTI overhead %s excluded\n", a, b,
		       idle ? 100.0 * v->host_wait_ns / idle : 0.0, c, d, e);
		report_text_cost(&v->cost);
		cprof_fmt_dur(a, sizeof(a), (double)v->self_cpu_ns);
		cprof_fmt_dur(b, sizeof(b), (double)v->self_gpu_ns);
		printf("  Self CPU (time in CUDA calls) %s vs Self GPU (GPU op time) %s: ratio %.2f\n", a, b,
		       v->self_gpu_ns ? (double)v->self_cpu_ns / v->self_gpu_ns : 0.0);
		cprof_fmt_dur(a, sizeof(a), (double)v->starved_ns);
		cprof_fmt_dur(b, sizeof(b), (double)v->stalled_ns);
		cprof_fmt_dur(c, sizeof(c), (double)v->backlog_ns);
		cprof_fmt_dur(d, sizeof(d), (double)v->blocked_ns);
		printf("  queues: GPU idle with nothing queued %s, idle with work queued %s; work queued ahead %s; host "
		       "blocked in syncs %s\n", a, b, c, d);
	}
	if (op_evidence && op_evidence[0])
		printf("  %s\n", cprof_tx(op_evidence));
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
			printf("  [%s%s%s] %s: %s\n         evidence: %s\n",
			       cprof_hue(!strcmp(f[i].severity, "warn") ? CPROF_HUE_WARN : CPROF_HUE_INFO), f[i].severity,
			       cprof_hue(CPROF_HUE_RESET), f[i].id, cprof_tx(f[i].message), cprof_tx(f[i].evidence));
	}
}

void report_print_csv(const struct table *t, size_t top)
{
	size_t i;

	printf("time_pct,total_ns,calls,avg_ns,med_ns,min_ns,max_ns,std_ns,name\n");
	for (i = 0; i < report_shown(t, top); i++) {
		const struct cprof_stats *s = &t->rows[i].st;

		printf("%.2f,%.0f,%llu,%.1f,%.1f,%.0f,%.0f,%.1f,", t->total > 0 ? 100.0 * s->total / t->total : 0.0, s->total,
		       (unsigned long long)s->n, s->avg, s->med, s->min, s->max, s->std);
		cprof_csv_str(stdout, t->rows[i].name);
		putchar('\n');
	}
}

/* ---- ranks: the job's view, slowest rank and spread ---- */

const char report_rank_sql[] =
	"SELECT p.rank, count(DISTINCT p.id), group_concat(DISTINCT p.host), max(a.e) - min(a.s),"
	" (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN PROCESSES q ON q.id = k.processId WHERE q.rank = p.rank),"
	" (SELECT coalesce(sum(k.end - k.start), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN PROCESSES q"
	"  ON q.id = k.processId WHERE q.rank = p.rank)"
	" FROM PROCESSES p JOIN (SELECT processId, min(start) s, max(end) e FROM CPROF_API GROUP BY processId) a"
	" ON a.processId = p.id WHERE p.rank IS NOT NULL GROUP BY p.rank ORDER BY p.rank";

/* A rank's verdict: its process's (the one with the most recorded events when it has several). */
const char *report_rank_verdict(const struct proc *procs, size_t nprocs, int64_t rank)
{
	const struct proc *best = NULL;
	size_t i;

	for (i = 0; i < nprocs; i++)
		if (procs[i].rank == rank && (best == NULL || procs[i].recorded > best->recorded))
			best = &procs[i];
	return best ? best->v.verdict : "?";
}

void report_print_ranks(sqlite3 *db, const struct proc *procs, size_t nprocs)
{
	sqlite3_stmt *st;
	int n = 0;
	char run[32], gpu[32];

	if (sqlite3_prepare_v2(db, report_rank_sql, -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n++ == 0)
			printf("\nPer rank\n\n  Rank  Processes  Host              Run (first to last call)  Kernels  Kernel time  Verdict\n");
		cprof_fmt_dur(run, sizeof(run), sqlite3_column_double(st, 3));
		cprof_fmt_dur(gpu, sizeof(gpu), sqlite3_column_double(st, 5));
		printf("  %4lld  %9lld  %-16.16s  %24s  %7lld  %11s  %s\n", (long long)sqlite3_column_int64(st, 0),
		       (long long)sqlite3_column_int64(st, 1), cprof_tx((const char *)sqlite3_column_text(st, 2)), run,
		       (long long)sqlite3_column_int64(st, 4), gpu,
		       report_rank_verdict(procs, nprocs, sqlite3_column_int64(st, 0)));
	}
	sqlite3_finalize(st);
}

/* The recording windows (issue 31): what was recorded, when, and why it started and stopped. */
void report_print_windows(const struct cprof_recording *r)
{
	char dur[32], bytes[32];
	size_t i;

	if (r->n) {
		printf("Recorded windows: %zu (everything below covers only these; outside them calls passed through"
		       " unrecorded)\n", r->n);
		for (i = 0; i < r->n && i < 50; i++) {
			const struct cprof_window *w = &r->w[i];
			char pid[32] = "all";

			if (w->pid)
				snprintf(pid, sizeof(pid), "pid %lld", (long long)w->pid);
			cprof_fmt_dur(dur, sizeof(dur), (double)(w->end - w->start));
			printf("  #%d  %s  +%.3f s .. +%.3f s (%s)  %s; %s\n", w->number, pid,
			       w->start >= r->base_ns ? (w->start - r->base_ns) / 1e9 : 0.0,
			       w->end >= r->base_ns ? (w->end - r->base_ns) / 1e9 : 0.0, dur, cprof_tx(w->why),
			       cprof_tx(w->end_why));
		}
		if (r->n > 50)
			printf("  ... %zu more (cprof report --format json lists them all)\n", r->n - 50);
	}
	if (r->max_size_cut_ns) {
		snprintf(bytes, sizeof(bytes), "%.1f MiB", r->max_size / 1048576.0);
		printf("Recording stopped at --max-size %s (+%.3f s): %lld events and GPU records after it were not recorded\n",
		       bytes, r->max_size_cut_ns >= r->base_ns ? (r->max_size_cut_ns - r->base_ns) / 1e9 : 0.0,
		       (long long)r->unrecorded);
	}
}
