/* Unit tests of the ending's look-ups on the model's arrays (report/model/ending.c) against the queries they replace. */
#include <check.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/schema.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

static const char strings_sql[] =
	"INSERT INTO StringIds(id, value) VALUES(1, 'cudaLaunchKernel'), (2, 'cudaStreamSynchronize'),"
	" (3, 'cudaMemcpyAsync'), (4, 'cudaDeviceSynchronize'), (5, 'cudaMalloc'), (6, 'cublasSgemm_v2'),"
	" (10, '_Z4kernAv'), (11, '_Z4kernBv'), (12, 'kernC');"
	"INSERT INTO PROCESSES(id, pid, ppid, ending) VALUES(1, 100, 1, 'CUDA error 700 (cudaErrorIllegalAddress) from"
	" cudaStreamSynchronize, then no goodbye (killed, or still running)'), (2, 200, 1, 'exit');";

static sqlite3 *empty_profile(void)
{
	sqlite3 *db;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, cprof_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, strings_sql, NULL, NULL, NULL), SQLITE_OK);
	return db;
}

static void exec_ok(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err ? err : "?");
}

/* one CPROF_API row; stream, kname, corr: -1 for NULL */
static void call(sqlite3 *db, int64_t id, int64_t proc, int64_t tid, int64_t start, int64_t end, int64_t name,
		 int64_t ret, int nested, int64_t stream, int64_t kname, int64_t corr)
{
	char sql[512];
	const char *cls = name == 1 ? "'launch'" : name == 6 ? "'gemm'" : name == 2 || name == 4 ? "'sync'" : "'memory'";
	char s[24] = "NULL", k[24] = "NULL", c[24] = "NULL";

	if (stream >= 0)
		snprintf(s, sizeof(s), "%lld", (long long)stream);
	if (kname >= 0)
		snprintf(k, sizeof(k), "%lld", (long long)kname);
	if (corr >= 0)
		snprintf(c, sizeof(c), "%lld", (long long)corr);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO CPROF_API(id, processId, pid, tid, start, end, correlationId, nameId, class, returnValue, nested,"
		 " kernelNameId, stream) VALUES(%lld, %lld, %lld, %lld, %lld, %lld, %s, %lld, %s, %lld, %d, %s, %s)",
		 (long long)id, (long long)proc, (long long)(proc * 100), (long long)tid, (long long)start, (long long)end, c,
		 (long long)name, cls, (long long)ret, nested, k, s);
	exec_ok(db, sql);
}

/* call (proc, ext) -> CUPTI id cupti -> a kernel on CUPTI stream sid */
static void launched(sqlite3 *db, int64_t proc, int64_t ext, int64_t cupti, int64_t sid)
{
	char sql[400];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES(%lld, 5, %lld, %lld);"
		 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(processId, start, end, deviceId, streamId, correlationId, nameId)"
		 " VALUES(%lld, %lld, %lld, 0, %lld, %lld, 10);",
		 (long long)proc, (long long)ext, (long long)cupti, (long long)proc, (long long)cupti * 10,
		 (long long)cupti * 10 + 1, (long long)sid, (long long)cupti);
	exec_ok(db, sql);
}

static const struct cprof_end *end_of(const struct cprof_model *m, int64_t proc)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].id == proc)
			return m->procs[i].end;
	return NULL;
}

static int same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && !strcmp(a, b));
}

