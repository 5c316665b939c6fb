/* Unit tests of the rules that were SQL until issue 28 (batched-gemm, dtod-before-gemm, cupti-overhead, driver-api-kernels, straggler, the no-gpu-activity explanation), on in-memory models. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/model/analysis.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

#define US 1000ULL
#define MS 1000000ULL

enum { S_LAUNCH = 1, S_GEMM_EX, S_BATCHED, S_SGEMM_K, S_ELEM_K, S_TRITON_A, S_TRITON_B, S_MALLOC, S_VERSION, S_NVTX };

static struct cprof_string strings[] = {
	{ S_LAUNCH, "cudaLaunchKernel" },
	{ S_GEMM_EX, "cublasGemmEx" },
	{ S_BATCHED, "cublasSgemmStridedBatched" },
	{ S_SGEMM_K, "ampere_SGEMM_128x64_nn" }, /* LIKE '%gemm%' ignores case */
	{ S_ELEM_K, "_Z11elementwisePf" },
	{ S_TRITON_A, "triton_poi_fused_add_0" },
	{ S_TRITON_B, "triton_red_fused_sum_1" },
	{ S_MALLOC, "cudaMalloc" },
	{ S_VERSION, "cudaRuntimeGetVersion" },
	{ S_NVTX, "nvtxRangePushA" },
};

struct rfix {
	struct cprof_op ops[64];
	struct cprof_call calls[64];
	struct cprof_ovh ovh[16];
	struct cprof_gemm gemms[32];
	struct cprof_proc procs[4];
	size_t nops, ncalls, novh, ngemms, nprocs;
	struct cprof_model m;
	struct cprof_verdict v;
	struct cprof_finding *f;
	int nf;
};

static struct rfix r;

static void setup(void)
{
	memset(&r, 0, sizeof(r));
}

static void teardown(void)
{
	free(r.f);
	cprof_model_free_indexes(&r.m);
}

static void op(uint8_t kind, int64_t proc, uint32_t stream, uint64_t s, uint64_t e, int64_t name)
{
	ck_assert_uint_lt(r.nops, 64);
	r.ops[r.nops] = (struct cprof_op){ .start = s, .end = e, .proc = proc, .stream = stream, .name = name,
					  .corr = CPROF_NO_ID, .kname = kind == CPROF_OP_KERNEL ? 0 : -1, .kind = kind,
					  .row = (uint32_t)r.nops };
	r.nops++;
}

static void call(int64_t proc, uint64_t s, uint64_t e)
{
	ck_assert_uint_lt(r.ncalls, 64);
	r.calls[r.ncalls++] = (struct cprof_call){ .start = s, .end = e, .proc = proc, .tid = 7, .name = S_LAUNCH,
						   .corr = CPROF_NO_ID, .a0 = CPROF_NO_ID, .outer = 1 };
}

static void gemm(int64_t name, int64_t m, int64_t batch)
{
	ck_assert_uint_lt(r.ngemms, 32);
	r.gemms[r.ngemms++] = (struct cprof_gemm){ .proc = 1, .name = name, .m = m, .n = m, .k = m, .batch = batch };
}

static void proc_rank(int64_t id, int64_t rank)
{
	r.procs[r.nprocs++] = (struct cprof_proc){ .id = id, .pid = 100 + id, .rank = rank, .exe = "", .argv = "",
						   .host = "", .bye = "exit 0" };
}

/* the finding with this id, NULL when it did not fire */
static const struct cprof_finding *finding(const char *id)
{
	int i;

	ck_assert_int_eq(cprof_model_from_arrays(&r.m, r.ops, r.nops, r.calls, r.ncalls, r.ovh, r.novh, 1), 0);
	r.m.strings = strings;
	r.m.nstrings = sizeof(strings) / sizeof(strings[0]);
	r.m.gemms = r.gemms;
	r.m.ngemms = r.ngemms;
	r.m.procs = r.procs;
	r.m.nprocs = r.nprocs;
	r.v.run_start = r.ncalls ? r.m.calls[0].start : 0;
	r.v.run_end = r.nops ? r.m.ops[r.nops - 1].end : 0;
	r.v.gpu_span_start = r.nops ? r.m.ops[0].start : 0;
	r.nf = cprof_findings(&r.m, 0, &r.v, &r.f);
	ck_assert_int_ge(r.nf, 0);
	for (i = 0; i < r.nf; i++)
		if (!strcmp(r.f[i].id, id))
			return &r.f[i];
	return NULL;
}

