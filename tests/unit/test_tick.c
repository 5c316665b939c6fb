/* Unit tests of the hooks' tick clock's map to CLOCK_REALTIME ns (preload/tick.c), on anchors given by the test. */
#include <check.h>
#include <stdint.h>

#include "preload/cprof.h"
#include "tests/unit/tests.h"

#define MS 1000000ull

/* 2 ticks a ns (a 2 GHz TSC); anchors every 50 ms of ticks; the wall clock runs 10 ppm fast in the second
 * round: an event inside a round maps by the line through the anchors around it */
START_TEST(test_tick_map_between_anchors)
{
	uint64_t t0 = 1000000, n0 = 5000 * MS;

	cprof_tick_start(1, t0, n0, 0.5);
	cprof_tick_add_anchor(t0 + 100 * MS, n0 + 50 * MS, 10);
	cprof_tick_add_anchor(t0 + 200 * MS, n0 + 100 * MS + 500, 10); /* +500 ns over 50 ms: 10 ppm */
	/* the middle of each round */
	ck_assert_uint_eq(cprof_tick_ns(t0 + 50 * MS), n0 + 25 * MS);
	ck_assert_uint_eq(cprof_tick_ns(t0 + 150 * MS), n0 + 75 * MS + 250);
	/* a ring drained rounds late: its events still by the anchors of their round */
	cprof_tick_add_anchor(t0 + 300 * MS, n0 + 150 * MS + 500, 10);
	ck_assert_uint_eq(cprof_tick_ns(t0 + 150 * MS), n0 + 75 * MS + 250);
	/* the crash path's copy maps the same */
	ck_assert_uint_eq(cprof_tick_ns_any(t0 + 150 * MS), n0 + 75 * MS + 250);
	/* after the last anchor: from it with the rate */
	ck_assert_uint_le(cprof_tick_ns(t0 + 302 * MS) - (n0 + 151 * MS + 500), 5); /* the rate: the run's average */
	ck_assert_uint_le(cprof_tick_dur_ns(2 * MS) - MS, 5);
}
END_TEST

/* the wall clock steps forward an hour between two anchors: the rate stays, durations stay right, and the
 * events of that round take the clock after the step; a backward step the same */
START_TEST(test_tick_map_clock_step)
{
	uint64_t t0 = 1000000, n0 = 5000 * MS, hour = 3600000 * MS;

	cprof_tick_start(1, t0, n0, 0.5);
	for (int i = 1; i <= 20; i++)
		cprof_tick_add_anchor(t0 + (uint64_t)i * 100 * MS, n0 + (uint64_t)i * 50 * MS, 10);
	cprof_tick_add_anchor(t0 + 2100 * MS, n0 + 1050 * MS + hour, 10);
	ck_assert_uint_le(cprof_tick_dur_ns(2 * MS) - MS, 1);
	/* an event 10 ms of ticks before the step's anchor: 5 ms before it, in the clock after the step */
	ck_assert_uint_eq(cprof_tick_ns(t0 + 2090 * MS), n0 + 1045 * MS + hour);
	/* the next rounds map as before the step */
	cprof_tick_add_anchor(t0 + 2200 * MS, n0 + 1100 * MS + hour, 10);
	ck_assert_uint_eq(cprof_tick_ns(t0 + 2150 * MS), n0 + 1075 * MS + hour);
	/* back by 30 s */
	cprof_tick_add_anchor(t0 + 2300 * MS, n0 + 1150 * MS + hour - 30000 * MS, 10);
	ck_assert_uint_le(cprof_tick_dur_ns(2 * MS) - MS, 1);
	ck_assert_uint_eq(cprof_tick_ns(t0 + 2300 * MS), n0 + 1150 * MS + hour - 30000 * MS);
}
END_TEST

/* an anchor whose reads were far apart (the flusher preempted between them) is not kept */
START_TEST(test_tick_map_wide_anchor_dropped)
{
	uint64_t t0 = 1000000, n0 = 5000 * MS;

	cprof_tick_start(1, t0, n0, 0.5);
	cprof_tick_add_anchor(t0 + 100 * MS, n0 + 50 * MS, 10);
	cprof_tick_add_anchor(t0 + 200 * MS, n0 + 100 * MS + 3 * MS, 2 * 6 * MS); /* 6 ms wide, 3 ms off */
	ck_assert_uint_eq(cprof_tick_ns(t0 + 200 * MS), n0 + 100 * MS);
	cprof_tick_start(0, 0, 0, 1.0);
	ck_assert_uint_eq(cprof_tick_ns(12345), 12345); /* CLOCK_REALTIME in the hooks: the identity */
}
END_TEST

Suite *tick_suite(void)
{
	Suite *s = suite_create("tick");
	TCase *tc = tcase_create("map");

	tcase_add_test(tc, test_tick_map_between_anchors);
	tcase_add_test(tc, test_tick_map_clock_step);
	tcase_add_test(tc, test_tick_map_wide_anchor_dropped);
	suite_add_tcase(s, tc);
	return s;
}
