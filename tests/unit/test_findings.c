/* Unit tests of the findings computed over the model: each rule fires on a small in-memory profile built to show it, and stays silent on one built not to. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/api.h"
#include "report/model/analysis.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

#define US 1000ULL
#define MS 1000000ULL

enum { S_LAUNCH = 1, S_SYNC, S_KERNEL, S_MEMCPY, S_OCCUPANCY, S_WAIT, S_GRAPH, S_EVQUERY, S_GETDEV, S_LAUNCH_CUPTI };

static struct cprof_string strings[] = {
	{ S_LAUNCH, "cudaLaunchKernel" },
	{ S_SYNC, "cudaDeviceSynchronize" },
	{ S_KERNEL, "_Z4kernPf" },
	{ S_MEMCPY, "cudaMemcpy" },
	{ S_OCCUPANCY, "cudaOccupancyMaxActiveBlocksPerMultiprocessor" },
	{ S_WAIT, "cudaStreamWaitEvent" },
	{ S_GRAPH, "cudaGraphLaunch" },
	{ S_EVQUERY, "cudaEventQuery_v3020" },
	{ S_GETDEV, "cudaGetDevice_v3020" },
	{ S_LAUNCH_CUPTI, "cudaLaunchKernel_v7000" },
};

struct fix {
	struct cprof_op ops[64];
	struct cprof_call calls[128];
	struct cprof_rt rt[64];
	struct cprof_ext ext[64];
	size_t nops, ncalls, nrt, next;
	struct cprof_proc procs[2];
	size_t nprocs;
	int64_t exit_status; /* the command's */
	int queries_sampled;  /* the model's: CUPTI's occupancy records switched off after the first */
	struct cprof_model m;
	struct cprof_verdict v;
	struct cprof_finding *f;
	int nf;
};

static struct fix f;

static void setup(void)
{
	memset(&f, 0, sizeof(f));
}

static void teardown(void)
{
	free(f.f);
	cprof_model_free_indexes(&f.m);
}

static void call(int64_t name, uint64_t s, uint64_t e, int launch, int sync, int64_t corr)
{
	ck_assert_uint_lt(f.ncalls, 128);
	f.calls[f.ncalls++] = (struct cprof_call){ .start = s, .end = e, .proc = 1, .tid = 7, .name = name,
						   .corr = corr, .a0 = CPROF_NO_ID, .outer = 1,
						   .launch = (uint8_t)launch, .sync = (uint8_t)sync, .cut = (uint8_t)sync };
}

static void kernel(uint64_t s, uint64_t e, int64_t corr)
{
	ck_assert_uint_lt(f.nops, 64);
	f.ops[f.nops++] = (struct cprof_op){ .start = s, .end = e, .proc = 1, .name = S_KERNEL, .corr = corr,
					    .kname = 0, .kind = CPROF_OP_KERNEL, .via = 1 };
}

/* a launch call of call_dur, its kernel of dur, correlated through CUPTI's external id */
static void launch(uint64_t s, uint64_t call_dur, uint64_t dur)
{
	int64_t corr = (int64_t)f.nops + 100;

	call(S_LAUNCH, s, s + call_dur, 1, 0, corr);
	f.ext[f.next++] = (struct cprof_ext){ .proc = 1, .corr = corr, .ext = corr };
	kernel(s + call_dur + 1 * US, s + call_dur + 1 * US + dur, corr);
}

/* builds the model and runs the findings for process proc (0: the whole run); returns 1 when the finding id is
 * among them */
static int fires_for(const char *id, int64_t proc)
{
	int i;

	/* a test may ask twice: what the last call built goes first */
	free(f.f);
	f.f = NULL;
	cprof_model_free_indexes(&f.m);
	ck_assert_int_eq(cprof_model_from_arrays(&f.m, f.ops, f.nops, f.calls, f.ncalls, NULL, 0, 1), 0);
	f.m.strings = strings;
	f.m.nstrings = sizeof(strings) / sizeof(strings[0]);
	f.m.ext = f.ext; /* built sorted by (proc, corr) */
	f.m.next = f.next;
	f.m.rt = f.rt;
	f.m.nrt = f.nrt;
	cprof_model_link_rt(&f.m);
	f.m.procs = f.procs;
	f.m.nprocs = f.nprocs;
	f.m.exit_status = f.exit_status;
	f.m.queries_sampled = f.queries_sampled;
	f.v.run_start = f.ncalls ? f.m.calls[0].start : 0;
	f.v.run_end = f.nops ? f.m.ops[f.nops - 1].end : 0;
	f.v.gpu_span_start = f.nops ? f.m.ops[0].start : 0;
	f.nf = cprof_findings(&f.m, proc, &f.v, &f.f);
	ck_assert_int_ge(f.nf, 0);
	for (i = 0; i < f.nf; i++)
		if (!strcmp(f.f[i].id, id))
			return 1;
	return 0;
}

