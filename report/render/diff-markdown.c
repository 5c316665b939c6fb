/* cprof diff as Markdown (a PR comment, a job summary): the verdict change first, then the rows that moved most. */
#include <string.h>

#include "report/cprof.h"
#include "report/render/check.h"
#include "report/render/diff.h"

static void row(FILE *f, const char *what, const char *a, const char *b, const char *p)
{
	fprintf(f, "| %s | %s | %s | %s |\n", what, a, b, p);
}

static void write_md(FILE *f, const struct cprof_diff_result *r)
{
	const struct cprof_summary *a = r->a, *b = r->b;
	char x[32], y[32], p[32];
	size_t i, n = cprof_diff_shown(r);

	fprintf(f, "## cprof diff: ");
	cprof_md_code_fput(f, r->old_path);
	fprintf(f, " → ");
	cprof_md_code_fput(f, r->new_path);
	fprintf(f, "\n\n");
	if (r->simulated)
		fprintf(f, "> Recorded on the simulated GPU (tests/simgpu): timings are modelled, not measured.\n\n");
	fprintf(f, "**Verdict:** %s → %s%s\n\n", a->v.verdict, b->v.verdict,
		strcmp(a->v.verdict, b->v.verdict) ? " (**changed**)" : " (unchanged)");
	fprintf(f, "| | Old | New | Change |\n|---|---:|---:|---:|\n");
	snprintf(x, sizeof(x), "%.1f%%", a->v.busy_pct);
	snprintf(y, sizeof(y), "%.1f%%", b->v.busy_pct);
	snprintf(p, sizeof(p), "%+.1f points", b->v.busy_pct - a->v.busy_pct);
	row(f, "GPU busy", x, y, p);
	cprof_fmt_dur(x, sizeof(x), a->kernel_ns);
	cprof_fmt_dur(y, sizeof(y), b->kernel_ns);
	cprof_fmt_change(p, sizeof(p), a->kernel_ns, b->kernel_ns);
	row(f, "kernel time", x, y, p);
	snprintf(x, sizeof(x), "%lld", (long long)a->kernel_count);
	snprintf(y, sizeof(y), "%lld", (long long)b->kernel_count);
	cprof_fmt_change(p, sizeof(p), (double)a->kernel_count, (double)b->kernel_count);
	row(f, "kernels", x, y, p);
	if (a->steps && b->steps) {
		cprof_fmt_dur(x, sizeof(x), a->step_median_ns);
		cprof_fmt_dur(y, sizeof(y), b->step_median_ns);
		cprof_fmt_change(p, sizeof(p), a->step_median_ns, b->step_median_ns);
		row(f, "median NVTX step", x, y, p);
	}
	if (r->max_reg >= 0)
		fprintf(f, "\n**--max-regression %.1f%%:** %s\n", r->max_reg, r->failed ? "❌ exceeded" : "✅ not exceeded");
	fprintf(f, "\n### What changed most\n\n");
	if (r->nchanges == 0) {
		fprintf(f, "No kernel or call changed.\n");
		return;
	}
	fprintf(f, "| Kind | Name | Old | New | Change | Count |\n|---|---|---:|---:|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct cprof_change *c = &r->changes[i];

		cprof_fmt_dur(x, sizeof(x), c->old_ns);
		cprof_fmt_dur(y, sizeof(y), c->new_ns);
		cprof_fmt_change(p, sizeof(p), c->old_ns, c->new_ns);
		fprintf(f, "| %s | ", c->api ? "host (API)" : "GPU (kernel)");
		cprof_md_fput(f, c->name);
		fprintf(f, " | %s | %s | %s | %lld → %lld |\n", x, y, p, (long long)c->old_n, (long long)c->new_n);
	}
	if (n < r->nchanges)
		fprintf(f, "\n%zu more rows (`--top 0` shows all).\n", r->nchanges - n);
}

const struct cprof_diff_fmt cprof_diff_markdown = { "markdown", write_md };
