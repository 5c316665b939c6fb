/* Unit tests of how the flusher gives a CUPTI API record its hooked call by thread and time (preload/link.c). */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "preload/cprof.h"
#include "tests/unit/tests.h"

#define TID 4242u
#define PTID 0x9abcdef0u

static void setup(void)
{
	cprof_link_reset();
	atomic_store(&cprof_link_push, 0); /* the times proved: most tests look at them alone */
}

/* a runtime record of thread id th over [s, e], tagged with pushed (0: none) */
static struct cprof_wire_gpu api(uint32_t th, uint64_t s, uint64_t e, uint64_t pushed)
{
	struct cprof_wire_gpu g;

	memset(&g, 0, sizeof(g));
	g.kind = CPROF_GPU_RUNTIME;
	g.start_ns = s;
	g.end_ns = e;
	g.u32[2] = th;
	if (pushed) {
		g.u32[4] = CPROF_LINK_EXT_KIND;
		g.u64[0] = pushed;
	}
	return g;
}

static uint64_t linked_to(struct cprof_wire_gpu g)
{
	ck_assert_int_eq(cprof_link_record(&g, 0), 0);
	return g.u32[4] == CPROF_LINK_EXT_KIND ? g.u64[0] : 0;
}

/* a record inside a cudart call nested in a cuBLAS call belongs to the cudart call; one inside the cuBLAS
 * call only, to it; the spans come in the order the calls ended (the inner first) */
START_TEST(test_link_innermost_call)
{
	cprof_link_span(TID, PTID, 1000, 2000, 11);  /* cudaLaunchKernel inside ... */
	cprof_link_span(TID, PTID, 500, 5000, 10);   /* ... cublasGemmEx */
	cprof_link_span(TID, PTID, 6000, 7000, 12);  /* the next launch */
	ck_assert_uint_eq(linked_to(api(PTID, 1100, 1900, 0)), 11);
	ck_assert_uint_eq(linked_to(api(PTID, 2500, 4000, 0)), 10);
	ck_assert_uint_eq(linked_to(api(PTID, 6100, 6900, 0)), 12);
}
END_TEST

/* CUPTI's thread id is pthread_self() unless the program asked for the kernel's; either finds the thread,
 * and another thread's calls are not this one's */
START_TEST(test_link_thread_ids)
{
	cprof_link_span(TID, PTID, 1000, 2000, 21);
	cprof_link_span(TID + 1, PTID + 1, 1000, 2000, 22);
	ck_assert_uint_eq(linked_to(api(TID, 1100, 1900, 0)), 21);
	ck_assert_uint_eq(linked_to(api(PTID + 1, 1100, 1900, 0)), 22);
	ck_assert_uint_eq(linked_to(api(TID + 7, 1100, 1900, 0)), 0);
}
END_TEST

/* the call before ended within the slack of a short record's end: the call that holds it exactly wins */
START_TEST(test_link_exact_before_loose)
{
	cprof_link_span(TID, PTID, 0, 1000, 31);
	cprof_link_span(TID, PTID, 1050, 1300, 32);
	ck_assert_uint_eq(linked_to(api(PTID, 1100, 1150, 0)), 32);
}
END_TEST

/* a record a little outside its call (the two clocks differ by tens of ns) still finds it */
START_TEST(test_link_loose_within_slack)
{
	struct cprof_link_stats st;

	cprof_link_span(TID, PTID, 1000, 2000, 41);
	ck_assert_uint_eq(linked_to(api(PTID, 950, 2050, 0)), 41);
	ck_assert_uint_eq(linked_to(api(PTID, 5000, 6000, 0)), 0); /* in no call */
	/* an unhooked call that ended just before a hooked one began (a driver query before a launch) */
	cprof_link_span(TID, PTID, 7000, 8000, 42);
	ck_assert_uint_eq(linked_to(api(PTID, 6900, 6990, 0)), 0);
	cprof_link_stats(&st);
	ck_assert_uint_eq(st.linked, 1);
	ck_assert_uint_eq(st.loose, 1);
	ck_assert_uint_eq(st.unlinked, 2);
}
END_TEST

/* a record in no call drained yet, recent enough that its call may still be running or leaving its ring,
 * is held; once the call's span is in, it finds it */
START_TEST(test_link_hold_recent)
{
	struct cprof_wire_gpu g = api(PTID, 9100, 9900, 0);

	ck_assert_int_eq(cprof_link_record(&g, 9000), 1);
	ck_assert_uint_eq(g.u32[4], 0);
	cprof_link_span(TID, PTID, 9000, 10000, 51);
	ck_assert_int_eq(cprof_link_record(&g, 9000), 0);
	ck_assert_uint_eq(g.u64[0], 51);
	g = api(PTID, 100, 200, 0); /* older than hold_from: not held */
	ck_assert_int_eq(cprof_link_record(&g, 9000), 0);
	/* after the thread's last call drained: perhaps inside one still running, held; once a call that
	 * ended after it is in, it is in no call */
	g = api(PTID, 10500, 10600, 0);
	ck_assert_int_eq(cprof_link_record(&g, 9000), 1);
	cprof_link_span(TID, PTID, 11000, 12000, 52);
	ck_assert_int_eq(cprof_link_record(&g, 9000), 0);
	ck_assert_uint_eq(g.u32[4], 0);
}
END_TEST

/* a pushed id is checked: a nested call inside the pushed one keeps the innermost (as a push of its own
 * id would have); a record the times put elsewhere disagrees, and enough of those distrust the times */