/* whether rule id fires over the whole run */
static int fires(const char *id)
{
	return fires_for(id, 0);
}

/* one process listed, id 1 (the fixture's calls and records are of process 1) */
static void one_process(void)
{
	f.procs[0] = (struct cprof_proc){ .id = 1, .pid = 100, .ppid = 1, .rank = -1, .exe = (char *)"a.out",
					  .argv = (char *)"a.out", .host = (char *)"h", .bye = (char *)"exit, status 0" };
	f.nprocs = 1;
}

/* the evidence of the finding id the last fires_for() made, or NULL */
static const char *finding_evidence(const char *id)
{
	for (int i = 0; i < f.nf; i++)
		if (!strcmp(f.f[i].id, id))
			return f.f[i].evidence;
	return NULL;
}

/* runtime calls only CUPTI saw, no hooked call: the runtime is linked into the program; one hooked call: not */
START_TEST(test_findings_runtime_not_hooked)
{
	for (int i = 0; i < 3; i++)
		f.rt[f.nrt++] = (struct cprof_rt){ .start = (uint64_t)(i + 1) * MS, .end = (uint64_t)(i + 1) * MS + 5 * US,
						   .proc = 1, .tid = 9, .name = S_LAUNCH, .corr = 10 + i };
	kernel(1 * MS + 10 * US, 1 * MS + 20 * US, 10);
	ck_assert(fires("runtime-not-hooked"));
	launch(5 * MS, 10 * US, 2 * US);
	ck_assert(!fires("runtime-not-hooked"));
}
END_TEST

/* a hooked launcher does not vouch for its statically linked worker: the worker's runtime calls fire, named by its
 * pid; a worker cprof came into by injection alone does not */
START_TEST(test_findings_runtime_not_hooked_per_process)
{
	const char *ev;

	for (int p = 0; p < 2; p++)
		f.procs[p] = (struct cprof_proc){ .id = p + 1, .pid = 100 * (p + 1), .ppid = 1, .rank = -1,
						  .exe = (char *)"a.out", .argv = (char *)"a.out", .host = (char *)"h",
						  .bye = (char *)"exit, status 0" };
	f.nprocs = 2;
	launch(1 * MS, 10 * US, 2 * US); /* process 1, hooked */
	for (int i = 0; i < 3; i++)
		f.rt[f.nrt++] = (struct cprof_rt){ .start = (uint64_t)(i + 2) * MS,
						   .end = (uint64_t)(i + 2) * MS + 5 * US,
						   .proc = 2, .tid = 9, .name = S_LAUNCH_CUPTI, .corr = 50 + i };
	ck_assert(fires("runtime-not-hooked"));
	ev = finding_evidence("runtime-not-hooked");
	ck_assert_ptr_nonnull(ev);
	ck_assert_ptr_nonnull(strstr(ev, "3 CUDA runtime calls"));
	ck_assert_ptr_nonnull(strstr(ev, "in pid 200"));
	f.procs[1].hooks_absent = 1;
	ck_assert(!fires("runtime-not-hooked"));
}
END_TEST

