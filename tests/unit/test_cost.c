/* Unit tests of cprof's own cost in a window (report/model/cost.c) on small in-memory models. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "report/model/analysis.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

#define MS 1000000ULL

static struct cprof_call calls[200];
static struct cprof_cost_row rows[8];
static struct cprof_proc procs[1] = { { .id = 1 } };
static struct cprof_model m;

/* 100 calls in [0, 100 ms) then 100 in [1000, 1100 ms); COST rows at 100 ms steps with the given waits */
static void build(const uint64_t *wait_at, const uint64_t *flusher_at, size_t nrows)
{
	memset(&m, 0, sizeof(m));
	for (int i = 0; i < 200; i++) {
		uint64_t s = (i < 100 ? 0 : 1000 * MS) + (uint64_t)(i % 100) * MS;

		calls[i] = (struct cprof_call){ .start = s, .end = s + MS / 2, .proc = 1, .outer = 1 };
	}
	ck_assert_int_eq(cprof_model_from_arrays(&m, NULL, 0, calls, 200, NULL, 0, 0), 0);
	for (size_t i = 0; i < nrows; i++)
		rows[i] = (struct cprof_cost_row){ .proc = 1, .time = 100 * MS + i * 500 * MS, .hook_calls = 200,
						   .hook_ns = 200 * 100, .sampled_calls = 3, .stack_calls = 4,
						   .stack_ns = 4 * 50000, .flusher_cpu_ns = flusher_at[i], .app_wait_ns = wait_at[i] };
	m.cost = rows;
	m.ncost = nrows;
	m.procs = procs;
	m.nprocs = 1;
}

/* every array of the model is this file's own (static): nothing to free */
static void done(void)
{
	memset(&m, 0, sizeof(m));
}

/* hooks per call: the window with half the calls gets half; stacks where they were taken (all four by the first
 * row, at 100 ms: a site's first captures), not spread over the calls; CUPTI's part is added as given */
START_TEST(test_cost_hooks_per_call_stacks_in_time)
{
	static const uint64_t w[] = { 0, 0, 0 }, fcpu[] = { 0, 0, 0 };
	struct cprof_cost c;

	build(w, fcpu, 3);
	cprof_cost_window(&m, 0, 1000 * MS, 1100 * MS, 7000, &c);
	ck_assert(c.measured);
	ck_assert_uint_eq(c.calls, 100);
	ck_assert_uint_eq(c.hook_ns, 100 * 100);
	ck_assert_uint_eq(c.stack_ns, 0);
	ck_assert_uint_eq(c.stacks, 0);
	ck_assert_uint_eq(c.cupti_overhead_ns, 7000);
	ck_assert_uint_eq(c.wait_attributed_ns, 0);
	ck_assert_uint_eq(c.total_ns, 100 * 100 + 7000);
	cprof_cost_window(&m, 0, 0, 100 * MS, 0, &c);
	ck_assert_uint_eq(c.hook_ns, 100 * 100);
	ck_assert_uint_eq(c.stack_ns, 4 * 50000);
	ck_assert_uint_eq(c.stacks, 4);
	ck_assert_uint_eq(c.total_ns, 100 * 100 + 4 * 50000);
	done();
}
END_TEST

/* each recording window gets its own cost, its process's only, as a verdict's window over the same span would */
START_TEST(test_cost_each_window)
{
	static const uint64_t w[] = { 0, 0, 0 }, fcpu[] = { 0, 0, 0 };
	struct cprof_window win[3] = {
		{ .proc = 1, .start = 0, .end = 100 * MS },
		{ .proc = 1, .start = 1000 * MS, .end = 1100 * MS },
		{ .proc = 2, .start = 0, .end = 1100 * MS },
	};
	struct cprof_cost c;

	build(w, fcpu, 3);
	m.rec.w = win;
	m.rec.n = 3;
	cprof_model_window_costs(&m);
	ck_assert_uint_eq(win[0].cost_ns, 100 * 100 + 4 * 50000);
	ck_assert_uint_eq(win[1].cost_ns, 100 * 100);
	ck_assert(win[0].cost_measured && win[1].cost_measured);
	/* process 2 made no call and has no COST rows: nothing measured, nothing stated */
	ck_assert_uint_eq(win[2].cost_ns, 0);
	ck_assert(!win[2].cost_measured);
	cprof_cost_window(&m, 1, 1000 * MS, 1100 * MS, 0, &c);
	ck_assert_uint_eq(win[1].cost_ns, c.total_ns);
	done();
}
END_TEST

/* a window's calls: two searches when every call is the process's (calls_proc), a walk otherwise; the same
 * counts either way, and a call of another process is not counted for this one */
START_TEST(test_cost_window_calls_by_search)
{
	static const uint64_t w[] = { 0, 0, 0 }, fcpu[] = { 0, 0, 0 };
	struct cprof_cost walk, search;
	uint64_t ws, we;

	build(w, fcpu, 3);
	for (ws = 0; ws < 1200 * MS; ws += 37 * MS)
		for (we = ws; we < 1300 * MS; we += 53 * MS) {
			m.calls_proc = 0;
			cprof_cost_window(&m, 1, ws, we, 0, &walk);
			m.calls_proc = 1;
			cprof_cost_window(&m, 1, ws, we, 0, &search);
			ck_assert_uint_eq(walk.calls, search.calls);
			ck_assert_uint_eq(walk.hook_ns, search.hook_ns);
		}
	m.calls_proc = 1;
	cprof_cost_window(&m, 1, 1000 * MS, 1100 * MS, 0, &search);
	ck_assert_uint_eq(search.calls, 100);
	/* one call of process 2: process 1's window is walked and leaves it out */
	calls[150].proc = 2;
	m.calls_proc = 0;
	cprof_cost_window(&m, 1, 1000 * MS, 1100 * MS, 0, &walk);
	ck_assert_uint_eq(walk.calls, 99);
	done();
}
END_TEST