START_TEST(test_link_checks_pushed)
{
	struct cprof_link_stats st;

	cprof_link_span(TID, PTID, 1000, 2000, 61);
	cprof_link_span(TID, PTID, 500, 5000, 60);
	ck_assert_uint_eq(linked_to(api(PTID, 1100, 1900, 60)), 61);
	ck_assert_uint_eq(linked_to(api(PTID, 3000, 4000, 60)), 60);
	cprof_link_stats(&st);
	ck_assert_uint_eq(st.checked, 2);
	ck_assert_uint_eq(st.disagreed, 0);
	ck_assert(cprof_link_trusted());
	for (uint64_t i = 0; i < 4; i++) {
		uint64_t s = 10000 + i * 1000;

		cprof_link_span(TID, PTID, s, s + 500, 70 + i);
		/* CUPTI's clock 5 us off: the record lies in no call; its pushed id is kept */
		ck_assert_uint_eq(linked_to(api(PTID, s + 5100, s + 5200, 70 + i)), 70 + i);
	}
	cprof_link_stats(&st);
	ck_assert_uint_eq(st.disagreed, 4);
	ck_assert(!cprof_link_trusted());
}
END_TEST

/* every call pushes until CPROF_LINK_PROOF checks agree; then the times serve; checks that disagree later bring
 * the push back for good; meanwhile untagged records are left to their pushed ids alone */
START_TEST(test_link_proof_then_times)
{
	cprof_link_reset();
	ck_assert_int_eq(atomic_load(&cprof_link_push), 1);
	cprof_link_span(TID, PTID, 100, 200, 90);
	ck_assert_uint_eq(linked_to(api(PTID, 110, 190, 0)), 0); /* pushing: not by the times */
	for (uint64_t i = 1; i <= CPROF_LINK_PROOF; i++) {
		cprof_link_span(TID, PTID, i * 1000, i * 1000 + 500, 100 + i);
		ck_assert_uint_eq(linked_to(api(PTID, i * 1000 + 100, i * 1000 + 400, 100 + i)), 100 + i);
		ck_assert_int_eq(cprof_link_update(), 0);
		ck_assert_int_eq(atomic_load(&cprof_link_push), i < CPROF_LINK_PROOF);
	}
	for (uint64_t i = 0; i < CPROF_LINK_PROOF; i++) {
		uint64_t s = 100000 + i * 1000;

		cprof_link_span(TID, PTID, s, s + 500, 200 + i);
		linked_to(api(PTID, s + 5100, s + 5200, 200 + i)); /* CUPTI's clock moved 5 us */
	}
	ck_assert_int_eq(cprof_link_update(), -1);
	ck_assert_int_eq(atomic_load(&cprof_link_push), 1);
	ck_assert_int_eq(cprof_link_update(), 0); /* said once */
}
END_TEST

/* a CUPTI on another clock from the start: the proof never comes, and pushing stays */
START_TEST(test_link_no_proof)
{
	cprof_link_reset();
	for (uint64_t i = 1; i <= 8; i++) {
		cprof_link_span(TID, PTID, i * 1000, i * 1000 + 500, i);
		linked_to(api(PTID, i * 1000 + 50100, i * 1000 + 50200, i));
	}
	ck_assert_int_eq(cprof_link_update(), -1);
	ck_assert_int_eq(atomic_load(&cprof_link_push), 1);
}
END_TEST

/* records of one thread come in the order their calls ended: the calls before a record are forgotten,
 * so a long run keeps only the recent ones */
START_TEST(test_link_forgets_old_calls)
{
	for (uint64_t i = 0; i < 100000; i++) {
		uint64_t s = i * 1000;

		cprof_link_span(TID, PTID, s, s + 500, i + 1);
		ck_assert_uint_eq(linked_to(api(PTID, s + 100, s + 400, 0)), i + 1);
	}
	/* a record of a call long gone finds nothing */
	ck_assert_uint_eq(linked_to(api(PTID, 100, 400, 0)), 0);
}
END_TEST

/* kernels and other records are left as they are */
START_TEST(test_link_only_api_records)
{
	struct cprof_wire_gpu g = api(PTID, 1100, 1900, 0);

	cprof_link_span(TID, PTID, 1000, 2000, 81);
	g.kind = CPROF_GPU_KERNEL;
	ck_assert_int_eq(cprof_link_record(&g, 0), 0);
	ck_assert_uint_eq(g.u32[4], 0);
	ck_assert_uint_eq(g.u64[0], 0);
	g.kind = CPROF_GPU_DRIVER;
	ck_assert_uint_eq(linked_to(g), 81);
}
END_TEST

Suite *link_suite(void)
{
	Suite *s = suite_create("link");
	TCase *tc = tcase_create("link");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_link_innermost_call);
	tcase_add_test(tc, test_link_thread_ids);
	tcase_add_test(tc, test_link_exact_before_loose);
	tcase_add_test(tc, test_link_loose_within_slack);
	tcase_add_test(tc, test_link_hold_recent);
	tcase_add_test(tc, test_link_checks_pushed);
	tcase_add_test(tc, test_link_forgets_old_calls);
	tcase_add_test(tc, test_link_proof_then_times);
	tcase_add_test(tc, test_link_no_proof);
	tcase_add_test(tc, test_link_only_api_records);
	suite_add_tcase(s, tc);
	return s;
}
