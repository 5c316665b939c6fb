/* Unit tests of the report model: the verdict, its idle breakdown and the phase cutter over small profiles built in memory. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/model/analysis.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

#define US 1000ULL

/* A profile under construction: GPU ops and CUDA calls of process 1. */
struct fix {
	struct cprof_op ops[256];
	struct cprof_call calls[256];
	struct cprof_ovh ovh[8];
	size_t nops, ncalls, novh;
	struct cprof_model m;
};

static void kernel(struct fix *f, uint64_t s, uint64_t e, uint64_t launch, int name)
{
	ck_assert_uint_lt(f->nops, 256);
	f->ops[f->nops++] = (struct cprof_op){ .start = s, .end = e, .launch = launch, .proc = 1, .kname = name,
					      .kind = CPROF_OP_KERNEL };
}

static void call(struct fix *f, uint64_t s, uint64_t e, int launch, int cut)
{
	ck_assert_uint_lt(f->ncalls, 256);
	f->calls[f->ncalls++] = (struct cprof_call){ .start = s, .end = e, .proc = 1, .outer = 1, .launch = (uint8_t)launch,
						    .cut = (uint8_t)cut };
}

/* n kernels of dur, one every period from t0; each launched by a call of call_dur that ends launch_lead
 * before the kernel starts (a late launch: the GPU had nothing queued) */
static void late_launches(struct fix *f, uint64_t t0, int n, uint64_t dur, uint64_t period, uint64_t call_dur)
{
	int i;

	for (i = 0; i < n; i++) {
		uint64_t s = t0 + (uint64_t)i * period;

		call(f, s - call_dur - 5 * US, s - 5 * US, 1, 0);
		kernel(f, s, s + dur, s - call_dur - 5 * US, 0);
	}
}

/* n kernels of dur with gap between them, all launched at t0 - 1 ms (queued ahead: the GPU never waited
 * for the host) */
static void queued(struct fix *f, uint64_t t0, int n, uint64_t dur, uint64_t gap)
{
	int i;

	call(f, t0 - 1000 * US, t0 - 990 * US, 1, 0);
	for (i = 0; i < n; i++) {
		uint64_t s = t0 + (uint64_t)i * (dur + gap);

		kernel(f, s, s + dur, t0 - 1000 * US, 0);
	}
}

static void build(struct fix *f)
{
	ck_assert_int_eq(cprof_model_from_arrays(&f->m, f->ops, f->nops, f->calls, f->ncalls, f->ovh, f->novh, 1), 0);
}

static void verdict(struct fix *f, struct cprof_verdict *v)
{
	struct cprof_thresholds t;

	cprof_thresholds_default(&t);
	build(f);
	ck_assert_int_eq(cprof_analyse(&f->m, 0, 0, UINT64_MAX, &t, v), 0);
}

START_TEST(test_model_verdict_overhead_bound)
{
	static struct fix f;
	struct cprof_verdict v;

	memset(&f, 0, sizeof(f));
	/* 10 us kernels every 100 us, each launched by a 45 us call after the previous one finished */
	late_launches(&f, 1000 * US, 20, 10 * US, 100 * US, 45 * US);
	verdict(&f, &v);
	ck_assert_str_eq(v.verdict, "overhead-bound");
	ck_assert_double_lt(v.busy_pct, 15);
	ck_assert_uint_gt(v.host_wait_ns, 0);
	ck_assert_uint_eq(v.kernel_wait_ns, 0);
	/* the calls cover half of each gap: the launch cost, not the host's own code */
	ck_assert_str_eq(v.cause, "launch cost inside the CUDA API");
	ck_assert_ptr_nonnull(strstr(v.advice, "CUDA graph"));
	ck_assert_double_eq_tol(v.med_kernel_ns, 10 * US, 1);
	ck_assert_double_eq_tol(v.med_launch_ns, 45 * US, 1);
}
END_TEST