/* waiting is read in time: a window over a stretch where the threads waited gets that wait, one where they
 * did not gets none, and never more than cprof's own threads' CPU over the same stretch */
START_TEST(test_cost_wait_in_time_and_capped)
{
	/* rows at 100, 600, 1100 ms: the wait grew by 40 ms between 600 and 1100, the flusher's CPU by 10 ms */
	static const uint64_t w[] = { 0, 0, 40 * MS }, fcpu[] = { 1 * MS, 1 * MS, 11 * MS };
	struct cprof_cost c;

	build(w, fcpu, 3);
	cprof_cost_window(&m, 0, 0, 100 * MS, 0, &c);
	ck_assert_uint_eq(c.app_wait_ns, 0);
	ck_assert_uint_eq(c.wait_attributed_ns, 0);
	cprof_cost_window(&m, 1, 600 * MS, 1100 * MS, 0, &c);
	ck_assert_uint_eq(c.app_wait_ns, 40 * MS);
	ck_assert_uint_eq(c.flusher_cpu_ns, 10 * MS);
	/* 40 ms waited, but cprof's threads ran 10 ms: at most 10 ms is cprof's doing */
	ck_assert_uint_eq(c.wait_attributed_ns, 10 * MS);
	/* half of that stretch: interpolated */
	cprof_cost_window(&m, 1, 850 * MS, 1100 * MS, 0, &c);
	ck_assert_uint_eq(c.app_wait_ns, 20 * MS);
	done();
}
END_TEST

/* a profile without CPROF_COST: only CUPTI's part is known, and it says so */
START_TEST(test_cost_unmeasured)
{
	struct cprof_cost c;

	build(NULL, NULL, 0);
	cprof_cost_window(&m, 0, 0, 2000 * MS, 5000, &c);
	ck_assert(!c.measured);
	ck_assert_uint_eq(c.hook_ns, 0);
	ck_assert_uint_eq(c.total_ns, 5000);
	done();
}
END_TEST

/* CUPTI's time inside the runtime calls (issue 26: the stated cost left it out): the median of a call's hook
 * time less CUPTI's record of it, measured on the calls that have one record (a call a preemption lengthened
 * does not move it; a cuBLAS call with two records inside, its own work between, is not measured), times the
 * window's runtime records, the two inside the cuBLAS call included. */
START_TEST(test_cost_cupti_in_calls)
{
	static struct cprof_call c[6];
	static struct cprof_rt rt[7];
	static struct cprof_ext ext[7];
	static struct cprof_string str[] = { { 1, "cudaLaunchKernel" }, { 2, "cublasGemmEx" } };
	struct cprof_cost cost;
	int i, n = 0;

	memset(&m, 0, sizeof(m));
	for (i = 0; i < 6; i++) {
		uint64_t s = (uint64_t)i * MS;

		c[i] = (struct cprof_call){ .start = s, .end = s + (i == 3 ? 100000 : 1000), .proc = 1, .outer = 1,
					    .name = i == 5 ? 2 : 1, .corr = 100 + i };
		/* CUPTI's record: 600 ns of the call's 1000 */
		rt[n] = (struct cprof_rt){ .start = s + 100, .end = s + 700, .proc = 1, .corr = 10 + n };
		ext[n] = (struct cprof_ext){ .proc = 1, .corr = 10 + n, .ext = 100 + i, .seq = (uint32_t)n };
		n++;
		if (i == 5) {
			rt[n] = (struct cprof_rt){ .start = s + 800, .end = s + 900, .proc = 1, .corr = 10 + n };
			ext[n] = (struct cprof_ext){ .proc = 1, .corr = 10 + n, .ext = 100 + i, .seq = (uint32_t)n };
			n++;
		}
	}
	ck_assert_int_eq(cprof_model_from_arrays(&m, NULL, 0, c, 6, NULL, 0, 0), 0);
	m.rt = rt;
	m.nrt = (size_t)n;
	m.ext = ext;
	m.next = (size_t)n;
	m.strings = str;
	m.nstrings = 2;
	cprof_model_link_rt(&m);
	ck_assert_int_eq(cprof_model_cupti_in_calls(&m), 0);
	ck_assert_uint_eq(m.in_call.ns, 400);
	ck_assert_uint_eq(c[5].rt1, 0);
	cprof_cost_window(&m, 0, 0, 10 * MS, 0, &cost);
	ck_assert_uint_eq(cost.cupti_calls, 7);
	ck_assert_uint_eq(cost.cupti_calls_ns, 7 * 400);
	ck_assert_uint_eq(cost.total_ns, 7 * 400);
	cprof_cost_window(&m, 0, 2 * MS, 10 * MS, 0, &cost);
	ck_assert_uint_eq(cost.cupti_calls, 5);
	/* one process's window counts its records only */
	cprof_cost_window(&m, 2, 0, 10 * MS, 0, &cost);
	ck_assert_uint_eq(cost.cupti_calls, 0);
	done();
}
END_TEST

/* CUPTI's work in a call is paid in every call, its slow ones too: the mean over the one-record calls, not the
 * median, which took 400 here and left the contended call's extra 1,000 ns out; a call 60 us longer than its
 * record (a buffer request, the thread losing its core) is counted elsewhere and left out */
