/* Unit tests of cprof's own cost in a window (report/model/cost.c) on small in-memory models. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/model/analysis.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

#define MS 1000000ULL

static struct cprof_call calls[200];
static struct cprof_cost_row rows[8];
static struct cprof_proc procs[1] = { { .id = 1 } };
static struct cprof_model m;

/* 100 calls in [0, 100 ms) then 100 in [1000, 1100 ms); COST rows at 100 ms steps with the given waits */
static void build(const uint64_t *wait_at, const uint64_t *flusher_at, size_t nrows)
{
	memset(&m, 0, sizeof(m));
	for (int i = 0; i < 200; i++) {
		uint64_t s = (i < 100 ? 0 : 1000 * MS) + (uint64_t)(i % 100) * MS;

		calls[i] = (struct cprof_call){ .start = s, .end = s + MS / 2, .proc = 1, .outer = 1 };
	}
	ck_assert_int_eq(cprof_model_from_arrays(&m, NULL, 0, calls, 200, NULL, 0, 0), 0);
	for (size_t i = 0; i < nrows; i++)
		rows[i] = (struct cprof_cost_row){ .proc = 1, .time = 100 * MS + i * 500 * MS, .hook_calls = 200,
						   .hook_ns = 200 * 100, .sampled_calls = 3, .stack_calls = 4,
						   .stack_ns = 4 * 50000, .flusher_cpu_ns = flusher_at[i], .app_wait_ns = wait_at[i] };
	m.cost = rows;
	m.ncost = nrows;
	m.procs = procs;
	m.nprocs = 1;
}

/* every array of the model is this file's own (static): nothing to free */
static void done(void)
{
	memset(&m, 0, sizeof(m));
}

/* hooks and stacks per call: the window with half the calls gets half; CUPTI's part is added as given */
START_TEST(test_cost_per_call_share)
{
	static const uint64_t w[] = { 0, 0, 0 }, fcpu[] = { 0, 0, 0 };
	struct cprof_cost c;

	build(w, fcpu, 3);
	cprof_cost_window(&m, 0, 1000 * MS, 1100 * MS, 7000, &c);
	ck_assert(c.measured);
	ck_assert_uint_eq(c.calls, 100);
	ck_assert_uint_eq(c.hook_ns, 100 * 100);
	ck_assert_uint_eq(c.stack_ns, 2 * 50000);
	ck_assert_uint_eq(c.cupti_overhead_ns, 7000);
	ck_assert_uint_eq(c.wait_attributed_ns, 0);
	ck_assert_uint_eq(c.total_ns, 100 * 100 + 2 * 50000 + 7000);
	done();
}
END_TEST

/* a window's calls: two searches when every call is the process's (calls_proc), a walk otherwise; the same
 * counts either way, and a call of another process is not counted for this one */
START_TEST(test_cost_window_calls_by_search)
{
	static const uint64_t w[] = { 0, 0, 0 }, fcpu[] = { 0, 0, 0 };
	struct cprof_cost walk, search;
	uint64_t ws, we;

	build(w, fcpu, 3);
	for (ws = 0; ws < 1200 * MS; ws += 37 * MS)
		for (we = ws; we < 1300 * MS; we += 53 * MS) {
			m.calls_proc = 0;
			cprof_cost_window(&m, 1, ws, we, 0, &walk);
			m.calls_proc = 1;
			cprof_cost_window(&m, 1, ws, we, 0, &search);
			ck_assert_uint_eq(walk.calls, search.calls);
			ck_assert_uint_eq(walk.hook_ns, search.hook_ns);
		}
	m.calls_proc = 1;
	cprof_cost_window(&m, 1, 1000 * MS, 1100 * MS, 0, &search);
	ck_assert_uint_eq(search.calls, 100);
	/* one call of process 2: process 1's window is walked and leaves it out */
	calls[150].proc = 2;
	m.calls_proc = 0;
	cprof_cost_window(&m, 1, 1000 * MS, 1100 * MS, 0, &walk);
	ck_assert_uint_eq(walk.calls, 99);
	done();
}
END_TEST

/* waiting is read in time: a window over a stretch where the threads waited gets that wait, one where they
 * did not gets none, and never more than cprof's own threads' CPU over the same stretch */
START_TEST(test_cost_wait_in_time_and_capped)
{
	/* rows at 100, 600, 1100 ms: the wait grew by 40 ms between 600 and 1100, the flusher's CPU by 10 ms */
	static const uint64_t w[] = { 0, 0, 40 * MS }, fcpu[] = { 1 * MS, 1 * MS, 11 * MS };
	struct cprof_cost c;

	build(w, fcpu, 3);
	cprof_cost_window(&m, 0, 0, 100 * MS, 0, &c);
	ck_assert_uint_eq(c.app_wait_ns, 0);
	ck_assert_uint_eq(c.wait_attributed_ns, 0);
	cprof_cost_window(&m, 1, 600 * MS, 1100 * MS, 0, &c);
	ck_assert_uint_eq(c.app_wait_ns, 40 * MS);
	ck_assert_uint_eq(c.flusher_cpu_ns, 10 * MS);
	/* 40 ms waited, but cprof's threads ran 10 ms: at most 10 ms is cprof's doing */
	ck_assert_uint_eq(c.wait_attributed_ns, 10 * MS);
	/* half of that stretch: interpolated */
	cprof_cost_window(&m, 1, 850 * MS, 1100 * MS, 0, &c);
	ck_assert_uint_eq(c.app_wait_ns, 20 * MS);
	done();
}
END_TEST

/* a profile without CPROF_COST: only CUPTI's part is known, and it says so */
START_TEST(test_cost_unmeasured)
{
	struct cprof_cost c;

	build(NULL, NULL, 0);
	cprof_cost_window(&m, 0, 0, 2000 * MS, 5000, &c);
	ck_assert(!c.measured);
	ck_assert_uint_eq(c.hook_ns, 0);
	ck_assert_uint_eq(c.total_ns, 5000);
	done();
}
END_TEST

Suite *cost_suite(void)
{
	Suite *s = suite_create("cost");
	TCase *tc = tcase_create("window");

	tcase_add_test(tc, test_cost_per_call_share);
	tcase_add_test(tc, test_cost_wait_in_time_and_capped);
	tcase_add_test(tc, test_cost_unmeasured);
	tcase_add_test(tc, test_cost_window_calls_by_search);
	suite_add_tcase(s, tc);
	return s;
}
