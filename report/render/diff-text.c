/* cprof diff as text: the verdict and totals old -> new, then the rows that changed most. */
#include <stdlib.h>
#include <string.h>

#include "report/cprof.h"
#include "report/render/diff.h"
#include "report/term.h"

/* colour only on standard output (a terminal), never into a file -o names */
#define HUE(h) (f == stdout ? cprof_hue(h) : "")
#define HUE_VERDICT(v) (f == stdout ? cprof_hue_verdict(v) : "")

/* torch.compile's host cost per call on each side; an eager run against a compiled one: against the eager step */
static void write_compile(FILE *f, const struct cprof_diff_result *r)
{
	const struct cprof_compile_cost *ca = &r->a->compile, *cb = &r->b->compile;
	const struct cprof_summary *eager = NULL, *comp = NULL;
	char x[32] = "-", y[32] = "-", l[32], h[32], p[32];

	if (!ca->steady && !cb->steady)
		return;
	if (ca->steady)
		cprof_fmt_dur(x, sizeof(x), ca->lookup_ns + ca->region_ns);
	if (cb->steady)
		cprof_fmt_dur(y, sizeof(y), cb->lookup_ns + cb->region_ns);
	fprintf(f, "  compiled call on the host %5s -> %s", x, y);
	if (ca->steady && cb->steady) {
		cprof_fmt_change(p, sizeof(p), ca->lookup_ns + ca->region_ns, cb->lookup_ns + cb->region_ns);
		fprintf(f, " (%s)", p);
	}
	comp = cb->steady ? r->b : r->a;
	cprof_fmt_dur(l, sizeof(l), comp->compile.lookup_ns);
	cprof_fmt_dur(h, sizeof(h), comp->compile.region_ns);
	cprof_fmt_dur(p, sizeof(p), comp->compile.gpu_ns);
	fprintf(f, "   (%s: Dynamo cache lookup %s + compiled region %s, median of %zu calls; %.4g kernels, %s on the GPU)\n",
		comp == r->b ? "new" : "old", l, h, comp->compile.steady, comp->compile.kernels, p);
	if (!ca->steady && r->a->steps)
		eager = r->a;
	else if (!cb->steady && r->b->steps)
		eager = r->b;
	if (eager) {
		double c = comp->compile.lookup_ns + comp->compile.region_ns;

		cprof_fmt_dur(x, sizeof(x), eager->step_median_ns);
		cprof_fmt_dur(y, sizeof(y), c);
		fprintf(f, "  eager host time per step %s (%s, no compiled region) vs the compiled call's %s on the host: %.2fx\n",
			x, eager == r->a ? "old" : "new", y, eager->step_median_ns > 0 ? c / eager->step_median_ns : 0.0);
	}
}

static void write_text(FILE *f, const struct cprof_diff_result *r)
{
	const struct cprof_summary *a = r->a, *b = r->b;
	char x[32], y[32], p[32], name[512];
	size_t i, n = cprof_diff_shown(r);
	const char **names = malloc((n ? n : 1) * sizeof(*names));
	unsigned char *levels = calloc(n ? n : 1, 1);

	fprintf(f, "cprof diff: %s -> %s%s\n", cprof_tx(r->old_path), cprof_tx(r->new_path),
		r->simulated ? " (simulated GPU: timings are modelled, not measured)" : "");
	fprintf(f, "  verdict      %-16s -> %s%s%s%s\n", a->v.verdict, HUE_VERDICT(b->v.verdict), b->v.verdict,
		HUE(CPROF_HUE_RESET), strcmp(a->v.verdict, b->v.verdict) ? "   (changed)" : "");
	fprintf(f, "  GPU busy     %15.1f%% -> %.1f%%\n", a->v.busy_pct, b->v.busy_pct);
	cprof_fmt_dur(x, sizeof(x), a->kernel_ns);
	cprof_fmt_dur(y, sizeof(y), b->kernel_ns);
	cprof_fmt_change(p, sizeof(p), a->kernel_ns, b->kernel_ns);
	fprintf(f, "  kernel time  %16s -> %s (%s)\n", x, y, p);
	cprof_fmt_change(p, sizeof(p), (double)a->kernel_count, (double)b->kernel_count);
	fprintf(f, "  kernels      %16lld -> %lld (%s)\n", (long long)a->kernel_count, (long long)b->kernel_count, p);
	if (a->steps && b->steps) {
		cprof_fmt_dur(x, sizeof(x), a->step_median_ns);
		cprof_fmt_dur(y, sizeof(y), b->step_median_ns);
		cprof_fmt_change(p, sizeof(p), a->step_median_ns, b->step_median_ns);
		fprintf(f, "  median step  %16s -> %s (%s; %d -> %d NVTX steps)\n", x, y, p, a->steps, b->steps);
	}
	write_compile(f, r);
	/* a gone kernel and a new one that differ in template arguments only must not look the same */
	if (names && levels) {
		for (i = 0; i < n; i++)
			names[i] = r->changes[i].name;
		cprof_shown_levels(names, n, levels);
	}
	fprintf(f, "\n  %-6s  %12s  %12s  %8s  %9s  %9s  %s\n", "Kind", "Old time", "New time", "Change", "Old count",
		"New count", "Name");
	for (i = 0; i < n; i++) {
		const struct cprof_change *c = &r->changes[i];

		cprof_fmt_dur(x, sizeof(x), c->old_ns);
		cprof_fmt_dur(y, sizeof(y), c->new_ns);
		cprof_fmt_change(p, sizeof(p), c->old_ns, c->new_ns);
		fprintf(f, "  %-6s  %12s  %12s  %8s  %9lld  %9lld  %s\n", c->api ? "api" : "kernel", x, y, p,
			(long long)c->old_n, (long long)c->new_n, cprof_tx(cprof_term_name_at(c->name, levels ? levels[i] : 0, 70, name, sizeof(name))));
	}
	if (r->nchanges == 0)
		fprintf(f, "  (no kernel or call changed)\n");
	else if (n < r->nchanges)
		fprintf(f, "  (%zu more; --top 0 shows all)\n", r->nchanges - n);
	if (r->max_reg >= 0) {
		fprintf(f, "\n  --max-regression %.1f%%: %s\n", r->max_reg, r->failed ? "exceeded" : "not exceeded");
		for (i = 0; i < r->ngates; i++)
			if (r->gates[i].failed)
				fprintf(f, "  %sFAIL%s %s: %s\n", HUE(CPROF_HUE_BAD), HUE(CPROF_HUE_RESET),
					r->gates[i].what, r->gates[i].detail);
	}
	free(names);
	free(levels);
}

const struct cprof_diff_fmt cprof_diff_text = { "text", write_text };