START_TEST(test_cost_cupti_in_calls_mean)
{
	static const uint64_t extra[] = { 400, 400, 1400, 400, 60000 };
	static struct cprof_call c[5];
	static struct cprof_rt rt[5];
	static struct cprof_ext ext[5];
	static struct cprof_string str[] = { { 1, "cudaLaunchKernel" } };
	int i;

	memset(&m, 0, sizeof(m));
	for (i = 0; i < 5; i++) {
		uint64_t s = (uint64_t)i * MS;

		c[i] = (struct cprof_call){ .start = s, .end = s + 600 + extra[i], .proc = 1, .outer = 1, .name = 1,
					    .corr = 100 + (uint64_t)i };
		rt[i] = (struct cprof_rt){ .start = s + 100, .end = s + 700, .proc = 1, .corr = 10 + (uint64_t)i };
		ext[i] = (struct cprof_ext){ .proc = 1, .corr = 10 + (uint64_t)i, .ext = 100 + (uint64_t)i, .seq = (uint32_t)i };
	}
	ck_assert_int_eq(cprof_model_from_arrays(&m, NULL, 0, c, 5, NULL, 0, 0), 0);
	m.rt = rt;
	m.nrt = 5;
	m.ext = ext;
	m.next = 5;
	m.strings = str;
	m.nstrings = 1;
	cprof_model_link_rt(&m);
	ck_assert_int_eq(cprof_model_cupti_in_calls(&m), 0);
	ck_assert_uint_eq(m.in_call.ns, (400 + 400 + 1400 + 400) / 4);
	done();
}
END_TEST

/* Where launches were passed through outside the windows (preload's CPROF_PASS), CUPTI's time in a call is the
 * recorded kernel launches' mean duration less theirs: 1,500 - 1,200 = 300 ns, where the estimate (each call less its
 * 600-ns record) says 900. A graph's launch and a launch longer than CPROF_PASS_MAX_NS are not in the mean; fewer than
 * 32 timed on either side, or a difference within twice its standard error of 0, leaves the estimate. */
START_TEST(test_cost_cupti_in_calls_measured)
{
	enum { N = 42 };
	static struct cprof_call c[N];
	static struct cprof_rt rt[N];
	static struct cprof_ext ext[N];
	static struct cprof_string str[] = { { 1, "cudaLaunchKernel" }, { 2, "cudaGraphLaunch" } };
	static struct cprof_cost_row row;
	static struct cprof_proc pr[1] = { { .id = 1 } };
	struct cprof_cost cost;
	int i;

	memset(&m, 0, sizeof(m));
	for (i = 0; i < N; i++) {
		uint64_t s = (uint64_t)i * MS, dur = i == 40 ? 9000 : i == 41 ? 2 * CPROF_PASS_MAX_NS : 1500;

		c[i] = (struct cprof_call){ .start = s, .end = s + dur, .proc = 1, .outer = 1, .name = i == 40 ? 2 : 1,
					    .corr = 100 + (uint64_t)i, .launch = 1,
					    .graph = i == 40 ? CPROF_GRAPH_REPLAY : CPROF_GRAPH_NONE };
		rt[i] = (struct cprof_rt){ .start = s + 100, .end = s + 700, .proc = 1, .corr = 10 + (uint64_t)i };
		ext[i] = (struct cprof_ext){ .proc = 1, .corr = 10 + (uint64_t)i, .ext = 100 + (uint64_t)i, .seq = (uint32_t)i };
	}
	ck_assert_int_eq(cprof_model_from_arrays(&m, NULL, 0, c, N, NULL, 0, 0), 0);
	m.rt = rt;
	m.nrt = N;
	m.ext = ext;
	m.next = N;
	m.strings = str;
	m.nstrings = 2;
	m.procs = pr;
	m.nprocs = 1;
	/* too few passed through: the estimate, (40 x 900 + 8,400) / 41 with the graph's launch (the long one is out) */
	row = (struct cprof_cost_row){ .proc = 1, .time = 50 * MS, .pass_calls = 31, .pass_ns = 31 * 1200 };
	m.cost = &row;
	m.ncost = 1;
	cprof_model_link_rt(&m);
	ck_assert_int_eq(cprof_model_cupti_in_calls(&m), 0);
	ck_assert_uint_eq(m.in_call.passed, 0);
	ck_assert_uint_eq(m.in_call.ns, (40 * 900 + 8400) / 41);
	row.pass_calls = 40;
	row.pass_ns = 40 * 1200;
	row.pass_sq = 40 * 1200 * 1200; /* no spread */
	cprof_model_link_rt(&m);
	ck_assert_int_eq(cprof_model_cupti_in_calls(&m), 0);
	ck_assert_uint_eq(m.in_call.passed, 40);
	ck_assert_int_eq(m.in_call.measured, 1);
	ck_assert_uint_eq(m.in_call.ns, 300);
	ck_assert_uint_eq(m.in_call.estimate_ns, (40 * 900 + 8400) / 41);
	/* every runtime record of a window counts it, and the window says how it was had */
	cprof_cost_window(&m, 0, 0, 10 * MS, 0, &cost);
	ck_assert_uint_eq(cost.cupti_calls, 10);
	ck_assert_uint_eq(cost.cupti_calls_ns, 10 * 300);
	ck_assert_uint_eq(cost.in_call.passed, 40);
	ck_assert_int_eq(cost.in_call.measured, 1);
	/* the same difference in a spread of 1 us (variance 1e6 ns^2): 300 is within twice its standard error (316) of
	 * 0, the estimate stands, the measurement kept beside it */
	row.pass_sq = 40ull * 1200 * 1200 + 39ull * 1000000;
	cprof_model_link_rt(&m);
	ck_assert_int_eq(cprof_model_cupti_in_calls(&m), 0);
	ck_assert_int_eq(m.in_call.measured, 0);
	ck_assert_uint_eq(m.in_call.ns, (40 * 900 + 8400) / 41);
	ck_assert_int_eq(m.in_call.diff_ns, 300);
	ck_assert_uint_eq(m.in_call.se_ns, 158);
	/* passed-through launches slower than the recorded ones (a fuller launch queue outside the windows): never a
	 * cost of 0 or less, the estimate stands */
	row.pass_ns = 40 * 2000;
	row.pass_sq = 40 * 2000 * 2000;
	cprof_model_link_rt(&m);
	ck_assert_int_eq(cprof_model_cupti_in_calls(&m), 0);
	ck_assert_int_eq(m.in_call.measured, 0);
	ck_assert_uint_eq(m.in_call.ns, (40 * 900 + 8400) / 41);
	ck_assert_int_eq(m.in_call.diff_ns, -500);
	ck_assert_uint_eq(m.in_call.passed, 40);
	/* a recorded launch 10 us or more over its record (CUPTI's buffer request, counted by its overhead record) is
	 * not in the measured mean, as not in the estimate */
	c[39].end = c[39].start + 12000;
	row.pass_ns = 40 * 1200;
	row.pass_sq = 40 * 1200 * 1200;
	cprof_model_link_rt(&m);
	ck_assert_int_eq(cprof_model_cupti_in_calls(&m), 0);
	ck_assert_int_eq(m.in_call.measured, 1);
	ck_assert_uint_eq(m.in_call.ns, 300);
	done();
}
END_TEST

