/* cprof report as text and CSV: the verdict and its evidence, phases, findings, tables, ranks. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "common/wire.h"
#include "report/model/report.h"
#include "report/render/report-fmt.h"
#include "report/term.h"

#define ARROW " \xe2\x86\x92 " /* " → " */


/* What cprof cost the program in the window, measured (issue 26). */
static void report_text_cost(const struct cprof_cost *c)
{
	char t[32], h[32], s[32], u[32], w[32], k[32], q[32], e[32], how[256], base[256] = "";

	cprof_fmt_dur(t, sizeof(t), (double)c->total_ns);
	cprof_fmt_dur(h, sizeof(h), (double)c->hook_ns);
	cprof_fmt_dur(s, sizeof(s), (double)c->stack_ns);
	cprof_fmt_dur(u, sizeof(u), (double)c->cupti_overhead_ns);
	cprof_fmt_dur(w, sizeof(w), (double)c->wait_attributed_ns);
	cprof_fmt_dur(k, sizeof(k), (double)c->cupti_calls_ns);
	cprof_fmt_dur(q, sizeof(q), (double)c->counted_ns);
	cprof_fmt_dur(e, sizeof(e), (double)c->in_call.ns);
	if (c->in_call.measured)
		snprintf(how, sizeof(how), "%s a call, measured against %llu launches made outside the windows, +-%llu ns", e,
			 (unsigned long long)c->in_call.passed, (unsigned long long)c->in_call.se_ns);
	else if (c->in_call.passed)
		snprintf(how, sizeof(how), "%s a call, estimated: each call less its record; measured against %llu launches"
			 " made outside the windows: %lld +-%llu ns, not told from noise", e,
			 (unsigned long long)c->in_call.passed, (long long)c->in_call.diff_ns,
			 (unsigned long long)c->in_call.se_ns);
	else
		snprintf(how, sizeof(how), "%s a call, estimated: each call less its record", e);
	if (c->wait_expected_ns || c->wait_excess_ns != (int64_t)c->app_wait_ns) {
		/* beside other load the program waits for a core anyway: only its wait over that is cprof's; and threads
		 * runnable at the same time wait together (cost.c) */
		char all[32], exp[32], over[32];

		cprof_fmt_dur(all, sizeof(all), (double)c->app_wait_ns);
		cprof_fmt_dur(exp, sizeof(exp), (double)c->wait_expected_ns);
		cprof_fmt_dur(over, sizeof(over), c->wait_excess_ns > 0 ? (double)c->wait_excess_ns : 0.0);
		snprintf(base, sizeof(base), " (of %s waited, %s at the pace of its wait outside the windows; %s over it, a wait"
			 " its threads had together counted once)", all, exp, over);
	}
	if (!c->measured) {
		printf("  cprof's own cost: CUPTI %s; the rest was not measured (a profile from before CPROF_COST)\n", u);
		return;
	}
	/* a lower bound: CUPTI's work inside a library's calls (cuBLAS) and cache effects are not timed (docs/bench.md) */
	printf("  cprof's own cost: at least %s (%.1f%% of the window): hooks %s (%llu calls, 1 in %d timed), stacks %s (%llu),"
	       " counted calls %s (%llu), CUPTI %s, CUPTI inside %llu runtime calls %s (%s), waiting for a core while"
	       " cprof's threads ran %s%s\n",
	       t, c->window_ns ? 100.0 * c->total_ns / c->window_ns : 0.0, h, (unsigned long long)c->calls,
	       CPROF_COST_SAMPLE, s, (unsigned long long)c->stacks, q, (unsigned long long)c->counted_calls, u,
	       (unsigned long long)c->cupti_calls, k, how, w, base);
	if (c->pace.launches_in) {
		/* the program's own pace: what no part above times shows here (docs/bench.md, twenty-seventh session) */
		char p[32], pin[32], pout[32];

		cprof_fmt_dur(p, sizeof(p), (double)c->paced_ns);
		cprof_fmt_dur(pin, sizeof(pin), (double)c->pace.in_ns);
		cprof_fmt_dur(pout, sizeof(pout), (double)c->pace.out_ns);
		if (c->pace.measured)
			printf("  measured from the program's pace: %s (%llu launches here; a launch every %s in %llu windows, every"
			       " %s beside them: +%lld +-%llu ns a launch, over %llu and %llu launches)\n",
			       p, (unsigned long long)c->pace_launches, pin, (unsigned long long)c->pace.windows, pout,
			       (long long)c->pace.diff_ns, (unsigned long long)c->pace.se_ns,
			       (unsigned long long)c->pace.launches_in, (unsigned long long)c->pace.launches_out);
		else
			printf("  the program's pace: a launch every %s in %llu windows, every %s beside them: %+lld +-%llu ns a"
			       " launch, not told from noise (over %llu and %llu launches)\n",
			       pin, (unsigned long long)c->pace.windows, pout, (long long)c->pace.diff_ns,
			       (unsigned long long)c->pace.se_ns, (unsigned long long)c->pace.launches_in,
			       (unsigned long long)c->pace.launches_out);
	}
}
/* ---- text ---- */

