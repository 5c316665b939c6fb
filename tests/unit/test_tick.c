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
	/* the bent round gave the TSC up: the hooks' stretches are ns again */
	ck_assert_uint_eq(cprof_tick_dur_ns(2 * MS), 2 * MS);
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
	ck_assert_uint_le(cprof_tick_dur_ns(2 * MS) - MS, 1);
	cprof_tick_add_anchor(t0 + 2100 * MS, n0 + 1050 * MS + hour, 10);
	ck_assert_uint_le(cprof_tick_ns(t0 + 2102 * MS) - (n0 + 1051 * MS + hour), 1); /* the rate stayed */
	/* an event 10 ms of ticks before the step's anchor: 5 ms before it, in the clock after the step */
	ck_assert_uint_eq(cprof_tick_ns(t0 + 2090 * MS), n0 + 1045 * MS + hour);
	/* the next rounds map as before the step */
	cprof_tick_add_anchor(t0 + 2200 * MS, n0 + 1100 * MS + hour, 10);
	ck_assert_uint_eq(cprof_tick_ns(t0 + 2150 * MS), n0 + 1075 * MS + hour);
	/* back by 30 s */
	cprof_tick_add_anchor(t0 + 2300 * MS, n0 + 1150 * MS + hour - 30000 * MS, 10);
	ck_assert_uint_le(cprof_tick_ns(t0 + 2302 * MS) - (n0 + 1151 * MS + hour - 30000 * MS), 1);
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

/* on trial the hooks stay on CLOCK_REALTIME until the anchors have kept to one line for 100 ms; then the TSC */
START_TEST(test_tick_trial_takes_tsc_on_a_line)
{
	uint64_t t0 = 1000000, n0 = 5000 * MS;

	cprof_tick_start(2, t0, n0, 0.5);
	ck_assert_int_eq(cprof_tick_tsc, 0);
	cprof_tick_add_anchor(t0 + 40 * MS, n0 + 20 * MS, 10);
	cprof_tick_add_anchor(t0 + 120 * MS, n0 + 60 * MS + 20, 10); /* 20 ns: a read's noise */
	ck_assert_int_eq(cprof_tick_tsc, 0);
	cprof_tick_add_anchor(t0 + 220 * MS, n0 + 110 * MS, 10);
	ck_assert_int_eq(cprof_tick_tsc, 1);
	/* a reading in ns (the hooks on CLOCK_REALTIME) passes as it is, beside the ticks */
	ck_assert_uint_eq(cprof_tick_ns(CPROF_TICK_NS_MIN + 77), CPROF_TICK_NS_MIN + 77);
	ck_assert_uint_eq(cprof_tick_ns(t0 + 200 * MS), n0 + 100 * MS + 4); /* 20 ns at 120, 0 at 220 */
}
END_TEST

/* the clock's rate moves 10 ppm for one round (a daemon steering it): the hooks leave the TSC for good, and
 * the ticks already taken are still mapped; a wall clock that steps gives the TSC up too */
START_TEST(test_tick_bent_line_gives_tsc_up)
{
	uint64_t t0 = 1000000, n0 = 5000 * MS;

	cprof_tick_start(1, t0, n0, 0.5);
	for (int i = 1; i <= 4; i++)
		cprof_tick_add_anchor(t0 + (uint64_t)i * 100 * MS, n0 + (uint64_t)i * 50 * MS, 10);
	ck_assert_int_eq(cprof_tick_tsc, 1);
	cprof_tick_add_anchor(t0 + 500 * MS, n0 + 250 * MS + 500, 10);
	ck_assert_int_eq(cprof_tick_tsc, 0);
	ck_assert_uint_eq(cprof_tick_ns(t0 + 450 * MS), n0 + 225 * MS + 250);
	/* nothing brings it back */
	cprof_tick_add_anchor(t0 + 600 * MS, n0 + 300 * MS + 500, 10);
	ck_assert_int_eq(cprof_tick_tsc, 0);

	cprof_tick_start(1, t0, n0, 0.5);
	cprof_tick_add_anchor(t0 + 100 * MS, n0 + 50 * MS, 10);
	cprof_tick_add_anchor(t0 + 200 * MS, n0 + 100 * MS + 1000 * MS, 10);
	ck_assert_int_eq(cprof_tick_tsc, 0);
}
END_TEST