/* CUPTI's buffer flushes on a thread that made no runtime call (cprof's flusher) are not the program's cost; its
 * buffer requests on the calling thread are. Records that match no calling thread at all are all kept. */
START_TEST(test_cost_overhead_program_threads)
{
	static struct cprof_call c[1];
	static struct cprof_rt rt[2];
	static struct cprof_ovh ovh[3];
	int i;

	memset(&m, 0, sizeof(m));
	c[0] = (struct cprof_call){ .start = 0, .end = 1000, .proc = 1, .outer = 1, .name = 1, .corr = 100 };
	for (i = 0; i < 2; i++)
		rt[i] = (struct cprof_rt){ .start = (uint64_t)i * MS, .end = (uint64_t)i * MS + 500, .proc = 1, .tid = 7,
					   .corr = CPROF_NO_ID };
	ovh[0] = (struct cprof_ovh){ .start = 1 * MS, .end = 1 * MS + 20000, .proc = 1, .tid = 7 }; /* a request */
	ovh[1] = (struct cprof_ovh){ .start = 2 * MS, .end = 2 * MS + 200000, .proc = 1, .tid = 9 }; /* a flush */
	ovh[2] = (struct cprof_ovh){ .start = 3 * MS, .end = 3 * MS + 1000, .proc = 1, .tid = 0 }; /* no thread */
	ck_assert_int_eq(cprof_model_from_arrays(&m, NULL, 0, c, 1, ovh, 3, 0), 0);
	m.rt = rt;
	m.nrt = 2;
	cprof_model_link_rt(&m);
	ck_assert_int_eq(cprof_model_cupti_in_calls(&m), 0);
	ck_assert_uint_eq(cprof_cost_overhead(&m, 0, 0, 10 * MS, 1), 20000 + 1000);
	/* every thread's (what the idle-time split takes off) */
	ck_assert_uint_eq(cprof_cost_overhead(&m, 0, 0, 10 * MS, 0), 20000 + 200000 + 1000);
	ck_assert_uint_eq(cprof_cost_overhead(&m, 0, 2 * MS, 10 * MS, 1), 1000);
	ck_assert_uint_eq(cprof_cost_overhead(&m, 2, 0, 10 * MS, 1), 0);
	/* cut at the window's end */
	ck_assert_uint_eq(cprof_cost_overhead(&m, 0, 0, 1 * MS + 5000, 1), 5000);
	/* the calling thread's records numbered otherwise: nothing is taken off */
	for (i = 0; i < 2; i++)
		rt[i].tid = 70;
	cprof_model_link_rt(&m);
	ck_assert_int_eq(cprof_model_cupti_in_calls(&m), 0);
	ck_assert_uint_eq(cprof_cost_overhead(&m, 0, 0, 10 * MS, 1), 20000 + 200000 + 1000);
	done();
}
END_TEST

/* the counted calls' hooks (cudaGetDevice, cuBLAS's settings) are not in the calls' table: their running totals'
 * growth over the window is theirs, and it is in the total */
START_TEST(test_cost_counted_in_time)
{
	static const uint64_t w[] = { 0, 0, 0 }, fcpu[] = { 0, 0, 0 };
	struct cprof_cost c, sum = { 0 };

	build(w, fcpu, 3);
	/* rows at 100, 600, 1100 ms: 1,000 counted calls (20 us) by the first, 51,000 (1.02 ms) by the last */
	for (int i = 0; i < 3; i++) {
		rows[i].counted_calls = i == 0 ? 1000 : 1000 + (uint64_t)i * 25000;
		rows[i].counted_ns = rows[i].counted_calls * 20;
	}
	cprof_cost_window(&m, 0, 600 * MS, 1100 * MS, 0, &c);
	ck_assert_uint_eq(c.counted_calls, 25000);
	ck_assert_uint_eq(c.counted_ns, 25000 * 20);
	ck_assert_uint_eq(c.total_ns, c.hook_ns + c.stack_ns + 25000 * 20);
	/* another process's window has none */
	cprof_cost_window(&m, 2, 600 * MS, 1100 * MS, 0, &c);
	ck_assert_uint_eq(c.counted_ns, 0);
	/* phases add up */
	cprof_cost_window(&m, 0, 100 * MS, 600 * MS, 0, &c);
	cprof_cost_add(&sum, &c);
	cprof_cost_window(&m, 0, 600 * MS, 1100 * MS, 0, &c);
	cprof_cost_add(&sum, &c);
	ck_assert_uint_eq(sum.counted_calls, 50000);
	ck_assert_uint_eq(sum.counted_ns, 50000 * 20);
	done();
}
END_TEST

/* what grows only while cprof records (stack captures, counted calls) is spread over the recorded time between two
 * rows, not the clock's: rows at 100, 600 and 1100 ms and windows [0, 100) and [1000, 1100) ms put all the growth
 * from 600 to 1100 ms into the second window (by the clock it got a fifth); the flusher's CPU and the program's wait
 * stay in time */
