/* The CUDA error a process ended after, as one SQL query: cprofd words PROCESSES.ending with it, cprof's model shows it. */
#ifndef CPROF_COMMON_ENDING_H
#define CPROF_COMMON_ENDING_H

/* The definitions of the ending's look-ups. cprofd keeps what the first needs as the rows go in
 * (collector/store.c end_note) and cprof runs them on its arrays (report/model/ending.c); the queries are
 * the fallback (cprofd out of memory, a model without its timeline) and what the unit tests hold the
 * others to. No index serves them since issue 32: on a large profile each is a scan of the calls.
 *
 * ?1 = PROCESSES.id. The last outermost call of the process that returned an error (not 0, not 600
 * cudaErrorNotReady, which polling returns all along), among its last 1,000 outermost calls, provided its thread
 * made no successful call after it; named as the first of the run of failing calls on that thread that ends with it, since an error
 * such as 700 is sticky and every later call returns it too. Columns: id, tid, API name, returnValue,
 * stream (the handle; 0 when the call has none), start, end, stream_scoped (1 when the call acts on
 * that stream alone: a launch, cudaStreamSynchronize, an *Async call; else the whole device). No row:
 * no such error. Callers decide whether the process ended abnormally. */
__attribute__((unused)) static const char cprof_ending_error_sql[] =
	"WITH e AS (SELECT tid, start FROM (SELECT tid, start, id, returnValue FROM CPROF_API WHERE processId = ?1"
	"  AND nested = 0 ORDER BY start DESC, id DESC LIMIT 1000) WHERE returnValue NOT IN (0, 600)"
	"  ORDER BY start DESC, id DESC LIMIT 1),"
	" ok AS (SELECT coalesce(max(a.start), -1) AS t FROM CPROF_API a, e WHERE a.processId = ?1"
	"  AND a.tid = e.tid AND a.nested = 0 AND a.returnValue = 0 AND a.start < e.start)"
	" SELECT f.id, f.tid, s.value, f.returnValue, f.stream, f.start, f.end,"
	"  (f.class = 'launch' OR s.value LIKE 'cudaStreamSynchronize%' OR s.value LIKE '%Async%'"
	"   OR s.value = 'cudaStreamWaitEvent')"
	" FROM CPROF_API f JOIN StringIds s ON s.id = f.nameId, e, ok"
	" WHERE f.processId = ?1 AND f.tid = e.tid AND f.nested = 0 AND f.start > ok.t AND f.start <= e.start"
	"  AND f.returnValue NOT IN (0, 600)"
	"  AND NOT EXISTS (SELECT 1 FROM CPROF_API o WHERE o.processId = ?1 AND o.tid = e.tid AND o.nested = 0"
	"   AND o.returnValue = 0 AND o.start > e.start)"
	" ORDER BY f.start, f.id LIMIT 1;";

/* ?1 = PROCESSES.id, ?2 = a time, ?3 = a stream handle or NULL for every stream: the last 3 launches
 * (kernels, GEMMs) made before ?2, latest first. Columns: kernel (mangled; the API's name when the
 * kernel is unknown), CUPTI stream id of its kernel (NULL when CUPTI did not deliver it), stream handle. */
__attribute__((unused)) static const char cprof_ending_kernels_sql[] =
	"SELECT coalesce(k.value, s.value), (SELECT kk.streamId FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION x"
	"  JOIN CUPTI_ACTIVITY_KIND_KERNEL kk ON kk.processId = x.processId AND kk.correlationId = x.correlationId"
	"  WHERE x.processId = a.processId AND x.externalKind = 5 AND x.externalId = a.correlationId LIMIT 1),"
	" a.stream FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId LEFT JOIN StringIds k ON k.id = a.kernelNameId"
	" WHERE a.processId = ?1 AND a.class IN ('launch', 'gemm') AND a.start <= ?2 AND (?3 IS NULL OR a.stream = ?3)"
	" ORDER BY a.start DESC, a.id DESC LIMIT 3;";

#endif
