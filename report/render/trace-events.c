/* The trace's events: hooked calls (with their Python spans), CUPTI API records, GPU ops, profiler overhead. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "report/render/trace.h"

/* ---- events ---- */

/* %s: the stack column, NULL for a profile from before stacks */
static const char hooked_sql[] =
	"SELECT a.processId, a.pid, a.tid, a.start, a.end, a.correlationId, s.value, a.class, a.returnValue,"
	" a.nested, a.kernelNameId, k.value, a.stream, a.bytes, a.a0, a.a1, a.a2, a.a3, a.a4, a.a5, a.a6,"
	" h.gcorr, h.anycorr, h.ngpu, x.cbid, xs.value, %s, xo.opId"
	" FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId LEFT JOIN StringIds k ON k.id = a.kernelNameId"
	" LEFT JOIN x_opof xo ON xo.processId = a.processId AND xo.extId = a.correlationId"
	" LEFT JOIN x_hsum h ON h.processId = a.processId AND h.extId = a.correlationId"
	" LEFT JOIN x_api x ON x.processId = a.processId AND x.correlationId = coalesce(h.gcorr, h.anycorr)"
	" LEFT JOIN StringIds xs ON xs.id = x.nameId ORDER BY a.id";

enum {
	H_PROC, H_PID, H_TID, H_START, H_END, H_EXT, H_NAME, H_CLASS, H_RET, H_NESTED, H_KNAMEID, H_KNAME, H_STREAM,
	H_BYTES, H_A0, H_A1, H_A2, H_A3, H_A4, H_A5, H_A6, H_GCORR, H_ANYCORR, H_NGPU, H_CBID, H_XNAME, H_STACK,
	H_OPID,
};

/* ---- python_function spans: consecutive calls of a thread that share their outer Python frames share
 * those frames' spans (what a sampling profiler shows; the frames' exact entry and exit are not known) ---- */
struct pyframe_open {
	const char *name;
	int64_t start, end, id;
};
struct pyspan {
	int64_t pid, tid;
	struct pyframe_open f[64]; /* outermost first */
	int n;
};

static void py_close(struct trace *t, struct pyspan *ps, int keep)
{
	while (ps->n > keep) {
		struct pyframe_open *o = &ps->f[--ps->n];

		trace_span_begin(t, "python_function", o->name, ps->pid, ps->tid, o->start, o->end);
		trace_put(t, ", \"args\": {\"Python id\": ");
		trace_put_i(t, o->id);
		trace_put(t, ", \"Python parent id\": ");
		trace_put_i(t, ps->n ? ps->f[ps->n - 1].id : 0);
		trace_put(t, "}}");
	}
}

static int py_track(struct trace *t, int64_t pid, int64_t tid, int64_t start, int64_t end, const struct cprof_stack *s)
{
	struct pyspan *ps = NULL;
	size_t i;
	int k, n, same = 0;

	for (i = 0; i < t->npy; i++)
		if (t->py[i].pid == pid && t->py[i].tid == tid)
			ps = &t->py[i];
	if (ps == NULL) {
		if (cprof_grow(&t->py, &t->cappy, t->npy, sizeof(t->py[0])) < 0)
			return -ENOMEM;
		ps = &t->py[t->npy++];
		memset(ps, 0, sizeof(*ps));
		ps->pid = pid;
		ps->tid = tid;
	}
	n = (int)(s->npy < 64 ? s->npy : 64);
	/* s->py is innermost first; the open frames are outermost first */
	while (same < ps->n && same < n && !strcmp(ps->f[same].name, s->py[s->npy - 1 - same]))
		same++;
	py_close(t, ps, same);
	for (k = 0; k < same; k++)
		ps->f[k].end = end;
	for (k = same; k < n; k++)
		ps->f[ps->n++] = (struct pyframe_open){ .name = s->py[s->npy - 1 - k], .start = start, .end = end,
							 .id = ++t->py_ids };
	return 0;
}

static void py_close_all(struct trace *t)
{
	size_t i;

	for (i = 0; i < t->npy; i++)
		py_close(t, &t->py[i], 0);
}

