/* NVTX in the trace: ranges as Kineto's user_annotation spans, projected onto the GPU lanes; named lanes. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "common/wire.h"
#include "report/render/trace.h"

/* ---- NVTX: ranges as Kineto's user_annotation spans on their thread, projected onto the GPU lanes as
 * gpu_user_annotation spans; names given to threads and streams name their lanes ---- */

/* %s: what a range never ended is measured up to (cprof_sql_process_end), or nothing when every range ended.
 * x_ops: every GPU op by CUPTI id; x_lcall: the calls that reached the GPU on threads that annotated, by thread
 * and time, so the ranges find theirs through an index instead of a scan each; x_rng: the ranges, ended. */
static const char nvtx_index_sql[] =
	"CREATE TEMP TABLE x_ops(processId INTEGER, correlationId INTEGER, deviceId INTEGER, streamId INTEGER,"
	" start INTEGER, end INTEGER);"
	"INSERT INTO x_ops SELECT processId, correlationId, deviceId, streamId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL"
	" UNION ALL SELECT processId, correlationId, deviceId, streamId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY"
	" UNION ALL SELECT processId, correlationId, deviceId, streamId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET;"
	"CREATE INDEX temp.x_ops_corr ON x_ops(processId, correlationId);"
	"CREATE TEMP TABLE x_lcall(processId INTEGER, tid INTEGER, start INTEGER, extId INTEGER);"
	"INSERT INTO x_lcall SELECT a.processId, a.tid, a.start, a.correlationId FROM CPROF_API a JOIN x_hsum h"
	" ON h.processId = a.processId AND h.extId = a.correlationId WHERE h.ngpu > 0"
	" AND (a.processId, a.tid) IN (SELECT processId, tid FROM NVTX_EVENTS);"
	"CREATE INDEX temp.x_lcall_t ON x_lcall(processId, tid, start);"
	"CREATE TEMP TABLE x_pend(processId INTEGER PRIMARY KEY, e INTEGER);"
	"%s"
	"CREATE TEMP TABLE x_rng(id INTEGER PRIMARY KEY, processId INTEGER, tid INTEGER, start INTEGER, end INTEGER,"
	" depth INTEGER, textId INTEGER);"
	"INSERT INTO x_rng SELECT n.id, n.processId, n.tid, n.start, max(n.start, coalesce(n.end, p.e, n.start)),"
	" coalesce(n.depth, 0), n.textId FROM NVTX_EVENTS n LEFT JOIN x_pend p ON p.processId = n.processId"
	" WHERE n.eventType IN ('range', 'startend');"
	"CREATE TEMP TABLE x_oprng(id INTEGER PRIMARY KEY, processId INTEGER, tid INTEGER, start INTEGER, end INTEGER,"
	" ended INTEGER);"
	"INSERT INTO x_oprng SELECT r.id, r.processId, r.tid, r.start, r.end, n.end IS NOT NULL FROM x_rng r"
	" JOIN NVTX_EVENTS n ON n.id = r.id WHERE n.categoryId = %lld AND n.eventType = 'range';"
	"CREATE INDEX temp.x_oprng_t ON x_oprng(processId, tid, start);"
	/* the innermost op is the latest-starting one still open at the call */
	"INSERT INTO x_opof SELECT * FROM (SELECT a.processId, a.correlationId, (SELECT r.id FROM x_oprng r"
	"  WHERE r.processId = a.processId AND r.tid = a.tid AND r.start <= a.start AND r.end >= a.start AND r.ended"
	"  ORDER BY r.start DESC LIMIT 1) AS o FROM CPROF_API a WHERE a.correlationId IS NOT NULL"
	"  AND (a.processId, a.tid) IN (SELECT DISTINCT processId, tid FROM x_oprng)) WHERE o IS NOT NULL;";

