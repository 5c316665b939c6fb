/* Unit tests of the report's rules that moved off SQL and out of the printers in issue 28 (steps shown, streams, memory ops, ATen op tables, ranks), on in-memory models. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/cmd/thresholds.h"
#include "report/model/analysis.h"
#include "report/model/model.h"
#include "report/model/ops-nvtx.h"
#include "report/model/report.h"
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

static struct cprof_op mkop(uint8_t kind, int64_t proc, int32_t dev, uint32_t stream, uint64_t s, uint64_t e, uint8_t copy,
			     int64_t bytes)
{
	return (struct cprof_op){ .start = s, .end = e, .proc = proc, .dev = dev, .stream = stream, .kind = kind,
				  .copy = copy, .bytes = bytes, .kname = -1, .name = CPROF_NO_ID, .corr = CPROF_NO_ID };
}

struct memop_seen {
	char name[8][64];
	struct cprof_stats st[8];
	double bytes[8];
	int n;
};

static int note_memop(void *ctx, const char *name, const struct cprof_stats *st, double bytes)
{
	struct memop_seen *m = ctx;

	ck_assert_int_lt(m->n, 8);
	snprintf(m->name[m->n], sizeof(m->name[0]), "%s", name);
	m->st[m->n] = *st;
	m->bytes[m->n++] = bytes;
	return 0;
}

/* copies grouped by kind in kind order, memsets last; durations and bytes per group; proc filters */
START_TEST(test_memop_stats_by_kind)
{
	struct cprof_op ops[] = {
		mkop(CPROF_OP_MEMCPY, 1, 0, 7, 100, 400, 2, 1000),  /* D2H */
		mkop(CPROF_OP_MEMCPY, 1, 0, 7, 10, 20, 1, 64),      /* H2D */
		mkop(CPROF_OP_MEMSET, 1, 0, 7, 30, 35, 0, 8),
		mkop(CPROF_OP_MEMCPY, 2, 0, 7, 50, 150, 1, 4096),  /* H2D, process 2 */
		mkop(CPROF_OP_KERNEL, 1, 0, 7, 40, 90, 0, 0),
		mkop(CPROF_OP_MEMCPY, 1, 0, 7, 500, 530, 1, 32),   /* H2D */
	};
	struct cprof_model m;
	struct memop_seen seen = { 0 };

	ck_assert_int_eq(cprof_model_from_arrays(&m, ops, 6, NULL, 0, NULL, 0, 0), 0);
	ck_assert_int_eq(cprof_model_memop_stats(&m, 0, note_memop, &seen), 0);
	ck_assert_int_eq(seen.n, 3);
	ck_assert_str_eq(seen.name[0], "[CUDA memcpy Host-to-Device]");
	ck_assert_uint_eq(seen.st[0].n, 3);
	ck_assert(seen.st[0].total == 10 + 100 + 30);
	ck_assert(seen.st[0].min == 10 && seen.st[0].max == 100 && seen.st[0].med == 30);
	ck_assert(seen.bytes[0] == 64 + 4096 + 32);
	ck_assert_str_eq(seen.name[1], "[CUDA memcpy Device-to-Host]");
	ck_assert(seen.bytes[1] == 1000);
	ck_assert_str_eq(seen.name[2], "[CUDA memset]");
	ck_assert(seen.st[2].total == 5 && seen.bytes[2] == 8);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(cprof_model_memop_stats(&m, 2, note_memop, &seen), 0);
	ck_assert_int_eq(seen.n, 1);
	ck_assert(seen.bytes[0] == 4096);
}
END_TEST