START_TEST(test_findings_rules_batched_gemm_fires)
{
	const struct cprof_finding *f;
	int i;

	for (i = 0; i < 5; i++)
		gemm(S_GEMM_EX, 512, 1); /* batch 1, not a batched API: not counted */
	gemm(S_BATCHED, 32, 4);
	gemm(S_BATCHED, 64, 16); /* the largest batch: its shape is shown */
	gemm(S_BATCHED, 16, 16);
	op(CPROF_OP_KERNEL, 1, 7, 1 * MS, 2 * MS, S_SGEMM_K);
	f = finding("batched-gemm");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->evidence, "3 calls of cublasSgemmStridedBatched, batch 16, m x n x k 64x64x64");
}
END_TEST

START_TEST(test_findings_rules_batched_gemm_most_called)
{
	const struct cprof_finding *f;
	int i;

	gemm(S_BATCHED, 32, 4);
	for (i = 0; i < 3; i++)
		gemm(S_GEMM_EX, 128, 8); /* batch over 1 through cublasGemmEx: the most called */
	f = finding("batched-gemm");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->evidence, "3 calls of cublasGemmEx, batch 8, m x n x k 128x128x128");
}
END_TEST

START_TEST(test_findings_rules_batched_gemm_silent)
{
	int i;

	for (i = 0; i < 5; i++)
		gemm(S_GEMM_EX, 512, 1);
	ck_assert_ptr_null(finding("batched-gemm"));
}
END_TEST

START_TEST(test_findings_rules_dtod_fires)
{
	const struct cprof_finding *f;
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t t = 1 * MS + (uint64_t)i * 100 * US;

		op(CPROF_OP_MEMCPY, 1, 7, t, t + 2 * US, CPROF_NO_ID);
		r.ops[r.nops - 1].copy = 8;
		r.ops[r.nops - 1].bytes = 4096;
		op(CPROF_OP_KERNEL, 1, 9, t + 3 * US, t + 4 * US, S_ELEM_K); /* another stream: no matter */
		op(CPROF_OP_KERNEL, 1, 7, t + 5 * US, t + 20 * US, S_SGEMM_K);
	}
	f = finding("dtod-before-gemm");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->evidence, "3 device-to-device copies (12288 bytes) each directly before a GEMM kernel on the same stream");
}
END_TEST

START_TEST(test_findings_rules_dtod_silent)
{
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t t = 1 * MS + (uint64_t)i * 100 * US;

		op(CPROF_OP_MEMCPY, 1, 7, t, t + 2 * US, CPROF_NO_ID);
		r.ops[r.nops - 1].copy = 8;
		r.ops[r.nops - 1].bytes = 4096;
		op(CPROF_OP_KERNEL, 1, 7, t + 3 * US, t + 4 * US, S_ELEM_K); /* between the copy and the GEMM */
		op(CPROF_OP_KERNEL, 1, 7, t + 5 * US, t + 20 * US, S_SGEMM_K);
		op(CPROF_OP_MEMCPY, 1, 8, t + 30 * US, t + 32 * US, CPROF_NO_ID); /* host-to-device before a GEMM */
		r.ops[r.nops - 1].copy = 1;
		op(CPROF_OP_KERNEL, 1, 8, t + 33 * US, t + 40 * US, S_SGEMM_K);
	}
	ck_assert_ptr_null(finding("dtod-before-gemm"));
}
END_TEST

/* a run of 10 ms from its first GPU op, with overhead records of total */
static void overhead_run(uint64_t total)
{
	call(1, 0, 1 * US);
	op(CPROF_OP_KERNEL, 1, 7, 0, 10 * MS, S_ELEM_K);
	r.ovh[r.novh++] = (struct cprof_ovh){ .start = 1 * MS, .end = 1 * MS + total / 2, .proc = 1 };
	r.ovh[r.novh++] = (struct cprof_ovh){ .start = 5 * MS, .end = 5 * MS + total - total / 2, .proc = 1 };
}

START_TEST(test_findings_rules_cupti_overhead_fires)
{
	const struct cprof_finding *f;

	overhead_run(2 * MS); /* 20% */
	f = finding("cupti-overhead");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->evidence, "2 CUPTI overhead records (buffer requests/flushes), 2000.000 us, 20.0% of the run from its first GPU op");
}
END_TEST