START_TEST(test_cost_recorded_only_in_windows)
{
	static const uint64_t w[] = { 0, 0, 0 }, fcpu[] = { 1000, 1000, 51000 };
	struct cprof_window win[2] = {
		{ .proc = 1, .start = 0, .end = 100 * MS },
		{ .proc = 1, .start = 1000 * MS, .end = 1100 * MS },
	};
	struct cprof_cost c;

	build(w, fcpu, 3);
	for (int i = 0; i < 3; i++) {
		rows[i].counted_calls = i < 2 ? 1000 : 51000;
		rows[i].counted_ns = rows[i].counted_calls * 20;
		rows[i].stack_calls = i < 2 ? 4 : 14;
		rows[i].stack_ns = rows[i].stack_calls * 50000;
	}
	/* without the spans (a profile recorded whole): by the clock */
	cprof_cost_window(&m, 1, 1000 * MS, 1100 * MS, 0, &c);
	ck_assert_uint_eq(c.counted_calls, 10000);
	m.rec.w = win;
	m.rec.n = 2;
	ck_assert_int_eq(cprof_model_rec_spans(&m), 0);
	ck_assert_uint_eq(m.nrspan, 2);
	cprof_cost_window(&m, 1, 1000 * MS, 1100 * MS, 0, &c);
	ck_assert_uint_eq(c.counted_calls, 50000);
	ck_assert_uint_eq(c.counted_ns, 50000 * 20);
	ck_assert_uint_eq(c.stacks, 10);
	ck_assert_uint_eq(c.stack_ns, 10 * 50000);
	ck_assert_uint_eq(c.flusher_cpu_ns, 10000); /* a fifth of 50,000: in time */
	/* half the window, half its growth; the unrecorded time beside it, none */
	cprof_cost_window(&m, 1, 1000 * MS, 1050 * MS, 0, &c);
	ck_assert_uint_eq(c.counted_calls, 25000);
	cprof_cost_window(&m, 1, 600 * MS, 1000 * MS, 0, &c);
	ck_assert_uint_eq(c.counted_calls, 0);
	ck_assert_uint_eq(c.stacks, 0);
	/* each window's own, and together the whole growth */
	cprof_model_window_costs(&m);
	ck_assert_uint_eq(win[1].cost_ns - win[0].cost_ns, 50000 * 20 + 10 * 50000 - (1000 * 20 + 4 * 50000));
	free(m.rspan);
	done();
}
END_TEST

/* the wait the program has anyway is not cprof's: its wait per ns run between the windows (the baseline) times the
 * window's run, less cprof's part of it, is taken off before the bound; the phases' excesses add up, signed, before
 * they are bounded (a bound per window would turn each window's noise into cost) */
START_TEST(test_cost_wait_over_baseline)
{
	/* windows at [0,100), [200,300), [400,500) ms; one thread runs half of each 100 ms; the gaps run 50 ms and wait
	 * 10 each (0.2 ns a ns run) */
	static const uint64_t t[] = { 0, 100, 200, 300, 400, 500 }, run[] = { 0, 50, 100, 150, 200, 250 },
			      wait[] = { 0, 15, 25, 40, 50, 55 }, fl[] = { 0, 20, 20, 40, 40, 60 },
			      counted[] = { 0, 0, 0, 10, 10, 10 };
	static struct cprof_cost_row r6[6];
	struct cprof_window win[3] = {
		{ .proc = 1, .start = 0, .end = 100 * MS },
		{ .proc = 1, .start = 200 * MS, .end = 300 * MS },
		{ .proc = 1, .start = 400 * MS, .end = 500 * MS },
	};
	struct cprof_cost c2, c3, sum;

	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(cprof_model_from_arrays(&m, NULL, 0, NULL, 0, NULL, 0, 0), 0);
	for (int i = 0; i < 6; i++)
		r6[i] = (struct cprof_cost_row){ .proc = 1, .time = t[i] * MS, .app_run_ns = run[i] * MS,
						 .app_wait_ns = wait[i] * MS, .flusher_cpu_ns = fl[i] * MS,
						 .counted_calls = counted[i] * 1000, .counted_ns = counted[i] * MS };
	m.cost = r6;
	m.ncost = 6;
	m.procs = procs;
	m.nprocs = 1;
	/* recorded whole (no windows): no baseline, all the wait up to cprof's threads' CPU */
	ck_assert_int_eq(cprof_model_wait_base(&m), 0);
	cprof_cost_window(&m, 1, 200 * MS, 300 * MS, 0, &c2);
	ck_assert_uint_eq(c2.wait_expected_ns, 0);
	ck_assert_uint_eq(c2.wait_attributed_ns, 15 * MS);
	m.rec.w = win;
	m.rec.n = 3;
	ck_assert_int_eq(cprof_model_rec_spans(&m), 0);
	ck_assert_int_eq(cprof_model_wait_base(&m), 0);
	ck_assert_uint_eq(m.nwait_base, 1);
	ck_assert(m.wait_base[0].per_run > 0.1999 && m.wait_base[0].per_run < 0.2001);
	/* 50 ms run, 10 of them cprof's counted calls: 8 ms expected, 2 the wait of cprof's part; 15 waited */
	cprof_cost_window(&m, 1, 200 * MS, 300 * MS, 0, &c2);
	ck_assert_uint_eq(c2.app_run_ns, 50 * MS);
	ck_assert_uint_eq(c2.counted_ns, 10 * MS);
	ck_assert_uint_eq(c2.wait_expected_ns, 8 * MS);
	ck_assert_uint_eq(c2.wait_part_ns, 2 * MS);
	ck_assert_uint_eq(c2.wait_attributed_ns, 7 * MS);
	ck_assert_uint_eq(c2.total_ns, 10 * MS + 7 * MS);
	/* waited 5 where 10 was expected: none, not less than none */
	cprof_cost_window(&m, 1, 400 * MS, 500 * MS, 0, &c3);
	ck_assert_uint_eq(c3.wait_attributed_ns, 0);
	ck_assert_int_eq(c3.wait_excess_ns, -5 * (int64_t)MS);
	/* together: 7 - 5 = 2 ms over the baseline, not 7 */
	memset(&sum, 0, sizeof(sum));
	cprof_cost_add(&sum, &c2);
	cprof_cost_add(&sum, &c3);
	ck_assert_uint_eq(sum.wait_attributed_ns, 2 * MS);
	ck_assert_uint_eq(sum.total_ns, 10 * MS + 2 * MS);
	/* each window's figure: the process's excess over all three (5 + 7 - 5 = 7 ms), shared by what bounds
	 * each (20, 22 and 20 ms), not each window's own bound (5 + 7 + 0 = 12 ms in all) */
	cprof_model_window_costs(&m);
	ck_assert_uint_eq(win[0].cost_ns, 7 * MS * 20 / 62);
	ck_assert_uint_eq(win[1].cost_ns, 10 * MS + 7 * MS * 22 / 62);
	ck_assert_uint_eq(win[2].cost_ns, 7 * MS * 20 / 62);
	free(m.rspan);
	free(m.wait_base);
	done();
}
END_TEST

