/* cprof report as JSON (schema cprof.summary/1): tables and verdict fields. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "report/model/report.h"
#include "report/render/report-fmt.h"

/* ---- JSON ---- */

void report_json_table(const struct table *t, size_t top, int kernels)
{
	size_t i, n = report_shown(t, top);

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

void report_json_verdict_fields(const struct cprof_verdict *v)
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
	/* the GPU's starved time by what the host was doing: the cause is the largest */
	printf(",\"starved_by\":{");
	for (int k = 0; k < CPROF_IDLE__N; k++)
		printf("%s\"%s_ns\":%llu", k ? "," : "", cprof_idle_cause_key[k], (unsigned long long)v->idle_by[k]);
	printf("}");
	printf(",\"median_launch_ns\":%.0f,\"median_kernel_ns\":%.0f", v->med_launch_ns, v->med_kernel_ns);
	printf(",\"queue\":{\"starved_ns\":%llu,\"stalled_ns\":%llu,\"backlog_ns\":%llu,\"host_blocked_ns\":%llu},"
	       "\"copy_ns\":%llu,\"copy_call_ns\":%llu,\"launch_call_ns\":%llu,\"launches_timed_by_cupti\":%llu",
	       (unsigned long long)v->starved_ns, (unsigned long long)v->stalled_ns, (unsigned long long)v->backlog_ns,
	       (unsigned long long)v->blocked_ns, (unsigned long long)v->copy_ns, (unsigned long long)v->copy_call_ns,
	       (unsigned long long)v->launch_call_ns, (unsigned long long)v->launch_calls_cupti);
	/* what cprof itself cost the program in the window, measured (issue 26); profiler_overhead_ns above is
	 * CUPTI's part alone, kept for readers of that key */
	printf(",\"cprof_cost\":{\"measured\":%s,\"total_ns\":%llu,\"hook_ns\":%llu,\"calls\":%llu,"
	       "\"sampled_calls\":%llu,\"stack_ns\":%llu,\"stacks\":%llu,\"counted_ns\":%llu,\"counted_calls\":%llu,"
	       "\"cupti_overhead_ns\":%llu,"
	       "\"flusher_cpu_ns\":%llu,\"collector_cpu_ns\":%llu,\"app_run_ns\":%llu,\"app_wait_ns\":%llu,"
	       "\"wait_expected_ns\":%llu,\"wait_excess_ns\":%lld,\"wait_attributed_ns\":%llu,"
	       "\"cupti_calls_ns\":%llu,\"cupti_calls\":%llu,\"cupti_in_call_ns\":%llu,\"cupti_in_call_from\":\"%s\","
	       "\"cupti_in_call_estimate_ns\":%llu,\"cupti_in_call_passed\":%llu,\"cupti_in_call_measured_ns\":%lld,"
	       "\"cupti_in_call_measured_se_ns\":%llu,\"lost\":{\"ring_full\":%llu,\"cupti\":%llu,\"pipe\":%llu,\"nested\":%llu},"
	       "\"paced_ns\":%llu,\"pace_measured\":%s,\"pace_launches\":%llu,\"pace_launches_in\":%llu,"
	       "\"pace_launches_out\":%llu,\"pace_windows\":%llu,\"pace_in_ns\":%llu,\"pace_out_ns\":%llu,\"pace_diff_ns\":%lld,"
	       "\"pace_se_ns\":%llu}",
	       v->cost.measured ? "true" : "false", (unsigned long long)v->cost.total_ns,
	       (unsigned long long)v->cost.hook_ns, (unsigned long long)v->cost.calls,
	       (unsigned long long)v->cost.sampled_calls, (unsigned long long)v->cost.stack_ns,
	       (unsigned long long)v->cost.stacks, (unsigned long long)v->cost.counted_ns,
	       (unsigned long long)v->cost.counted_calls, (unsigned long long)v->cost.cupti_overhead_ns,
	       (unsigned long long)v->cost.flusher_cpu_ns, (unsigned long long)v->cost.collector_cpu_ns,
	       (unsigned long long)v->cost.app_run_ns, (unsigned long long)v->cost.app_wait_ns,
	       (unsigned long long)v->cost.wait_expected_ns, (long long)v->cost.wait_excess_ns,
	       (unsigned long long)v->cost.wait_attributed_ns,
	       (unsigned long long)v->cost.cupti_calls_ns, (unsigned long long)v->cost.cupti_calls,
	       (unsigned long long)v->cost.in_call.ns, v->cost.in_call.measured ? "measured" : "estimated",
	       (unsigned long long)v->cost.in_call.estimate_ns, (unsigned long long)v->cost.in_call.passed,
	       (long long)v->cost.in_call.diff_ns, (unsigned long long)v->cost.in_call.se_ns,
	       (unsigned long long)v->cost.lost_ring_full, (unsigned long long)v->cost.lost_cupti,
	       (unsigned long long)v->cost.lost_pipe, (unsigned long long)v->cost.lost_nested,
	       (unsigned long long)v->cost.paced_ns, v->cost.pace.measured ? "true" : "false",
	       (unsigned long long)v->cost.pace_launches, (unsigned long long)v->cost.pace.launches_in,
	       (unsigned long long)v->cost.pace.launches_out, (unsigned long long)v->cost.pace.windows,
	       (unsigned long long)v->cost.pace.in_ns,
	       (unsigned long long)v->cost.pace.out_ns, (long long)v->cost.pace.diff_ns,
	       (unsigned long long)v->cost.pace.se_ns);
}