START_TEST(test_findings_rules_cupti_overhead_silent)
{
	overhead_run(1 * MS); /* 10% */
	ck_assert_ptr_null(finding("cupti-overhead"));
}
END_TEST

static void driver_kernel(uint64_t s, int64_t name, uint8_t via)
{
	op(CPROF_OP_KERNEL, 1, 7, s, s + 10 * US, name);
	r.ops[r.nops - 1].via = via;
	r.ops[r.nops - 1].ndrv = via == 2;
	r.ops[r.nops - 1].corr = (int64_t)r.nops;
}

START_TEST(test_findings_rules_driver_api_fires)
{
	const struct cprof_finding *f;

	/* table order, not time order, gives the names' order; each name once */
	driver_kernel(5 * MS, S_TRITON_B, 2);
	driver_kernel(1 * MS, S_TRITON_A, 2);
	driver_kernel(2 * MS, S_TRITON_B, 2);
	driver_kernel(3 * MS, S_ELEM_K, 1); /* launched through the runtime */
	f = finding("driver-api-kernels");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->evidence, "3 kernels launched with cuLaunchKernel* (3 Triton kernels), 0 by a hooked call: "
				      "triton_red_fused_sum_1,triton_poi_fused_add_0");
	ck_assert_ptr_nonnull(strstr(f->message, "3 of them CUPTI saw only"));
}
END_TEST

/* issue 27: launches through a hooked cuLaunchKernel are counted as such, and then nothing is said to lack a call site */
START_TEST(test_findings_rules_driver_api_hooked)
{
	const struct cprof_finding *f;

	driver_kernel(1 * MS, S_TRITON_A, 2);
	r.ops[r.nops - 1].hooked = 1;
	driver_kernel(2 * MS, S_ELEM_K, 2);
	r.ops[r.nops - 1].hooked = 1;
	f = finding("driver-api-kernels");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->evidence, "2 kernels launched with cuLaunchKernel* (1 Triton kernels), 2 by a hooked call: "
				      "triton_poi_fused_add_0,_Z11elementwisePf");
	ck_assert_ptr_nonnull(strstr(f->message, "their launch calls are hooked"));
}
END_TEST

START_TEST(test_findings_rules_driver_api_silent)
{
	driver_kernel(1 * MS, S_ELEM_K, 1);
	driver_kernel(2 * MS, S_ELEM_K, 0);
	ck_assert_ptr_null(finding("driver-api-kernels"));
}
END_TEST

START_TEST(test_findings_rules_straggler_fires)
{
	const struct cprof_finding *f;

	proc_rank(1, 0);
	proc_rank(2, 1);
	proc_rank(3, 2);
	proc_rank(4, -1); /* no rank: not counted */
	/* each rank's steady state (issue 29 item 8): its first GPU op to its last CUDA activity */
	call(1, 0, 100 * MS);
	op(CPROF_OP_KERNEL, 1, 7, 0, 1 * MS, CPROF_NO_ID);
	call(2, 1 * MS, 102 * MS);
	op(CPROF_OP_KERNEL, 2, 7, 1 * MS, 2 * MS, CPROF_NO_ID);
	call(3, 0, 10 * MS);
	op(CPROF_OP_KERNEL, 3, 7, 0, 1 * MS, CPROF_NO_ID);
	call(3, 290 * MS, 300 * MS);
	call(4, 0, 900 * MS);
	op(CPROF_OP_KERNEL, 4, 7, 0, 1 * MS, CPROF_NO_ID);
	f = finding("straggler");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->evidence, "rank 2 ran 300.000 ms (its steady state: first GPU op after warm-up to last CUDA "
				      "activity) vs a median of 101.000 ms over 3 ranks (+197%)");
}
END_TEST

START_TEST(test_findings_rules_straggler_silent)
{
	proc_rank(1, 0);
	proc_rank(2, 1);
	proc_rank(3, 2);
	call(1, 0, 100 * MS);
	op(CPROF_OP_KERNEL, 1, 7, 0, 1 * MS, CPROF_NO_ID);
	call(2, 0, 101 * MS);
	op(CPROF_OP_KERNEL, 2, 7, 0, 1 * MS, CPROF_NO_ID);
	call(3, 0, 110 * MS);
	op(CPROF_OP_KERNEL, 3, 7, 0, 1 * MS, CPROF_NO_ID);
	ck_assert_ptr_null(finding("straggler"));
}
END_TEST

