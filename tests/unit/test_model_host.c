/* Unit tests of the model's timeline extras: the thread map from the arrays against the SQL join, driver-only calls, names in table order. */
#include <check.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "common/schema.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

/* Process 1: two hooked threads (10, 11) stored out of time order, CUPTI handles 0xa (-> 10), 0xb and
 * 0xc (-> 11, 0xc through a driver record only), 0xd seen by the driver API alone. */
static sqlite3 *fixture(void)
{
	static const char *const rows =
		"INSERT INTO PROCESSES(id, pid) VALUES (1, 100);"
		"INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'cudaMalloc'), (3, 'cuLaunchKernel'),"
		" (4, 'cudaGetDeviceCount_v3020'), (5, 'cuCtxSynchronize'), (6, 'step');"
		/* table order: cudaMalloc first, though the launch starts earlier */
		"INSERT INTO CPROF_API(processId, tid, start, end, correlationId, nameId, class, nested) VALUES"
		" (1, 11, 500, 600, 7, 2, 'memory', 0), (1, 10, 100, 200, 5, 1, 'launch', 0),"
		" (1, 10, 150, 160, 8, 5, 'sync', 1);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(processId, start, end, correlationId, nameId, threadId) VALUES"
		" (1, 110, 190, 50, 1, 10), (1, 510, 590, 51, 2, 11), (1, 50, 60, 52, 4, 11);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER(processId, start, end, correlationId, nameId, threadId) VALUES"
		" (1, 120, 130, 50, 3, 10), (1, 700, 710, 60, 5, 12), (1, 800, 810, 61, 3, 13);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES (1, 5, 5, 50), (1, 5, 7, 51), (1, 5, 7, 60);"
		"INSERT INTO NVTX_EVENTS(processId, tid, start, end, eventType, textId, depth) VALUES"
		" (1, 10, 90, NULL, 'range', 6, 0), (1, 10, 95, 99, 'range', 6, 1), (1, 10, 96, NULL, 'mark', 6, 0);";
	sqlite3 *db;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, cprof_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
	return db;
}

START_TEST(test_model_host_thread_map_matches_join)
{
	sqlite3 *db = fixture();
	struct cprof_model joined, arrays;
	size_t i;

	ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_THREADS, &joined), 0);
	ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_ALL | CPROF_MODEL_HOST, &arrays), 0);
	ck_assert_uint_eq(joined.nthreads, 3);
	ck_assert_uint_eq(arrays.nthreads, joined.nthreads);
	for (i = 0; i < joined.nthreads; i++) {
		ck_assert_int_eq(arrays.threads[i].proc, joined.threads[i].proc);
		ck_assert_int_eq(arrays.threads[i].handle, joined.threads[i].handle);
		ck_assert_int_eq(arrays.threads[i].tid, joined.threads[i].tid);
	}
	ck_assert_int_eq(arrays.threads[2].handle, 12); /* known through its driver record only */
	ck_assert_int_eq(arrays.threads[2].tid, 11);
	cprof_model_free(&joined);
	cprof_model_free(&arrays);
	sqlite3_close(db);
}
END_TEST

START_TEST(test_model_host_driver_only_and_first_names)
{
	sqlite3 *db = fixture();
	struct cprof_model m;

	ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_ALL | CPROF_MODEL_HOST, &m), 0);
	/* covered by a runtime record (50) or by our external id (60): not driver-only */
	ck_assert_uint_eq(m.ndrv, 1);
	ck_assert_int_eq(m.drv[0].corr, 61);
	ck_assert_int_eq(m.drv[0].tid, 13);
	ck_assert_uint_eq(m.nfirst_drv, 1);
	ck_assert_int_eq(m.first_drv[0].name, 3);
	/* table order, not time order; the nested call is not drawn, so not named */
	ck_assert_uint_eq(m.nfirst_calls, 2);
	ck_assert_int_eq(m.first_calls[0].name, 2);
	ck_assert_int_eq(m.first_calls[0].cls, CPROF_CALL_MEMORY);
	ck_assert_int_eq(m.first_calls[1].name, 1);
	ck_assert_int_eq(m.first_calls[1].cls, CPROF_CALL_LAUNCH);
	ck_assert_int_eq(m.calls[0].name, 1); /* the array itself is in time order */
	ck_assert_uint_eq(m.nfirst_rt, 1);
	ck_assert_int_eq(m.first_rt[0].name, 4);
	/* ranges only, by start; the one never ended is open */
	ck_assert_uint_eq(m.nnvtx, 2);
	ck_assert_int_eq(m.nvtx[0].open, 1);
	ck_assert_int_eq(m.nvtx[1].depth, 1);
	ck_assert_int_eq(m.nvtx[1].end, 99);
	cprof_model_free(&m);
	/* without HOST none of it is loaded */
	ck_assert_int_eq(cprof_model_load(db, CPROF_MODEL_ALL, &m), 0);
	ck_assert_uint_eq(m.ndrv + m.nnvtx, 0);
	cprof_model_free(&m);
	sqlite3_close(db);
}
END_TEST

Suite *model_host_suite(void)
{
	Suite *s = suite_create("model_host");
	TCase *tc = tcase_create("host");

	tcase_add_test(tc, test_model_host_thread_map_matches_join);
	tcase_add_test(tc, test_model_host_driver_only_and_first_names);
	suite_add_tcase(s, tc);
	return s;
}