/* What the hook recorded beyond Kineto's keys; never a key named "stream", which HTA takes for a GPU op. */
static void hooked_extras(struct trace *t, sqlite3_stmt *st)
{
	const char *cls = trace_col_str(st, H_CLASS);

	if (!strcmp(cls, "launch")) {
		trace_arg_s(t, "kernel", trace_kernel_name(t, sqlite3_column_int64(st, H_KNAMEID), trace_col_str(st, H_KNAME)));
		trace_arg_dim3(t, "grid", sqlite3_column_int64(st, H_A0), sqlite3_column_int64(st, H_A1),
			 sqlite3_column_int64(st, H_A2));
		trace_arg_dim3(t, "block", sqlite3_column_int64(st, H_A3), sqlite3_column_int64(st, H_A4),
			 sqlite3_column_int64(st, H_A5));
		trace_arg_i(t, "dynamic shared memory", sqlite3_column_int64(st, H_A6));
	} else if (!strcmp(cls, "gemm")) {
		trace_arg_i(t, "m", sqlite3_column_int64(st, H_A0));
		trace_arg_i(t, "n", sqlite3_column_int64(st, H_A1));
		trace_arg_i(t, "k", sqlite3_column_int64(st, H_A2));
		trace_arg_i(t, "batch", sqlite3_column_int64(st, H_A3));
	} else if (!strcmp(cls, "memcpy")) {
		trace_arg_i(t, "bytes", sqlite3_column_int64(st, H_BYTES));
		trace_arg_i(t, "cudaMemcpyKind", sqlite3_column_int64(st, H_A0));
	} else if (!strcmp(cls, "memset")) {
		trace_arg_i(t, "bytes", sqlite3_column_int64(st, H_BYTES));
		trace_arg_i(t, "value", sqlite3_column_int64(st, H_A0));
	} else if (!strcmp(cls, "memory") && sqlite3_column_type(st, H_BYTES) != SQLITE_NULL) {
		trace_arg_i(t, "bytes", sqlite3_column_int64(st, H_BYTES));
	}
	if (sqlite3_column_type(st, H_STREAM) != SQLITE_NULL &&
	    (!strcmp(cls, "launch") || !strcmp(cls, "gemm") || !strcmp(cls, "memcpy") || !strcmp(cls, "memset") ||
	     !strcmp(cls, "sync")))
		trace_arg_i(t, "cuda stream", sqlite3_column_int64(st, H_STREAM));
	if (sqlite3_column_int64(st, H_RET) != 0)
		trace_arg_i(t, "return value", sqlite3_column_int64(st, H_RET));
	if (sqlite3_column_int64(st, H_NESTED))
		trace_arg_i(t, "nested", 1);
	if (sqlite3_column_type(st, H_STACK) != SQLITE_NULL) {
		const struct cprof_stack *s = cprof_stacks_find(&t->stacks, sqlite3_column_int64(st, H_PROC),
								sqlite3_column_int64(st, H_STACK));

		if (s && s->callsite)
			trace_arg_s(t, "call site", s->callsite);
		if (s && s->ops)
			trace_arg_s(t, "ops", s->ops);
	}
}

/* Every hooked call (cudart and cuBLAS) as Kineto's cuda_runtime span; its correlation is CUPTI's id of the
 * launch it made, so the span, its flow and the GPU op agree, and HTA joins them. */
