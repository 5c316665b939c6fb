/* Runs every Check suite; the exit status is the number of failures (capped). */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/tests.h"

int main(void)
{
	SRunner *sr = srunner_create(wire_suite());
	int failed;

	srunner_add_suite(sr, store_suite());
	srunner_add_suite(sr, ingest_suite());
	srunner_add_suite(sr, symbolize_suite());
	srunner_add_suite(sr, textsafe_suite());
	srunner_add_suite(sr, model_suite());
	srunner_add_suite(sr, verdict_suite());
	srunner_add_suite(sr, model_host_suite());
	srunner_add_suite(sr, findings_suite());
	srunner_add_suite(sr, cost_suite());
	srunner_add_suite(sr, ring_suite());
	srunner_add_suite(sr, tick_suite());
	srunner_add_suite(sr, pressure_suite());
	srunner_add_suite(sr, findings_rules_suite());
	srunner_add_suite(sr, gates_suite());
	srunner_add_suite(sr, report_rules_suite());
	srunner_add_suite(sr, findings_compiled_suite());
	srunner_add_suite(sr, trace_src_suite());
	srunner_add_suite(sr, radix_attr_suite());
	srunner_add_suite(sr, ending_suite());
	srunner_add_suite(sr, shmring_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