/* CUPTI's names (the symbol and the CUDA version it came with) and the symbols' own, which may end in _v2 */
START_TEST(test_findings_api_by_name)
{
	ck_assert_uint_eq(cprof_api_by_name("cudaLaunchKernel"), CPROF_API_cudaLaunchKernel);
	ck_assert_uint_eq(cprof_api_by_name("cudaLaunchKernel_v7000"), CPROF_API_cudaLaunchKernel);
	ck_assert_uint_eq(cprof_api_by_name("cudaLaunchKernel_ptsz_v7000"), CPROF_API_cudaLaunchKernel_ptsz);
	ck_assert_uint_eq(cprof_api_by_name("cudaGraphLaunch_v10000"), CPROF_API_cudaGraphLaunch);
	ck_assert_uint_eq(cprof_api_by_name("cublasSetStream_v2"), CPROF_API_cublasSetStream_v2);
	ck_assert_uint_eq(cprof_api_by_name("cudaLaunchKernel_v2"), CPROF_API_NONE);
	ck_assert_uint_eq(cprof_api_by_name("cudaLaunchKernel_v70x0"), CPROF_API_NONE);
	ck_assert_uint_eq(cprof_api_by_name("cudaEventQuery_v3020"), CPROF_API_NONE);
	ck_assert_uint_eq(cprof_api_by_name("_v3020"), CPROF_API_NONE);
	ck_assert_uint_eq(cprof_api_by_name(""), CPROF_API_NONE);
	ck_assert_uint_eq(cprof_api_by_name(NULL), CPROF_API_NONE);
}
END_TEST

static void runtime_only(int64_t name, int n)
{
	for (int i = 0; i < n; i++) {
		ck_assert_uint_lt(f.nrt, 64);
		f.rt[f.nrt] = (struct cprof_rt){ .start = (uint64_t)(f.nrt + 1) * MS,
						 .end = (uint64_t)(f.nrt + 1) * MS + 5 * US,
						 .proc = 1, .tid = 9, .name = name, .corr = 10 + (int64_t)f.nrt };
		f.nrt++;
	}
}

/* CUPTI's name of a hooked call (its version suffix) is one the hooks would have seen: it fires; in a process
 * cprof came into by CUDA's injection alone (cprof-run --inject-only) no hook was there by the user's choice: silent */
START_TEST(test_findings_runtime_not_hooked_injected)
{
	one_process();
	runtime_only(S_LAUNCH_CUPTI, 3);
	ck_assert(fires("runtime-not-hooked"));
	f.procs[0].hooks_absent = 1;
	ck_assert(!fires("runtime-not-hooked"));
}
END_TEST

/* a window that caught only calls no hook records (cudaEventQuery polling, a counted query) says nothing about
 * the hooks; one hooked call among them does */
START_TEST(test_findings_runtime_not_hooked_unhooked_names)
{
	runtime_only(S_EVQUERY, 3);
	runtime_only(S_GETDEV, 2);
	ck_assert(!fires("runtime-not-hooked"));
	runtime_only(S_LAUNCH_CUPTI, 1);
	ck_assert(fires("runtime-not-hooked"));
}
END_TEST

START_TEST(test_findings_tiny_kernels_fire)
{
	int i;

	/* 2 us kernels that take 10 us to launch */
	for (i = 0; i < 12; i++)
		launch(1 * MS + (uint64_t)i * 100 * US, 10 * US, 2 * US);
	ck_assert(fires("tiny-kernels"));
}
END_TEST

/* issue 29 item 7: a program that replays CUDA graphs is not told to capture one */
START_TEST(test_findings_tiny_kernels_advice_with_graphs)
{
	int i;

	for (i = 0; i < 12; i++)
		launch(1 * MS + (uint64_t)i * 100 * US, 10 * US, 2 * US);
	call(S_GRAPH, 5 * MS, 5 * MS + 10 * US, 0, 0, CPROF_NO_ID);
	ck_assert(fires("tiny-kernels"));
	for (i = 0; i < f.nf && strcmp(f.f[i].id, "tiny-kernels"); i++)
		;
	ck_assert_ptr_null(strstr(f.f[i].message, "capture a CUDA graph"));
	ck_assert_ptr_nonnull(strstr(f.f[i].message, "replays CUDA graphs already"));
}
END_TEST

START_TEST(test_findings_tiny_kernels_silent)
{
	int i;

	for (i = 0; i < 12; i++)
		launch(1 * MS + (uint64_t)i * 100 * US, 10 * US, 50 * US);
	ck_assert(!fires("tiny-kernels"));
}
END_TEST