/* a call of name returning code at t */
static void api(int64_t name, uint64_t t, int32_t code, uint8_t cls)
{
	call(1, t, t + 5 * US);
	r.calls[r.ncalls - 1].name = name;
	r.calls[r.ncalls - 1].ret = code;
	r.calls[r.ncalls - 1].cls = cls;
}

static void analyse(void)
{
	struct cprof_thresholds t;

	cprof_thresholds_default(&t);
	ck_assert_int_eq(cprof_analyse(&r.m, 0, 0, UINT64_MAX, &t, &r.v), 0);
}

static void no_gpu_verdict(void)
{
	ck_assert_int_eq(cprof_model_from_arrays(&r.m, r.ops, r.nops, r.calls, r.ncalls, NULL, 0, 1), 0);
	r.m.strings = strings;
	r.m.nstrings = sizeof(strings) / sizeof(strings[0]);
	analyse();
}

START_TEST(test_findings_rules_no_gpu_cuda_unavailable)
{
	/* the version query answers without a driver; every call that needs one failed; NVTX is not CUDA */
	api(S_VERSION, 1 * MS, 0, CPROF_CALL_OTHER);
	api(S_NVTX, 1 * MS + 10 * US, 0, CPROF_CALL_NVTX);
	api(S_MALLOC, 2 * MS, 35, CPROF_CALL_MEMORY);
	api(S_LAUNCH, 3 * MS, 35, CPROF_CALL_LAUNCH);
	api(S_MALLOC, 4 * MS, 35, CPROF_CALL_MEMORY);
	no_gpu_verdict();
	ck_assert_str_eq(r.v.verdict, "cuda-unavailable");
	ck_assert_str_eq(r.v.cause, "cudaMalloc returned 35 (cudaErrorInsufficientDriver)");
	ck_assert_str_eq(r.v.advice, "4 CUDA call(s), none brought CUDA up; failed: cudaMalloc 35 x2, cudaLaunchKernel 35 x1");
}
END_TEST

START_TEST(test_findings_rules_no_gpu_records)
{
	api(S_MALLOC, 1 * MS, 0, CPROF_CALL_MEMORY);
	no_gpu_verdict();
	ck_assert_str_eq(r.v.verdict, "no-gpu-activity");
	ck_assert_str_eq(r.v.advice, "no GPU records: CUPTI did not report any");
	r.m.gpu_note = "the simulated GPU's CUPTI was off";
	analyse();
	ck_assert_str_eq(r.v.advice, "no GPU records: the simulated GPU's CUPTI was off");
	r.m.cupti_recording = 1;
	analyse();
	ck_assert_str_eq(r.v.advice, "the program queued no GPU work (CUPTI was recording)");
	r.m.ended_killed = 1;
	analyse();
	ck_assert_str_eq(r.v.advice, "no GPU work was recorded: a process was killed before it could send what it had (lost uncounted)");
	r.m.gpu_note = NULL;
}
END_TEST

/* recorded in windows and none opened: that is the explanation, not "no CUDA call"; with a window that opened and
 * saw no call, or a whole run, the old one */
START_TEST(test_findings_rules_no_gpu_no_window)
{
	struct cprof_window w = { .proc = 1, .start = 1 * MS, .end = 2 * MS, .why = "", .end_why = "" };

	no_gpu_verdict();
	ck_assert_str_eq(r.v.advice, "the program made no CUDA call that cprof saw");
	r.m.recording_opt = "--capture-range cudaProfilerApi";
	analyse();
	ck_assert_str_eq(r.v.verdict, "no-gpu-activity");
	ck_assert_str_eq(r.v.cause, "no recording window opened (--capture-range cudaProfilerApi)");
	ck_assert_str_eq(r.v.advice, "nothing was recorded: the program never called cudaProfilerStart or "
				     "cuProfilerStart (--capture-range cudaProfilerApi)");
	r.m.recording_opt = "--on-demand";
	analyse();
	ck_assert_str_eq(r.v.advice, "nothing was recorded: no 'cprof capture' asked for a window while it ran (--on-demand)");
	r.m.recording_opt = "--steps 100:101";
	analyse();
	ck_assert_str_eq(r.v.advice, "nothing was recorded: the program did not reach the steps of --steps 100:101 (NVTX "
				     "step ranges, as the report finds steps)");
	r.m.recording_opt = "--delay 5.000";
	analyse();
	ck_assert_str_eq(r.v.advice, "nothing was recorded: the run ended before its window (--delay 5.000) began");
	r.m.recording_opt = "--capture-range nvtx:measure";
	analyse();
	ck_assert_str_eq(r.v.advice, "nothing was recorded: the program never pushed the NVTX range of --capture-range "
				     "nvtx:measure");
	r.m.rec.w = &w;
	r.m.rec.n = 1;
	analyse();
	ck_assert_str_eq(r.v.advice, "the program made no CUDA call that cprof saw");
	r.m.rec.w = NULL;
	r.m.rec.n = 0;
	r.m.recording_opt = NULL;
}
END_TEST