/* threads of one process runnable together wait together: a process's excess is divided by its threads runnable at a
 * time ((run + wait) / wall); two processes' threads are not one program's, and each keeps its own */
START_TEST(test_cost_wait_threads_runnable_together)
{
	/* process 1: two threads, each running 60 and waiting 20 of every 100 ms (1.6 at a time); process 2: one thread,
	 * running 60 and waiting 20. No windows, no baseline: all the wait is over it, up to cprof's threads' CPU */
	static const uint64_t t[] = { 0, 100 };
	static struct cprof_cost_row r4[4];
	static struct cprof_proc two[2] = { { .id = 1 }, { .id = 2 } };
	struct cprof_cost c;

	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(cprof_model_from_arrays(&m, NULL, 0, NULL, 0, NULL, 0, 0), 0);
	for (int i = 0; i < 2; i++) {
		r4[i] = (struct cprof_cost_row){ .proc = 1, .time = t[i] * MS, .app_run_ns = i * 120 * MS,
						 .app_wait_ns = i * 40 * MS, .flusher_cpu_ns = i * 100 * MS };
		r4[2 + i] = (struct cprof_cost_row){ .proc = 2, .time = t[i] * MS, .app_run_ns = i * 60 * MS,
						     .app_wait_ns = i * 20 * MS, .flusher_cpu_ns = i * 100 * MS };
	}
	m.cost = r4;
	m.ncost = 4;
	m.procs = two;
	m.nprocs = 2;
	ck_assert_int_eq(cprof_model_wait_base(&m), 0);
	/* 40 ms waited in all, 25 of it the program's delay: 40 / 1.6 */
	cprof_cost_window(&m, 1, 0, 100 * MS, 0, &c);
	ck_assert_uint_eq(c.app_wait_ns, 40 * MS);
	ck_assert_int_eq(c.wait_excess_ns, 25 * (int64_t)MS);
	ck_assert_uint_eq(c.wait_attributed_ns, 25 * MS);
	/* one thread, never more than one at a time: its whole wait */
	cprof_cost_window(&m, 2, 0, 100 * MS, 0, &c);
	ck_assert_int_eq(c.wait_excess_ns, 20 * (int64_t)MS);
	/* both processes (0.8 and 1.6 threads at a time, 2.4 together): each its own, 25 + 20 */
	cprof_cost_window(&m, 0, 0, 100 * MS, 0, &c);
	ck_assert_uint_eq(c.app_wait_ns, 60 * MS);
	ck_assert_int_eq(c.wait_excess_ns, 45 * (int64_t)MS);
	done();
}
END_TEST

START_TEST(test_cost_rec_spans_by_process)
{
	static const uint64_t w[] = { 0 }, fcpu[] = { 0 };
	static struct cprof_proc three[3] = { { .id = 1 }, { .id = 2 }, { .id = 3 } };
	struct cprof_window win[] = {
		{ .proc = 1, .start = 0, .end = 10 },  { .proc = 0, .start = 5, .end = 20 },
		{ .proc = 1, .start = 12, .end = 15 }, { .proc = 2, .start = 30, .end = 40 },
		{ .proc = 9, .start = 50, .end = 60 }, { .proc = 2, .start = 70, .end = 70 },
	};
	static const struct cprof_rec_span want[] = {
		{ .proc = 1, .start = 0, .end = 20, .before = 0 },
		{ .proc = 2, .start = 5, .end = 20, .before = 0 },
		{ .proc = 2, .start = 30, .end = 40, .before = 15 },
		{ .proc = 3, .start = 5, .end = 20, .before = 0 },
	};

	build(w, fcpu, 1);
	m.procs = three;
	m.nprocs = 3;
	m.rec.w = win;
	m.rec.n = sizeof(win) / sizeof(win[0]);
	ck_assert_int_eq(cprof_model_rec_spans(&m), 0);
	ck_assert_uint_eq(m.nrspan, 4);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_eq(m.rspan[i].proc, want[i].proc);
		ck_assert_uint_eq(m.rspan[i].start, want[i].start);
		ck_assert_uint_eq(m.rspan[i].end, want[i].end);
		ck_assert_uint_eq(m.rspan[i].before, want[i].before);
	}
	free(m.rspan);
	done();
}
END_TEST

/* m's recorded spans made again from m.rec (its windows changed) */
static void respan(void)
{
	free(m.rspan);
	m.rspan = NULL;
	m.nrspan = 0;
	ck_assert_int_eq(cprof_model_rec_spans(&m), 0);
}

/* The pace's fixture in m: 90 launches a window, 1 ms after its start, every[w] apart (lc: 4 x 90), and COST rows at
 * t[i] ms with passed[i] launches passed through */