START_TEST(test_findings_sync_in_loop_fires)
{
	int i;

	/* launch, then synchronise, every iteration */
	for (i = 0; i < 12; i++) {
		uint64_t t = 1 * MS + (uint64_t)i * 100 * US;

		launch(t, 5 * US, 20 * US);
		call(S_SYNC, t + 10 * US, t + 40 * US, 0, 1, CPROF_NO_ID);
	}
	ck_assert(fires("sync-in-loop"));
}
END_TEST

/* issue 29 item 8: cudaStreamWaitEvent after each launch orders two streams and returns at once: not a
 * sync in the loop (class 'sync' in the profile) */
START_TEST(test_findings_sync_in_loop_not_stream_wait_event)
{
	int i;

	for (i = 0; i < 12; i++) {
		uint64_t t = 1 * MS + (uint64_t)i * 100 * US;

		launch(t, 5 * US, 20 * US);
		call(S_WAIT, t + 10 * US, t + 12 * US, 0, 1, CPROF_NO_ID);
	}
	ck_assert(!fires("sync-in-loop"));
}
END_TEST

START_TEST(test_findings_sync_in_loop_silent)
{
	int i;

	/* all the launches, then the syncs: no launch between two syncs */
	for (i = 0; i < 12; i++)
		launch(1 * MS + (uint64_t)i * 10 * US, 5 * US, 2 * US);
	for (i = 0; i < 12; i++)
		call(S_SYNC, 2 * MS + (uint64_t)i * 10 * US, 2 * MS + (uint64_t)i * 10 * US + 5 * US, 0, 1, CPROF_NO_ID);
	ck_assert(!fires("sync-in-loop"));
}
END_TEST

START_TEST(test_findings_kernel_variance_fires)
{
	int i;

	/* the same kernel at 1 us and 100 us */
	for (i = 0; i < 10; i++)
		launch(1 * MS + (uint64_t)i * 200 * US, 5 * US, i % 2 ? 100 * US : 1 * US);
	ck_assert(fires("kernel-variance"));
}
END_TEST

START_TEST(test_findings_kernel_variance_silent)
{
	int i;

	for (i = 0; i < 10; i++)
		launch(1 * MS + (uint64_t)i * 200 * US, 5 * US, 50 * US);
	ck_assert(!fires("kernel-variance"));
}
END_TEST

/* issue 29 item 5: a sweep launches one kernel name at two grid sizes, each steady: different work, not
 * variance; the same shape with one run 20 times slower still is */
START_TEST(test_findings_kernel_variance_by_shape)
{
	int i;

	for (i = 0; i < 20; i++) {
		launch(1 * MS + (uint64_t)i * 200 * US, 5 * US, i < 10 ? 2 * US : 100 * US);
		f.ops[f.nops - 1].shape = i < 10 ? 11 : 22;
	}
	ck_assert(!fires("kernel-variance"));
	teardown();
	setup();
	for (i = 0; i < 20; i++) {
		launch(1 * MS + (uint64_t)i * 200 * US, 5 * US, i == 7 ? 100 * US : 5 * US);
		f.ops[f.nops - 1].shape = 11;
	}
	ck_assert(fires("kernel-variance"));
}
END_TEST

/* two ranks (processes 1 and 2): a first CUDA call at t0, then 12 launches from 200 ms, pace apart */
static void ranks(uint64_t t0_a, uint64_t pace_a, uint64_t t0_b, uint64_t pace_b)
{
	int r, i;

	for (r = 0; r < 2; r++) {
		size_t c0 = f.ncalls, o0 = f.nops;

		call(S_SYNC, r ? t0_b : t0_a, (r ? t0_b : t0_a) + 10 * US, 0, 0, CPROF_NO_ID);
		for (i = 0; i < 12; i++)
			launch(200 * MS + (uint64_t)i * (r ? pace_b : pace_a), 5 * US, 20 * US);
		for (; c0 < f.ncalls; c0++)
			f.calls[c0].proc = r + 1;
		for (; o0 < f.nops; o0++)
			f.ops[o0].proc = r + 1;
		f.procs[r] = (struct cprof_proc){ .id = r + 1, .pid = 100 + r, .ppid = 1, .rank = r, .exe = (char *)"w",
						  .argv = (char *)"w", .host = (char *)"h", .bye = (char *)"exit" };
	}
	f.nprocs = 2;
	for (i = 0; i < (int)f.next; i++) /* sorted by (proc, corr): the ids grow with the ops */
		f.ext[i].proc = f.ops[f.ext[i].corr - 100].proc;
}

