/* Unit tests of cprof trace's model part: the call <-> CUPTI <-> GPU joins, ATen op ranges, NVTX projections, lane names. */
#include <check.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "common/schema.h"
#include "common/wire.h"
#include "report/model/trace-src.h"
#include "tests/unit/tests.h"

#define TORCH_OP "1953460835" /* CPROF_NVTX_CATEGORY_TORCH_OP */

/* Process 1 (pid 100, rank 0), thread 10: call 5 (a launch) made CUPTI ids 50 (kernel) and 53 (kernel, a
 * second launch inside a library call), 52 reached no GPU; call 7 on thread 11 made 51 (a copy); a forged
 * second external-correlation row for 50 (to call 9) comes after the real one and must lose. Call 5 is
 * stored twice (tids 10 and 9): the first row stands for it, the thread map takes the smaller tid.
 * Process 2 (pid 200, rank 1) makes one launch. */
static sqlite3 *fixture(void)
{
	static const char *const rows =
		"INSERT INTO PROCESSES(id, pid, rank, worldSize, exe, endNs) VALUES (1, 100, 0, 2, '/bin/a', 5000),"
		" (2, 200, 1, 2, '/bin/b', 6000);"
		"INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'cudaMemcpy'), (3, 'cuLaunchKernel'),"
		" (4, 'cudaLaunchKernel_v7000'), (5, 'outer'), (6, 'aten::mm'), (7, 'aten::add'), (8, 'main stream'),"
		" (9, 'cuMemcpy');"
		"INSERT INTO CPROF_API(processId, pid, tid, start, end, correlationId, nameId, class, stream) VALUES"
		" (1, 100, 10, 1100, 1200, 5, 1, 'launch', 77), (1, 100, 11, 1500, 1600, 7, 2, 'memcpy', 77),"
		" (1, 100, 9, 1300, 1310, 5, 1, 'launch', 77), (2, 200, 20, 900, 950, 5, 1, 'launch', NULL);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(processId, start, end, correlationId, nameId, cbid, threadId) VALUES"
		" (1, 1110, 1190, 50, 4, 211, 4096), (1, 1510, 1590, 51, 2, 31, 4097), (1, 1120, 1130, 52, 4, 211, 4096),"
		" (2, 910, 940, 50, 4, 211, 8192);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER(processId, start, end, correlationId, nameId, cbid, threadId) VALUES"
		" (1, 1140, 1150, 53, 3, 307, 4096), (1, 1160, 1170, 50, 3, 307, 4096);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES (1, 5, 5, 50), (1, 5, 7, 51), (1, 5, 5, 52),"
		" (1, 5, 5, 53), (1, 5, 9, 50), (2, 5, 5, 50);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(processId, start, end, deviceId, streamId, correlationId, nameId) VALUES"
		" (1, 2000, 2100, 0, 7, 53, 1), (1, 1800, 1900, 0, 7, 50, 1), (2, 1000, 1010, 1, 9, 50, 1);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(processId, start, end, deviceId, streamId, correlationId) VALUES"
		" (1, 1700, 1750, 0, 14, 51);"
		/* NVTX on thread 10: 'outer' 1000-1400 holds op ranges aten::mm 1050-1150 and aten::add 1250-1260, and
		 * an aten::mm never ended; on thread 11 an 'outer' never ended */
		"INSERT INTO NVTX_EVENTS(id, processId, tid, start, end, eventType, textId, categoryId, depth) VALUES"
		" (1, 1, 10, 1000, 1400, 'range', 5, NULL, 0), (2, 1, 10, 1050, 1150, 'range', 6, " TORCH_OP ", 1),"
		" (3, 1, 10, 1250, 1260, 'range', 7, " TORCH_OP ", 1), (4, 1, 10, 1090, NULL, 'range', 6, " TORCH_OP ", 2),"
		" (5, 1, 11, 1450, NULL, 'range', 5, NULL, 0), (6, 1, 10, 1000, NULL, 'mark', 5, NULL, 0);"
		"INSERT INTO CPROF_NAMES VALUES (1, 'stream', 77, 8), (1, 'thread', 11, 5);";
	sqlite3 *db;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, cprof_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
	return db;
}

