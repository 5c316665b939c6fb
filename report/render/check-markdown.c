/* cprof check as Markdown for $GITHUB_STEP_SUMMARY or a PR comment: the verdict, the gates, the top changes. */
#include <string.h>

#include "report/cprof.h"
#include "report/render/check.h"

static void write_changes(FILE *f, const struct cprof_check_result *r)
{
	size_t i, n = r->top && r->top < r->nchanges ? r->top : r->nchanges;
	char a[32], b[32], p[32];

	fprintf(f, "\n### Top changes against the baseline ");
	cprof_md_code_fput(f, r->baseline);
	fprintf(f, "\n\n");
	if (r->nchanges == 0) {
		fprintf(f, "No kernel or call changed.\n");
		return;
	}
	fprintf(f, "| Kind | Name | Baseline | Now | Change | Count |\n|---|---|---:|---:|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct cprof_change *c = &r->changes[i];

		cprof_fmt_dur(a, sizeof(a), c->old_ns);
		cprof_fmt_dur(b, sizeof(b), c->new_ns);
		cprof_fmt_change(p, sizeof(p), c->old_ns, c->new_ns);
		fprintf(f, "| %s | ", c->api ? "host (API)" : "GPU (kernel)");
		cprof_md_fput(f, c->name);
		fprintf(f, " | %s | %s | %s | %lld → %lld |\n", a, b, p, (long long)c->old_n, (long long)c->new_n);
	}
	if (n < r->nchanges)
		fprintf(f, "\n%zu more rows: `cprof diff` lists them.\n", r->nchanges - n);
}

static void write_md(FILE *f, const struct cprof_check_result *r)
{
	size_t i;
	char line[1024];

	fprintf(f, "## cprof check: %s ", r->incomplete ? "⚠️ INCOMPLETE" : r->failed ? "❌ FAIL" : "✅ PASS");
	cprof_md_code_fput(f, r->profile);
	fprintf(f, "\n\n");
	if (r->simulated)
		fprintf(f, "> Recorded on the simulated GPU (tests/simgpu): timings are modelled, not measured.\n\n");
	cprof_verdict_line(&r->now->v, line, sizeof(line));
	fprintf(f, "**Verdict:** ");
	cprof_md_fput(f, line);
	fprintf(f, "\n\n");
	if (r->incomplete) {
		fprintf(f, "The profile is incomplete, so nothing was gated: ");
		cprof_md_fput(f, r->now->reason);
		fprintf(f, "\n");
		return;
	}
	if (r->ngates == 0) {
		fprintf(f, "No condition was set (`--expect`, `--max-gpu-idle`, `--baseline`).\n");
	} else {
		fprintf(f, "| Gate | Measured | Limit | Baseline | Result |\n|---|---:|---:|---:|---|\n");
		for (i = 0; i < r->ngates; i++) {
			const struct cprof_gate *g = &r->gates[i];
			char base[32] = "";

			if (g->baseline >= 0) {
				if (!strcmp(g->unit, "ns"))
					cprof_fmt_dur(base, sizeof(base), g->baseline);
				else
					snprintf(base, sizeof(base), "%.0f", g->baseline);
			}
			fprintf(f, "| ");
			cprof_md_fput(f, g->what);
			fprintf(f, " | ");
			cprof_md_fput(f, g->value_text);
			fprintf(f, " | %s", !strcmp(g->unit, "verdict") ? "" : "≤ ");
			cprof_md_fput(f, g->limit_text);
			fprintf(f, " | %s | %s |\n", base, g->failed ? "❌ fail" : "✅ pass");
		}
		fprintf(f, "\n%d of %zu conditions failed.\n", r->failed, r->ngates);
	}
	if (r->old)
		write_changes(f, r);
}

const struct cprof_check_fmt cprof_check_markdown = { "markdown", write_md };