/* issue 29 item 8: two ranks with equal steady phases, one that started 150 ms early and waited at the
 * rendezvous: no straggler; one 4 times slower per step: a straggler */
START_TEST(test_findings_straggler_steady_state)
{
	ranks(0, 1 * MS, 150 * MS, 1 * MS);
	ck_assert(!fires("straggler"));
	teardown();
	setup();
	ranks(150 * MS, 1 * MS, 150 * MS, 4 * MS);
	ck_assert(fires("straggler"));
	ck_assert_ptr_nonnull(strstr(f.f[0].evidence, "rank 1 ran"));
	ck_assert(!fires("run-failed"));
}
END_TEST

/* issue 29 item 8: a failed run (a rank's or the command's status not 0) has no straggler, and says it failed */
START_TEST(test_findings_failed_run)
{
	ranks(150 * MS, 1 * MS, 150 * MS, 4 * MS);
	f.procs[0].bye = (char *)"exit, status 1";
	ck_assert(!fires("straggler"));
	ck_assert(fires("run-failed"));
	teardown();
	setup();
	ranks(150 * MS, 1 * MS, 150 * MS, 4 * MS);
	f.exit_status = 3;
	ck_assert(!fires("straggler"));
	ck_assert(fires("run-failed"));
	ck_assert_ptr_nonnull(strstr(f.f[f.nf - 1].evidence, "the command exited with status 3"));
}
END_TEST

START_TEST(test_findings_cold_start_fires)
{
	int i;

	/* the first launch call takes 5 ms, the others 10 us */
	launch(1 * MS, 5 * MS, 10 * US);
	for (i = 1; i < 8; i++)
		launch(10 * MS + (uint64_t)i * 100 * US, 10 * US, 10 * US);
	ck_assert(fires("cold-start"));
	ck_assert_ptr_nonnull(strstr(f.f[0].evidence, "first cudaLaunchKernel"));
}
END_TEST

START_TEST(test_findings_cold_start_silent)
{
	int i;

	for (i = 0; i < 8; i++)
		launch(1 * MS + (uint64_t)i * 100 * US, 10 * US, 10 * US);
	ck_assert(!fires("cold-start"));
}
END_TEST

START_TEST(test_findings_long_final_sync_fires)
{
	int i;

	/* a 5 ms wait at the end of a 6 ms run */
	for (i = 0; i < 5; i++)
		launch(1 * MS + (uint64_t)i * 10 * US, 5 * US, 1 * MS);
	call(S_SYNC, 1 * MS + 60 * US, 6 * MS, 0, 1, CPROF_NO_ID);
	ck_assert(fires("long-final-sync"));
}
END_TEST

START_TEST(test_findings_long_final_sync_silent)
{
	int i;

	for (i = 0; i < 5; i++)
		launch(1 * MS + (uint64_t)i * 1 * MS, 5 * US, 100 * US);
	call(S_SYNC, 6 * MS, 6 * MS + 20 * US, 0, 1, CPROF_NO_ID);
	ck_assert(!fires("long-final-sync"));
}
END_TEST

/* CUPTI's runtime records of one thread: an occupancy query (or not), then the launch of the kernel */
static void occupancy_then_launch(int with_query)
{
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t t = 1 * MS + (uint64_t)i * 100 * US;
		int64_t corr = 500 + i;

		if (with_query)
			f.rt[f.nrt++] = (struct cprof_rt){ .start = t, .end = t + 2 * US, .proc = 1, .tid = 9,
							   .name = S_OCCUPANCY, .corr = corr - 100 };
		f.rt[f.nrt++] = (struct cprof_rt){ .start = t + 10 * US, .end = t + 15 * US, .proc = 1, .tid = 9,
						   .name = S_LAUNCH, .corr = corr };
		kernel(t + 20 * US, t + 30 * US, corr);
	}
}

START_TEST(test_findings_occupancy_fires)
{
	occupancy_then_launch(1);
	ck_assert(fires("occupancy-before-launch"));
}
END_TEST

