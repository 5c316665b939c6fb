/* The Check suites of the unit test runner. */
#ifndef CPROF_TESTS_UNIT_TESTS_H
#define CPROF_TESTS_UNIT_TESTS_H

#include <check.h>
#include <errno.h>

Suite *wire_suite(void);
Suite *store_suite(void);
Suite *ingest_suite(void);
Suite *symbolize_suite(void);
Suite *textsafe_suite(void);
Suite *model_suite(void);
Suite *verdict_suite(void);
Suite *model_host_suite(void);
Suite *findings_suite(void);
Suite *cost_suite(void);
Suite *ring_suite(void);
Suite *tick_suite(void);
Suite *pressure_suite(void);
Suite *findings_rules_suite(void);
Suite *gates_suite(void);
Suite *report_rules_suite(void);
Suite *findings_compiled_suite(void);
Suite *trace_src_suite(void);
Suite *radix_attr_suite(void);
Suite *ending_suite(void);
Suite *shmring_suite(void);

#endif