/* what the arrays found (a) is what the queries found (q), field by field */
static void same_end(const struct cprof_end *a, const struct cprof_end *q, const char *what)
{
	size_t i;

	ck_assert_msg(a && q, "%s: no ending", what);
	ck_assert_msg(a->err == q->err && a->err_tid == q->err_tid && a->err_device == q->err_device &&
			      same_str(a->err_api, q->err_api),
		      "%s: error %lld/%lld on %lld/%lld (%s/%s)", what, (long long)a->err, (long long)q->err,
		      (long long)a->err_tid, (long long)q->err_tid, a->err_api ? a->err_api : "-", q->err_api ? q->err_api : "-");
	ck_assert_msg(a->nerr_kernels == q->nerr_kernels, "%s: %zu error kernels, want %zu", what, a->nerr_kernels, q->nerr_kernels);
	for (i = 0; i < a->nerr_kernels; i++)
		ck_assert_msg(a->err_kernels[i].stream == q->err_kernels[i].stream &&
				      a->err_kernels[i].handle == q->err_kernels[i].handle &&
				      same_str(a->err_kernels[i].name, q->err_kernels[i].name),
			      "%s: error kernel %zu: %s on %lld, want %s on %lld", what, i, a->err_kernels[i].name,
			      (long long)a->err_kernels[i].stream, q->err_kernels[i].name, (long long)q->err_kernels[i].stream);
	ck_assert_msg(a->ncalls == q->ncalls, "%s: %zu thread calls, want %zu", what, a->ncalls, q->ncalls);
	for (i = 0; i < a->ncalls; i++)
		ck_assert_msg(a->calls[i].tid == q->calls[i].tid && a->calls[i].ret == q->calls[i].ret &&
				      same_str(a->calls[i].api, q->calls[i].api) && same_str(a->calls[i].kernel, q->calls[i].kernel),
			      "%s: thread call %zu: %lld %s %s %lld, want %lld %s %s %lld", what, i, (long long)a->calls[i].tid,
			      a->calls[i].api, a->calls[i].kernel ? a->calls[i].kernel : "-", (long long)a->calls[i].ret,
			      (long long)q->calls[i].tid, q->calls[i].api, q->calls[i].kernel ? q->calls[i].kernel : "-",
			      (long long)q->calls[i].ret);
	ck_assert_msg(a->nkernels == q->nkernels, "%s: %zu stream kernels, want %zu", what, a->nkernels, q->nkernels);
	for (i = 0; i < a->nkernels; i++)
		ck_assert_msg(a->kernels[i].stream == q->kernels[i].stream && a->kernels[i].handle == q->kernels[i].handle &&
				      same_str(a->kernels[i].name, q->kernels[i].name),
			      "%s: stream kernel %zu: %s on %llu/%lld, want %s on %llu/%lld", what, i, a->kernels[i].name,
			      (unsigned long long)a->kernels[i].handle, (long long)a->kernels[i].stream, q->kernels[i].name,
			      (unsigned long long)q->kernels[i].handle, (long long)q->kernels[i].stream);
}

/* The model with its timeline looks up on its arrays, one with the GPU table only on arrays read for it;
 * both must say what the queries say (the path every model took before), with and without the indexes
 * older cprofd made. */
static void check_same(sqlite3 *db, const char *what)
{
	struct cprof_model a, q, g;
	char w[96];

	ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_TIMELINE, &a), 0);
	ck_assert_int_eq(cprof_model_load_ends_by_query(db, &q), 0);
	ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_GPU, &g), 0);
	snprintf(w, sizeof(w), "%s, no index", what);
	same_end(end_of(&a, 1), end_of(&q, 1), w);
	snprintf(w, sizeof(w), "%s, the GPU table's model", what);
	same_end(end_of(&g, 1), end_of(&q, 1), w);
	ck_assert_str_eq(a.procs[0].bye, q.procs[0].bye);
	ck_assert_str_eq(g.procs[0].bye, q.procs[0].bye);
	cprof_model_free(&q);
	cprof_model_free(&g);
	exec_ok(db, "CREATE INDEX api_start ON CPROF_API(start);"
		    "CREATE INDEX ext_ext ON CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION(processId, externalId);"
		    "CREATE INDEX k_corr ON CUPTI_ACTIVITY_KIND_KERNEL(processId, correlationId);");
	ck_assert_int_eq(cprof_model_load_ends_by_query(db, &q), 0);
	snprintf(w, sizeof(w), "%s, old indexes", what);
	same_end(end_of(&a, 1), end_of(&q, 1), w);
	cprof_model_free(&q);
	cprof_model_free(&a);
}

/* a small run with known answers: thread 100 launches on streams 7 and 9, syncs stream 7 and gets 700, then
 * every call fails; thread 101 polls (600) */
static sqlite3 *known_profile(void)
{
	sqlite3 *db = empty_profile();

	call(db, 1, 1, 100, 10, 12, 5, 0, 0, -1, -1, 1);
	call(db, 2, 1, 100, 20, 22, 1, 0, 0, 7, 10, 2);
	call(db, 3, 1, 100, 30, 32, 1, 0, 0, 7, 11, 3);
	call(db, 4, 1, 101, 35, 36, 5, 0, 0, -1, -1, 4);
	call(db, 5, 1, 100, 40, 42, 1, 0, 0, 9, 12, 5);
	call(db, 6, 1, 100, 50, 52, 2, 700, 0, 7, -1, 6);
	call(db, 7, 1, 101, 55, 56, 5, 600, 0, -1, -1, 7);
	call(db, 8, 1, 100, 60, 62, 1, 700, 0, 9, 11, 8); /* its kernel never ran */
	call(db, 9, 1, 100, 61, 61, 5, 700, 1, -1, -1, 9); /* nested: never the ending's */
	call(db, 10, 2, 200, 45, 46, 1, 0, 0, 7, 12, 1); /* another process: same handle, same ids */
	launched(db, 1, 2, 1002, 13);
	launched(db, 1, 3, 1003, 13);
	launched(db, 1, 5, 1005, 14);
	launched(db, 2, 1, 1002, 99);
	exec_ok(db, "INSERT INTO THREADS VALUES(1, 100, 10, 62, 6), (1, 101, 35, 56, 2), (2, 200, 45, 46, 1)");
	return db;
}