/* --by stream: one row per (device, stream), most GPU time first, ties in (device, stream) order */
START_TEST(test_streams_by_time)
{
	struct cprof_op ops[] = {
		mkop(CPROF_OP_KERNEL, 1, 0, 7, 0, 100, 0, 0),   mkop(CPROF_OP_KERNEL, 1, 0, 7, 200, 300, 0, 0),
		mkop(CPROF_OP_MEMCPY, 1, 0, 13, 0, 500, 1, 8),  mkop(CPROF_OP_KERNEL, 1, 1, 7, 0, 200, 0, 0),
		mkop(CPROF_OP_MEMSET, 1, 0, 3, 600, 650, 0, 8), mkop(CPROF_OP_KERNEL, 1, 0, 2, 700, 750, 0, 0),
	};
	struct cprof_model m;
	struct report_stream *s;
	size_t n;

	ck_assert_int_eq(cprof_model_from_arrays(&m, ops, 6, NULL, 0, NULL, 0, 0), 0);
	ck_assert_int_eq(report_load_streams(&m, &s, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(s[0].stream, 13);
	ck_assert_int_eq(s[0].kernels, 0);
	ck_assert_int_eq(s[0].ns, 500);
	/* dev 0 stream 7 and dev 1 stream 7 both 200 ns: device 0 first */
	ck_assert_int_eq(s[1].dev, 0);
	ck_assert_int_eq(s[1].stream, 7);
	ck_assert_int_eq(s[1].ops, 2);
	ck_assert_int_eq(s[1].kernels, 2);
	ck_assert_int_eq(s[2].dev, 1);
	/* streams 2 and 3, 50 ns each: stream 2 first */
	ck_assert_int_eq(s[3].stream, 2);
	ck_assert_int_eq(s[4].stream, 3);
	free(s);
}
END_TEST

/* aten::linear (0..100) encloses aten::addmm (10..60) on one thread; a launch in each; evidence over a window */
START_TEST(test_torch_ops_self_and_window)
{
	struct cprof_op_range r[] = {
		{ .proc = 1, .tid = 5, .start = 0, .end = 100, .text = 1, .name = strdup("aten::linear") },
		{ .proc = 1, .tid = 5, .start = 10, .end = 60, .text = 2, .name = strdup("aten::addmm") },
		{ .proc = 1, .tid = 5, .start = 1000, .end = 1400, .text = 3, .name = strdup("aten::copy_") },
	};
	struct cprof_op_gpu g[] = {
		{ .proc = 1, .tid = 5, .at = 5, .ns = 7 },    /* in linear only */
		{ .proc = 1, .tid = 5, .at = 20, .ns = 30 },  /* in addmm */
		{ .proc = 1, .tid = 6, .at = 20, .ns = 1000 }, /* another thread: no op */
	};
	struct cprof_op_ranges in = { r, 3, g, 3 };
	struct cprof_op_table t;
	char ev[512];

	ck_assert_int_eq(cprof_ops_build(&in, &t), 0);
	ck_assert_uint_eq(t.n, 3);
	ck_assert_uint_eq(t.ranges, 3);
	/* by CPU total */
	ck_assert_str_eq(t.rows[0].name, "aten::copy_");
	ck_assert_str_eq(t.rows[1].name, "aten::linear");
	ck_assert(t.rows[1].cpu_total_ns == 100 && t.rows[1].self_cpu_ns == 50);
	ck_assert(t.rows[1].self_cuda_ns == 7 && t.rows[1].cuda_total_ns == 37);
	ck_assert_uint_eq(t.rows[1].gpu_ops, 1);
	ck_assert_str_eq(t.rows[2].name, "aten::addmm");
	ck_assert(t.rows[2].self_cuda_ns == 30 && t.rows[2].self_cpu_ns == 50);
	ck_assert(t.self_cpu_ns == 50 + 50 + 400);
	cprof_ops_free(&t);
	/* the window [0, 500]: copy_ began outside it */
	ck_assert_int_eq(cprof_ops_evidence(&in, 0, 500, ev, sizeof(ev)), 0);
	ck_assert_msg(strstr(ev, "aten::copy_") == NULL, "%s", ev);
	ck_assert_msg(strstr(ev, "aten::linear Self CPU 50 ns in 1 call") != NULL, "%s", ev);
	ck_assert_msg(strstr(ev, "(20% of the window)") != NULL, "%s", ev);
	ck_assert_int_eq(cprof_ops_evidence(&in, 2000, 3000, ev, sizeof(ev)), 0);
	ck_assert_str_eq(ev, "");
	for (int i = 0; i < 3; i++)
		free(r[i].name);
}
END_TEST

/* report, check and html share one parser: values set, bad ones refused, other options left alone */
START_TEST(test_threshold_options)
{
	struct cprof_thresholds th;

	cprof_thresholds_default(&th);
	ck_assert_int_eq(cprof_threshold_opt("t", CPROF_OPT_COMPUTE_PCT, "65", &th), 1);
	ck_assert(th.compute_pct == 65);
	ck_assert_int_eq(cprof_threshold_opt("t", CPROF_OPT_COMPUTE_PCT, "101", &th), -1);
	ck_assert_int_eq(cprof_threshold_opt("t", CPROF_OPT_COMPUTE_PCT, "6x", &th), -1);
	ck_assert_int_eq(cprof_threshold_opt("t", CPROF_OPT_KERNEL_WAIT_US, "2.5", &th), 1);
	ck_assert_uint_eq(th.kernel_wait_ns, 2500);
	ck_assert_int_eq(cprof_threshold_opt("t", CPROF_OPT_INCLUDE_STARTUP, NULL, &th), 1);
	ck_assert_int_eq(th.include_startup, 1);
	ck_assert_int_eq(cprof_threshold_opt("t", CPROF_OPT_STEP_RANGE, "iter [0-9]+", &th), 1);
	ck_assert_str_eq(th.step_re, "iter [0-9]+");
	ck_assert_int_eq(cprof_threshold_opt("t", CPROF_OPT_STEP_RANGE, "([", &th), -1);
	ck_assert_int_eq(cprof_threshold_opt("t", 'f', "json", &th), 0);
}
END_TEST

/* ranks: a rank counts when one of its processes made a call; run from that first call to the last; kernels of
 * every process of the rank; distinct hosts in process order */
START_TEST(test_ranks_from_arrays)
{
	struct cprof_op ops[] = {
		mkop(CPROF_OP_KERNEL, 1, 0, 7, 100, 150, 0, 0), mkop(CPROF_OP_KERNEL, 3, 0, 7, 200, 230, 0, 0),
		mkop(CPROF_OP_KERNEL, 4, 0, 7, 300, 310, 0, 0), mkop(CPROF_OP_MEMCPY, 1, 0, 7, 10, 20, 1, 8),
	};
	struct cprof_call calls[] = {
		{ .start = 50, .end = 60, .proc = 1 },  { .start = 500, .end = 900, .proc = 1 },
		{ .start = 40, .end = 45, .proc = 2 },  { .start = 70, .end = 80, .proc = 4 },
	};
	struct cprof_proc procs[] = {
		{ .id = 1, .rank = 0, .host = "nodeb" }, { .id = 2, .rank = 0, .host = "nodea" },
		{ .id = 3, .rank = 0, .host = "nodeb" }, /* no call: its kernel counts, its host does not */
		{ .id = 4, .rank = 1, .host = "" },      /* no host recorded */
		{ .id = 5, .rank = 2, .host = "nodec" }, /* no call: no rank row */
		{ .id = 6, .rank = -1, .host = "x" },    /* not a rank */
	};
	struct cprof_model m;
	struct cprof_rank_row *r;
	size_t n;

	ck_assert_int_eq(cprof_model_from_arrays(&m, ops, 4, calls, 4, NULL, 0, 0), 0);
	m.procs = procs;
	m.nprocs = 6;
	ck_assert_int_eq(report_load_ranks(&m, &r, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(r[0].rank, 0);
	ck_assert_int_eq(r[0].procs, 2);
	ck_assert_str_eq(r[0].hosts, "nodeb,nodea");
	ck_assert_int_eq(r[0].run_ns, 900 - 40);
	ck_assert_int_eq(r[0].kernels, 2);
	ck_assert_int_eq(r[0].kernel_ns, 50 + 30);
	ck_assert_int_eq(r[1].rank, 1);
	ck_assert_ptr_null(r[1].hosts);
	ck_assert_int_eq(r[1].run_ns, 10);
	ck_assert_int_eq(r[1].kernels, 1);
	free(r[0].hosts);
	free(r);
}
END_TEST

/* The counted device queries: a process's count is its largest running total (cost.c keeps that at load);
 * the run's is the sum over processes, by name; a process filter keeps only its own; a name not in the
 * profile's strings, or a zero count, is left out. */
START_TEST(test_counted_calls_sum_by_name)
{
	struct cprof_string str[] = { { 3, (char *)"cudaGetDevice" }, { 5, (char *)"cudaDeviceGetAttribute" } };
	struct cprof_counted rows[] = { { 1, 3, 700 }, { 1, 5, 12 }, { 2, 3, 300 }, { 2, 9, 40 }, { 2, 5, 0 } };
	struct cprof_model m;
	struct cprof_counted *out;
	int n;

	memset(&m, 0, sizeof(m));
	m.strings = str;
	m.nstrings = 2;
	m.counted = rows;
	m.ncounted = 5;
	n = cprof_model_counted_calls(&m, 0, &out);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(out[0].name, 3);
	ck_assert_uint_eq(out[0].calls, 1000);
	ck_assert_int_eq(out[1].name, 5);
	ck_assert_uint_eq(out[1].calls, 12);
	free(out);
	n = cprof_model_counted_calls(&m, 2, &out);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(out[0].calls, 300);
	free(out);
	m.ncounted = 0;
	ck_assert_int_eq(cprof_model_counted_calls(&m, 0, &out), 0);
	ck_assert_ptr_null(out);
}
END_TEST

Suite *report_rules_suite(void)
{
	Suite *s = suite_create("report_rules");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_steps_view_text_shows_first_and_slow);
	tcase_add_test(tc, test_steps_view_json_first_top);
	tcase_add_test(tc, test_memop_stats_by_kind);
	tcase_add_test(tc, test_streams_by_time);
	tcase_add_test(tc, test_torch_ops_self_and_window);
	tcase_add_test(tc, test_threshold_options);
	tcase_add_test(tc, test_ranks_from_arrays);
	tcase_add_test(tc, test_counted_calls_sum_by_name);
	suite_add_tcase(s, tc);
	return s;
}