START_TEST(test_model_verdict_host_work_between_launches)
{
	static struct fix f;
	struct cprof_verdict v;

	memset(&f, 0, sizeof(f));
	/* same gaps, but the launch calls are short: the host spends the gap in its own code */
	late_launches(&f, 1000 * US, 20, 10 * US, 100 * US, 5 * US);
	verdict(&f, &v);
	ck_assert_str_eq(v.verdict, "overhead-bound");
	ck_assert_str_eq(v.cause, "host work between launches");
}
END_TEST

START_TEST(test_model_verdict_compute_bound)
{
	static struct fix f;
	struct cprof_verdict v;

	memset(&f, 0, sizeof(f));
	/* 100 us kernels 1 us apart, all queued ahead */
	queued(&f, 2000 * US, 30, 100 * US, 1 * US);
	verdict(&f, &v);
	ck_assert_str_eq(v.verdict, "compute-bound");
	ck_assert_double_gt(v.busy_pct, 95);
	/* gaps under 30 us between queued kernels are kernel wait, not host wait */
	ck_assert_uint_gt(v.kernel_wait_ns, 0);
	ck_assert_uint_eq(v.other_ns, 0);
}
END_TEST

START_TEST(test_model_verdict_mixed_when_idle_is_not_host_wait)
{
	static struct fix f;
	struct cprof_verdict v;

	memset(&f, 0, sizeof(f));
	/* 40 % busy, but the GPU had work queued through every 60 us gap: "other", not host wait */
	queued(&f, 2000 * US, 30, 40 * US, 60 * US);
	verdict(&f, &v);
	ck_assert_double_lt(v.busy_pct, 50);
	ck_assert_uint_gt(v.other_ns, 0);
	ck_assert_str_eq(v.verdict, "mixed");
}
END_TEST

START_TEST(test_model_verdict_no_gpu_activity)
{
	static struct fix f;
	struct cprof_verdict v;

	memset(&f, 0, sizeof(f));
	call(&f, 1000 * US, 2000 * US, 0, 0);
	verdict(&f, &v);
	ck_assert_str_eq(v.verdict, "no-gpu-activity");
	ck_assert_uint_eq(v.api_calls, 1);
}
END_TEST

START_TEST(test_model_verdict_excludes_startup_and_warmup)
{
	static struct fix f;
	struct cprof_verdict v;
	struct cprof_thresholds t;

	memset(&f, 0, sizeof(f));
	/* a 50 ms first call (context creation), then a slow first kernel, then a steady compute-bound run */
	call(&f, 0, 50000 * US, 0, 0);
	kernel(&f, 60000 * US, 70000 * US, 50000 * US, 0);
	queued(&f, 80000 * US, 30, 100 * US, 1 * US);
	verdict(&f, &v);
	ck_assert_uint_eq(v.startup_ns, 60000 * US);
	ck_assert_uint_eq(v.warmup_ns, 10000 * US);
	ck_assert_uint_eq(v.start, 70000 * US);
	ck_assert_uint_eq(v.kernels, 30);
	cprof_thresholds_default(&t);
	t.include_startup = 1;
	ck_assert_int_eq(cprof_analyse(&f.m, 0, 0, UINT64_MAX, &t, &v), 0);
	ck_assert_uint_eq(v.startup_ns, 0);
	ck_assert_uint_eq(v.warmup_ns, 0);
	ck_assert_uint_eq(v.kernels, 31);
}
END_TEST

START_TEST(test_model_verdict_profiler_overhead_not_host_wait)
{
	static struct fix f, g;
	struct cprof_verdict v, w;

	memset(&f, 0, sizeof(f));
	memset(&g, 0, sizeof(g));
	late_launches(&f, 1000 * US, 20, 10 * US, 100 * US, 45 * US);
	late_launches(&g, 1000 * US, 20, 10 * US, 100 * US, 45 * US);
	/* CUPTI flushed its buffers for 50 us inside the steady window */
	g.ovh[g.novh++] = (struct cprof_ovh){ .start = 1500 * US, .end = 1550 * US, .proc = 1 };
	verdict(&f, &v);
	verdict(&g, &w);
	ck_assert_uint_eq(w.overhead_ns, 50 * US);
	ck_assert_uint_eq(w.host_wait_ns + 50 * US, v.host_wait_ns);
}
END_TEST