void report_json_ranks(const struct cprof_rank_row *ranks, size_t nranks, const struct proc *procs, size_t nprocs)
{
	size_t i;

	printf(",\"ranks\":[");
	for (i = 0; i < nranks; i++) {
		const struct cprof_rank_row *r = &ranks[i];

		printf("%s{\"rank\":%lld,\"processes\":%lld,\"hosts\":", i ? "," : "", (long long)r->rank,
		       (long long)r->procs);
		cprof_json_str(stdout, r->hosts);
		printf(",\"run_ns\":%lld,\"kernels\":%lld,\"kernel_ns\":%lld,\"verdict\":\"%s\"}", (long long)r->run_ns,
		       (long long)r->kernels, (long long)r->kernel_ns, report_rank_verdict(procs, nprocs, r->rank));
	}
	printf("]");
}

/* ,"windows":[...] when the profile was recorded in windows, ,"max_size":{...} when a limit was set. */
void report_json_windows(const struct cprof_recording *r)
{
	size_t i;

	if (r->n) {
		printf(",\"windows\":[");
		for (i = 0; i < r->n; i++) {
			const struct cprof_window *w = &r->w[i];

			printf("%s{\"number\":%d,\"pid\":%lld,\"start_ns\":%llu,\"end_ns\":%llu,\"duration_ns\":%llu,\"why\":",
			       i ? "," : "", w->number, (long long)w->pid, (unsigned long long)w->start,
			       (unsigned long long)w->end, (unsigned long long)(w->end - w->start));
			cprof_json_str(stdout, w->why);
			printf(",\"end_why\":");
			cprof_json_str(stdout, w->end_why);
			/* what cprof cost the program inside it, as cprof_cost's total_ns for the verdict's window */
			printf(",\"cprof_cost_ns\":%llu,\"cprof_cost_measured\":%s}", (unsigned long long)w->cost_ns,
			       w->cost_measured ? "true" : "false");
		}
		printf("]");
	}
	if (r->max_size)
		printf(",\"max_size\":{\"bytes\":%lld,\"reached\":%s,\"cut_ns\":%llu,\"unrecorded\":%lld}",
		       (long long)r->max_size, r->max_size_cut_ns ? "true" : "false",
		       (unsigned long long)r->max_size_cut_ns, (long long)r->unrecorded);
}

