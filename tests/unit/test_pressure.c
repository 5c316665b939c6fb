/* Unit tests of what the preload reads of the scheduler: CPU pressure (preload/pressure.c), when it defers CUPTI's
 * records; a thread's schedstat (common/procfs.c), where its cost starts. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/procfs.h"
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

/* a thread's schedstat (common/procfs.c), parsed without stdio: two decimals, anything else refused */
START_TEST(test_pressure_schedstat_parse)
{
	uint64_t run = 7, wait = 8;

	ck_assert_int_eq(cprof_schedstat_parse("4303211567 157204001 2841\n", &run, &wait), 0);
	ck_assert_uint_eq(run, 4303211567ull);
	ck_assert_uint_eq(wait, 157204001ull);
	ck_assert_int_eq(cprof_schedstat_parse("18446744073709551615 0", &run, &wait), 0);
	ck_assert_uint_eq(run, UINT64_MAX);
	ck_assert_uint_eq(wait, 0);
	run = 7;
	wait = 8;
	ck_assert_int_eq(cprof_schedstat_parse("18446744073709551616 0 1\n", &run, &wait), -ERANGE);
	ck_assert_int_eq(cprof_schedstat_parse("12\n", &run, &wait), -EINVAL);
	ck_assert_int_eq(cprof_schedstat_parse("12  34 5\n", &run, &wait), -EINVAL);
	ck_assert_int_eq(cprof_schedstat_parse("-1 34 5\n", &run, &wait), -EINVAL);
	ck_assert_int_eq(cprof_schedstat_parse("12 34x 5\n", &run, &wait), -EINVAL);
	ck_assert_int_eq(cprof_schedstat_parse("", &run, &wait), -EINVAL);
	ck_assert_uint_eq(run, 7);
	ck_assert_uint_eq(wait, 8);
}
END_TEST

/* this thread's own file, by a path built without snprintf: its run time is there and grows */
START_TEST(test_pressure_schedstat_read_own_thread)
{
	uint64_t run0, wait0, run1, wait1;
	volatile uint64_t spin = 0;

	ck_assert_int_eq(cprof_schedstat_read((uint32_t)syscall(SYS_gettid), &run0, &wait0), 0);
	for (uint64_t i = 0; i < 20000000; i++)
		spin += i;
	ck_assert_int_eq(cprof_schedstat_read((uint32_t)syscall(SYS_gettid), &run1, &wait1), 0);
	ck_assert_uint_gt(run1, run0);
	ck_assert_uint_ge(wait1, wait0);
	ck_assert_int_eq(cprof_schedstat_read(0xfffffff0u, &run1, &wait1), -EIO); /* no such thread */
}
END_TEST

Suite *pressure_suite(void)
{
	Suite *s = suite_create("pressure");
	TCase *tc = tcase_create("psi");

	tcase_add_test(tc, test_pressure_some_total);
	tcase_add_test(tc, test_pressure_busy_at_a_tenth);
	tcase_add_test(tc, test_pressure_schedstat_parse);
	tcase_add_test(tc, test_pressure_schedstat_read_own_thread);
	suite_add_tcase(s, tc);
	return s;
}