START_TEST(test_model_verdict_other_process_ignored)
{
	static struct fix f;
	struct cprof_verdict v;
	struct cprof_thresholds t;
	size_t i;

	memset(&f, 0, sizeof(f));
	queued(&f, 2000 * US, 30, 100 * US, 1 * US);
	for (i = 0; i < f.nops; i++)
		f.ops[i].proc = 2;
	late_launches(&f, 1000 * US, 20, 10 * US, 100 * US, 45 * US);
	cprof_thresholds_default(&t);
	build(&f);
	ck_assert_int_eq(cprof_analyse(&f.m, 1, 0, UINT64_MAX, &t, &v), 0);
	ck_assert_str_eq(v.verdict, "overhead-bound");
	ck_assert_uint_eq(v.kernels, 19); /* the first is warm-up */
	ck_assert_int_eq(cprof_analyse(&f.m, 2, 0, UINT64_MAX, &t, &v), 0);
	ck_assert_str_eq(v.verdict, "compute-bound");
}
END_TEST

/* from t0 a compute-bound part (30 kernels of 100 us, queued ahead), a synchronising call at its end (t0 + 2.9 to
 * 3.1 ms), then an overhead-bound part (30 kernels of 10 us, late launch calls of 45 us): the run's headline and
 * its phases, which the caller frees */
static int two_phases(struct fix *f, uint64_t t0, struct cprof_verdict *v, struct cprof_phase **ph)
{
	struct cprof_thresholds t;

	queued(f, t0, 30, 100 * US, 1 * US);
	call(f, t0 + 2900 * US, t0 + 3100 * US, 0, 1);
	late_launches(f, t0 + 4000 * US, 30, 10 * US, 100 * US, 45 * US);
	cprof_thresholds_default(&t);
	build(f);
	return cprof_headline(&f->m, 0, &t, v, ph);
}

START_TEST(test_model_phases_cut_at_sync)
{
	static struct fix f;
	struct cprof_verdict v;
	struct cprof_phase *ph = NULL;

	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(two_phases(&f, 2000 * US, &v, &ph), 2);
	ck_assert_str_eq(ph[0].v.verdict, "compute-bound");
	ck_assert_str_eq(ph[1].v.verdict, "overhead-bound");
	ck_assert_uint_eq(ph[0].end, 5100 * US);
	ck_assert_uint_eq(ph[1].start, 5100 * US);
	ck_assert_str_eq(v.verdict, "mixed");
	ck_assert_ptr_nonnull(strstr(v.advice, "the phases differ"));
	/* the medians the run's line quotes are the phases' together, not the first's: 29 kernels of 100 us (the first
	 * is warm-up) and 30 of 10 us (a review, 2026-12-06: a torchrun job's line quoted its first phase's) */
	ck_assert_double_eq(ph[0].v.med_kernel_ns, 100 * US);
	ck_assert_double_eq(ph[1].v.med_kernel_ns, 10 * US);
	ck_assert_double_eq(v.med_kernel_ns, 10 * US);
	free(ph);
}
END_TEST

/* a phase with no launch call of its own takes the run's for its median; pooled with the others' it would count them
 * twice: the phases' median is of their own launch calls (a review, 2026-12-06) */
START_TEST(test_model_phases_median_own_launches)
{
	static struct fix f;
	struct cprof_verdict v;
	struct cprof_phase *ph = NULL;
	int i;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 100; i++) /* launch calls of 20 us in no phase: start-up, before the first kernel */
		call(&f, 100 * US + (uint64_t)i * 25 * US, 120 * US + (uint64_t)i * 25 * US, 1, 0);
	ck_assert_int_eq(two_phases(&f, 5000 * US, &v, &ph), 2);
	ck_assert_double_eq(ph[0].v.med_launch_ns, 20 * US); /* the run's, none of its own */
	ck_assert_double_eq(v.med_launch_ns, 45 * US);
	free(ph);
}
END_TEST

/* two compute-bound parts of 20 kernels cut by a sync: one phase once merged */
static void two_pieces_one_phase(struct fix *f)
{
	queued(f, 2000 * US, 20, 100 * US, 1 * US);
	call(f, 3900 * US, 4100 * US, 0, 1);
	queued(f, 4200 * US, 20, 100 * US, 1 * US);
}