size_t report_shown(const struct table *t, size_t top)
{
	return top && top < t->n ? top : t->n;
}

/* the names of a table's first n rows, for cprof_shown_levels and cprof_twin_numbers; NULL when out of memory */
static const char **row_names(const struct table *t, size_t n)
{
	const char **names = calloc(n ? n : 1, sizeof(*names));

	for (size_t i = 0; names && i < n; i++)
		names[i] = t->rows[i].name;
	return names;
}

void report_print_stats_table(const char *title, const struct table *t, size_t top, int with_bytes)
{
	double maxv = 0;
	enum cprof_unit u;
	size_t i, n = report_shown(t, top);
	char tot[32], avg[32], med[32], mn[32], mx[32], sd[32], name[512];
	const char *un, *shown, **names;
	unsigned char *levels;
	int tagged = 0;

	if (t->n == 0)
		return;
	/* two shown rows never look alike: without memory they are shown as before */
	names = row_names(t, n);
	levels = calloc(n ? n : 1, 1);
	if (names && levels)
		cprof_shown_levels(names, n, levels);
	for (i = 0; i < n; i++)
		if (t->rows[i].st.total > maxv)
			maxv = t->rows[i].st.total;
	/* one unit for the whole table, as nsys stats does, picked from the largest value shown */
	u = report_timeunit >= 0 ? (enum cprof_unit)report_timeunit : cprof_unit_for(maxv);
	un = cprof_unit_name(u);
	printf("\n%s\n\n", cprof_tx_quoted(title)); /* cprof's words, and a process's argv quoted already */
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
		shown = cprof_term_name_at(t->rows[i].name, levels ? levels[i] : 0, with_bytes ? 115 : 93, name,
					   sizeof(name));
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
	free(names);
	free(levels);
}

/* A row's name in the Self table's 60 columns, cut in its middle with a mark, not silently at the column. Template
 * twins (a level above 0 of cprof_shown_levels) differ where a 60-column cut would hide it: each gets its short
 * name and its place among them, " #2" (num, from self_twins; 0: none) (the kernel table above shows them apart). */
static void self_name(const char *full, unsigned num, char *out, size_t size)
{
	char tag[24] = "", fold[1024];

	if (strlen(full) <= 60)
		snprintf(fold, sizeof(fold), "%s", full);
	else
		cprof_fold(full, fold, sizeof(fold));
	if (num)
		snprintf(tag, sizeof(tag), " #%u", num);
	cprof_cell(out, size, fold, tag, 60);
}

/* cprof_twin_numbers of a table's first n rows; NULL (no numbers) when out of memory */
static unsigned *self_twins(const struct table *t, size_t n)
{
	const char **names = row_names(t, n);
	unsigned *num = calloc(n ? n : 1, sizeof(*num));

	if (names && num) {
		if (cprof_twin_numbers(names, n, num) < 0) {
			free(num);
			num = NULL;
		}
	}
	free(names);
	return num;
}

/* the GPU rows of the table (kernels, then copies and memsets, as torch.profiler lists its "Memcpy HtoD" and
 * "Memset" rows): Self CUDA each; returns their total, shown or not */
static double print_torch_gpu(const struct table *t, size_t top)
{
	size_t i, n = report_shown(t, top);
	unsigned *num = self_twins(t, n);
	double cuda = 0;
	char b[32], name[8192];

	for (i = 0; i < n; i++) {
		cprof_fmt_dur(b, sizeof(b), t->rows[i].st.total);
		self_name(t->rows[i].name, num ? num[i] : 0, name, sizeof(name));
		printf(" %s  %12s  %12s  %13s  %9llu\n", name, "0", b, "-", (unsigned long long)t->rows[i].st.n);
	}
	for (i = 0; i < t->n; i++)
		cuda += t->rows[i].st.total;
	free(num);
	return cuda;
}