int trace_nvtx_index(struct trace *t)
{
	char *sql, ins[1024];
	int ret;

	t->nvtx = cprof_query_int(t->db, "SELECT EXISTS(SELECT 1 FROM NVTX_EVENTS) OR EXISTS(SELECT 1 FROM CPROF_NAMES)", 0) != 0;
	if (!t->nvtx)
		return 0; /* a profile without annotations costs nothing more */
	ins[0] = '\0';
	if (cprof_query_int(t->db, "SELECT EXISTS(SELECT 1 FROM NVTX_EVENTS WHERE end IS NULL AND eventType != 'mark')", 0))
		snprintf(ins, sizeof(ins), "INSERT INTO x_pend %s;", cprof_sql_process_end);
	if (asprintf(&sql, nvtx_index_sql, ins, (long long)CPROF_NVTX_CATEGORY_TORCH_OP) < 0)
		return -ENOMEM;
	ret = trace_exec(t, sql);
	free(sql);
	return ret;
}

static int name_add(struct trace *t, int kind, int64_t pid, int64_t tid, const char *name)
{
	struct lane_name *n;

	if (cprof_grow(&t->names, &t->capnames, t->nnames, sizeof(t->names[0])) < 0)
		return -ENOMEM;
	n = &t->names[t->nnames];
	n->kind = kind;
	n->pid = pid;
	n->tid = tid;
	n->name = strdup(name);
	if (n->name == NULL)
		return -ENOMEM;
	t->nnames++;
	return 0;
}

/* Threads by (pid, tid) as their CPU lanes; streams by the cudaStream_t handle the hooked calls carried, which
 * their GPU ops turn into CUPTI's (device, stream id), the GPU lane (a handle freed and handed out again names
 * the stream it had first). */
int trace_load_names(struct trace *t)
{
	static const char *const sql[] = {
		"SELECT p.pid, n.key, s.value FROM CPROF_NAMES n JOIN PROCESSES p ON p.id = n.processId"
		" JOIN StringIds s ON s.id = n.nameId WHERE n.kind = 'thread' ORDER BY n.processId, n.key",
		/* the first call on the handle that reached the GPU says where: CPROF_API has no index on stream, and
		 * a scan that stops there is short */
		"SELECT m.lane >> 32, m.lane & 4294967295, m.name FROM (SELECT n.processId AS p, s.value AS name,"
		" (SELECT o.deviceId * 4294967296 + o.streamId FROM CPROF_API a"
		"  CROSS JOIN x_ext e ON e.processId = a.processId AND e.externalId = a.correlationId"
		"  CROSS JOIN x_ops o ON o.processId = e.processId AND o.correlationId = e.correlationId"
		"  WHERE a.processId = n.processId AND a.stream = n.key LIMIT 1) AS lane"
		" FROM CPROF_NAMES n JOIN StringIds s ON s.id = n.nameId WHERE n.kind = 'stream') m"
		" WHERE m.lane IS NOT NULL ORDER BY m.p, m.lane",
	};
	sqlite3_stmt *st = NULL;
	int kind, rc, ret = 0;

	if (!t->nvtx)
		return 0;
	for (kind = NAME_THREAD; kind <= NAME_STREAM; kind++) {
		if ((ret = trace_prep(t, sql[kind], &st)) < 0)
			return ret;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			if ((ret = name_add(t, kind, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
					    trace_col_str(st, 2))) < 0)
				goto out;
		if ((ret = trace_step_done(t, rc)) < 0)
			goto out;
		sqlite3_finalize(st);
		st = NULL;
	}
out:
	sqlite3_finalize(st);
	return ret;
}

/* What NVTX said beyond the name; "External id" pairs a range with its GPU projection, as Kineto does. */
static void nvtx_args(struct trace *t, sqlite3_stmt *st)
{
	trace_put(t, ", \"args\": {\"External id\": ");
	trace_put_i(t, sqlite3_column_int64(st, 0));
	if (sqlite3_column_type(st, 7) != SQLITE_NULL)
		trace_arg_s(t, "domain", trace_col_str(st, 7));
	if (sqlite3_column_type(st, 10) != SQLITE_NULL)
		trace_arg_i(t, "category", sqlite3_column_int64(st, 10));
	if (sqlite3_column_type(st, 11) != SQLITE_NULL)
		trace_arg_i(t, "color", sqlite3_column_int64(st, 11));
	if (sqlite3_column_int(st, 8))
		trace_arg_i(t, "never ended", 1);
	else if (sqlite3_column_type(st, 9) != SQLITE_NULL && sqlite3_column_int64(st, 9) != sqlite3_column_int64(st, 2))
		trace_arg_i(t, "ended on thread", sqlite3_column_int64(st, 9));
	trace_put(t, "}}");
}