START_TEST(test_model_phases_merge_same_verdict)
{
	static struct fix f;
	struct cprof_verdict v;
	struct cprof_thresholds t;
	struct cprof_phase *ph = NULL;
	int n;

	memset(&f, 0, sizeof(f));
	/* two compute-bound parts cut by a sync: one phase, and the run's verdict is theirs */
	two_pieces_one_phase(&f);
	cprof_thresholds_default(&t);
	build(&f);
	n = cprof_headline(&f.m, 0, &t, &v, &ph);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(v.verdict, "compute-bound");
	free(ph);
}
END_TEST

START_TEST(test_model_phases_fold_short_piece)
{
	static struct fix f;
	struct cprof_verdict v;
	struct cprof_thresholds t;
	struct cprof_phase *ph = NULL;
	int n;

	memset(&f, 0, sizeof(f));
	/* 3 overhead-bound kernels before a sync are too few for a phase of their own: folded into the next */
	late_launches(&f, 1000 * US, 3, 10 * US, 100 * US, 45 * US);
	call(&f, 1250 * US, 1260 * US, 0, 1);
	queued(&f, 1400 * US, 30, 100 * US, 1 * US);
	cprof_thresholds_default(&t);
	build(&f);
	n = cprof_headline(&f.m, 0, &t, &v, &ph);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(v.verdict, "compute-bound");
	free(ph);
}
END_TEST

/* each phase's verdict is its own window's analysis, whether it was one piece (analysed once, not again) or pieces
 * merged (analysed again as a whole): the headline keeps what it analysed instead of analysing it twice */
static void phases_are_their_windows(struct fix *f, const struct cprof_phase *ph, int n)
{
	struct cprof_thresholds t;
	struct cprof_verdict w;
	int i;

	cprof_thresholds_default(&t);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(cprof_analyse(&f->m, 0, ph[i].start, ph[i].end, &t, &w), 0);
		ck_assert_str_eq(ph[i].v.verdict, w.verdict);
		ck_assert_uint_eq(ph[i].v.kernels, w.kernels);
		ck_assert_uint_eq(ph[i].v.busy_ns, w.busy_ns);
		ck_assert_int_eq(memcmp(&ph[i].v, &w, sizeof(w)), 0);
	}
}

START_TEST(test_model_phases_each_its_window)
{
	static struct fix f, g;
	struct cprof_verdict v;
	struct cprof_thresholds t;
	struct cprof_phase *ph = NULL;
	int n;

	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(two_phases(&f, 2000 * US, &v, &ph), 2);
	phases_are_their_windows(&f, ph, 2);
	free(ph);
	ph = NULL;
	/* two pieces merged into one phase */
	memset(&g, 0, sizeof(g));
	two_pieces_one_phase(&g);
	cprof_thresholds_default(&t);
	build(&g);
	n = cprof_headline(&g.m, 0, &t, &v, &ph);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_gt(ph[0].v.kernels, 20); /* the merged window's, not its first piece's 20 */
	phases_are_their_windows(&g, ph, n);
	free(ph);
}
END_TEST

/* no phases (start-up counted): the headline is the whole run's analysis, all of it, not only the window the
 * headline works out first */
START_TEST(test_model_headline_without_phases_is_whole)
{
	static struct fix f;
	struct cprof_verdict v, w;
	struct cprof_thresholds t;
	struct cprof_phase *ph = NULL;

	memset(&f, 0, sizeof(f));
	queued(&f, 2000 * US, 30, 100 * US, 1 * US);
	call(&f, 4900 * US, 5100 * US, 0, 1);
	late_launches(&f, 6000 * US, 30, 10 * US, 100 * US, 45 * US);
	cprof_thresholds_default(&t);
	t.include_startup = 1;
	build(&f);
	ck_assert_int_eq(cprof_headline(&f.m, 0, &t, &v, &ph), 0);
	ck_assert_ptr_null(ph);
	ck_assert_int_eq(cprof_analyse(&f.m, 0, 0, UINT64_MAX, &t, &w), 0);
	ck_assert_str_eq(v.verdict, w.verdict);
	ck_assert_uint_gt(v.busy_ns, 0);
	ck_assert_double_gt(v.med_launch_ns, 0);
	ck_assert_int_eq(memcmp(&v, &w, sizeof(w)), 0);
}
END_TEST

