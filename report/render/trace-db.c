/* The trace's SQLite access: statements, and tables an older profile lacks shimmed in TEMP. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "report/render/trace.h"

/* ---- SQLite helpers ---- */

int trace_prep(struct trace *t, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(t->db, sql, -1, st, NULL) != SQLITE_OK) {
		pr_err("query failed: %s", sqlite3_errmsg(t->db));
		return -EIO;
	}
	return 0;
}

int trace_exec(struct trace *t, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(t->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		pr_err("query failed: %s", msg ? msg : sqlite3_errmsg(t->db));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

const char *trace_col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s ? (const char *)s : "";
}

int trace_step_done(struct trace *t, int rc)
{
	if (rc == SQLITE_DONE)
		return 0;
	/* a row whose times are out of range stopped the loop (cprof_bad_time said which) */
	pr_err("reading the profile failed: %s", cprof_model_errmsg(t->db));
	return -EIO;
}

/* Profiles written before the GPU lane have no CUPTI tables: empty TEMP tables of the same name shadow the
 * missing ones, so one set of queries reads both. */
int trace_shim_missing_tables(struct trace *t)
{
	static const char *const tables[][2] = {
		{ "CUPTI_ACTIVITY_KIND_KERNEL",
		  "processId, start, end, deviceId, contextId, streamId, correlationId, nameId, gridX, gridY, gridZ,"
		  " blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory, graphId,"
		  " graphNodeId, gridId" },
		{ "CUPTI_ACTIVITY_KIND_MEMCPY",
		  "processId, start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind, srcKind,"
		  " dstKind, graphId" },
		{ "CUPTI_ACTIVITY_KIND_MEMSET",
		  "processId, start, end, deviceId, contextId, streamId, correlationId, bytes, value, memKind, graphId" },
		{ "CUPTI_ACTIVITY_KIND_RUNTIME",
		  "processId, start, end, correlationId, nameId, cbid, threadId, returnValue" },
		{ "CUPTI_ACTIVITY_KIND_DRIVER", "processId, start, end, correlationId, nameId, cbid, threadId, returnValue" },
		{ "CUPTI_ACTIVITY_KIND_OVERHEAD",
		  "processId, start, end, overheadKind, objectKind, deviceId, contextId, streamId, correlationId" },
		{ "CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION", "processId, externalKind, externalId, correlationId" },
		{ "THREADS", "processId, tid, firstNs, lastNs, calls" },
		{ "NVTX_EVENTS",
		  "id INTEGER PRIMARY KEY, processId, pid, tid, start, end, eventType, textId, domainId, categoryId, color,"
		  " depth, parentId, endTid" },
		{ "CPROF_NAMES", "processId, kind, key, nameId" },
	};
	char sql[512];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (cprof_has_table(t->db, tables[i][0]))
			continue;
		snprintf(sql, sizeof(sql), "CREATE TEMP TABLE %s(%s)", tables[i][0], tables[i][1]);
		if ((ret = trace_exec(t, sql)) < 0)
			return ret;
	}
	return 0;
}