static void note_corr(void *ctx, int64_t corr)
{
	int64_t *v = ctx;

	v[1 + v[0]++] = corr;
}

START_TEST(test_trace_src_call_corrs)
{
	sqlite3 *db = fixture();
	struct cprof_trace_src s;
	int64_t g, a, n, ext, seen[8] = { 0 };
	const struct cprof_tsrc_api *x;

	ck_assert_int_eq(cprof_trace_src_load(db, -1, &s), 0);
	/* call 5: CUPTI ids 50, 52, 53; 50 and 53 reached the GPU (the forged row for 50 does not count) */
	ck_assert_int_eq(cprof_tsrc_call_corrs(&s, 1, 5, &g, &a, &n), 1);
	ck_assert_int_eq(g, 50);
	ck_assert_int_eq(a, 50);
	ck_assert_int_eq(n, 2);
	cprof_tsrc_call_gpu_corrs(&s, 1, 5, note_corr, seen);
	ck_assert_int_eq(seen[0], 2);
	ck_assert_int_eq(seen[1], 50);
	ck_assert_int_eq(seen[2], 53);
	/* call 9 owns nothing: its row for 50 came second */
	ck_assert_int_eq(cprof_tsrc_call_corrs(&s, 1, 9, &g, &a, &n), 0);
	ck_assert_int_eq(cprof_tsrc_ext_of(&s, 1, 50, &ext), 1);
	ck_assert_int_eq(ext, 5);
	/* each process's ids are its own */
	ck_assert_int_eq(cprof_tsrc_call_corrs(&s, 2, 5, &g, &a, &n), 1);
	ck_assert_int_eq(n, 1);
	/* CUPTI's record of 50: the runtime one (read first), and it reached the GPU; 52 did not */
	x = cprof_tsrc_api_find(&s, 1, 50);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->cbid, 211);
	ck_assert_int_eq(cprof_tsrc_corr_gpu(&s, 1, 50), 1);
	ck_assert_int_eq(cprof_tsrc_corr_gpu(&s, 1, 51), 1); /* a copy */
	ck_assert_int_eq(cprof_tsrc_corr_gpu(&s, 1, 52), 0);
	ck_assert_int_eq(cprof_tsrc_corr_gpu(&s, 2, 50), 1);
	ck_assert_int_eq(cprof_tsrc_corr_gpu(&s, 2, 52), 0);
	ck_assert_int_eq(cprof_tsrc_api_find(&s, 1, 53)->cbid, 307);
	cprof_trace_src_free(&s);
	sqlite3_close(db);
}
END_TEST

START_TEST(test_trace_src_hooks_and_thread_map)
{
	sqlite3 *db = fixture();
	struct cprof_trace_src s;
	const struct cprof_tsrc_hook *h;
	int64_t tid;

	ck_assert_int_eq(cprof_trace_src_load(db, -1, &s), 0);
	h = cprof_tsrc_hook_find(&s, 1, 5);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->tid, 10); /* the first row */
	ck_assert_int_eq(h->mintid, 9);
	ck_assert_ptr_null(cprof_tsrc_hook_find(&s, 1, 9));
	/* handle 4096 made CUPTI's side of call 5 (tids 10 and 9): the smaller; 4097 of call 7 */
	ck_assert_int_eq(cprof_model_tid(&s.m, 1, 4096, &tid), 1);
	ck_assert_int_eq(tid, 9);
	ck_assert_int_eq(cprof_model_tid(&s.m, 1, 4097, &tid), 1);
	ck_assert_int_eq(tid, 11);
	ck_assert_int_eq(cprof_model_tid(&s.m, 2, 8192, &tid), 1);
	ck_assert_int_eq(tid, 20);
	/* the CUPTI threads and GPU lanes, distinct and sorted */
	ck_assert_uint_eq(s.ncupti_threads, 3);
	ck_assert_int_eq(s.cupti_threads[1].b, 4097);
	ck_assert_uint_eq(s.ngpu_lanes, 3);
	ck_assert_int_eq(s.gpu_lanes[0].b, 7);
	ck_assert_int_eq(s.gpu_lanes[1].b, 14);
	ck_assert_int_eq(s.gpu_lanes[2].a, 1);
	/* the earliest start of any table: process 2's call */
	ck_assert_int_eq(s.first_start, 900);
	cprof_trace_src_free(&s);
	sqlite3_close(db);
}
END_TEST