/* the window alone (the straggler rule's) is the window, run and counts of the whole analysis */
START_TEST(test_model_analyse_window_is_analyses_window)
{
	static struct fix f;
	struct cprof_verdict v, w;
	struct cprof_thresholds t;

	memset(&f, 0, sizeof(f));
	queued(&f, 2000 * US, 30, 100 * US, 1 * US);
	call(&f, 4900 * US, 5100 * US, 0, 1);
	late_launches(&f, 6000 * US, 30, 10 * US, 100 * US, 45 * US);
	cprof_thresholds_default(&t);
	build(&f);
	ck_assert_int_eq(cprof_analyse(&f.m, 0, 0, UINT64_MAX, &t, &v), 0);
	ck_assert_int_eq(cprof_analyse_window(&f.m, 0, 0, UINT64_MAX, &t, &w), 0);
	ck_assert_uint_gt(v.warmup_ns, 0); /* the window is not the run's: the first kernels are warm-up */
	ck_assert_uint_eq(w.start, v.start);
	ck_assert_uint_eq(w.end, v.end);
	ck_assert_uint_eq(w.run_start, v.run_start);
	ck_assert_uint_eq(w.run_end, v.run_end);
	ck_assert_uint_eq(w.kernels, v.kernels);
	ck_assert_uint_eq(w.memcpys + w.memsets, v.memcpys + v.memsets);
	/* a process with no GPU work: counts 0, as the verdict's no-gpu-activity */
	ck_assert_int_eq(cprof_analyse(&f.m, 7, 0, UINT64_MAX, &t, &v), 0);
	ck_assert_int_eq(cprof_analyse_window(&f.m, 7, 0, UINT64_MAX, &t, &w), 0);
	ck_assert(cprof_verdict_no_gpu(&v));
	ck_assert_uint_eq(w.kernels + w.memcpys + w.memsets, 0);
}
END_TEST

START_TEST(test_model_hta_idle_pct)
{
	static struct fix f;

	memset(&f, 0, sizeof(f));
	/* busy 10 us of every 100 us: from the first start to the last end, 19 gaps of 90 us in 1910 us */
	late_launches(&f, 1000 * US, 20, 10 * US, 100 * US, 45 * US);
	build(&f);
	ck_assert_double_eq_tol(cprof_hta_idle_pct(&f.m, 0), 100.0 * 19 * 90 / 1910, 1e-9);
	ck_assert_double_eq(cprof_hta_idle_pct(&f.m, 7), -1);
}
END_TEST

Suite *model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("verdict");

	tcase_add_test(tc, test_model_verdict_overhead_bound);
	tcase_add_test(tc, test_model_verdict_host_work_between_launches);
	tcase_add_test(tc, test_model_verdict_compute_bound);
	tcase_add_test(tc, test_model_verdict_mixed_when_idle_is_not_host_wait);
	tcase_add_test(tc, test_model_verdict_no_gpu_activity);
	tcase_add_test(tc, test_model_verdict_excludes_startup_and_warmup);
	tcase_add_test(tc, test_model_verdict_profiler_overhead_not_host_wait);
	tcase_add_test(tc, test_model_verdict_other_process_ignored);
	tcase_add_test(tc, test_model_phases_cut_at_sync);
	tcase_add_test(tc, test_model_phases_merge_same_verdict);
	tcase_add_test(tc, test_model_phases_median_own_launches);
	tcase_add_test(tc, test_model_phases_fold_short_piece);
	tcase_add_test(tc, test_model_phases_each_its_window);
	tcase_add_test(tc, test_model_headline_without_phases_is_whole);
	tcase_add_test(tc, test_model_analyse_window_is_analyses_window);
	tcase_add_test(tc, test_model_hta_idle_pct);
	suite_add_tcase(s, tc);
	return s;
}