START_TEST(test_ending_arrays_known)
{
	sqlite3 *db = known_profile();
	struct cprof_model m;
	const struct cprof_end *e;

	ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_TIMELINE, &m), 0);
	ck_assert_ptr_nonnull(e = end_of(&m, 1));
	/* the first failing call of the run that ends the thread: the sync, not the launch after it */
	ck_assert_int_eq(e->err, 700);
	ck_assert_str_eq(e->err_api, "cudaStreamSynchronize");
	ck_assert_int_eq(e->err_tid, 100);
	ck_assert_int_eq(e->err_device, 0);
	/* the last launches on its stream (7) before it, with CUPTI's stream of their kernels */
	ck_assert_uint_eq(e->nerr_kernels, 2);
	ck_assert_str_eq(e->err_kernels[0].name, "_Z4kernBv");
	ck_assert_int_eq(e->err_kernels[0].stream, 13);
	ck_assert_str_eq(e->err_kernels[1].name, "_Z4kernAv");
	ck_assert_uint_eq(e->err_kernels[1].handle, 7);
	/* each thread's last outermost call */
	ck_assert_uint_eq(e->ncalls, 2);
	ck_assert_int_eq(e->calls[0].tid, 100);
	ck_assert_str_eq(e->calls[0].api, "cudaLaunchKernel");
	ck_assert_str_eq(e->calls[0].kernel, "_Z4kernBv");
	ck_assert_int_eq(e->calls[0].ret, 700);
	ck_assert_int_eq(e->calls[1].tid, 101);
	ck_assert_int_eq(e->calls[1].ret, 600);
	ck_assert_ptr_null(e->calls[1].kernel);
	/* per stream handle, latest first: 7 (kernB, kernA), 9 (the failed launch, no kernel; kernC) */
	ck_assert_uint_eq(e->nkernels, 4);
	ck_assert_uint_eq(e->kernels[0].handle, 7);
	ck_assert_str_eq(e->kernels[0].name, "_Z4kernBv");
	ck_assert_uint_eq(e->kernels[2].handle, 9);
	ck_assert_str_eq(e->kernels[2].name, "_Z4kernBv");
	ck_assert_int_eq(e->kernels[2].stream, -1);
	ck_assert_str_eq(e->kernels[3].name, "kernC");
	ck_assert_int_eq(e->kernels[3].stream, 14);
	cprof_model_free(&m);
	check_same(db, "known");
	sqlite3_close(db);

	/* the thread went on: a success after the error means it was not the end */
	db = known_profile();
	call(db, 11, 1, 100, 70, 71, 5, 0, 0, -1, -1, 11);
	ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_TIMELINE, &m), 0);
	ck_assert_int_eq(end_of(&m, 1)->err, 0);
	ck_assert_ptr_null(end_of(&m, 1)->err_api);
	cprof_model_free(&m);
	check_same(db, "went on");
	sqlite3_close(db);

	/* a device-wide call fails: every stream's launches before it */
	db = known_profile();
	exec_ok(db, "UPDATE CPROF_API SET nameId = 4, class = 'sync', stream = NULL WHERE id = 6");
	ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_TIMELINE, &m), 0);
	ck_assert_int_eq(end_of(&m, 1)->err_device, 1);
	ck_assert_uint_eq(end_of(&m, 1)->nerr_kernels, 3);
	ck_assert_str_eq(end_of(&m, 1)->err_kernels[0].name, "kernC");
	cprof_model_free(&m);
	check_same(db, "device");
	sqlite3_close(db);
}
END_TEST

/* the bounds the queries had: the error among the process's last 1000 outermost calls, the stream kernels among
 * the last 20,000 calls; one call more and it is out */
static sqlite3 *bound_profile(int others, int nested_others)
{
	sqlite3 *db = empty_profile();
	char sql[200];
	int i;

	exec_ok(db, "BEGIN");
	call(db, 1, 1, 100, 10, 11, 1, 700, 0, 42, 10, 1); /* a launch on stream 42 that fails, on thread 100 */
	launched(db, 1, 1, 1001, 77);
	for (i = 0; i < others; i++) /* thread 101 goes on */
		call(db, 2 + i, 1, 101, 20 + i, 20 + i, 5, 0, i < nested_others, -1, -1, 2 + i);
	snprintf(sql, sizeof(sql), "INSERT INTO THREADS VALUES(1, 100, 10, 11, 1), (1, 101, 20, %d, %d)", 20 + others, others);
	exec_ok(db, sql);
	exec_ok(db, "COMMIT");
	return db;
}