/* the evidence's count is of the queries CUPTI recorded: once their records went off it says so */
START_TEST(test_findings_occupancy_sampled_says_so)
{
	occupancy_then_launch(1);
	ck_assert(fires("occupancy-before-launch"));
	ck_assert_ptr_null(strstr(finding_evidence("occupancy-before-launch"), "recorded at first only"));
	f.queries_sampled = 1;
	ck_assert(fires("occupancy-before-launch"));
	ck_assert_ptr_nonnull(strstr(finding_evidence("occupancy-before-launch"), "3 occupancy queries (recorded at first only)"));
	/* process by process: only the process whose records went off says so */
	one_process();
	ck_assert(fires_for("occupancy-before-launch", 1));
	ck_assert_ptr_null(strstr(finding_evidence("occupancy-before-launch"), "recorded at first only"));
	f.procs[0].queries_sampled = 1;
	ck_assert(fires_for("occupancy-before-launch", 1));
	ck_assert_ptr_nonnull(strstr(finding_evidence("occupancy-before-launch"), "(recorded at first only)"));
}
END_TEST

START_TEST(test_findings_occupancy_silent)
{
	occupancy_then_launch(0);
	ck_assert(!fires("occupancy-before-launch"));
}
END_TEST

/* the finding with this id, or NULL (after fires()) */
static const struct cprof_finding *found(const char *id)
{
	int i;

	for (i = 0; i < f.nf; i++)
		if (!strcmp(f.f[i].id, id))
			return &f.f[i];
	return NULL;
}

/* one process, pid 4242, that ended as e says, after a few launches */
static void ended(struct cprof_end *e)
{
	int i;

	for (i = 0; i < 3; i++)
		launch(1 * MS + (uint64_t)i * 100 * US, 5 * US, 20 * US);
	f.procs[0] = (struct cprof_proc){ .id = 1, .pid = 4242, .ppid = 1, .rank = -1, .exe = (char *)"a.out",
					  .argv = (char *)"", .host = (char *)"", .bye = e ? e->ending : (char *)"exit",
					  .end = e };
	f.nprocs = 1;
}

static struct cprof_end_call calls2[] = {
	{ .tid = 7, .api = (char *)"cudaStreamSynchronize", .kernel = NULL, .ret = 700 },
	{ .tid = 9, .api = (char *)"cudaLaunchKernel", .kernel = (char *)"_Z6kern_cPi", .ret = 0 },
};
static struct cprof_end_kernel failing[] = {
	{ .stream = 13, .handle = 0x55, .name = (char *)"_Z6kern_bPi" },
	{ .stream = 13, .handle = 0x55, .name = (char *)"_Z6kern_aPi" },
};
static struct cprof_end_kernel streams[] = {
	{ .stream = 13, .handle = 0x55, .name = (char *)"_Z6kern_bPi" },
	{ .stream = 13, .handle = 0x55, .name = (char *)"_Z6kern_aPi" },
	{ .stream = 14, .handle = 0x66, .name = (char *)"_Z6kern_cPi" },
};

/* a CUDA error then abort: the call, its code by name, the failing stream's last kernels, the signal,
 * each thread's last call */
START_TEST(test_findings_crash_cuda_error_fires)
{
	struct cprof_end e = { .ending = (char *)"CUDA error 700 (cudaErrorIllegalAddress) from cudaStreamSynchronize, "
						 "then signal 6 (SIGABRT)",
			       .signal = 6, .err = 700, .err_api = (char *)"cudaStreamSynchronize", .err_tid = 7,
			       .calls = calls2, .ncalls = 2, .kernels = streams, .nkernels = 3,
			       .err_kernels = failing, .nerr_kernels = 2 };
	const struct cprof_finding *c;

	ended(&e);
	ck_assert(fires("crash"));
	c = found("crash");
	ck_assert_str_eq(c->severity, "warn");
	ck_assert_ptr_nonnull(strstr(c->message, "pid 4242 ended: CUDA error 700"));
	ck_assert_ptr_nonnull(strstr(c->evidence, "cudaStreamSynchronize returned 700 (cudaErrorIllegalAddress) on thread 7"));
	ck_assert_ptr_nonnull(strstr(c->evidence, "last kernels on its stream before it, latest first: kern_b(int*), kern_a(int*)"));
	ck_assert_ptr_null(strstr(c->evidence, "kern_a(int*), kern_c")); /* another stream's kernel is not the failing stream's */
	ck_assert_ptr_nonnull(strstr(c->evidence, "signal 6 (SIGABRT)"));
	ck_assert_ptr_nonnull(strstr(c->evidence, "thread 9 last called cudaLaunchKernel (kern_c(int*)), returned 0"));
}
END_TEST