void cprof_ranges_json(const struct cprof_range_table *t, size_t top)
{
	size_t i, n = REPORT_SHOWN(t, top);

	putchar('[');
	for (i = 0; i < n; i++) {
		const struct cprof_range_row *r = &t->rows[i];

		printf("%s{\"path\":", i ? "," : "");
		cprof_json_str(stdout, r->path);
		printf(",\"type\":\"%s\",\"count\":%llu,\"cpu_ns\":%.0f,\"self_cpu_ns\":%.0f,\"avg_ns\":%.0f,\"min_ns\":%.0f,"
		       "\"max_ns\":%.0f,\"calls\":%llu,\"api_ns\":%.0f,\"gpu_ns\":%.0f,\"gpu_ops\":%llu}",
		       r->startend ? "startend" : "range", (unsigned long long)r->count, r->cpu_ns, r->self_cpu_ns,
		       r->count ? r->cpu_ns / (double)r->count : 0.0, r->min_ns, r->max_ns, (unsigned long long)r->calls,
		       r->api_ns, r->gpu_ns, (unsigned long long)r->gpu_ops);
	}
	putchar(']');
}

void cprof_attr_json(const struct cprof_attr_table *t, enum cprof_attr_by by, size_t top)
{
	size_t i, n = REPORT_SHOWN(t, top);

	putchar('[');
	for (i = 0; i < n; i++) {
		const struct cprof_attr_row *r = &t->rows[i];

		printf("%s{\"%s\":", i ? "," : "", by == CPROF_BY_CHAIN ? "kernel" : by == CPROF_BY_OP ? "name" : "callsite");
		cprof_json_str(stdout, r->label);
		if (by == CPROF_BY_CHAIN) {
			printf(",\"chain\":");
			cprof_json_str(stdout, r->detail ? r->detail : "");
		}
		printf(",\"calls\":%llu,\"gpu_ops\":%llu,\"self_cpu_ns\":%.0f,\"self_cuda_ns\":%.0f",
		       (unsigned long long)r->calls, (unsigned long long)r->gpu_ops, r->cpu_ns, r->gpu_ns);
		if (by == CPROF_BY_OP)
			printf(",\"cpu_total_ns\":%.0f,\"cuda_total_ns\":%.0f", r->cpu_total_ns, r->gpu_total_ns);
		putchar('}');
	}
	putchar(']');
}

void cprof_ops_json(const struct cprof_op_table *t, size_t top)
{
	putchar('[');
	for (size_t i = 0; i < REPORT_SHOWN(t, top); i++) {
		const struct cprof_op_row *r = &t->rows[i];

		printf("%s{\"name\":", i ? "," : "");
		cprof_json_str(stdout, r->name);
		printf(",\"calls\":%llu,\"self_cpu_ns\":%.0f,\"cpu_total_ns\":%.0f,\"self_cuda_ns\":%.0f,"
		       "\"cuda_total_ns\":%.0f,\"gpu_ops\":%llu}",
		       (unsigned long long)r->calls, r->self_cpu_ns, r->cpu_total_ns, r->self_cuda_ns, r->cuda_total_ns,
		       (unsigned long long)r->gpu_ops);
	}
	putchar(']');
}

/* The keys "step_pattern" and "steps", with a leading comma. */
void report_steps_json(const struct cprof_steps_view *sv)
{
	const struct cprof_step *s = sv->s;
	int i;

	printf(",\"step_pattern\":");
	cprof_json_str(stdout, sv->re);
	printf(",\"steps\":[");
	for (i = 0; i < sv->n; i++) {
		printf("%s{\"name\":", i ? "," : "");
		cprof_json_str(stdout, s[i].name);
		printf(",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"tid\":%lld,\"cold\":%s",
		       (unsigned long long)s[i].start, (unsigned long long)s[i].end,
		       (unsigned long long)(s[i].end - s[i].start), (long long)s[i].tid, i == 0 && sv->cold ? "true" : "false");
		/* the verdict of each step, up to top (all with top 0) */
		if (sv->shown[i] && sv->has_v[i])
			printf(",\"verdict\":\"%s\",\"gpu_busy_pct\":%.2f", sv->v[i].verdict, sv->v[i].busy_pct);
		putchar('}');
	}
	printf("]");
}