void report_print_torch(const struct table *calls, const struct table *kernels, const struct table *memops, size_t top)
{
	size_t i, n;
	double cpu = 0, cuda = 0;
	char a[32], b[32], name[8192];

	if (calls->n == 0 && kernels->n == 0 && memops->n == 0)
		return;
	printf("\nSelf CPU and Self CUDA by name (as torch.profiler's table; CUDA launched = GPU time of the work a call queued)\n\n");
	printf(" %-60s  %12s  %12s  %13s  %9s\n", "Name", "Self CPU", "Self CUDA", "CUDA launched", "# Calls");
	printf(" %-60s  %12s  %12s  %13s  %9s\n", "----", "--------", "---------", "-------------", "-------");
	n = report_shown(calls, top);
	for (i = 0; i < n; i++) {
		cprof_fmt_dur(a, sizeof(a), calls->rows[i].st.total);
		cprof_fmt_dur(b, sizeof(b), calls->rows[i].extra);
		self_name(calls->rows[i].name, 0, name, sizeof(name));
		printf(" %s  %12s  %12s  %13s  %9llu\n", name, a, "0", b, (unsigned long long)calls->rows[i].st.n);
	}
	for (i = 0; i < calls->n; i++)
		cpu += calls->rows[i].st.total;
	cuda = print_torch_gpu(kernels, top) + print_torch_gpu(memops, top);
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

/* ---- ranks: the job's view, slowest rank and spread ---- */

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

void report_print_ranks(const struct cprof_rank_row *ranks, size_t nranks, const struct proc *procs, size_t nprocs)
{
	char run[32], gpu[32], host[256];
	size_t i;

	for (i = 0; i < nranks; i++) {
		const struct cprof_rank_row *r = &ranks[i];

		if (i == 0)
			printf("\nPer rank\n\n  Rank  Processes  Host              Run (first to last call)  Kernels  Kernel time  Verdict\n");
		cprof_fmt_dur(run, sizeof(run), (double)r->run_ns);
		cprof_fmt_dur(gpu, sizeof(gpu), (double)r->kernel_ns);
		/* a cell, not %-16.16s of escaped text: that could cut an escape in two, silently */
		cprof_cell(host, sizeof(host), r->hosts, "", 16);
		printf("  %4lld  %9lld  %s  %24s  %7lld  %11s  %s\n", (long long)r->rank, (long long)r->procs, host, run,
		       (long long)r->kernels, gpu, report_rank_verdict(procs, nprocs, r->rank));
	}
}

/* The recording windows (issue 31): what was recorded, when, and why it started and stopped. */
#define REPORT_WINDOWS_SHOWN 10
void report_print_windows(const struct cprof_recording *r)
{
	char dur[32], bytes[32], cost[32];
	size_t i;

	if (r->n) {
		printf("Recorded windows: %zu (everything below covers only these; outside them calls passed through"
		       " unrecorded)\n", r->n);
		/* a few: the verdict comes next and must stay on the first screen (400 windows printed 50 lines) */
		for (i = 0; i < r->n && i < REPORT_WINDOWS_SHOWN; i++) {
			const struct cprof_window *w = &r->w[i];
			char pid[32] = "all";

			if (w->pid)
				snprintf(pid, sizeof(pid), "pid %lld", (long long)w->pid);
			cprof_fmt_dur(dur, sizeof(dur), (double)(w->end - w->start));
			cprof_fmt_dur(cost, sizeof(cost), (double)w->cost_ns);
			printf("  #%d  %s  +%.3f s .. +%.3f s (%s)  %s; %s; cprof cost %s%s\n", w->number, pid,
			       w->start >= r->base_ns ? (w->start - r->base_ns) / 1e9 : 0.0,
			       w->end >= r->base_ns ? (w->end - r->base_ns) / 1e9 : 0.0, dur, cprof_tx(w->why),
			       cprof_tx(w->end_why), cost, w->cost_measured ? "" : " (CUPTI's part only: not measured)");
		}
		if (r->n > REPORT_WINDOWS_SHOWN)
			printf("  ... %zu more windows not listed (cprof report --format json lists them all, \"windows\")\n",
			       r->n - REPORT_WINDOWS_SHOWN);
	}
	if (r->max_size_cut_ns) {
		snprintf(bytes, sizeof(bytes), "%.1f MiB", r->max_size / 1048576.0);
		printf("Recording stopped at --max-size %s (+%.3f s): %lld events and GPU records after it were not recorded\n",
		       bytes, r->max_size_cut_ns >= r->base_ns ? (r->max_size_cut_ns - r->base_ns) / 1e9 : 0.0,
		       (long long)r->unrecorded);
	}
}

/* A left-aligned column w characters wide: names are UTF-8, so characters are counted, not bytes. */
static void put_cell(const char *s, int w)
{
	const unsigned char *p = (const unsigned char *)s;
	int used = 0;

	while (*p && used < w) {
		int n = cprof_utf8_len(p);

		if (n <= 0)
			n = 1;
		fwrite(p, 1, (size_t)n, stdout);
		p += n;
		used++;
	}
	for (; used < w; used++)
		putchar(' ');
}

static int cell_width(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

void cprof_ranges_print(const struct cprof_range_table *t, size_t top)
{
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
	size_t i, n = REPORT_SHOWN(t, top);
	int w = 5;

	printf("\nNVTX ranges %s(CPU = time inside the ranges, Self = minus their child ranges; Calls = hooked CUDA calls\n"
	       "that started inside them on their thread, GPU = the work those calls launched; step numbers shown as N)\n\n",
	       t->by_name ? "by name, as nsys's nvtx_sum; --range-tree nests them " : "by path ");
	if (t->n == 0) {
		printf(" (no NVTX range in this profile%s)\n", t->marks ? "; marks only" : "");
		return;
	}
	for (i = 0; i < n; i++)
		if (cell_width(t->rows[i].path) + 1 > w)
			w = cell_width(t->rows[i].path) + 1;
	w = w > 60 ? 60 : w;
	printf(" %-*s  %7s  %11s  %11s  %11s  %11s  %11s  %8s  %11s  %11s  %8s\n", w, "Range", "Count", "CPU total",
	       "Self CPU", "Avg", "Min", "Max", "Calls", "API time", "GPU time", "GPU ops");
	printf(" %-*s  %7s  %11s  %11s  %11s  %11s  %11s  %8s  %11s  %11s  %8s\n", w, "-----", "-----", "---------",
	       "--------", "---", "---", "---", "-----", "--------", "--------", "-------");
	for (i = 0; i < n; i++) {
		const struct cprof_range_row *r = &t->rows[i];
		char label[512];

		cprof_fmt_dur(a, sizeof(a), r->cpu_ns);
		cprof_fmt_dur(b, sizeof(b), r->self_cpu_ns);
		cprof_fmt_dur(c, sizeof(c), r->count ? r->cpu_ns / (double)r->count : 0.0);
		cprof_fmt_dur(d, sizeof(d), r->min_ns);
		cprof_fmt_dur(e, sizeof(e), r->max_ns);
		cprof_fmt_dur(f, sizeof(f), r->api_ns);
		cprof_fmt_dur(g, sizeof(g), r->gpu_ns);
		/* '~' marks a start/end range: it has no place in the push/pop tree */
		cprof_text_safe(label, sizeof(label) - 1, r->path);
		strcat(label, r->startend ? "~" : "");
		putchar(' ');
		put_cell(label, w);
		printf("  %7llu  %11s  %11s  %11s  %11s  %11s  %8llu  %11s  %11s  %8llu\n", (unsigned long long)r->count, a, b, c, d, e, (unsigned long long)r->calls, f, g,
		       (unsigned long long)r->gpu_ops);
	}
	if (n < t->n)
		printf(" (%zu more; --top 0 shows all)\n", t->n - n);
	printf(" %llu ranges, %llu mark%s", (unsigned long long)t->ranges, (unsigned long long)t->marks,
	       t->marks == 1 ? "" : "s");
	for (i = 0; i < t->n; i++)
		if (t->rows[i].startend)
			break;
	if (i < t->n)
		printf("; ~ start/end range (nvtxRangeStart/End: not nested)");
	if (t->open_ranges)
		printf("; %llu never ended, counted up to the end of their process", (unsigned long long)t->open_ranges);
	printf("\n");
}


void cprof_attr_print(const struct cprof_attr_table *t, enum cprof_attr_by by, size_t top)
{
	char a[32], b[32], c[32], d[32], label[512];
	size_t i, n = REPORT_SHOWN(t, top);

	if (by == CPROF_BY_CHAIN) {
		printf("\nWhere the kernels were launched from (the dispatch chain on the launching call's stack)\n\n");
		printf(" %-44s  %12s  %8s  %s\n", "Kernel", "GPU time", "Launches", "Chain (outermost first)");
		printf(" %-44s  %12s  %8s  %s\n", "------", "--------", "--------", "-----------------------");
		for (i = 0; i < n; i++) {
			cprof_fmt_dur(a, sizeof(a), t->rows[i].gpu_ns);
			cprof_cell(label, sizeof(label), t->rows[i].label, "", 44);
			printf(" %s  %12s  %8llu  %s%s\n", label, a, (unsigned long long)t->rows[i].gpu_ops,
			       cprof_tx(t->rows[i].detail ? t->rows[i].detail : ""), ARROW "<kernel>");
		}
	} else if (by == CPROF_BY_OP) {
		printf("\nBy operator (ATen ops found on the stacks of the CUDA calls; Self = calls made with the op\n"
		       "innermost, Total = with the op anywhere on the chain; CPU = time inside those CUDA calls)\n\n");
		printf(" %-36s  %12s  %12s  %12s  %12s  %9s\n", "Name", "Self CPU", "CPU total", "Self CUDA", "CUDA total",
		       "# Calls");
		printf(" %-36s  %12s  %12s  %12s  %12s  %9s\n", "----", "--------", "---------", "---------", "----------",
		       "-------");
		for (i = 0; i < n; i++) {
			cprof_fmt_dur(a, sizeof(a), t->rows[i].cpu_ns);
			cprof_fmt_dur(b, sizeof(b), t->rows[i].cpu_total_ns);
			cprof_fmt_dur(c, sizeof(c), t->rows[i].gpu_ns);
			cprof_fmt_dur(d, sizeof(d), t->rows[i].gpu_total_ns);
			cprof_cell(label, sizeof(label), t->rows[i].label, "", 36);
			printf(" %s  %12s  %12s  %12s  %12s  %9llu\n", label, a, b, c, d, (unsigned long long)t->rows[i].calls);
		}
		if (t->n == 0)
			printf(" (no ATen op on any captured stack: at::_ops::<op>::call frames name them)\n");
	} else {
		int w = 9;

		for (i = 0; i < n; i++)
			if ((int)strlen(t->rows[i].label) > w)
				w = (int)strlen(t->rows[i].label);
		w = w > 100 ? 100 : w;
		printf("\nBy call site (innermost frame outside libraries: the Python line, or the native caller on a thread\n"
		       "without Python frames, such as PyTorch's autograd thread)\n\n");
		printf(" %-*s  %9s  %12s  %12s  %8s\n", w, "Call site", "# Calls", "Self CPU", "Self CUDA", "GPU ops");
		printf(" %-*s  %9s  %12s  %12s  %8s\n", w, "---------", "-------", "--------", "---------", "-------");
		for (i = 0; i < n; i++) {
			cprof_fmt_dur(a, sizeof(a), t->rows[i].cpu_ns);
			cprof_fmt_dur(b, sizeof(b), t->rows[i].gpu_ns);
			printf(" %-*.*s  %9llu  %12s  %12s  %8llu\n", w, w, cprof_tx(t->rows[i].label), (unsigned long long)t->rows[i].calls,
			       a, b, (unsigned long long)t->rows[i].gpu_ops);
		}
	}
	if (t->inherited)
		printf(" (sampled stacks: %llu of %llu calls reuse the last stack taken at the same call site;"
		       " --stacks all takes every one)\n",
		       (unsigned long long)t->inherited, (unsigned long long)t->calls_with_stack);
}


/* an op name is the program's text: control characters never reach the terminal */
static void put_name(const char *s, int w)
{
	int used = 0;

	for (; *s && used < w; s++) {
		unsigned char c = (unsigned char)*s;

		putchar(c < 0x20 || c == 0x7f ? '?' : c);
		used += (c & 0xc0) != 0x80;
	}
	for (; used < w; used++)
		putchar(' ');
}

void cprof_ops_print(const struct cprof_op_table *t, size_t top)
{
	char a[32], b[32], c[32], d[32], e[32];
	size_t i, n = REPORT_SHOWN(t, top);

	printf("\nATen ops (PyTorch's op ranges, recorded with cprof-run --torch-ops; Self = less the child ops;\n"
	       "CUDA = GPU time of the kernels, copies and memsets launched inside the op)\n\n");
	printf(" %-40s  %11s  %11s  %11s  %11s  %11s  %10s  %8s\n", "Name", "Self CPU", "CPU total", "CPU avg",
	       "Self CUDA", "CUDA total", "# of Calls", "GPU ops");
	printf(" %-40s  %11s  %11s  %11s  %11s  %11s  %10s  %8s\n", "----", "--------", "---------", "-------",
	       "---------", "----------", "----------", "-------");
	for (i = 0; i < n; i++) {
		const struct cprof_op_row *r = &t->rows[i];

		cprof_fmt_dur(a, sizeof(a), r->self_cpu_ns);
		cprof_fmt_dur(b, sizeof(b), r->cpu_total_ns);
		cprof_fmt_dur(c, sizeof(c), r->calls ? r->cpu_total_ns / (double)r->calls : 0.0);
		cprof_fmt_dur(d, sizeof(d), r->self_cuda_ns);
		cprof_fmt_dur(e, sizeof(e), r->cuda_total_ns);
		putchar(' ');
		put_name(r->name, 40);
		printf("  %11s  %11s  %11s  %11s  %11s  %10llu  %8llu\n", a, b, c, d, e, (unsigned long long)r->calls,
		       (unsigned long long)r->gpu_ops);
	}
	if (n < t->n)
		printf(" (%zu more; --top 0 shows all)\n", t->n - n);
	cprof_fmt_dur(a, sizeof(a), t->self_cpu_ns);
	cprof_fmt_dur(b, sizeof(b), t->self_cuda_ns);
	printf("Self CPU time total: %s\nSelf CUDA time total: %s\n", a, b);
}


/* The steps section: each step's time and, for the first ones shown, its own verdict. */
void report_steps_text(const struct cprof_steps_view *sv)
{
	const struct cprof_step *s = sv->s;
	char a[32], b[32], c[32], name[256];
	int i, n = sv->n;

	if (n == 0)
		return;
	cprof_fmt_dur(a, sizeof(a), (double)sv->med);
	printf("\nSteps: %d NVTX ranges matching /%s/ (thread %lld); median %s%s\n\n", n, cprof_tx(sv->re),
	       (long long)s[0].tid, a, sv->cold ? "; the first is a cold start, excluded from the verdict" : "");
	printf(" %5s  %-24s  %12s  %8s  %-16s\n", "Step", "Range", "Time", "GPU busy", "Verdict");
	printf(" %5s  %-24s  %12s  %8s  %-16s\n", "----", "-----", "----", "--------", "-------");
	for (i = 0; i < n; i++) {
		double d = (double)(s[i].end - s[i].start);

		if (!sv->shown[i])
			continue;
		cprof_fmt_dur(b, sizeof(b), d);
		snprintf(c, sizeof(c), "%.0f%%", sv->v[i].busy_pct);
		cprof_cell(name, sizeof(name), s[i].name, "", 24);
		printf(" %5d  %s  %12s  %8s  %-16s%s\n", i + 1, name, b, c,
		       sv->has_v[i] ? sv->v[i].verdict : "?",
		       i == 0 && sv->cold ? "  cold start" : d >= 1.5 * (double)sv->med ? "  slow" : "");
	}
	if (sv->nshown < n)
		printf(" (%d steps not shown: within 1.5x of the median; --top N and --format json give them)\n", n - sv->nshown);
}

/* ---- the whole report ---- */

static void text_streams(const struct report_doc *d)
{
	char dur[32];
	size_t i;

	printf("\nGPU streams\n\n  Device  Stream       Ops    Kernels  GPU time\n");
	for (i = 0; i < d->nstreams; i++) {
		const struct report_stream *s = &d->streams[i];

		cprof_fmt_dur(dur, sizeof(dur), (double)s->ns);
		printf("  %6lld  %6lld  %8lld  %9lld  %s\n", (long long)s->dev, (long long)s->stream, (long long)s->ops,
		       (long long)s->kernels, dur);
	}
}

static void text_processes(const struct report_doc *d)
{
	char dur[32];
	size_t i;

	printf("\n     PID     PPID  Rank     Events    API time  Lost  End                   Verdict          Command\n");
	printf(" -------  -------  ----  ---------  ----------  ----  --------------------  ---------------  -------\n");
	for (i = 0; i < d->nprocs; i++) {
		const struct proc *p = &d->procs[i];
		const char *ending = p->bye[0] ? cprof_tx(p->bye) : "killed";
		char r[24] = "-";

		if (p->rank >= 0)
			snprintf(r, sizeof(r), "%lld", (long long)p->rank);
		cprof_fmt_dur(dur, sizeof(dur), p->apis.total);
		printf(" %7lld  %7lld  %4s  %9lld  %10s  %4lld  %-20.*s  %-15s  %.60s\n", (long long)p->pid, (long long)p->ppid,
		       r, (long long)p->recorded, dur, (long long)p->lost, (int)strcspn(ending, ";"), /* the ending, not the last call */
		       ending, p->v.verdict, p->argv[0] ? cprof_tx_quoted(p->argv) : cprof_tx(p->exe));
	}
}

static void text_head(const struct report_doc *d)
{
	const struct cprof_meta_facts *mf = &d->model.x->meta;
	char dur[32], command[1024];
	size_t i;

	cprof_meta_command(mf, command, sizeof(command));
	printf("cprof report: %s\n", cprof_tx(d->o->profile));
	printf("Command: %s\n", cprof_tx_quoted(command));
	if (mf->simulated)
		printf("GPU: simulated GPU (tests/simgpu) - timings are modelled, not measured\n");
	if (mf->gpu_note[0])
		printf("GPU records: %s\n", cprof_tx(mf->gpu_note));
	cprof_fmt_dur(dur, sizeof(dur), (double)(d->v.run_end - d->v.run_start));
	printf("Processes: %zu   CUDA API calls: %lld (%s)   run: %s   lost events: %s%lld%s   %s%s%s\n", d->nprocs,
	       (long long)d->cc.total, d->calls_text, dur, d->lower_bound ? "at least " : "", (long long)mf->lost_events,
	       cprof_lost_note(mf, d->lower_bound),
	       mf->complete ? "complete" : "INCOMPLETE", mf->complete ? "" : " - ", mf->complete ? "" : cprof_tx(mf->reason));
	for (i = 0; i < d->nprocs; i++)
		if (d->procs[i].bye[0] && strncmp(d->procs[i].bye, "exit", 4) != 0 && strcmp(d->procs[i].bye, "_exit") != 0 &&
		    strcmp(d->procs[i].bye, "exec") != 0)
			printf("Ended: pid %lld: %s\n", (long long)d->procs[i].pid, cprof_tx(d->procs[i].bye));
	report_print_windows(&d->model.rec);
}

static void text_verdicts(const struct report_doc *d)
{
	char line[1024];
	size_t i;

	report_print_verdict_text(&d->v, d->ph, d->nph, d->fd, d->nf, d->op_evidence);
	if (d->ndv > 0) {
		printf("\nPer device (the verdict above is their union)\n");
		for (i = 0; i < (size_t)d->ndv; i++) {
			cprof_verdict_line(&d->dv[i].v, line, sizeof(line));
			printf("  GPU %d: %s\n", (int)d->dv[i].device, line);
		}
	}
	if (d->o->by == REPORT_BY_ALL)
		report_steps_text(&d->sv);
	if (d->nprocs > 1) {
		printf("\nPer process\n");
		for (i = 0; i < d->nprocs; i++) {
			char rank[32] = "";

			cprof_verdict_line(&d->procs[i].v, line, sizeof(line));
			if (d->procs[i].rank >= 0)
				snprintf(rank, sizeof(rank), " (rank %lld)", (long long)d->procs[i].rank);
			/* the whole line: a cut one ended mid-number ("median launch call 42") */
			printf("  %lld%s: %s\n", (long long)d->procs[i].pid, rank, cprof_tx(line));
		}
	}
	report_print_ranks(d->ranks, d->nranks, d->procs, d->nprocs);
}


/* The device queries counted and not timed (CPROF_API_COUNTS): a count a reader can act on, over the run. */
static void print_counted(const struct report_doc *d)
{
	struct cprof_counted *c;
	int n = cprof_model_counted_calls(&d->model, 0, &c);

	if (n <= 0)
		return;
	printf(" counted, not timed (whole run; calls that make no GPU work: device queries, of which CUPTI made no"
	       " record, as under torch.profiler, and cuBLAS handle settings):");
	for (int i = 0; i < n; i++)
		printf("%s %s %llu", i ? "," : "", cprof_tx(cprof_model_string(&d->model, c[i].name)),
		       (unsigned long long)c[i].calls);
	printf("\n");
	free(c);
}

static void print_queries_sampled(const struct report_doc *d)
{
	if (d->model.queries_sampled)
		printf(" %s\n", CPROF_QUERIES_SAMPLED_NOTE);
}

static void text_tables(const struct report_doc *d)
{
	const struct cprof_model_extra *x = d->model.x;
	int by = d->o->by, all = by == REPORT_BY_ALL;
	size_t top = d->o->top, all_rows = d->o->top_set ? top : 0, i;
	char title[256];

	/* each table says which window it covers (issue 29 item 6) */
	snprintf(title, sizeof(title), "GPU kernels (%s)", d->win_note);
	if (all || by == REPORT_BY_KERNEL)
		report_print_stats_table(title, &d->kernels, by == REPORT_BY_KERNEL ? all_rows : top, 0);
	snprintf(title, sizeof(title), "GPU memory operations (%s)", d->win_note);
	if (all)
		report_print_stats_table(title, &d->memops, top, 1);
	snprintf(title, sizeof(title), "%s (%s)", d->nprocs > 1 ? "CUDA API, all processes" : "CUDA API", d->win_note);
	if (all || by == REPORT_BY_API)
		report_print_stats_table(title, &d->apis, by == REPORT_BY_API ? all_rows : top, 0);
	if (all || by == REPORT_BY_API) {
		print_counted(d);
		print_queries_sampled(d);
	}
	if (by == REPORT_BY_API && d->nprocs > 1)
		for (i = 0; i < d->nprocs; i++) {
			snprintf(title, sizeof(title), "CUDA API, process %lld: %.100s", (long long)d->procs[i].pid,
				 d->procs[i].argv[0] ? d->procs[i].argv : cprof_tx(d->procs[i].exe)); /* argv is quoted */
			report_print_stats_table(title, &d->procs[i].apis, all_rows, 0);
		}
	if (all && (d->torch.n || d->kernels.n || d->memops.n))
		printf("\nThe table below covers the %s\n", d->win_note);
	if (all)
		report_print_torch(&d->torch, &d->kernels, &d->memops, top);
	if ((all && x->ranges.n) || by == REPORT_BY_RANGE)
		cprof_ranges_print(&x->ranges, by == REPORT_BY_RANGE ? all_rows : top);
	if (all && x->chains.n)
		cprof_attr_print(&x->chains, CPROF_BY_CHAIN, top);
	if (all && x->sites.n)
		cprof_attr_print(&x->sites, CPROF_BY_CALLSITE, top);
	/* op rows from PyTorch's own ranges; kernels keep their own table */
	if ((all || by == REPORT_BY_OP) && x->torch_ops.n)
		cprof_ops_print(&x->torch_ops, by == REPORT_BY_OP ? all_rows : top);
	if ((by == REPORT_BY_OP && !x->torch_ops.n) || by == REPORT_BY_CALLSITE) {
		if (x->stacks.n == 0)
			printf("\nNo call stacks in this profile (recorded with --stacks off, or by an older cprof).\n");
		else
			cprof_attr_print(by == REPORT_BY_OP ? &x->ops : &x->sites,
					 by == REPORT_BY_OP ? CPROF_BY_OP : CPROF_BY_CALLSITE, all_rows);
	}
	if (by == REPORT_BY_STREAM)
		text_streams(d);
	if (by == REPORT_BY_PROCESS)
		text_processes(d);
	if (d->nprocs == 0)
		printf("\nNo process made a CUDA call under cprof.\n");
}

static void render_text(const struct report_doc *d)
{
	text_head(d);
	text_verdicts(d);
	text_tables(d);
}

const struct report_fmt_ops report_fmt_text = { .name = "text", .render = render_text };