/* a fatal signal without a CUDA error: the last kernels of every stream */
START_TEST(test_findings_crash_signal_streams)
{
	struct cprof_end e = { .ending = (char *)"signal 11 (SIGSEGV)", .signal = 11, .calls = calls2 + 1, .ncalls = 1,
			       .kernels = streams, .nkernels = 3 };
	const struct cprof_finding *c;

	ended(&e);
	ck_assert(fires("crash"));
	c = found("crash");
	ck_assert_ptr_nonnull(strstr(c->evidence, "signal 11 (SIGSEGV)"));
	ck_assert_ptr_nonnull(strstr(c->evidence, "last kernels on stream 13: kern_b(int*), kern_a(int*)"));
	ck_assert_ptr_nonnull(strstr(c->evidence, "last kernels on stream 14: kern_c(int*)"));
	ck_assert_ptr_null(strstr(c->message, "lower bound"));
}
END_TEST

/* killed from outside: the counts are called a lower bound */
START_TEST(test_findings_crash_killed_lower_bound)
{
	struct cprof_end e = { .ending = (char *)"killed by signal 9 (SIGKILL)", .killed = 1, .calls = calls2 + 1,
			       .ncalls = 1 };

	ended(&e);
	ck_assert(fires("crash"));
	ck_assert_ptr_nonnull(strstr(found("crash")->message, "lower bound"));
}
END_TEST

/* a normal end: no crash finding */
START_TEST(test_findings_crash_silent)
{
	ended(NULL);
	ck_assert(!fires("crash"));
}
END_TEST

Suite *findings_suite(void)
{
	Suite *s = suite_create("findings");
	TCase *tc = tcase_create("rules");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_findings_tiny_kernels_fire);
	tcase_add_test(tc, test_findings_tiny_kernels_silent);
	tcase_add_test(tc, test_findings_tiny_kernels_advice_with_graphs);
	tcase_add_test(tc, test_findings_sync_in_loop_fires);
	tcase_add_test(tc, test_findings_sync_in_loop_silent);
	tcase_add_test(tc, test_findings_sync_in_loop_not_stream_wait_event);
	tcase_add_test(tc, test_findings_kernel_variance_fires);
	tcase_add_test(tc, test_findings_kernel_variance_silent);
	tcase_add_test(tc, test_findings_kernel_variance_by_shape);
	tcase_add_test(tc, test_findings_straggler_steady_state);
	tcase_add_test(tc, test_findings_failed_run);
	tcase_add_test(tc, test_findings_cold_start_fires);
	tcase_add_test(tc, test_findings_cold_start_silent);
	tcase_add_test(tc, test_findings_long_final_sync_fires);
	tcase_add_test(tc, test_findings_long_final_sync_silent);
	tcase_add_test(tc, test_findings_occupancy_fires);
	tcase_add_test(tc, test_findings_occupancy_silent);
	tcase_add_test(tc, test_findings_occupancy_sampled_says_so);
	tcase_add_test(tc, test_findings_crash_cuda_error_fires);
	tcase_add_test(tc, test_findings_crash_signal_streams);
	tcase_add_test(tc, test_findings_crash_killed_lower_bound);
	tcase_add_test(tc, test_findings_crash_silent);
	tcase_add_test(tc, test_findings_runtime_not_hooked);
	tcase_add_test(tc, test_findings_runtime_not_hooked_injected);
	tcase_add_test(tc, test_findings_runtime_not_hooked_unhooked_names);
	tcase_add_test(tc, test_findings_api_by_name);
	tcase_add_test(tc, test_findings_runtime_not_hooked_per_process);
	suite_add_tcase(s, tc);
	return s;
}
