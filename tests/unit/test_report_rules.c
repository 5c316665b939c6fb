/* Unit tests of the report's rules that moved off SQL and out of the printers in issue 28 (steps shown, streams, memory ops, ATen op tables, ranks), on in-memory models. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/model/analysis.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

/* a model whose only content is the steps cache for (0, default pattern): n steps of d[i] ns */
static void steps_model(struct cprof_model *m, const uint64_t *d, int n)
{
	struct cprof_step *s = calloc((size_t)n, sizeof(*s));
	uint64_t t = 1000;
	int i;

	ck_assert_ptr_nonnull(s);
	memset(m, 0, sizeof(*m));
	for (i = 0; i < n; i++) {
		s[i].start = t;
		s[i].end = t + d[i];
		s[i].tid = 7;
		snprintf(s[i].name, sizeof(s[i].name), "step %d", i);
		t += d[i] + 10;
	}
	m->steps = calloc(1, sizeof(*m->steps));
	ck_assert_ptr_nonnull(m->steps);
	m->steps[0] = (struct cprof_steps_cache){ .proc = 0, .re = NULL, .s = s, .n = n };
	m->nsteps_cache = 1;
}

/* 25 steps: a cold first one, one slow one among the many: the text shows the first 10 and the slow one */
START_TEST(test_steps_view_text_shows_first_and_slow)
{
	uint64_t d[25];
	struct cprof_model m;
	struct cprof_thresholds th;
	struct cprof_steps_view sv;
	int i;

	for (i = 0; i < 25; i++)
		d[i] = 100;
	d[0] = 300;
	d[14] = 200;
	d[20] = 140; /* under 1.5x the median: not shown */
	steps_model(&m, d, 25);
	cprof_thresholds_default(&th);
	ck_assert_int_eq(cprof_steps_view(&m, 0, &th, 0, 0, &sv), 25);
	ck_assert_int_eq(sv.cold, 1);
	ck_assert_uint_eq(sv.med, 100);
	ck_assert_int_eq(sv.nshown, 11);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(sv.shown[i], 1);
	ck_assert_int_eq(sv.shown[14], 1);
	ck_assert_int_eq(sv.shown[20], 0);
	ck_assert_int_eq(sv.shown[24], 0);
	ck_assert_str_eq(sv.re, cprof_step_re_default);
	cprof_steps_view_free(&sv);
	/* --top 4: the first four only */
	ck_assert_int_eq(cprof_steps_view(&m, 0, &th, 0, 4, &sv), 25);
	ck_assert_int_eq(sv.nshown, 4);
	ck_assert_int_eq(sv.shown[3], 1);
	ck_assert_int_eq(sv.shown[14], 0);
	cprof_steps_view_free(&sv);
	cprof_model_free(&m);
}
END_TEST

/* JSON lists every step and gives the first top their verdicts, whatever their time */
START_TEST(test_steps_view_json_first_top)
{
	uint64_t d[25];
	struct cprof_model m;
	struct cprof_thresholds th;
	struct cprof_steps_view sv;
	int i;

	for (i = 0; i < 25; i++)
		d[i] = 100;
	steps_model(&m, d, 25);
	cprof_thresholds_default(&th);
	ck_assert_int_eq(cprof_steps_view(&m, 0, &th, 1, 12, &sv), 25);
	ck_assert_int_eq(sv.cold, 0);
	ck_assert_int_eq(sv.nshown, 12);
	ck_assert_int_eq(sv.shown[11], 1);
	ck_assert_int_eq(sv.shown[12], 0);
	cprof_steps_view_free(&sv);
	ck_assert_int_eq(cprof_steps_view(&m, 0, &th, 1, 0, &sv), 25);
	ck_assert_int_eq(sv.nshown, 25);
	cprof_steps_view_free(&sv);
	cprof_model_free(&m);
}
END_TEST

Suite *report_rules_suite(void)
{
	Suite *s = suite_create("report_rules");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_steps_view_text_shows_first_and_slow);
	tcase_add_test(tc, test_steps_view_json_first_top);
	suite_add_tcase(s, tc);
	return s;
}