START_TEST(test_trace_src_innermost_op)
{
	sqlite3 *db = fixture();
	struct cprof_trace_src s;
	int64_t op = 0;

	ck_assert_int_eq(cprof_trace_src_load(db, -1, &s), 0);
	/* 1100 is inside aten::mm (2); the open aten::mm (4) never counts */
	ck_assert_int_eq(cprof_tsrc_innermost_op(&s, 1, 10, 1100, &op), 1);
	ck_assert_int_eq(op, 2);
	ck_assert_int_eq(cprof_tsrc_hook_find(&s, 1, 5)->op, 2);
	ck_assert_int_eq(cprof_tsrc_innermost_op(&s, 1, 10, 1255, &op), 1);
	ck_assert_int_eq(op, 3);
	/* after both ended, none (the outer range is no op); another thread has none */
	ck_assert_int_eq(cprof_tsrc_innermost_op(&s, 1, 10, 1300, &op), 0);
	ck_assert_int_eq(cprof_tsrc_innermost_op(&s, 1, 11, 1100, &op), 0);
	ck_assert_int_eq(cprof_tsrc_hook_find(&s, 1, 7)->op, CPROF_NO_ID);
	cprof_trace_src_free(&s);
	sqlite3_close(db);
}
END_TEST

/* the innermost op walks out of ended siblings to the enclosing op, however many siblings came before */
START_TEST(test_trace_src_innermost_op_skips_siblings)
{
	sqlite3 *db;
	struct cprof_trace_src s;
	char sql[256];
	int64_t op = 0;
	int i;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, cprof_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO PROCESSES(id, pid) VALUES (1, 100);"
					  "INSERT INTO NVTX_EVENTS(id, processId, tid, start, end, eventType, categoryId) VALUES"
					  " (1, 1, 10, 0, 10000, 'range', " TORCH_OP ")", NULL, NULL, NULL), SQLITE_OK);
	for (i = 0; i < 50; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO NVTX_EVENTS(id, processId, tid, start, end, eventType, categoryId)"
			 " VALUES (%d, 1, 10, %d, %d, 'range', " TORCH_OP ")", i + 2, 100 + i * 10, 105 + i * 10);
		ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	}
	ck_assert_int_eq(cprof_trace_src_load(db, -1, &s), 0);
	ck_assert_int_eq(cprof_tsrc_innermost_op(&s, 1, 10, 103, &op), 1);
	ck_assert_int_eq(op, 2);
	ck_assert_int_eq(cprof_tsrc_innermost_op(&s, 1, 10, 107, &op), 1);
	ck_assert_int_eq(op, 1);
	ck_assert_int_eq(cprof_tsrc_innermost_op(&s, 1, 10, 9000, &op), 1);
	ck_assert_int_eq(op, 1);
	ck_assert_int_eq(cprof_tsrc_innermost_op(&s, 1, 10, 10001, &op), 0);
	cprof_trace_src_free(&s);
	sqlite3_close(db);
}
END_TEST

