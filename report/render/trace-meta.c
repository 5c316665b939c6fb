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
	char command[4096], buf[32];
	int64_t rank = t->rank >= 0 ? t->rank
				    : cprof_query_int(t->db, "SELECT rank FROM PROCESSES WHERE rank IS NOT NULL ORDER BY id LIMIT 1", 0);
	int64_t world = t->rank >= 0 ? t->world
				     : cprof_query_int(t->db, "SELECT worldSize FROM PROCESSES WHERE worldSize IS NOT NULL"
						    " ORDER BY id LIMIT 1", 1);

	trace_put(t, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n  ],\n");
	/* HTA finds a file's rank with the regex '"rank":\s+(\d+)' on the first line that matches: keep the
	 * space, and keep this line ahead of anything else that could say "rank" */
	trace_put(t, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
	trace_put_i(t, rank < 0 ? 0 : rank);
	trace_put(t, ", \"world_size\": ");
	trace_put_i(t, world < 1 ? 1 : world);
	trace_put(t, "},\n  \"cprof\": {\"lost_events\": ");
	trace_put_i(t, cprof_meta_int(t->db, "lost_events", 0));
	trace_put(t, ", \"complete\": ");
	trace_put(t, cprof_meta_int(t->db, "complete", 0) == 1 ? "true" : "false");
	trace_put(t, ", \"simulated_gpu\": ");
	trace_put(t, t->simulated ? "true" : "false");
	trace_put(t, ", \"command\": ");
	trace_put_str(t, cprof_meta(t->db, "command", command, sizeof(command), ""));
	if (t->model.rec.n) {
		/* recorded in windows: only these spans hold events (issue 31) */
		trace_put(t, ", \"windows\": [");
		for (size_t i = 0; i < t->model.rec.n; i++) {
			const struct cprof_window *w = &t->model.rec.w[i];

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
	if (t->model.rec.max_size_cut_ns) {
		trace_put(t, ", \"max_size_unrecorded\": ");
		trace_put_i(t, t->model.rec.unrecorded);
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

	for (i = 0; i < t->nnames; i++)
		if (t->names[i].kind == kind && t->names[i].pid == pid && t->names[i].tid == tid)
			return t->names[i].name;
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
	char name[240];

	for (size_t i = 0; i < t->model.rec.n; i++) {
		const struct cprof_window *w = &t->model.rec.w[i];
		int64_t pid = w->pid ? w->pid : (t->nprocs ? t->procs[0].pid : 0);
		size_t k;

		for (k = 0; k < i && (t->model.rec.w[k].pid ? t->model.rec.w[k].pid : pid) != pid; k++)
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

int trace_write_metadata(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int64_t last = -1;
	char name[96];
	int rc, ret;

	/* CPU: one process per pid (an exec'd process keeps its pid), sorted by pid as Kineto does */
	ret = trace_prep(t,
		   /* one pass: a correlated min(id) per row was quadratic (20,000 processes: 13.7 s) */
		   "SELECT pid, exe FROM PROCESSES WHERE id IN (SELECT min(id) FROM PROCESSES GROUP BY pid) ORDER BY pid",
		   &st);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 0);
		const char *exe = trace_col_str(st, 1), *base = strrchr(exe, '/');

		trace_put_meta(t, "process_name", pid, 0, "name", base ? base + 1 : exe, 0);
		trace_put_meta(t, "process_labels", pid, 0, "labels", "CPU", 0);
		trace_put_meta(t, "process_sort_index", pid, 0, "sort_index", NULL, pid);
	}
	if ((ret = trace_step_done(t, rc)) < 0)
		goto out;
	sqlite3_finalize(st);

	/* CPU threads: those the hooks saw and those that only annotated (no CUDA call), then CUPTI threads
	 * no hook ran on */
	ret = trace_prep(t,
		   "SELECT p.pid, t.tid FROM THREADS t JOIN PROCESSES p ON p.id = t.processId UNION"
		   " SELECT p.pid, e.tid FROM NVTX_EVENTS e JOIN PROCESSES p ON p.id = e.processId ORDER BY 1, 2",
		   &st);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		thread_meta(t, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
	if ((ret = trace_step_done(t, rc)) < 0)
		goto out;
	sqlite3_finalize(st);
	ret = trace_prep(t,
		   "SELECT processId, threadId FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION"
		   " SELECT processId, threadId FROM CUPTI_ACTIVITY_KIND_DRIVER ORDER BY 1, 2",
		   &st);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 0);

		thread_meta(t, trace_proc_pid(t, pid), trace_cupti_tid(t, pid, sqlite3_column_int64(st, 1)));
	}
	if ((ret = trace_step_done(t, rc)) < 0)
		goto out;
	sqlite3_finalize(st);

	/* GPU: pid = device, tid = stream, as Kineto; Kineto names the device's process after the host process
	 * and labels it "GPU n", but one cprof trace can hold several host processes, so the name says the
	 * device too */
	ret = trace_prep(t,
		   "SELECT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION"
		   " SELECT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION"
		   " SELECT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY 1, 2",
		   &st);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t dev = sqlite3_column_int64(st, 0), stream = sqlite3_column_int64(st, 1);

		if (dev != last) {
			snprintf(name, sizeof(name), "GPU %lld%s", (long long)dev, t->simulated ? " (simulated)" : "");
			trace_put_meta(t, "process_name", dev, 0, "name", name, 0);
			trace_put_meta(t, "process_labels", dev, 0, "labels", name, 0);
			trace_put_meta(t, "process_sort_index", dev, 0, "sort_index", NULL, dev + KINETO_EXCEED_MAX_PID);
			last = dev;
		}
		/* Kineto formats "stream {} {}" with an empty postfix: the trailing space is its; the postfix is where
		 * a name given with nvtxNameCudaStream goes */
		snprintf(name, sizeof(name), "stream %lld %.60s", (long long)stream,
			 trace_lane_name(t, NAME_STREAM, dev, stream) ? trace_lane_name(t, NAME_STREAM, dev, stream) : "");
		trace_put_meta(t, "thread_name", dev, stream, "name", name, 0);
		trace_put_meta(t, "thread_sort_index", dev, stream, "sort_index", NULL, stream);
	}
	if ((ret = trace_step_done(t, rc)) < 0)
		goto out;
	if (cprof_query_int(t->db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_OVERHEAD", 0) > 0) {
		trace_put_meta(t, "process_name", -1, 0, "name", "CUPTI Overhead", 0);
		trace_put_meta(t, "process_sort_index", -1, 0, "sort_index", NULL, KINETO_OVERHEAD_SORT);
	}
	write_windows(t);
out:
	sqlite3_finalize(st);
	return ret;
}