/* ---- the whole document ---- */

static void json_head(const struct report_doc *d)
{
	const struct cprof_meta_facts *mf = &d->model.x->meta;
	double hta = d->hta_idle_pct;
	char command[1024];

	printf("{\"schema\":\"cprof.summary/1\",\"profile\":");
	cprof_json_str(stdout, d->o->profile);
	printf(",\"command\":");
	cprof_meta_command(mf, command, sizeof(command));
	cprof_json_str(stdout, command);
	printf(",\"simulated_gpu\":%s,", mf->simulated ? "true" : "false");
	report_json_verdict_fields(&d->v);
	if (mf->gpu_note[0]) {
		printf(",\"gpu_records_note\":");
		cprof_json_str(stdout, mf->gpu_note);
	}
	/* the program's own CUPTI client got copies: how many, and how many it did not get */
	if (mf->cupti_shared.processes > 0)
		printf(",\"cupti_shared\":{\"processes\":%lld,\"records_handed\":%lld,\"kernels_handed\":%lld,"
		       "\"records_not_handed\":%lld,\"records_pending\":%lld}",
		       (long long)mf->cupti_shared.processes, (long long)mf->cupti_shared.handed,
		       (long long)mf->cupti_shared.kernels, (long long)mf->cupti_shared.missed,
		       (long long)mf->cupti_shared.pending);
	if (hta >= 0)
		printf(",\"hta_idle_pct\":%.4f", hta);
	printf(",\"counts\":{\"api_calls\":%lld,\"kernels\":%lld,\"memcpys\":%lld,\"memsets\":%lld,"
	       "\"processes\":%zu,\"launch_calls\":%lld,\"memcpy_calls\":%lld,\"memset_calls\":%lld,"
	       "\"hooked_calls\":%lld,\"cupti_only_calls\":%lld}",
	       (long long)d->cc.total, (long long)mf->kernels, (long long)mf->memcpys, (long long)mf->memsets, d->nprocs,
	       (long long)mf->launch_api, (long long)mf->memcpy_api, (long long)mf->memset_api, (long long)mf->api,
	       (long long)(d->cc.total - mf->api));
	/* the same total, named for what each part counts (cprof info and the HTML print these) */
	printf(",\"calls\":{\"total\":%lld,\"by_program\":%lld,\"inside_libraries\":%lld,\"seen_only_by_cupti\":%lld}",
	       (long long)d->cc.total, (long long)d->cc.program, (long long)d->cc.in_libs, (long long)d->cc.cupti_only);
	printf(",\"lost_events\":%lld,\"lost_events_lower_bound\":%s,\"complete\":%s,\"incomplete_reason\":",
	       (long long)mf->lost_events, d->lower_bound ? "true" : "false", mf->complete ? "true" : "false");
	cprof_json_str(stdout, mf->complete ? "" : mf->reason);
	printf(",\"tables_window\":{\"name\":\"%s\",\"ns\":%llu}", d->verdict_window ? "verdict" : "run",
	       (unsigned long long)(d->verdict_window ? d->v.end - d->v.start : d->v.run_end - d->v.run_start));
	report_json_windows(&d->model.rec);
}

/* the device queries counted and not timed, over the whole run: [{"name", "calls"}] */
static void json_counted(const struct report_doc *d)
{
	struct cprof_counted *c;
	int n = cprof_model_counted_calls(&d->model, 0, &c);

	printf(",\"counted_calls\":[");
	for (int i = 0; i < n; i++) {
		printf("%s{\"name\":", i ? "," : "");
		cprof_json_str(stdout, cprof_model_string(&d->model, c[i].name));
		printf(",\"calls\":%llu}", (unsigned long long)c[i].calls);
	}
	printf("]");
	free(c);
}