START_TEST(test_trace_src_nvtx_layout)
{
	sqlite3 *db = fixture();
	struct cprof_trace_src s;
	size_t i;

	ck_assert_int_eq(cprof_trace_src_load(db, -1, &s), 0);
	ck_assert_int_eq(s.nvtx, 1);
	ck_assert_uint_eq(s.nev, 6);
	/* by (start, depth, id): the outer range and the mark at 1000, then the op ranges */
	ck_assert_int_eq(s.ev[0].id, 1);
	ck_assert_int_eq(s.ev[1].id, 6);
	ck_assert_int_eq(s.ev[2].id, 2);
	/* the open range of thread 11 runs to the process's last known time (its endNs, 5000) */
	for (i = 0; i < s.nev && s.ev[i].id != 5; i++)
		;
	ck_assert_int_eq(s.ev[i].open, 1);
	ck_assert_int_eq(s.ev[i].end, 5000);
	/* 'outer' (1) on thread 10 holds call 5 (1100): its kernels 50 (1800-1900) and 53 (2000-2100) on stream 7;
	 * the open 'outer' (5) on thread 11 holds call 7's copy on stream 14; the op ranges project nothing */
	ck_assert_uint_eq(s.nproj, 2);
	ck_assert_int_eq(s.proj[0].id, 5);
	ck_assert_int_eq(s.proj[0].stream, 14);
	ck_assert_int_eq(s.proj[0].start, 1700);
	ck_assert_int_eq(s.proj[1].id, 1);
	ck_assert_int_eq(s.proj[1].stream, 7);
	ck_assert_int_eq(s.proj[1].start, 1800);
	ck_assert_int_eq(s.proj[1].end, 2100);
	/* names: thread 11 of pid 100; stream handle 77's first call (5) reached device 0's stream 7 */
	ck_assert_uint_eq(s.nnames, 2);
	ck_assert_int_eq(s.names[0].stream, 0);
	ck_assert_int_eq(s.names[0].a, 100);
	ck_assert_int_eq(s.names[0].b, 11);
	ck_assert_int_eq(s.names[1].stream, 1);
	ck_assert_int_eq(s.names[1].a, 0);
	ck_assert_int_eq(s.names[1].b, 7);
	ck_assert_str_eq(s.names[1].name, "main stream");
	cprof_trace_src_free(&s);
	sqlite3_close(db);
}
END_TEST

static int count_calls(void *ctx, const struct cprof_tsrc_calls *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		ck_assert_int_eq(b->proc[i], 2);
	*(size_t *)ctx += b->n;
	return 0;
}

static int count_ops(void *ctx, const struct cprof_tsrc_ops *b)
{
	*(size_t *)ctx += b->n;
	return 0;
}