static void pace_fixture(struct cprof_call *lc, const struct cprof_window *win, const uint64_t *every,
			 struct cprof_cost_row *rows, const uint64_t *t, const uint64_t *passed, size_t nrows)
{
	for (int w = 0; w < 4; w++) {
		for (int i = 0; i < 90; i++) {
			uint64_t s = win[w].start + MS + (uint64_t)i * every[w];

			lc[w * 90 + i] = (struct cprof_call){ .start = s, .end = s + 1000, .proc = 1, .outer = 1, .launch = 1 };
		}
	}
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(cprof_model_from_arrays(&m, NULL, 0, lc, 4 * 90, NULL, 0, 0), 0);
	for (size_t i = 0; i < nrows; i++)
		rows[i] = (struct cprof_cost_row){ .proc = 1, .time = t[i] * MS, .pass_launches = passed[i] };
	m.cost = rows;
	m.ncost = nrows;
	m.procs = procs;
	m.nprocs = 1;
}

/* The program's pace: each window's wall time a launch, first launch to last, less that of the nearest gaps with
 * launches on each side (CPROF_COST passLaunches); back-to-back windows have no gap between them; a difference
 * lost in its spread is kept but not measured; a window's figure is its launches times the difference. */
START_TEST(test_cost_pace_in_and_between_windows)
{
	/* windows of 90 launches each, a launch every 1.010 or 1.012 ms; 200 launches in each 200 ms gap (1 ms each) */
	static struct cprof_call lc[4 * 90];
	static struct cprof_cost_row r8[8];
	static const uint64_t t[] = { 0, 100, 300, 400, 600, 700, 900, 1000 }, passed[] = { 0, 0, 200, 200, 400, 400, 600, 600 };
	static const uint64_t every[] = { 1010000, 1012000, 1010000, 1012000 };
	struct cprof_window win[4] = {
		{ .proc = 1, .start = 0, .end = 100 * MS },
		{ .proc = 1, .start = 300 * MS, .end = 400 * MS },
		{ .proc = 1, .start = 600 * MS, .end = 700 * MS },
		{ .proc = 1, .start = 900 * MS, .end = 1000 * MS },
	};
	struct cprof_cost c;

	pace_fixture(lc, win, every, r8, t, passed, 8);
	/* recorded whole: no gap, no pace */
	ck_assert_int_eq(cprof_model_pace(&m), 0);
	ck_assert_uint_eq(m.pace.launches_in, 0);
	ck_assert_int_eq(m.pace.measured, 0);
	m.rec.w = win;
	m.rec.n = 4;
	ck_assert_int_eq(cprof_model_rec_spans(&m), 0);
	ck_assert_int_eq(cprof_model_pace(&m), 0);
	ck_assert_uint_eq(m.pace.launches_in, 4 * 89); /* first launch to last: 89 intervals a window */
	ck_assert_uint_eq(m.pace.windows, 4);
	ck_assert_uint_eq(m.pace.launches_out, 600);
	ck_assert_uint_eq(m.pace.out_ns, 1000000);
	ck_assert_uint_eq(m.pace.in_ns, 1011000);
	ck_assert_int_eq(m.pace.diff_ns, 11000);
	ck_assert_uint_eq(m.pace.se_ns, 577); /* 1,000 ns of spread over 4 windows: sqrt(4/3) x 1000 / 2 */
	ck_assert_int_eq(m.pace.measured, 1);
	cprof_cost_window(&m, 1, 300 * MS, 400 * MS, 0, &c);
	ck_assert_uint_eq(c.pace_launches, 90);
	ck_assert_uint_eq(c.paced_ns, 90 * 11000);
	ck_assert_int_eq(c.pace.measured, 1);
	/* three windows: the difference is kept, too few samples to call it measured */
	m.rec.n = 3;
	respan();
	ck_assert_int_eq(cprof_model_pace(&m), 0);
	ck_assert_uint_eq(m.pace.windows, 3);
	ck_assert_int_eq(m.pace.measured, 0);
	cprof_cost_window(&m, 1, 300 * MS, 400 * MS, 0, &c);
	ck_assert_uint_eq(c.paced_ns, 0);
	m.rec.n = 4;
	respan();
	/* a process that lost events did less work in its windows than they took: no pace */
	r8[7].lost_ring_full = 1;
	ck_assert_int_eq(cprof_model_pace(&m), 0);
	ck_assert_uint_eq(m.pace.launches_in, 0);
	r8[7].lost_ring_full = 0;
	/* the third gap's launches halved (2 ms each): the last window against it alone, the third against the mean of
	 * the gaps either side (1.5 ms), each one's own slowdown */
	r8[6].pass_launches = r8[7].pass_launches = 500;
	ck_assert_int_eq(cprof_model_pace(&m), 0);
	ck_assert_uint_eq(m.pace.launches_out, 500);
	ck_assert_int_eq(m.pace.diff_ns, (10000 + 12000 + (1010000 - 1500000) + (1012000 - 2000000)) / 4);
	ck_assert_int_eq(m.pace.measured, 0); /* below 0: no slowdown */
	/* no launch passed through between the windows: they are back to back, no gap, no pace */
	for (int i = 0; i < 8; i++)
		r8[i].pass_launches = 0;
	ck_assert_int_eq(cprof_model_pace(&m), 0);
	ck_assert_uint_eq(m.pace.launches_in, 0);
	cprof_cost_window(&m, 1, 300 * MS, 400 * MS, 0, &c);
	ck_assert_uint_eq(c.paced_ns, 0);
	free(m.rspan);
	free(m.pace_proc);
	done();
}
END_TEST

/* The pace's gaps run between the windows' outer bounds (capture-stop to the next capture-start): CUPTI's switches
 * there are the windows' (the kinds on, then off and flushed), not the program's own pace. Windows as above with
 * 20 ms switches either side (no launch made in them) and COST rows at every bound: the gaps' 160 launches in 160 ms
 * are a launch a ms; timed between the windows' own bounds they would be a launch every 1.25 ms. m->rspan's outer
 * bounds also carry the spread of passLaunches between COST rows (at_spread). */