static void json_tables(const struct report_doc *d)
{
	const struct cprof_model_extra *x = d->model.x;
	size_t top = d->o->top;

	printf(",\"kernels\":");
	report_json_table(&d->kernels, top, 1);
	printf(",\"memops\":");
	report_json_table(&d->memops, top, 0);
	printf(",\"apis\":");
	report_json_table(&d->apis, top, 0);
	json_counted(d);
	printf(",\"queries_sampled_note\":");
	if (d->model.queries_sampled)
		cprof_json_str(stdout, CPROF_QUERIES_SAMPLED_NOTE);
	else
		printf("null");
	printf(",\"stacks\":%zu,\"ops\":", x->stacks.n);
	cprof_attr_json(&x->ops, CPROF_BY_OP, top);
	printf(",\"torch_ops_evidence\":");
	cprof_json_str(stdout, d->op_evidence);
	printf(",\"torch_ops\":");
	cprof_ops_json(&x->torch_ops, top);
	printf(",\"callsites\":");
	cprof_attr_json(&x->sites, CPROF_BY_CALLSITE, top);
	printf(",\"chains\":");
	cprof_attr_json(&x->chains, CPROF_BY_CHAIN, top);
	printf(",\"nvtx\":{\"ranges\":%llu,\"open_ranges\":%llu,\"marks\":%llu},\"ranges\":",
	       (unsigned long long)x->ranges.ranges, (unsigned long long)x->ranges.open_ranges,
	       (unsigned long long)x->ranges.marks);
	cprof_ranges_json(&x->ranges, top);
}

static void json_lists(const struct report_doc *d)
{
	size_t i;

	printf(",\"phases\":[");
	for (i = 0; i < (size_t)d->nph; i++) {
		printf("%s{\"start_ns\":%llu,\"end_ns\":%llu,", i ? "," : "", (unsigned long long)d->ph[i].start,
		       (unsigned long long)d->ph[i].end);
		report_json_verdict_fields(&d->ph[i].v);
		printf(",\"kernels\":%llu}", (unsigned long long)d->ph[i].v.kernels);
	}
	printf("],\"findings\":[");
	for (i = 0; i < (size_t)d->nf; i++) {
		printf("%s{\"id\":\"%s\",\"severity\":\"%s\",\"message\":", i ? "," : "", d->fd[i].id, d->fd[i].severity);
		cprof_json_str(stdout, d->fd[i].message);
		printf(",\"evidence\":");
		cprof_json_str(stdout, d->fd[i].evidence);
		printf("}");
	}
	printf("],\"devices\":[");
	for (i = 0; i < (size_t)d->ndv; i++) {
		printf("%s{\"device\":%d,", i ? "," : "", (int)d->dv[i].device);
		report_json_verdict_fields(&d->dv[i].v);
		printf(",\"kernels\":%llu}", (unsigned long long)d->dv[i].v.kernels);
	}
	printf("],\"processes\":[");
	for (i = 0; i < d->nprocs; i++) {
		const struct proc *p = &d->procs[i];

		printf("%s{\"pid\":%lld,\"ppid\":%lld,\"exe\":", i ? "," : "", (long long)p->pid, (long long)p->ppid);
		cprof_json_str(stdout, p->exe);
		printf(",\"argv\":");
		cprof_json_str(stdout, p->argv);
		printf(",\"host\":");
		cprof_json_str(stdout, p->host);
		if (p->rank >= 0)
			printf(",\"rank\":%lld", (long long)p->rank);
		printf(",\"ending\":");
		cprof_json_str(stdout, p->bye);
		printf(",\"events\":%lld,\"lost_events\":%lld,", (long long)p->recorded, (long long)p->lost);
		report_json_verdict_fields(&p->v);
		printf(",\"apis\":");
		report_json_table(&p->apis, d->o->top, 0);
		printf("}");
	}
	printf("]}\n");
}

static void render_json(const struct report_doc *d)
{
	json_head(d);
	json_tables(d);
	report_json_ranks(d->ranks, d->nranks, d->procs, d->nprocs);
	report_steps_json(&d->sv);
	json_lists(d);
}

const struct report_fmt_ops report_fmt_json = { .name = "json", .json = 1, .render = render_json };