/* the host's time between launches: work when its threads ran most of the window (CPROF_COST's run time), a sleep
 * or a block when they ran under half of it (the cause and the advice say which) */
START_TEST(test_findings_rules_host_off_cpu)
{
	struct cprof_cost_row rows[2] = {
		{ .proc = 1, .seq = 0, .time = 0, .hook_calls = 1 },
		{ .proc = 1, .seq = 1, .time = 10 * MS, .hook_calls = 40 },
	};
	char cause[sizeof(r.v.cause)];

	for (uint64_t i = 0; i < 40; i++) {
		call(1, i * 200 * US, i * 200 * US + 5 * US);
		op(CPROF_OP_KERNEL, 1, 7, i * 200 * US + 6 * US, i * 200 * US + 8 * US, CPROF_NO_ID);
	}
	no_gpu_verdict(); /* builds the model; the verdict below is the kernels' */
	proc_rank(1, -1);
	r.m.procs = r.procs;
	r.m.nprocs = r.nprocs;
	r.m.cost = rows;
	r.m.ncost = 2;
	rows[1].app_run_ns = 9 * MS; /* busy: its threads ran nine tenths of the time */
	analyse();
	ck_assert_str_eq(r.v.verdict, "overhead-bound");
	ck_assert_str_eq(r.v.cause, "host work between launches");
	ck_assert_ptr_nonnull(strstr(r.v.advice, "the host is busy outside CUDA between launches"));
	rows[1].app_run_ns = 1 * MS; /* asleep: a tenth */
	analyse();
	ck_assert_str_eq(r.v.verdict, "overhead-bound");
	snprintf(cause, sizeof(cause), "%s", r.v.cause);
	ck_assert_ptr_nonnull(strstr(cause, "the host off the CPU between launches (its threads ran "));
	ck_assert_ptr_nonnull(strstr(r.v.advice, "the launching thread sleeps or blocks between launches"));
	/* ran a tenth but waited for a core most of the rest: starved of CPU, not asleep */
	rows[1].app_wait_ns = 7 * MS;
	analyse();
	ck_assert_str_eq(r.v.cause, "host work between launches");
	rows[1].app_wait_ns = 0;
	/* no run time measured (a profile without CPROF_COST rows): the busy reading, as before */
	r.m.ncost = 0;
	analyse();
	ck_assert_str_eq(r.v.cause, "host work between launches");
	r.m.cost = NULL;
	r.m.procs = NULL;
	r.m.nprocs = 0;
}
END_TEST

Suite *findings_rules_suite(void)
{
	Suite *s = suite_create("findings_rules");
	TCase *tc = tcase_create("arrays");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_findings_rules_batched_gemm_fires);
	tcase_add_test(tc, test_findings_rules_batched_gemm_most_called);
	tcase_add_test(tc, test_findings_rules_batched_gemm_silent);
	tcase_add_test(tc, test_findings_rules_dtod_fires);
	tcase_add_test(tc, test_findings_rules_dtod_silent);
	tcase_add_test(tc, test_findings_rules_cupti_overhead_fires);
	tcase_add_test(tc, test_findings_rules_cupti_overhead_silent);
	tcase_add_test(tc, test_findings_rules_driver_api_fires);
	tcase_add_test(tc, test_findings_rules_driver_api_hooked);
	tcase_add_test(tc, test_findings_rules_driver_api_silent);
	tcase_add_test(tc, test_findings_rules_straggler_fires);
	tcase_add_test(tc, test_findings_rules_straggler_silent);
	tcase_add_test(tc, test_findings_rules_no_gpu_cuda_unavailable);
	tcase_add_test(tc, test_findings_rules_no_gpu_records);
	tcase_add_test(tc, test_findings_rules_no_gpu_no_window);
	tcase_add_test(tc, test_findings_rules_host_off_cpu);
	suite_add_tcase(s, tc);
	return s;
}