START_TEST(test_cost_pace_gaps_between_outer_bounds)
{
	static struct cprof_call lc[4 * 90];
	static struct cprof_cost_row r14[14];
	static const uint64_t t[] = { 0, 100, 120, 280, 300, 400, 420, 580, 600, 700, 720, 880, 900, 1000 };
	static const uint64_t passed[] = { 0, 0, 0, 160, 160, 160, 160, 320, 320, 320, 320, 480, 480, 480 };
	static const uint64_t every[] = { 1010000, 1012000, 1010000, 1012000 };
	struct cprof_window win[4] = {
		{ .proc = 1, .start = 0, .end = 100 * MS, .oend = 120 * MS },
		{ .proc = 1, .start = 300 * MS, .end = 400 * MS, .ostart = 280 * MS, .oend = 420 * MS },
		{ .proc = 1, .start = 600 * MS, .end = 700 * MS, .ostart = 580 * MS, .oend = 720 * MS },
		{ .proc = 1, .start = 900 * MS, .end = 1000 * MS, .ostart = 880 * MS, .oend = 1020 * MS },
	};

	pace_fixture(lc, win, every, r14, t, passed, 14);
	m.rec.w = win;
	m.rec.n = 4;
	ck_assert_int_eq(cprof_model_rec_spans(&m), 0);
	ck_assert_uint_eq(m.rspan[1].ostart, 280 * MS);
	ck_assert_uint_eq(m.rspan[1].oend, 420 * MS);
	ck_assert_int_eq(cprof_model_pace(&m), 0);
	ck_assert_uint_eq(m.pace.launches_out, 480);
	ck_assert_uint_eq(m.pace.out_ns, 1000000);
	ck_assert_int_eq(m.pace.diff_ns, 11000);
	ck_assert_int_eq(m.pace.measured, 1);
	/* COST rows only at the windows' own bounds: the gaps' launches are spread over the time outside the outer
	 * bounds, not into the switches (spread by the inner ones, 128 of each 160 fell in the gap: 1.25 ms a launch) */
	for (int i = 0, k = 0; i < 14; i++)
		if (t[i] % 100 == 0)
			r14[k++] = (struct cprof_cost_row){ .proc = 1, .time = t[i] * MS, .pass_launches = passed[i] };
	m.ncost = 8;
	ck_assert_int_eq(cprof_model_pace(&m), 0);
	ck_assert_uint_eq(m.pace.launches_out, 480);
	ck_assert_uint_eq(m.pace.out_ns, 1000000);
	ck_assert_int_eq(m.pace.measured, 1);
	/* the outer bounds not known (an older profile): the gaps take the switches in */
	for (int w = 0; w < 4; w++)
		win[w].ostart = win[w].oend = 0;
	respan();
	ck_assert_int_eq(cprof_model_pace(&m), 0);
	ck_assert_uint_eq(m.pace.out_ns, 1250000);
	ck_assert_int_eq(m.pace.measured, 0);
	free(m.rspan);
	free(m.pace_proc);
	done();
}
END_TEST

/* A verdict's cost window that starts or ends with a recording window takes in CUPTI's switches at that edge (their
 * overhead records are cprof's cost to the program); one that starts or ends inside a window (a phase) stays */
START_TEST(test_cost_outer_takes_in_the_switches)
{
	struct cprof_window win[2] = {
		{ .proc = 1, .start = 100 * MS, .end = 200 * MS, .ostart = 90 * MS, .oend = 230 * MS },
		{ .proc = 1, .start = 300 * MS, .end = 400 * MS, .ostart = 280 * MS, .oend = 410 * MS },
	};
	uint64_t ws, we;

	memset(&m, 0, sizeof(m));
	m.procs = procs;
	m.nprocs = 1;
	m.rec.w = win;
	m.rec.n = 2;
	ck_assert_int_eq(cprof_model_rec_spans(&m), 0);
	ws = 100 * MS, we = 400 * MS;
	cprof_cost_outer(&m, 1, &ws, &we);
	ck_assert_uint_eq(ws, 90 * MS);
	ck_assert_uint_eq(we, 410 * MS);
	ws = 150 * MS, we = 200 * MS; /* a phase inside the first window, ending with it */
	cprof_cost_outer(&m, 0, &ws, &we);
	ck_assert_uint_eq(ws, 150 * MS);
	ck_assert_uint_eq(we, 230 * MS);
	ws = 50 * MS, we = 250 * MS; /* in the gaps: the switches are inside already */
	cprof_cost_outer(&m, 1, &ws, &we);
	ck_assert_uint_eq(ws, 50 * MS);
	ck_assert_uint_eq(we, 250 * MS);
	free(m.rspan);
	done();
}
END_TEST

Suite *cost_suite(void)
{
	Suite *s = suite_create("cost");
	TCase *tc = tcase_create("window");

	tcase_add_test(tc, test_cost_hooks_per_call_stacks_in_time);
	tcase_add_test(tc, test_cost_each_window);
	tcase_add_test(tc, test_cost_wait_in_time_and_capped);
	tcase_add_test(tc, test_cost_unmeasured);
	tcase_add_test(tc, test_cost_window_calls_by_search);
	tcase_add_test(tc, test_cost_cupti_in_calls);
	tcase_add_test(tc, test_cost_cupti_in_calls_mean);
	tcase_add_test(tc, test_cost_cupti_in_calls_measured);
	tcase_add_test(tc, test_cost_overhead_program_threads);
	tcase_add_test(tc, test_cost_counted_in_time);
	tcase_add_test(tc, test_cost_recorded_only_in_windows);
	tcase_add_test(tc, test_cost_wait_over_baseline);
	tcase_add_test(tc, test_cost_wait_threads_runnable_together);
	tcase_add_test(tc, test_cost_rec_spans_by_process);
	tcase_add_test(tc, test_cost_pace_in_and_between_windows);
	tcase_add_test(tc, test_cost_pace_gaps_between_outer_bounds);
	tcase_add_test(tc, test_cost_outer_takes_in_the_switches);
	suite_add_tcase(s, tc);
	return s;
}