START_TEST(test_trace_src_rank_filter)
{
	sqlite3 *db = fixture();
	struct cprof_trace_src s;
	size_t n = 0, k = 0;

	ck_assert_int_eq(cprof_trace_src_load(db, 1, &s), 0);
	ck_assert_uint_eq(s.m.nprocs, 1);
	ck_assert_int_eq(s.m.procs[0].pid, 200);
	ck_assert_int_eq(cprof_tsrc_scan_calls(&s, count_calls, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(cprof_tsrc_scan_ops(&s, CPROF_OP_KERNEL, count_ops, &k), 0);
	ck_assert_uint_eq(k, 1);
	ck_assert_uint_eq(s.nev, 0);
	ck_assert_int_eq(s.first_rank, 1);
	cprof_trace_src_free(&s);
	sqlite3_close(db);
}
END_TEST

/* the stream of batches holds every row in rowid order, however many batches it takes */
struct order {
	int64_t last;
	size_t n;
};

static int check_order(void *ctx, const struct cprof_tsrc_calls *b)
{
	struct order *o = ctx;
	size_t i;

	ck_assert_uint_le(b->n, CPROF_TSRC_BATCH);
	for (i = 0; i < b->n; i++) {
		ck_assert_int_eq(b->start[i], o->last + 1);
		o->last = b->start[i];
	}
	o->n += b->n;
	return 0;
}

START_TEST(test_trace_src_batches_and_bad_time)
{
	sqlite3 *db;
	struct cprof_trace_src s;
	struct order o = { 0, 0 };
	sqlite3_stmt *st;
	int i;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, cprof_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO PROCESSES(id, pid) VALUES (1, 100);"
					  "INSERT INTO StringIds VALUES (1, 'cudaMalloc')", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "INSERT INTO CPROF_API(processId, tid, start, end, nameId) VALUES (1, 1, ?1, ?1, 1)",
					    -1, &st, NULL), SQLITE_OK);
	for (i = 1; i <= 3 * CPROF_TSRC_BATCH + 7; i++) {
		sqlite3_bind_int(st, 1, i);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	ck_assert_int_eq(cprof_trace_src_load(db, -1, &s), 0);
	ck_assert_int_eq(cprof_tsrc_scan_calls(&s, check_order, &o), 0);
	ck_assert_uint_eq(o.n, 3 * CPROF_TSRC_BATCH + 7);
	cprof_trace_src_free(&s);
	/* a row out of range ends the stream after the rows before it */
	ck_assert_int_eq(sqlite3_exec(db, "UPDATE CPROF_API SET end = 0 WHERE start = 600", NULL, NULL, NULL), SQLITE_OK);
	o = (struct order){ 0, 0 };
	ck_assert_int_eq(cprof_trace_src_load(db, -1, &s), 0);
	ck_assert_int_eq(cprof_tsrc_scan_calls(&s, check_order, &o), -ERANGE);
	ck_assert_uint_eq(o.n, 599);
	cprof_trace_src_free(&s);
	sqlite3_close(db);
}
END_TEST

/* The joins over many blocks of each table, looked up the way the trace does while it streams (batches, so
 * loaded blocks are evicted): 8 blocks and more of calls from two threads whose ids interleave (tid in the
 * high bits, as the preload makes them), each with its external correlation, runtime record and, one call in
 * three, a kernel. At the end, a second row of call 5's id (tid 3) and a forged second correlation of
 * CUPTI id 1 (to call 7): the first rows stand, wherever the later ones lie. */
#define BLK_CALLS (8 * 2048 + 100)
#define BLK_EXT(i) ((int64_t)(((i) % 2) + 1) * 1099511627776 + (i) / 2)

struct blk_check {
	struct cprof_trace_src *s;
	size_t n;
};

static int check_block_joins(void *ctx, const struct cprof_tsrc_calls *b)
{
	struct blk_check *c = ctx;
	size_t k;

	for (k = 0; k < b->n; k++, c->n++) {
		int64_t i = c->n < BLK_CALLS ? (int64_t)c->n : 5, g, a, n, ext;
		const struct cprof_tsrc_hook *h = cprof_tsrc_hook_find(c->s, 1, b->ext[k]);
		const struct cprof_tsrc_api *x;

		ck_assert_int_eq(b->ext[k], BLK_EXT(i));
		ck_assert_int_eq(cprof_tsrc_call_corrs(c->s, 1, b->ext[k], &g, &a, &n), 1);
		ck_assert_int_eq(a, i + 1);
		ck_assert_int_eq(g, i % 3 == 0 ? i + 1 : CPROF_NO_ID);
		ck_assert_int_eq(n, i % 3 == 0);
		ck_assert_int_eq(cprof_tsrc_corr_gpu(c->s, 1, i + 1), i % 3 == 0);
		ck_assert_ptr_nonnull(h);
		ck_assert_int_eq(h->tid, 10 + i % 2);
		ck_assert_int_eq(h->mintid, i == 5 ? 3 : 10 + i % 2);
		x = cprof_tsrc_api_find(c->s, 1, i + 1);
		ck_assert_ptr_nonnull(x);
		ck_assert_int_eq(x->cbid, i);
		ck_assert_int_eq(cprof_tsrc_ext_of(c->s, 1, i + 1, &ext), 1);
		ck_assert_int_eq(ext, BLK_EXT(i));
	}
	return 0;
}

START_TEST(test_trace_src_joins_by_block)
{
	static const char *const rows =
		"INSERT INTO PROCESSES(id, pid) VALUES (1, 100);"
		"INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'k');"
		"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 16483)"
		" INSERT INTO CPROF_API(processId, pid, tid, start, end, correlationId, nameId, class)"
		" SELECT 1, 100, 10 + i % 2, 1000 + 2 * i, 1001 + 2 * i, (i % 2 + 1) * 1099511627776 + i / 2, 1, 'launch' FROM c;"
		"INSERT INTO CPROF_API(processId, pid, tid, start, end, correlationId, nameId, class)"
		" VALUES (1, 100, 3, 90000, 90001, 1099511627776 * 2 + 2, 1, 'launch');"
		"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 16483)"
		" INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION SELECT 1, 5, (i % 2 + 1) * 1099511627776 + i / 2, i + 1 FROM c;"
		"INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES (1, 5, 1099511627776 * 2 + 3, 1);"
		"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 16483)"
		" INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(processId, start, end, correlationId, nameId, cbid, threadId)"
		" SELECT 1, 1000 + 2 * i, 1001 + 2 * i, i + 1, 1, i, 4096 + i % 2 FROM c;"
		"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 3 FROM c WHERE i + 3 < 16484)"
		" INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(processId, start, end, deviceId, streamId, correlationId, nameId)"
		" SELECT 1, 100000 + i, 100001 + i, 0, 7, i + 1, 2 FROM c;";
	struct cprof_trace_src s;
	struct blk_check c = { &s, 0 };
	sqlite3 *db;
	int64_t tid;

	ck_assert_int_eq(BLK_CALLS, 16484);
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, cprof_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(cprof_trace_src_load(db, -1, &s), 0);
	ck_assert_int_eq(cprof_tsrc_scan_calls(&s, check_block_joins, &c), 0);
	ck_assert_uint_eq(c.n, BLK_CALLS + 1);
	/* the thread map: handle 4096 made the even calls' CUPTI side (tid 10), 4097 the odd ones' (tid 11; call 5's
	 * second row has tid 3) */
	ck_assert_int_eq(cprof_model_tid(&s.m, 1, 4096, &tid), 1);
	ck_assert_int_eq(tid, 10);
	ck_assert_int_eq(cprof_model_tid(&s.m, 1, 4097, &tid), 1);
	ck_assert_int_eq(tid, 3);
	/* a key no block holds, and one between two threads' runs */
	ck_assert_ptr_null(cprof_tsrc_hook_find(&s, 1, 1099511627776 * 3));
	ck_assert_ptr_null(cprof_tsrc_hook_find(&s, 1, 1099511627776 + 9000));
	ck_assert_ptr_null(cprof_tsrc_api_find(&s, 1, 16485));
	cprof_trace_src_free(&s);
	sqlite3_close(db);
}
END_TEST

Suite *trace_src_suite(void)
{
	Suite *s = suite_create("trace_src");
	TCase *tc = tcase_create("trace_src");

	tcase_add_test(tc, test_trace_src_call_corrs);
	tcase_add_test(tc, test_trace_src_hooks_and_thread_map);
	tcase_add_test(tc, test_trace_src_innermost_op);
	tcase_add_test(tc, test_trace_src_innermost_op_skips_siblings);
	tcase_add_test(tc, test_trace_src_nvtx_layout);
	tcase_add_test(tc, test_trace_src_rank_filter);
	tcase_add_test(tc, test_trace_src_batches_and_bad_time);
	tcase_add_test(tc, test_trace_src_joins_by_block);
	suite_add_tcase(s, tc);
	return s;
}