/* an anchor off the line by no more than its reads' width allows is noise: the TSC stays; the first rounds,
 * before the rate is known over 10 ms, are not judged */
START_TEST(test_tick_line_noise_kept)
{
	uint64_t t0 = 1000000, n0 = 5000 * MS;

	cprof_tick_start(1, t0, n0, 0.5);
	cprof_tick_add_anchor(t0 + 2 * MS, n0 + 1 * MS + 5000, 10); /* the first guess of the rate is rough */
	cprof_tick_add_anchor(t0 + 100 * MS, n0 + 50 * MS, 10);
	cprof_tick_add_anchor(t0 + 200 * MS, n0 + 100 * MS + 600, 2000); /* 1 us wide: 600 ns is its noise */
	ck_assert_int_eq(cprof_tick_tsc, 1);
	cprof_tick_add_anchor(t0 + 300 * MS, n0 + 150 * MS + 150, 10);
	ck_assert_int_eq(cprof_tick_tsc, 1);
}
END_TEST

/* adjtimex's word on the kernel's clock: steered when a daemon synchronises it or its frequency, tick or PLL
 * offset is moved */
START_TEST(test_tick_steered_clock)
{
	struct cprof_tick_kclock free_running = { .status = 0x40, .freq = 0, .tick = 10000, .offset = 0 }, k;

	ck_assert_int_eq(cprof_tick_steered(&free_running, 10000), 0);
	k = free_running;
	k.status = 0x2001; /* STA_PLL | STA_NANO, synchronised */
	ck_assert_int_eq(cprof_tick_steered(&k, 10000), 1);
	k = free_running;
	k.freq = 20 * 65536; /* 20 ppm */
	ck_assert_int_eq(cprof_tick_steered(&k, 10000), 1);
	k = free_running;
	k.tick = 10001;
	ck_assert_int_eq(cprof_tick_steered(&k, 10000), 1);
	ck_assert_int_eq(cprof_tick_steered(&free_running, 4000), 1); /* HZ 250's tick is 4000 us */
	k = free_running;
	k.offset = 1;
	ck_assert_int_eq(cprof_tick_steered(&k, 10000), 1);
	/* a timed stretch whose ends are one tick and one ns reading (the hooks left the TSC within it): none */
	ck_assert_uint_eq(cprof_tick_less_read(CPROF_TICK_NS_MIN - 5), 0);
	ck_assert_uint_eq(cprof_tick_less_read((uint64_t)0 - CPROF_TICK_NS_MIN), 0);
	ck_assert_uint_eq(cprof_tick_stretch(CPROF_TICK_NS_MIN - 5), 0);
	ck_assert_uint_eq(cprof_tick_stretch((uint64_t)0 - CPROF_TICK_NS_MIN), 0);
	/* a stretch with a read only to time it has that read taken off, the median of two back to back; one whose
	 * reads the program pays anyway (a recorded call's start and end) keeps it */
	uint64_t saved = cprof_tick_read;

	cprof_tick_read = 30;
	ck_assert_uint_eq(cprof_tick_less_read(100), 70);
	ck_assert_uint_eq(cprof_tick_less_read(25), 0);
	ck_assert_uint_eq(cprof_tick_stretch(100), 100);
	cprof_tick_read = saved;
}
END_TEST

Suite *tick_suite(void)
{
	Suite *s = suite_create("tick");
	TCase *tc = tcase_create("map");

	tcase_add_test(tc, test_tick_map_between_anchors);
	tcase_add_test(tc, test_tick_map_clock_step);
	tcase_add_test(tc, test_tick_map_wide_anchor_dropped);
	tcase_add_test(tc, test_tick_trial_takes_tsc_on_a_line);
	tcase_add_test(tc, test_tick_bent_line_gives_tsc_up);
	tcase_add_test(tc, test_tick_line_noise_kept);
	tcase_add_test(tc, test_tick_steered_clock);
	suite_add_tcase(s, tc);
	return s;
}