int trace_write_nvtx(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	if (!t->nvtx)
		return 0;
	/* outer ranges first: a viewer nests spans that start together in the order it reads them */
	ret = trace_prep(t,
		   "SELECT n.id, n.processId, n.tid, n.start, coalesce(r.end, n.start), n.eventType,"
		   " coalesce(s.value, '(no message)'), d.value, n.end IS NULL, n.endTid, n.categoryId, n.color"
		   " FROM NVTX_EVENTS n LEFT JOIN x_rng r ON r.id = n.id LEFT JOIN StringIds s ON s.id = n.textId"
		   " LEFT JOIN StringIds d ON d.id = n.domainId ORDER BY n.start, coalesce(n.depth, 0), n.id",
		   &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = trace_proc_pid(t, sqlite3_column_int64(st, 1)), tid = sqlite3_column_int64(st, 2);

		if (!strcmp(trace_col_str(st, 5), "mark")) {
			trace_ev_begin(t);
			trace_put(t, "\"ph\": \"i\", \"s\": \"t\", \"cat\": \"user_annotation\", \"name\": ");
			trace_put_str(t, trace_col_str(st, 6));
			trace_put(t, ", \"pid\": ");
			trace_put_i(t, pid);
			trace_put(t, ", \"tid\": ");
			trace_put_i(t, tid);
			trace_put(t, ", \"ts\": ");
			trace_put_ts(t, sqlite3_column_int64(st, 3));
		} else {
			/* PyTorch's op ranges are Kineto's cpu_op spans */
			int op = sqlite3_column_int64(st, 10) == CPROF_NVTX_CATEGORY_TORCH_OP;

			trace_span_begin(t, op ? "cpu_op" : "user_annotation", trace_col_str(st, 6), pid, tid,
					 sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
		}
		nvtx_args(t, st);
	}
	if ((ret = trace_step_done(t, rc)) < 0)
		goto out;
	sqlite3_finalize(st);
	/* per range and stream, from the first to the last GPU op launched by a call made inside the range on its
	 * thread (Kineto's gpu_user_annotation); the longer span first, so the outer range holds the inner one.
	 * CROSS JOIN fixes the order range -> its calls -> their ops: the TEMP tables have no statistics, and SQLite
	 * left to itself scans every op for every range */
	ret = trace_prep(t,
		   "SELECT r.id, o.deviceId, o.streamId, min(o.start) AS gs, max(o.end) AS ge,"
		   " coalesce(x.value, '(no message)'), r.depth FROM x_rng r CROSS JOIN x_lcall c"
		   " ON c.processId = r.processId AND c.tid = r.tid AND c.start >= r.start AND c.start <= r.end"
		   " CROSS JOIN x_ext e ON e.processId = c.processId AND e.externalId = c.extId"
		   " CROSS JOIN x_ops o ON o.processId = e.processId AND o.correlationId = e.correlationId"
		   " LEFT JOIN StringIds x ON x.id = r.textId WHERE r.id NOT IN (SELECT id FROM x_oprng)"
		   " GROUP BY r.id, o.deviceId, o.streamId ORDER BY gs, ge DESC, r.depth, r.id",
		   &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		trace_span_begin(t, "gpu_user_annotation", trace_col_str(st, 5), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			   sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
		trace_put(t, ", \"args\": {\"External id\": ");
		trace_put_i(t, sqlite3_column_int64(st, 0));
		trace_put(t, "}}");
	}
	ret = trace_step_done(t, rc);
out:
	sqlite3_finalize(st);
	return ret;
}

/* Kineto writes every ts relative to a base so a double keeps ns precision; the base is the profile's first
 * timestamp rounded down to a whole second. */
