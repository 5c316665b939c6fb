/* cprof check as JSON (schema cprof.check/1): each condition with its measured value, limit and result. */
#include <math.h>
#include <string.h>

#include "report/cprof.h"
#include "report/render/check.h"

static void num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("null", f);
}

static void write_json(FILE *f, const struct cprof_check_result *r)
{
	size_t i;

	fprintf(f, "{\"schema\":\"cprof.check/1\",\"profile\":");
	cprof_json_str(f, r->profile);
	fprintf(f, ",\"baseline\":");
	if (r->baseline)
		cprof_json_str(f, r->baseline);
	else
		fputs("null", f);
	fprintf(f, ",\"simulated_gpu\":%s,\"complete\":%s,\"incomplete_reason\":", r->simulated ? "true" : "false",
		r->now->complete ? "true" : "false");
	cprof_json_str(f, r->now->complete ? "" : r->now->reason);
	fprintf(f, ",\"verdict\":");
	cprof_json_str(f, r->now->v.verdict);
	fprintf(f, ",\"gpu_busy_pct\":%.4f,\"result\":\"%s\",\"exit_status\":%d,\"failed\":%d,\"gates\":[",
		r->now->v.busy_pct, r->incomplete ? "incomplete" : r->failed ? "fail" : "pass", r->exit_status, r->failed);
	for (i = 0; i < r->ngates; i++) {
		const struct cprof_gate *g = &r->gates[i];
		int verdict = !strcmp(g->unit, "verdict");

		fprintf(f, "%s{\"id\":\"%s\",\"what\":", i ? "," : "", g->id);
		cprof_json_str(f, g->what);
		if (g->name) {
			fprintf(f, ",\"name\":");
			cprof_json_str(f, g->name);
		}
		fprintf(f, ",\"unit\":\"%s\",\"value\":", g->unit);
		if (verdict)
			cprof_json_str(f, g->value_text);
		else
			num(f, g->value);
		fprintf(f, ",\"limit\":");
		if (verdict)
			cprof_json_str(f, g->limit_text);
		else
			num(f, g->limit);
		fprintf(f, ",\"baseline\":");
		if (g->baseline >= 0)
			num(f, g->baseline);
		else
			fputs("null", f);
		fprintf(f, ",\"passed\":%s,\"message\":", g->failed ? "false" : "true");
		cprof_json_str(f, g->detail);
		fputc('}', f);
	}
	fprintf(f, "],\"changes\":[");
	for (i = 0; i < r->nchanges && (r->top == 0 || i < r->top); i++) {
		const struct cprof_change *c = &r->changes[i];

		fprintf(f, "%s{\"kind\":\"%s\",\"name\":", i ? "," : "", c->api ? "api" : "kernel");
		cprof_json_str(f, c->name);
		fprintf(f, ",\"old_ns\":%.0f,\"new_ns\":%.0f,\"change_pct\":", c->old_ns, c->new_ns);
		num(f, cprof_change_pct(c->old_ns, c->new_ns));
		fprintf(f, ",\"old_count\":%lld,\"new_count\":%lld}", (long long)c->old_n, (long long)c->new_n);
	}
	fprintf(f, "]}\n");
}

const struct cprof_check_fmt cprof_check_json = { "json", write_json };