int trace_write_hooked(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;
	char sql[sizeof(hooked_sql) + 32];

	snprintf(sql, sizeof(sql), hooked_sql, t->stacks.n ? "a.stackId" : "NULL");
	if ((ret = trace_prep(t, sql, &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(st, H_PROC), pid = sqlite3_column_int64(st, H_PID);
		int64_t tid = sqlite3_column_int64(st, H_TID), start = sqlite3_column_int64(st, H_START);
		int64_t ext = sqlite3_column_int64(st, H_EXT), ngpu = sqlite3_column_int64(st, H_NGPU);
		const char *name = trace_col_str(st, H_NAME);
		int same = sqlite3_column_type(st, H_XNAME) != SQLITE_NULL && trace_same_api(name, trace_col_str(st, H_XNAME));
		int64_t corr;

		if (!cprof_row_times_ok(st, H_START, H_END, 0)) {
			cprof_bad_time("CPROF_API", st, H_START, H_END);
			break;
		}
		/* a CUPTI id that reached the GPU, else the CUPTI record of this very call, else our own id */
		if (sqlite3_column_type(st, H_GCORR) != SQLITE_NULL)
			corr = trace_corr_id(t, proc, sqlite3_column_int64(st, H_GCORR));
		else if (same)
			corr = trace_corr_id(t, proc, sqlite3_column_int64(st, H_ANYCORR));
		else
			corr = ext;
		trace_span_begin(t, "cuda_runtime", name, pid, tid, start, sqlite3_column_int64(st, H_END));
		trace_put(t, ", \"args\": {\"External id\": ");
		trace_put_i(t, sqlite3_column_type(st, H_OPID) != SQLITE_NULL ? sqlite3_column_int64(st, H_OPID) : ext);
		if (same)
			trace_arg_i(t, "cbid", sqlite3_column_int64(st, H_CBID));
		trace_arg_i(t, "correlation", corr);
		hooked_extras(t, st);
		trace_put(t, "}}");
		if (sqlite3_column_type(st, H_STACK) != SQLITE_NULL) {
			const struct cprof_stack *s = cprof_stacks_find(&t->stacks, proc, sqlite3_column_int64(st, H_STACK));

			if (s && s->npy && (ret = py_track(t, pid, tid, start, sqlite3_column_int64(st, H_END), s)) < 0)
				goto out;
		}
		if (ngpu == 1) {
			trace_flow(t, 's', corr, pid, tid, start);
		} else if (ngpu > 1) {
			/* a graph launch or a library call with several launches: one flow per GPU-bound CUPTI id */
			sqlite3_reset(t->flows);
			sqlite3_bind_int64(t->flows, 1, proc);
			sqlite3_bind_int64(t->flows, 2, ext);
			while ((rc = sqlite3_step(t->flows)) == SQLITE_ROW)
				trace_flow(t, 's', trace_corr_id(t, proc, sqlite3_column_int64(t->flows, 0)), pid, tid, start);
			if ((ret = trace_step_done(t, rc)) < 0)
				goto out;
		}
	}
	ret = trace_step_done(t, rc);
	py_close_all(t);
out:
	sqlite3_finalize(st);
	return ret;
}

/* CUPTI's runtime/driver records. One that is the CUPTI side of a hooked call (joined through our external
 * id, and either the same API or the launch the hooked library call made) is already there as that call;
 * the rest (cuBLAS's internal occupancy queries, driver launches by Triton) are calls no hook saw. */
int trace_write_api_records(struct trace *t, const char *table, const char *cat)
{
	sqlite3_stmt *st = NULL;
	char sql[1024], name[256];
	int rc, ret;

	snprintf(sql, sizeof(sql),
		 "SELECT r.processId, r.start, r.end, r.correlationId, rn.value, r.cbid, r.threadId,"
		 " coalesce(xo.opId, e.externalId),"
		 " h.extId IS NOT NULL, hn.value, h.tid, g.correlationId IS NOT NULL"
		 " FROM %s r LEFT JOIN StringIds rn ON rn.id = r.nameId"
		 " LEFT JOIN x_ext e ON e.processId = r.processId AND e.correlationId = r.correlationId"
		 " LEFT JOIN x_hook h ON h.processId = e.processId AND h.extId = e.externalId"
		 " LEFT JOIN x_opof xo ON xo.processId = e.processId AND xo.extId = e.externalId"
		 " LEFT JOIN StringIds hn ON hn.id = h.nameId"
		 " LEFT JOIN x_gpu g ON g.processId = r.processId AND g.correlationId = r.correlationId"
		 " ORDER BY r.rowid",
		 table);
	if ((ret = trace_prep(t, sql, &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(st, 0), start = sqlite3_column_int64(st, 1);
		int hooked = sqlite3_column_int(st, 8), to_gpu = sqlite3_column_int(st, 11);
		int64_t pid = trace_proc_pid(t, proc), tid, corr = trace_corr_id(t, proc, sqlite3_column_int64(st, 3));

		if (!cprof_row_times_ok(st, 1, 2, 0)) {
			cprof_bad_time(table, st, 1, 2);
			break;
		}
		if (hooked && (to_gpu || trace_same_api(trace_col_str(st, 4), trace_col_str(st, 9))))
			continue;
		tid = hooked ? sqlite3_column_int64(st, 10) : trace_cupti_tid(t, proc, sqlite3_column_int64(st, 6));
		trace_display_api_name(trace_col_str(st, 4), name, sizeof(name));
		trace_span_begin(t, cat, name, pid, tid, start, sqlite3_column_int64(st, 2));
		trace_put(t, ", \"args\": {");
		if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
			trace_put(t, "\"External id\": ");
			trace_put_i(t, sqlite3_column_int64(st, 7));
			trace_put(t, ", ");
		}
		trace_put(t, "\"cbid\": ");
		trace_put_i(t, sqlite3_column_int64(st, 5));
		trace_arg_i(t, "correlation", corr);
		trace_put(t, "}}");
		if (to_gpu)
			trace_flow(t, 's', corr, pid, tid, start);
	}
	ret = trace_step_done(t, rc);
	sqlite3_finalize(st);
	return ret;
}

/* Columns every GPU op query starts with; the launcher exists when a hooked call or an API record has the id. */
#define GPU_COMMON                                                                                               \
	"o.processId, o.start, o.end, o.deviceId, o.contextId, o.streamId, o.correlationId,"                      \
	" coalesce(xo.opId, e.externalId),"                                                                       \
	" (h.extId IS NOT NULL OR x.correlationId IS NOT NULL)"
#define GPU_JOINS                                                                                                \
	" LEFT JOIN x_ext e ON e.processId = o.processId AND e.correlationId = o.correlationId"                   \
	" LEFT JOIN x_hook h ON h.processId = e.processId AND h.extId = e.externalId"                             \
	" LEFT JOIN x_opof xo ON xo.processId = e.processId AND xo.extId = e.externalId"                         \
	" LEFT JOIN x_api x ON x.processId = o.processId AND x.correlationId = o.correlationId"
enum { G_PROC, G_START, G_END, G_DEV, G_CTX, G_STREAM, G_CORR, G_EXT, G_LAUNCHED, G__N };


static const char *memcpy_kind(int64_t k)
{
	static const char *const names[] = { "<unknown>", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					     "AtoD",      "DtoA", "DtoD", "HtoH", "PtoP" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "<unknown>";
}

static const char *memory_kind(int64_t k)
{
	static const char *const names[] = { "Unknown", "Pageable", "Pinned", "Device", "Array", "Managed",
					     "Device Static", "Managed Static" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "Unrecognized";
}

void trace_bandwidth(struct trace *t, int64_t bytes, int64_t ns)
{
	trace_put(t, ", \"memory bandwidth (GB/s)\": ");
	if (ns <= 0)
		trace_put(t, "\"N/A\"");
	else
		trace_put_double(t, (double)bytes / (double)ns);
}

int trace_write_gpu_ops(struct trace *t, enum gpu_kind kind)
{
	static const char *const sql[] = {
		[GPU_KERNEL] = "SELECT " GPU_COMMON ", o.nameId, n.value, o.gridX, o.gridY, o.gridZ, o.blockX, o.blockY,"
			       " o.blockZ, o.registersPerThread, o.staticSharedMemory + o.dynamicSharedMemory"
			       " FROM CUPTI_ACTIVITY_KIND_KERNEL o LEFT JOIN StringIds n ON n.id = o.nameId" GPU_JOINS
			       " ORDER BY o.rowid",
		[GPU_MEMCPY] = "SELECT " GPU_COMMON ", o.bytes, o.copyKind, o.srcKind, o.dstKind"
			       " FROM CUPTI_ACTIVITY_KIND_MEMCPY o" GPU_JOINS " ORDER BY o.rowid",
		[GPU_MEMSET] = "SELECT " GPU_COMMON ", o.bytes, o.memKind FROM CUPTI_ACTIVITY_KIND_MEMSET o" GPU_JOINS
			       " ORDER BY o.rowid",
	};
	static const char *const cats[] = { "kernel", "gpu_memcpy", "gpu_memset" };
	sqlite3_stmt *st = NULL;
	char name[128];
	int rc, ret;

	if ((ret = trace_prep(t, sql[kind], &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(st, G_PROC), start = sqlite3_column_int64(st, G_START);
		int64_t end = sqlite3_column_int64(st, G_END), dev = sqlite3_column_int64(st, G_DEV);
		int64_t stream = sqlite3_column_int64(st, G_STREAM);
		int64_t corr = trace_corr_id(t, proc, sqlite3_column_int64(st, G_CORR));
		const char *label = name;

		if (!cprof_row_times_ok(st, G_START, G_END, 0)) {
			cprof_bad_time("CUPTI_ACTIVITY_KIND_KERNEL/MEMCPY/MEMSET", st, G_START, G_END);
			break;
		}
		if (kind == GPU_KERNEL)
			label = trace_kernel_name(t, sqlite3_column_int64(st, G__N), trace_col_str(st, G__N + 1));
		else if (kind == GPU_MEMCPY)
			snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)",
				 memcpy_kind(sqlite3_column_int64(st, G__N + 1)),
				 memory_kind(sqlite3_column_int64(st, G__N + 2)),
				 memory_kind(sqlite3_column_int64(st, G__N + 3)));
		else
			snprintf(name, sizeof(name), "Memset (%s)", memory_kind(sqlite3_column_int64(st, G__N + 1)));
		trace_span_begin(t, cats[kind], label, dev, stream, start, end);
		trace_put(t, ", \"args\": {");
		if (sqlite3_column_type(st, G_EXT) != SQLITE_NULL) {
			trace_put(t, "\"External id\": ");
			trace_put_i(t, sqlite3_column_int64(st, G_EXT));
			trace_put(t, ", ");
		}
		if (kind == GPU_KERNEL)
			trace_put(t, "\"queued\": 0, "); /* CUPTI's queued timestamp is not recorded; 0 is its "unknown" */
		trace_put(t, "\"device\": ");
		trace_put_i(t, dev);
		trace_arg_i(t, "context", sqlite3_column_int64(st, G_CTX));
		trace_arg_i(t, "stream", stream);
		trace_arg_i(t, "correlation", corr);
		if (kind == GPU_KERNEL) {
			trace_arg_i(t, "registers per thread", sqlite3_column_int64(st, G__N + 8));
			trace_arg_i(t, "shared memory", sqlite3_column_int64(st, G__N + 9));
			trace_arg_dim3(t, "grid", sqlite3_column_int64(st, G__N + 2), sqlite3_column_int64(st, G__N + 3),
				 sqlite3_column_int64(st, G__N + 4));
			trace_arg_dim3(t, "block", sqlite3_column_int64(st, G__N + 5), sqlite3_column_int64(st, G__N + 6),
				 sqlite3_column_int64(st, G__N + 7));
		} else {
			trace_arg_i(t, "bytes", sqlite3_column_int64(st, G__N));
			trace_bandwidth(t, sqlite3_column_int64(st, G__N), end - start);
		}
		trace_put(t, "}}");
		if (sqlite3_column_int(st, G_LAUNCHED))
			trace_flow(t, 'f', corr, dev, stream, start);
	}
	ret = trace_step_done(t, rc);
	sqlite3_finalize(st);
	return ret;
}

static const char *overhead_kind(int64_t k)
{
	/* Kineto's strings for the kinds it knows; CUDA 12+ kinds it calls "Unrecognized" get their own names */
	switch (k) {
	case 0:
		return "Unknown";
	case 1:
		return "Driver Compiler";
	case 1 << 16:
		return "Buffer Flush";
	case 2 << 16:
		return "Instrumentation";
	case 3 << 16:
		return "Resource";
	case 4 << 16:
		return "Runtime Triggered Module Loading";
	case 5 << 16:
		return "Lazy Function Loading";
	case 6 << 16:
		return "Command Buffer Full";
	case 7 << 16:
		return "Activity Buffer Request";
	case 8 << 16:
		return "UVM Activity Init";
	default:
		return "Unrecognized";
	}
}

int trace_write_overhead(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = trace_prep(t, "SELECT start, end, overheadKind FROM CUPTI_ACTIVITY_KIND_OVERHEAD ORDER BY rowid", &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!cprof_row_times_ok(st, 0, 1, 0)) {
			cprof_bad_time("CUPTI_ACTIVITY_KIND_OVERHEAD", st, 0, 1);
			break;
		}
		trace_span_begin(t, "overhead", overhead_kind(sqlite3_column_int64(st, 2)), -1, 0, sqlite3_column_int64(st, 0),
			   sqlite3_column_int64(st, 1));
		trace_put(t, "}");
	}
	ret = trace_step_done(t, rc);
	sqlite3_finalize(st);
	return ret;
}
