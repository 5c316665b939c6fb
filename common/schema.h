/* The profile's SQLite schema (cprof.profile/1): cprofd creates it, cprof trusts a view only if it is one of these statements. */
#ifndef CPROF_COMMON_SCHEMA_H
#define CPROF_COMMON_SCHEMA_H

/* Statements end with ';' and contain no other ';' (cprof's check of a profile's views relies on it).
 * Tables may be added (readers ignore what they do not know); views are compared byte for byte. */
__attribute__((unused)) static const char cprof_schema_sql[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=NORMAL;"
	"CREATE TABLE META(key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);"
	"CREATE TABLE PROCESSES(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, ppid INTEGER, host TEXT,"
	" exe TEXT, argv TEXT, rank INTEGER, localRank INTEGER, worldSize INTEGER, startNs INTEGER,"
	" endNs INTEGER, clock TEXT, wireVersion INTEGER, forked INTEGER, simulatedGpu INTEGER, byeReason TEXT,"
	" eventsEmitted INTEGER, eventsRecorded INTEGER, lostEvents INTEGER, frames INTEGER, seqGaps INTEGER,"
	/* how it ended, in words: exit status 3, signal 11 (SIGSEGV), killed by signal 9 (SIGKILL), exec, ... */
	" ending TEXT);"
	"CREATE TABLE THREADS(processId INTEGER, tid INTEGER, firstNs INTEGER, lastNs INTEGER, calls INTEGER,"
	" PRIMARY KEY(processId, tid));"
	/* one row per hooked call; a0..a7 mean what the API's class says (see the views) */
	"CREATE TABLE CPROF_API(id INTEGER PRIMARY KEY, processId INTEGER NOT NULL, pid INTEGER, tid INTEGER,"
	" start INTEGER NOT NULL, end INTEGER NOT NULL, correlationId INTEGER, nameId INTEGER NOT NULL,"
	" class TEXT, returnValue INTEGER, nested INTEGER, kernelNameId INTEGER, stream INTEGER,"
	" bytes INTEGER, ptr INTEGER, a0 INTEGER, a1 INTEGER, a2 INTEGER, a3 INTEGER, a4 INTEGER,"
	" a5 INTEGER, a6 INTEGER, a7 INTEGER, stackId INTEGER, stackInherited INTEGER);"
	/* call stacks, stored once per process and referenced by CPROF_API.stackId (nsys: CUDA_CALLCHAINS);
	 * level 0 is the innermost frame. native: moduleId + offset (from the load bias), symbolId set by
	 * cprofd when the run ends; python: fileId, funcId, line */
	"CREATE TABLE CPROF_STACK_FRAMES(processId INTEGER NOT NULL, stackId INTEGER NOT NULL, level INTEGER NOT NULL,"
	" kind TEXT NOT NULL, moduleId INTEGER, offset INTEGER, symbolId INTEGER, fileId INTEGER, funcId INTEGER,"
	" line INTEGER, PRIMARY KEY(processId, stackId, kind, level));"
	/* NVTX annotations, ranges paired by cprofd (push/pop per thread, start/end by id); depth 0 = outermost,
	 * parentId the enclosing push/pop range on the same thread */
	"CREATE TABLE NVTX_EVENTS(id INTEGER PRIMARY KEY, processId INTEGER NOT NULL, pid INTEGER, tid INTEGER,"
	" start INTEGER NOT NULL, end INTEGER, eventType TEXT NOT NULL, textId INTEGER, domainId INTEGER,"
	" categoryId INTEGER, color INTEGER, depth INTEGER, parentId INTEGER, endTid INTEGER);"
	/* names given to threads, streams, devices (nvtxNameOsThread, ...): kind 'thread' | 'stream' | 'device' */
	"CREATE TABLE CPROF_NAMES(processId INTEGER NOT NULL, kind TEXT NOT NULL, key INTEGER NOT NULL,"
	" nameId INTEGER NOT NULL, PRIMARY KEY(processId, kind, key));"
	"CREATE TABLE DIAGNOSTICS(timeNs INTEGER, pid INTEGER, message TEXT);"
	/* CUPTI's records, with nsys's table names; correlationId is CUPTI's, per process */
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(processId INTEGER, start INTEGER, end INTEGER, deviceId INTEGER,"
	" contextId INTEGER, streamId INTEGER, correlationId INTEGER, nameId INTEGER, gridX INTEGER, gridY INTEGER,"
	" gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER,"
	" staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, graphId INTEGER, graphNodeId INTEGER,"
	" gridId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(processId INTEGER, start INTEGER, end INTEGER, deviceId INTEGER,"
	" contextId INTEGER, streamId INTEGER, correlationId INTEGER, bytes INTEGER, copyKind INTEGER,"
	" srcKind INTEGER, dstKind INTEGER, graphId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(processId INTEGER, start INTEGER, end INTEGER, deviceId INTEGER,"
	" contextId INTEGER, streamId INTEGER, correlationId INTEGER, bytes INTEGER, value INTEGER,"
	" memKind INTEGER, graphId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(processId INTEGER, start INTEGER, end INTEGER,"
	" correlationId INTEGER, nameId INTEGER, cbid INTEGER, threadId INTEGER, returnValue INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER(processId INTEGER, start INTEGER, end INTEGER,"
	" correlationId INTEGER, nameId INTEGER, cbid INTEGER, threadId INTEGER, returnValue INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(processId INTEGER, start INTEGER, end INTEGER,"
	" correlationId INTEGER, contextId INTEGER, streamId INTEGER, syncType INTEGER, cudaEventId INTEGER,"
	" returnValue INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_OVERHEAD(processId INTEGER, start INTEGER, end INTEGER,"
	" overheadKind INTEGER, objectKind INTEGER, deviceId INTEGER, contextId INTEGER, streamId INTEGER,"
	" correlationId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION(processId INTEGER, externalKind INTEGER,"
	" externalId INTEGER, correlationId INTEGER);"
	"CREATE TABLE CPROF_STATUS(processId INTEGER, pid INTEGER, timeNs INTEGER, code TEXT, err INTEGER,"
	" message TEXT);"
	/* the recording windows (--capture-range, --delay/--duration, --on-demand + cprof capture, --max-size): per
	 * process, numbered as the run numbered them; end = when recording stopped (the process's end when it
	 * exited inside one); why opened it, endWhy closed it. No row: the whole run was recorded. */
	"CREATE TABLE CPROF_WINDOWS(processId INTEGER, pid INTEGER, number INTEGER, start INTEGER, end INTEGER,"
	" why TEXT, endWhy TEXT);"
	/* one row per LOST frame: when (collector's clock) a process reported drops, how many, out of how many */
	"CREATE TABLE CPROF_LOST(processId INTEGER, pid INTEGER, timeNs INTEGER, lost INTEGER, emitted INTEGER);"
	/* what profiling cost each process, as running totals since its start (one row about every second and one
	 * before its BYE): hooks (sampled and scaled), stack captures, cprof's flusher thread, the program's
	 * threads' own schedstat, and events lost by cause */
	"CREATE TABLE CPROF_COST(processId INTEGER, pid INTEGER, timeNs INTEGER, hookCalls INTEGER, hookNs INTEGER,"
	" sampledCalls INTEGER, stackCalls INTEGER, stackNs INTEGER, flusherCpuNs INTEGER, appRunNs INTEGER,"
	" appWaitNs INTEGER, lostRingFull INTEGER, lostCupti INTEGER, lostPipe INTEGER, lostNested INTEGER,"
	" countedCalls INTEGER, countedNs INTEGER, passCalls INTEGER, passNs INTEGER, passSq INTEGER,"
	" passLaunches INTEGER);"
	/* calls counted and not recorded (the device queries once CUPTI is on, common/wire.h's COUNTS): each
	 * process's running total since it started, one row per name, updated in place (timeNs: when it last grew) */
	"CREATE TABLE CPROF_API_COUNTS(processId INTEGER, pid INTEGER, timeNs INTEGER, nameId INTEGER, calls INTEGER,"
	" UNIQUE(processId, nameId));"
	/* a fatal signal the process took (at most one row per process): signo, si_code, faulting address,
	 * CPROF_CRASH_F_* flags, events the crash drain sent; then each thread's last hooked call then */
	"CREATE TABLE CPROF_CRASH(processId INTEGER, pid INTEGER, timeNs INTEGER, tid INTEGER, signal INTEGER,"
	" code INTEGER, addr INTEGER, flags INTEGER, drained INTEGER);"
	"CREATE TABLE CPROF_CRASH_CALLS(processId INTEGER, tid INTEGER, nameId INTEGER, returnValue INTEGER,"
	" start INTEGER, end INTEGER, kernelNameId INTEGER);"
	/* a hooked call joined to what it put on the GPU: our id -> CUPTI's id -> the GPU record */
	"CREATE VIEW API_GPU AS SELECT a.id AS apiId, a.processId, s.value AS api, a.start AS apiStart,"
	" a.end AS apiEnd, e.correlationId AS cuptiCorrelationId, 'kernel' AS gpuKind, k.start, k.end,"
	" n.value AS name FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"
	" JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = a.processId"
	"  AND e.externalKind = 5 AND e.externalId = a.correlationId"
	" JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.processId = a.processId AND k.correlationId = e.correlationId"
	" LEFT JOIN StringIds n ON n.id = k.nameId"
	" UNION ALL SELECT a.id, a.processId, s.value, a.start, a.end, e.correlationId, 'memcpy', m.start, m.end,"
	" NULL FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"
	" JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = a.processId"
	"  AND e.externalKind = 5 AND e.externalId = a.correlationId"
	" JOIN CUPTI_ACTIVITY_KIND_MEMCPY m ON m.processId = a.processId AND m.correlationId = e.correlationId"
	" UNION ALL SELECT a.id, a.processId, s.value, a.start, a.end, e.correlationId, 'memset', m.start, m.end,"
	" NULL FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"
	" JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = a.processId"
	"  AND e.externalKind = 5 AND e.externalId = a.correlationId"
	" JOIN CUPTI_ACTIVITY_KIND_MEMSET m ON m.processId = a.processId AND m.correlationId = e.correlationId;"
	/* No index but the tables' keys: the model reads every table by one rowid-order scan and joins in memory
	 * (issue 28), and the ending's look-ups by key (common/ending.h, the crash finding's last kernels per
	 * stream) run on its arrays and on state cprofd keeps as the rows go in (issue 32: each index cost the
	 * writer a B-tree insert per row). Profiles that have the indexes older cprofd made read the same. */
	"CREATE VIEW GPU_OPS AS SELECT processId, deviceId, streamId, correlationId, start, end, 'kernel' AS kind,"
	" nameId, NULL AS bytes FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT processId, deviceId, streamId,"
	" correlationId, start, end, 'memcpy', NULL, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL"
	" SELECT processId, deviceId, streamId, correlationId, start, end, 'memset', NULL, bytes"
	" FROM CUPTI_ACTIVITY_KIND_MEMSET;"
	"CREATE VIEW KERNELS AS SELECT k.*, n.value AS name, k.end - k.start AS duration"
	" FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds n ON n.id = k.nameId;"
	"CREATE VIEW API_CALLS AS SELECT a.id, a.processId, a.pid, a.tid, a.start, a.end,"
	" a.end - a.start AS duration, s.value AS name, a.class, a.returnValue, a.nested,"
	" k.value AS kernelName, a.stream, a.bytes, a.correlationId FROM CPROF_API a"
	" JOIN StringIds s ON s.id = a.nameId LEFT JOIN StringIds k ON k.id = a.kernelNameId;"
	"CREATE VIEW LAUNCHES AS SELECT a.id, a.processId, a.tid, a.start, a.end, s.value AS api,"
	" k.value AS kernelName, a.a0 AS gridX, a.a1 AS gridY, a.a2 AS gridZ, a.a3 AS blockX,"
	" a.a4 AS blockY, a.a5 AS blockZ, a.a6 AS sharedMem, a.stream, a.returnValue, a.correlationId"
	" FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId LEFT JOIN StringIds k ON k.id = a.kernelNameId"
	" WHERE a.class = 'launch';"
	"CREATE VIEW GEMMS AS SELECT a.id, a.processId, a.tid, a.start, a.end, s.value AS api, a.a0 AS m,"
	" a.a1 AS n, a.a2 AS k, a.a3 AS batch, a.a4 AS aType, a.a5 AS cType, a.a6 AS transA,"
	" a.a7 AS transB, a.stream, a.returnValue, a.nested FROM CPROF_API a"
	" JOIN StringIds s ON s.id = a.nameId WHERE a.class = 'gemm';"
	"CREATE VIEW MEMOPS AS SELECT a.id, a.processId, a.tid, a.start, a.end, s.value AS api, a.class,"
	" a.bytes, CASE a.class WHEN 'memcpy' THEN a.a0 END AS memcpyKind,"
	" CASE a.class WHEN 'memset' THEN a.a0 END AS memsetValue, a.stream, a.returnValue"
	" FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"
	" WHERE a.class IN ('memcpy', 'memset', 'memory');";

#endif