START_TEST(test_ending_arrays_bounds)
{
	static const struct { int others, nested, err, kernels; } cases[] = {
		{ 999, 0, 700, 1 },     /* the 1000th outermost call from the end */
		{ 1000, 0, 0, 1 },      /* the 1001st */
		{ 1500, 501, 700, 1 },  /* nested calls do not count */
		{ 19999, 19999, 700, 1 }, /* the 20,000th call from the end, nested or not */
		{ 20000, 20000, 700, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sqlite3 *db = bound_profile(cases[i].others, cases[i].nested);
		struct cprof_model m;
		const struct cprof_end *e;
		char what[64];

		ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_TIMELINE, &m), 0);
		e = end_of(&m, 1);
		ck_assert_msg(e->err == cases[i].err, "%d calls after: error %lld", cases[i].others, (long long)e->err);
		ck_assert_msg(e->nkernels == (size_t)cases[i].kernels, "%d calls after: %zu kernels", cases[i].others, e->nkernels);
		if (e->nkernels)
			ck_assert_int_eq(e->kernels[0].stream, 77);
		cprof_model_free(&m);
		snprintf(what, sizeof(what), "bounds %d", cases[i].others);
		check_same(db, what);
		sqlite3_close(db);
	}
}
END_TEST

static uint64_t lcg;

static unsigned rnd(unsigned n)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(lcg >> 33) % n;
}

/* n calls of two processes, three threads in the first, rows out of start order, ties of start, nested calls,
 * NULL streams and ids, kernels CUPTI never delivered. mode 0: errors anywhere; 1: only in the first half (too
 * far back to be the ending); 2: thread 100 fails for good after the middle (a sticky error). */
static sqlite3 *random_profile(uint64_t seed, int n, int mode)
{
	static const int64_t rets[] = { 0, 0, 0, 0, 600, 700, 2 }, streams[] = { -1, 0, 7, 9 }, knames[] = { 10, 11, 12, -1, 99 };
	sqlite3 *db = empty_profile();
	int64_t t = 1000, last[3] = { 0, 0, 0 }, cupti = 5000;
	int i;

	lcg = seed;
	exec_ok(db, "BEGIN");
	for (i = 1; i <= n; i++) {
		int64_t proc = rnd(8) == 0 ? 2 : 1, tid = proc == 2 ? 200 : 100 + rnd(3);
		int64_t start = t + rnd(5), end = start + rnd(3), name = 1 + rnd(6), ret = rets[rnd(7)];
		int64_t corr = rnd(20) ? i : -1, kname = name == 1 ? knames[rnd(5)] : -1;

		t += rnd(3);
		if (mode == 1 && i > n / 2 && ret != 600)
			ret = 0;
		if (mode == 2 && i > n / 2 && tid == 100)
			ret = 700;
		call(db, i, proc, tid, start, end, name, ret, rnd(10) == 0, streams[rnd(4)], kname, corr);
		if (proc == 1 && end > last[tid - 100])
			last[tid - 100] = end;
		if ((name == 1 || name == 6) && corr >= 0 && rnd(4)) {
			launched(db, proc, corr, ++cupti, 13 + rnd(3));
			if (rnd(10) == 0) /* a second kernel of the same CUPTI id, a later row */
				launched(db, proc, corr, cupti, 20);
		}
	}
	{
		char sql[300];

		/* thread 102's end cut short: its later calls are past its THREADS.lastNs */
		snprintf(sql, sizeof(sql), "INSERT INTO THREADS VALUES(1, 100, 0, %lld, 1), (1, 101, 0, %lld, 1),"
			 " (1, 102, 0, %lld, 1), (1, 103, 0, NULL, 0), (2, 200, 0, %lld, 1)",
			 (long long)last[0], (long long)last[1], (long long)(last[2] - 40), (long long)t);
		exec_ok(db, sql);
	}
	exec_ok(db, "COMMIT");
	return db;
}

START_TEST(test_ending_arrays_match_queries)
{
	static const struct { uint64_t seed; int n, mode; } runs[] = {
		{ 1, 300, 0 }, { 2, 3000, 0 }, { 3, 3000, 1 }, { 4, 3000, 2 }, { 5, 40, 0 }, { 6, 2000, 2 },
		{ 7, 25000, 0 }, /* more than the 20,000 calls the stream kernels are looked for in */
	};
	size_t i;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		sqlite3 *db = random_profile(runs[i].seed, runs[i].n, runs[i].mode);
		char what[64];

		snprintf(what, sizeof(what), "seed %llu", (unsigned long long)runs[i].seed);
		check_same(db, what);
		sqlite3_close(db);
	}
}
END_TEST

Suite *ending_suite(void)
{
	Suite *s = suite_create("ending");
	TCase *tc = tcase_create("arrays");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_ending_arrays_known);
	tcase_add_test(tc, test_ending_arrays_match_queries);
	tcase_add_test(tc, test_ending_arrays_bounds);
	suite_add_tcase(s, tc);
	return s;
}
