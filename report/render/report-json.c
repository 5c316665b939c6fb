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
	       "\"sampled_calls\":%llu,\"stack_ns\":%llu,\"stacks\":%llu,\"cupti_overhead_ns\":%llu,"
	       "\"flusher_cpu_ns\":%llu,\"collector_cpu_ns\":%llu,\"app_wait_ns\":%llu,\"wait_attributed_ns\":%llu,"
	       "\"lost\":{\"ring_full\":%llu,\"cupti\":%llu,\"pipe\":%llu,\"nested\":%llu}}",
	       v->cost.measured ? "true" : "false", (unsigned long long)v->cost.total_ns,
	       (unsigned long long)v->cost.hook_ns, (unsigned long long)v->cost.calls,
	       (unsigned long long)v->cost.sampled_calls, (unsigned long long)v->cost.stack_ns,
	       (unsigned long long)v->cost.stacks, (unsigned long long)v->cost.cupti_overhead_ns,
	       (unsigned long long)v->cost.flusher_cpu_ns, (unsigned long long)v->cost.collector_cpu_ns,
	       (unsigned long long)v->cost.app_wait_ns, (unsigned long long)v->cost.wait_attributed_ns,
	       (unsigned long long)v->cost.lost_ring_full, (unsigned long long)v->cost.lost_cupti,
	       (unsigned long long)v->cost.lost_pipe, (unsigned long long)v->cost.lost_nested);
}


void report_json_ranks(sqlite3 *db, const struct proc *procs, size_t nprocs)
{
	sqlite3_stmt *st;
	int n = 0;

	printf(",\"ranks\":[");
	if (sqlite3_prepare_v2(db, report_rank_sql, -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			printf("%s{\"rank\":%lld,\"processes\":%lld,\"hosts\":", n++ ? "," : "",
			       (long long)sqlite3_column_int64(st, 0), (long long)sqlite3_column_int64(st, 1));
			cprof_json_str(stdout, (const char *)sqlite3_column_text(st, 2));
			printf(",\"run_ns\":%lld,\"kernels\":%lld,\"kernel_ns\":%lld,\"verdict\":\"%s\"}",
			       (long long)sqlite3_column_int64(st, 3), (long long)sqlite3_column_int64(st, 4),
			       (long long)sqlite3_column_int64(st, 5), report_rank_verdict(procs, nprocs, sqlite3_column_int64(st, 0)));
		}
		sqlite3_finalize(st);
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
			printf("}");
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
