/* Unit tests of the flusher's reading of CPU pressure (preload/pressure.c): when it defers CUPTI's records. */
#include <check.h>
#include <stdint.h>

#include "preload/cprof.h"
#include "tests/unit/tests.h"

START_TEST(test_pressure_some_total)
{
	uint64_t t = 7;

	ck_assert_int_eq(cprof_psi_some_total("some avg10=0.03 avg60=0.44 avg300=7.15 total=501004018\n"
					      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
					      &t),
			 0);
	ck_assert_uint_eq(t, 501004018);
	/* no "some" line first, or its total missing (only the "full" line's): refused, t untouched */
	t = 7;
	ck_assert_int_lt(cprof_psi_some_total("full avg10=0.00 total=5\n", &t), 0);
	ck_assert_int_lt(cprof_psi_some_total("some avg10=0.03\nfull avg10=0.00 total=5\n", &t), 0);
	ck_assert_int_lt(cprof_psi_some_total("some total=\n", &t), 0);
	ck_assert_int_lt(cprof_psi_some_total("", &t), 0);
	ck_assert_uint_eq(t, 7);
}
END_TEST

START_TEST(test_pressure_busy_at_a_tenth)
{
	/* 100 ms: a stall of 10 ms or more means no spare core; 9.999 ms does not */
	ck_assert_int_eq(cprof_psi_busy(10000, 100), 1);
	ck_assert_int_eq(cprof_psi_busy(9999, 100), 0);
	ck_assert_int_eq(cprof_psi_busy(0, 100), 0);
	ck_assert_int_eq(cprof_psi_busy(100000, 100), 1); /* every task of several waited all along */
	ck_assert_int_eq(cprof_psi_busy(5000, 0), 0);     /* no time passed: nothing to judge */
}
END_TEST

Suite *pressure_suite(void)
{
	Suite *s = suite_create("pressure");
	TCase *tc = tcase_create("psi");

	tcase_add_test(tc, test_pressure_some_total);
	tcase_add_test(tc, test_pressure_busy_at_a_tenth);
	suite_add_tcase(s, tc);
	return s;
}
