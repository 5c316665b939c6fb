/* The trace's header and Kineto's metadata events: process and thread names, sort indices, lanes. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "report/render/trace.h"

/* ---- header and metadata ---- */

void trace_write_header(struct trace *t)
{
	char buf[32];
	const struct cprof_model *m = &t->src.m;
	int64_t rank = t->rank >= 0 ? t->rank : t->src.first_rank;
	int64_t world = t->rank >= 0 ? t->world : t->src.first_world;

	trace_put(t, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n  ],\n");
	/* HTA finds a file's rank with the regex '"rank":\s+(\d+)' on the first line that matches: keep the
	 * space, and keep this line ahead of anything else that could say "rank" */
	trace_put(t, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
	trace_put_i(t, rank < 0 ? 0 : rank);
	trace_put(t, ", \"world_size\": ");
	trace_put_i(t, world < 1 ? 1 : world);
	trace_put(t, "},\n  \"cprof\": {\"lost_events\": ");
	trace_put_i(t, t->src.lost_events);
	trace_put(t, ", \"lost_events_lower_bound\": ");
	trace_put(t, t->src.lost_lower_bound ? "true" : "false");
	trace_put(t, ", \"complete\": ");
	trace_put(t, t->src.complete ? "true" : "false");
	trace_put(t, ", \"simulated_gpu\": ");
	trace_put(t, t->simulated ? "true" : "false");
	trace_put(t, ", \"command\": ");
	trace_put_str(t, t->src.command);
	if (m->rec.n) {
		/* recorded in windows: only these spans hold events (issue 31) */
		trace_put(t, ", \"windows\": [");
		for (size_t i = 0; i < m->rec.n; i++) {
			const struct cprof_window *w = &m->rec.w[i];

			trace_put(t, i ? ", {\"number\": " : "{\"number\": ");
			trace_put_i(t, w->number);
			trace_put(t, ", \"pid\": ");
			trace_put_i(t, w->pid);
			trace_put(t, ", \"start_ns\": ");
			trace_put_i(t, (int64_t)w->start);
			trace_put(t, ", \"end_ns\": ");
			trace_put_i(t, (int64_t)w->end);
			trace_put(t, ", \"why\": ");
			trace_put_str(t, w->why);
			trace_put(t, ", \"end_why\": ");
			trace_put_str(t, w->end_why);
			trace_put(t, "}");
		}
		trace_put(t, "]");
	}
	if (m->rec.max_size_cut_ns) {
		trace_put(t, ", \"max_size_unrecorded\": ");
		trace_put_i(t, m->rec.unrecorded);
	}
	trace_put(t, "},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
	snprintf(buf, sizeof(buf), "%lld", (long long)t->base_ns);
	trace_put(t, buf);
	trace_put(t, ",\n  \"traceEvents\": [");
}

static int thread_seen(struct trace *t, int64_t pid, int64_t tid)
{
	size_t i;

	for (i = 0; i < t->nseen; i++)
		if (t->seen_threads[i].pid == pid && t->seen_threads[i].tid == tid)
			return 1;
	if (t->nseen == t->capseen) {
		size_t cap = t->capseen ? t->capseen * 2 : 16;
		struct lane *n = realloc(t->seen_threads, cap * sizeof(*n));

		if (n == NULL)
			return 1; /* a missing thread name costs less than failing the export */
		t->seen_threads = n;
		t->capseen = cap;
	}
	t->seen_threads[t->nseen].pid = pid;
	t->seen_threads[t->nseen].tid = tid;
	t->nseen++;
	return 0;
}

const char *trace_lane_name(const struct trace *t, int kind, int64_t pid, int64_t tid)
{
	size_t i;

	for (i = 0; i < t->src.nnames; i++)
		if (t->src.names[i].stream == kind && t->src.names[i].a == pid && t->src.names[i].b == tid)
			return t->src.names[i].name;
	return NULL;
}

static void thread_meta(struct trace *t, int64_t pid, int64_t tid)
{
	const char *given = trace_lane_name(t, NAME_THREAD, pid, tid);
	char name[64];

	if (thread_seen(t, pid, tid))
		return;
	snprintf(name, sizeof(name), "thread %lld", (long long)tid);
	/* a name given with nvtxNameOsThread replaces the number */
	trace_put_meta(t, "thread_name", pid, tid, "name", given ? given : name, 0);
	trace_put_meta(t, "thread_sort_index", pid, tid, "sort_index", NULL, tid);
}

/* Each recording window as a span on its process's lane 0 ("cprof recording"), so a viewer shows what
 * was recorded; the whole run's window (cut by --max-size) on the first process. */
static void write_windows(struct trace *t)
{
	const struct cprof_model *m = &t->src.m;
	char name[240];

	for (size_t i = 0; i < m->rec.n; i++) {
		const struct cprof_window *w = &m->rec.w[i];
		int64_t pid = w->pid ? w->pid : (t->nprocs ? t->procs[0].pid : 0);
		size_t k;

		for (k = 0; k < i && (m->rec.w[k].pid ? m->rec.w[k].pid : pid) != pid; k++)
			;
		if (k == i) /* the lane's name, once a process */
			trace_put_meta(t, "thread_name", pid, 0, "name", "cprof recording", 0);
		snprintf(name, sizeof(name), "recorded window %d: %.200s", w->number, w->why);
		trace_span_begin(t, "cprof_window", name, pid, 0, (int64_t)w->start, (int64_t)w->end);
		trace_put(t, ", \"args\": {");
		trace_put(t, "\"number\": ");
		trace_put_i(t, w->number);
		trace_arg_s(t, "end_why", w->end_why);
		trace_put(t, "}}");
	}
}

static int cmp_pid(const void *x, const void *y)
{
	const struct cprof_proc *a = *(const struct cprof_proc *const *)x, *b = *(const struct cprof_proc *const *)y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int trace_write_metadata(struct trace *t)
{
	const struct cprof_trace_src *s = &t->src;
	const struct cprof_proc **by_pid;
	int64_t last = -1;
	char name[96];
	size_t i;

	/* CPU: one process per pid (an exec'd process keeps its pid: its first row), sorted by pid as Kineto does */
	by_pid = malloc((s->m.nprocs ? s->m.nprocs : 1) * sizeof(*by_pid));
	if (by_pid == NULL) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < s->m.nprocs; i++)
		by_pid[i] = &s->m.procs[i];
	qsort(by_pid, s->m.nprocs, sizeof(*by_pid), cmp_pid);
	for (i = 0; i < s->m.nprocs; i++) {
		const char *exe = by_pid[i]->exe, *base = strrchr(exe, '/');

		if (i && by_pid[i]->pid == by_pid[i - 1]->pid)
			continue;
		trace_put_meta(t, "process_name", by_pid[i]->pid, 0, "name", base ? base + 1 : exe, 0);
		trace_put_meta(t, "process_labels", by_pid[i]->pid, 0, "labels", "CPU", 0);
		trace_put_meta(t, "process_sort_index", by_pid[i]->pid, 0, "sort_index", NULL, by_pid[i]->pid);
	}
	free(by_pid);
	/* CPU threads: those the hooks saw and those that only annotated (no CUDA call), then CUPTI threads
	 * no hook ran on */
	for (i = 0; i < s->ncpu_threads; i++)
		thread_meta(t, s->cpu_threads[i].a, s->cpu_threads[i].b);
	for (i = 0; i < s->ncupti_threads; i++)
		thread_meta(t, trace_proc_pid(t, s->cupti_threads[i].a),
			    trace_cupti_tid(t, s->cupti_threads[i].a, s->cupti_threads[i].b));
	/* GPU: pid = device, tid = stream, as Kineto; Kineto names the device's process after the host process
	 * and labels it "GPU n", but one cprof trace can hold several host processes, so the name says the
	 * device too */
	for (i = 0; i < s->ngpu_lanes; i++) {
		int64_t dev = s->gpu_lanes[i].a, stream = s->gpu_lanes[i].b;
		const char *given = trace_lane_name(t, NAME_STREAM, dev, stream);

		if (dev != last) {
			snprintf(name, sizeof(name), "GPU %lld%s", (long long)dev, t->simulated ? " (simulated)" : "");
			trace_put_meta(t, "process_name", dev, 0, "name", name, 0);
			trace_put_meta(t, "process_labels", dev, 0, "labels", name, 0);
			trace_put_meta(t, "process_sort_index", dev, 0, "sort_index", NULL, dev + KINETO_EXCEED_MAX_PID);
			last = dev;
		}
		/* Kineto formats "stream {} {}" with an empty postfix: the trailing space is its; the postfix is where
		 * a name given with nvtxNameCudaStream goes */
		snprintf(name, sizeof(name), "stream %lld %.60s", (long long)stream, given ? given : "");
		trace_put_meta(t, "thread_name", dev, stream, "name", name, 0);
		trace_put_meta(t, "thread_sort_index", dev, stream, "sort_index", NULL, stream);
	}
	if (s->novh > 0) {
		trace_put_meta(t, "process_name", -1, 0, "name", "CUPTI Overhead", 0);
		trace_put_meta(t, "process_sort_index", -1, 0, "sort_index", NULL, KINETO_OVERHEAD_SORT);
	}
	write_windows(t);
	return 0;
}
