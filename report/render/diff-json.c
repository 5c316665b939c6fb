/* cprof diff as JSON (schema cprof.diff/1): both sides' totals, the ranked changes, the regression limit. */
#include <math.h>
#include <string.h>

#include "report/cprof.h"
#include "report/render/diff.h"

static void num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("null", f);
}

static void pair(FILE *f, const char *key, double a, double b)
{
	fprintf(f, ",\"%s\":{\"old\":", key);
	num(f, a);
	fprintf(f, ",\"new\":");
	num(f, b);
	fprintf(f, ",\"change_pct\":");
	num(f, cprof_change_pct(a, b));
	fputc('}', f);
}

static void compile_side(FILE *f, const struct cprof_compile_cost *c)
{
	if (!c->steady) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"total\":%.0f,\"cache_lookup\":%.0f,\"compiled_region\":%.0f,\"in_cuda_calls\":%.0f,"
		   "\"kernels\":%.4g,\"gpu\":%.0f,\"calls\":%zu}",
		c->lookup_ns + c->region_ns, c->lookup_ns, c->region_ns, c->api_ns, c->kernels, c->gpu_ns, c->steady);
}

static void write_json(FILE *f, const struct cprof_diff_result *r)
{
	size_t i, n = cprof_diff_shown(r);

	fprintf(f, "{\"schema\":\"cprof.diff/1\",\"old\":");
	cprof_json_str(f, r->old_path);
	fprintf(f, ",\"new\":");
	cprof_json_str(f, r->new_path);
	fprintf(f, ",\"simulated_gpu\":%s,\"verdict\":{\"old\":", r->simulated ? "true" : "false");
	cprof_json_str(f, r->a->v.verdict);
	fprintf(f, ",\"new\":");
	cprof_json_str(f, r->b->v.verdict);
	fprintf(f, ",\"changed\":%s}", strcmp(r->a->v.verdict, r->b->v.verdict) ? "true" : "false");
	pair(f, "gpu_busy_pct", r->a->v.busy_pct, r->b->v.busy_pct);
	pair(f, "kernel_ns", r->a->kernel_ns, r->b->kernel_ns);
	pair(f, "kernels", (double)r->a->kernel_count, (double)r->b->kernel_count);
	if (r->a->steps && r->b->steps)
		pair(f, "median_step_ns", r->a->step_median_ns, r->b->step_median_ns);
	if (r->a->compile.steady || r->b->compile.steady) {
		/* torch.compile's host cost per call (null: no compiled region on that side) */
		fprintf(f, ",\"torch_compile_call_host_ns\":{\"old\":");
		compile_side(f, &r->a->compile);
		fprintf(f, ",\"new\":");
		compile_side(f, &r->b->compile);
		fputc('}', f);
	}
	fprintf(f, ",\"rows\":%zu,\"changes\":[", r->nchanges);
	for (i = 0; i < n; i++) {
		const struct cprof_change *c = &r->changes[i];

		fprintf(f, "%s{\"kind\":\"%s\",\"name\":", i ? "," : "", c->api ? "api" : "kernel");
		cprof_json_str(f, c->name);
		fprintf(f, ",\"old_ns\":%.0f,\"new_ns\":%.0f,\"change_pct\":", c->old_ns, c->new_ns);
		num(f, cprof_change_pct(c->old_ns, c->new_ns));
		fprintf(f, ",\"old_count\":%lld,\"new_count\":%lld}", (long long)c->old_n, (long long)c->new_n);
	}
	fprintf(f, "]");
	if (r->max_reg >= 0) {
		fprintf(f, ",\"max_regression_pct\":%g,\"regressed\":%s,\"regressions\":[", r->max_reg,
			r->failed ? "true" : "false");
		for (i = 0, n = 0; i < r->ngates; i++) {
			if (!r->gates[i].failed)
				continue;
			fprintf(f, "%s{\"id\":\"%s\",\"what\":", n++ ? "," : "", r->gates[i].id);
			cprof_json_str(f, r->gates[i].what);
			fprintf(f, ",\"old\":");
			num(f, r->gates[i].baseline);
			fprintf(f, ",\"new\":");
			num(f, r->gates[i].value);
			fprintf(f, ",\"unit\":\"%s\"}", r->gates[i].unit);
		}
		fprintf(f, "]");
	}
	fprintf(f, "}\n");
}

const struct cprof_diff_fmt cprof_diff_json = { "json", write_json };
