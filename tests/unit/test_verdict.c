/* Unit tests of issue 18's verdict rules over small profiles built in memory: the queue rule, copies, CUPTI-only launches, errors. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/model/analysis.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

#define US 1000ULL

struct vfix {
	struct cprof_op ops[512];
	struct cprof_call calls[512];
	struct cprof_rt rt[64];
	struct cprof_string strings[16];
	struct cprof_nvtx_range nvtx[512];
	size_t nops, ncalls, nrt, nstrings, nnvtx;
	struct cprof_model m;
};

static struct cprof_op *op(struct vfix *f, int kind, uint64_t s, uint64_t e, uint64_t launch, uint64_t enq)
{
	ck_assert_uint_lt(f->nops, 512);
	f->ops[f->nops] = (struct cprof_op){ .start = s, .end = e, .launch = launch, .enq = enq, .proc = 1,
					    .kname = kind == CPROF_OP_KERNEL ? 0 : -1, .kind = (uint8_t)kind,
					    .corr = CPROF_NO_ID, .name = CPROF_NO_ID, .stream = 7 };
	return &f->ops[f->nops++];
}

static struct cprof_call *vcall(struct vfix *f, uint64_t s, uint64_t e)
{
	ck_assert_uint_lt(f->ncalls, 512);
	f->calls[f->ncalls] = (struct cprof_call){ .start = s, .end = e, .proc = 1, .outer = 1, .corr = CPROF_NO_ID,
						  .stream = CPROF_NO_ID };
	return &f->calls[f->ncalls++];
}

static int64_t str(struct vfix *f, const char *value)
{
	ck_assert_uint_lt(f->nstrings, 16);
	f->strings[f->nstrings].id = (int64_t)f->nstrings + 1;
	f->strings[f->nstrings].value = (char *)value;
	return f->strings[f->nstrings++].id;
}

/* matrixMul's shape: a launch call of call_ns every call_ns + host_ns; the kernel (kernel_ns) starts
 * latency_ns after the call returns, or when the one before it ends */
static void launch_loop(struct vfix *f, uint64_t t0, int n, uint64_t call_ns, uint64_t host_ns, uint64_t kernel_ns,
			uint64_t latency_ns)
{
	uint64_t prev_end = 0;
	int i;

	for (i = 0; i < n; i++) {
		uint64_t c = t0 + (uint64_t)i * (call_ns + host_ns), s = c + call_ns + latency_ns;

		vcall(f, c, c + call_ns)->launch = 1;
		if (s < prev_end)
			s = prev_end;
		op(f, CPROF_OP_KERNEL, s, s + kernel_ns, c, c + call_ns);
		prev_end = s + kernel_ns;
	}
}

static void vbuild(struct vfix *f)
{
	ck_assert_int_eq(cprof_model_from_arrays(&f->m, f->ops, f->nops, f->calls, f->ncalls, NULL, 0, 1), 0);
	f->m.rt = f->nrt ? f->rt : NULL;
	f->m.nrt = f->nrt;
	cprof_model_link_rt(&f->m);
	f->m.strings = f->nstrings ? f->strings : NULL;
	f->m.nstrings = f->nstrings;
	f->m.nvtx = f->nnvtx ? f->nvtx : NULL;
	f->m.nnvtx = f->nnvtx;
}

static void vverdict(struct vfix *f, struct cprof_verdict *v)
{
	struct cprof_thresholds t;

	cprof_thresholds_default(&t);
	t.include_startup = 1; /* the fixtures have no start-up: keep every op in the window */
	vbuild(f);
	ck_assert_int_eq(cprof_analyse(&f->m, 0, 0, UINT64_MAX, &t, v), 0);
}

/* the model does not own the fixture's arrays, only the indexes it built on first use */
static void vfree(struct vfix *f)
{
	cprof_model_free_indexes(&f->m);
	memset(&f->m, 0, sizeof(f->m));
}

/* issue 18 item 5: 2.4 us kernels, 4.3 us launch calls, GPU 49% busy: the launches are slower than the
 * kernels, so the GPU starves although every gap is "kernel wait" in HTA's terms (was: mixed) */
START_TEST(test_verdict_launch_bound_loop_is_overhead_bound)
{
	static struct vfix f;
	struct cprof_verdict v;

	memset(&f, 0, sizeof(f));
	launch_loop(&f, 1000 * US, 300, 4300, 600, 2400, 3000);
	vverdict(&f, &v);
	ck_assert_double_gt(v.busy_pct, 45);
	ck_assert_double_lt(v.busy_pct, 52);
	/* HTA's buckets: the next kernel was always launched before the GPU went idle */
	ck_assert_uint_gt(v.kernel_wait_ns, v.host_wait_ns);
	ck_assert_str_eq(v.verdict, "overhead-bound");
	ck_assert_uint_gt(v.starved_ns * 2, v.end - v.start - v.busy_ns); /* the idle time is starved time */
	ck_assert_uint_eq(v.blocked_ns, 0);
	ck_assert_str_eq(v.cause, "launch cost inside the CUDA API");
	ck_assert_ptr_nonnull(strstr(v.advice, "CUDA graph"));
	vfree(&f);
}
END_TEST

/* the same loop with no host time between launches is 56% busy: the verdict does not flip at 50% */
START_TEST(test_verdict_starved_gpu_no_flip_near_threshold)
{
	static struct vfix f, g;
	struct cprof_verdict v, w;

	memset(&f, 0, sizeof(f));
	memset(&g, 0, sizeof(g));
	launch_loop(&f, 1000 * US, 300, 4300, 0, 2400, 3000);
	launch_loop(&g, 1000 * US, 300, 4300, 1000, 2400, 3000);
	vverdict(&f, &v);
	vverdict(&g, &w);
	ck_assert_double_gt(v.busy_pct, 50);
	ck_assert_double_lt(w.busy_pct, 50);
	ck_assert_str_eq(v.verdict, "overhead-bound");
	ck_assert_str_eq(w.verdict, "overhead-bound");
	vfree(&f);
	vfree(&g);
}
END_TEST

/* a launch, then a sync that waits for the kernel, then host work: 70% busy, the host waits in syncs
 * longer than the GPU waits for it: compute-bound (the utilisation rule alone said mixed) */
START_TEST(test_verdict_host_blocked_in_syncs_is_compute_bound)
{
	static struct vfix f;
	struct cprof_verdict v;
	int i;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 20; i++) {
		uint64_t t = 1000 * US + (uint64_t)i * 100 * US;

		vcall(&f, t, t + 2 * US)->launch = 1;
		op(&f, CPROF_OP_KERNEL, t + 5 * US, t + 75 * US, t, t + 2 * US);
		vcall(&f, t + 3 * US, t + 76 * US)->cut = 1;
	}
	vverdict(&f, &v);
	ck_assert_double_lt(v.busy_pct, 80);
	ck_assert_uint_gt(v.blocked_ns, v.starved_ns);
	ck_assert_str_eq(v.verdict, "compute-bound");
	vfree(&f);
}
END_TEST

/* work queued far ahead but the GPU idles between ops (dependencies): neither side waits for the other */
START_TEST(test_verdict_stalled_with_backlog_is_mixed)
{
	static struct vfix f;
	struct cprof_verdict v;
	int i;

	memset(&f, 0, sizeof(f));
	vcall(&f, 900 * US, 910 * US)->launch = 1;
	for (i = 0; i < 30; i++) {
		uint64_t s = 1000 * US + (uint64_t)i * 100 * US;

		op(&f, CPROF_OP_KERNEL, s, s + 40 * US, 900 * US, 910 * US);
	}
	vverdict(&f, &v);
	ck_assert_uint_gt(v.stalled_ns, v.starved_ns);
	ck_assert_uint_gt(v.backlog_ns, 0);
	ck_assert_str_eq(v.verdict, "mixed");
	vfree(&f);
}
END_TEST

/* issue 18 item 6: synchronous pageable copies take nearly all the CUDA-call time: the cause is copies,
 * the advice pinned memory and asynchronous copies, not CUDA graphs */
START_TEST(test_verdict_copies_are_the_cause)
{
	static struct vfix f;
	struct cprof_verdict v;
	int i;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 20; i++) {
		uint64_t t = 1000 * US + (uint64_t)i * 500 * US;
		struct cprof_call *c = vcall(&f, t, t + 300 * US);
		struct cprof_op *o;

		c->copy = 1;
		c->cut = 1;
		c->bytes = 4 << 20;
		o = op(&f, CPROF_OP_MEMCPY, t + 20 * US, t + 290 * US, t, t + 10 * US);
		o->copy = 1;
		o->srckind = 1; /* pageable */
		o->bytes = 4 << 20;
		vcall(&f, t + 310 * US, t + 314 * US)->launch = 1;
		op(&f, CPROF_OP_KERNEL, t + 320 * US, t + 330 * US, t + 310 * US, t + 314 * US);
	}
	vverdict(&f, &v);
	ck_assert_uint_gt(v.copy_call_ns, 10 * v.launch_call_ns);
	ck_assert_str_eq(v.cause, "copies between host and device");
	ck_assert_ptr_nonnull(strstr(v.advice, "pinned"));
	ck_assert_ptr_null(strstr(v.advice, "graph"));
	vfree(&f);
}
END_TEST

/* issue 29 item 1: the 4096 sweep's shape: 50 GEMMs queued ahead, then one blocking cudaMemcpy that waits
 * for them and copies the result: compute-bound, and the copy call's wait is a sync, not copy time */
START_TEST(test_verdict_sync_copy_waiting_for_kernels_is_no_copy_cost)
{
	static struct vfix f;
	struct cprof_verdict v;
	struct cprof_call *c;
	struct cprof_op *o;
	uint64_t t0 = 1000 * US, k = t0 + 20 * US;
	int i;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 50; i++) {
		uint64_t t = t0 + (uint64_t)i * 5 * US;

		vcall(&f, t, t + 4 * US)->launch = 1;
		op(&f, CPROF_OP_KERNEL, k, k + 2750 * US, t, t + 4 * US);
		k += 2750 * US;
	}
	c = vcall(&f, t0 + 260 * US, k + 2700 * US);
	c->copy = c->memcpy = c->cut = 1;
	o = op(&f, CPROF_OP_MEMCPY, k, k + 2690 * US, t0 + 260 * US, t0 + 270 * US);
	o->copy = 2;
	o->dstkind = 1;
	o->bytes = 64 << 20;
	vverdict(&f, &v);
	ck_assert_str_eq(v.verdict, "compute-bound");
	/* only the part after the last kernel is copy time */
	ck_assert_uint_le(v.copy_call_ns, 2700 * US);
	ck_assert_uint_ge(v.copy_call_ns, 2690 * US);
	ck_assert_ptr_null(strstr(v.advice, "cop"));
	vfree(&f);
}
END_TEST

/* issue 29 item 7: launch calls slower than their kernels, but 100 us of host work between them: the
 * largest share of the GPU's idle time is the host's own work, not launch cost (was: launch cost, from the
 * median launch call alone) */
START_TEST(test_verdict_cause_is_largest_idle_share)
{
	static struct vfix f;
	struct cprof_verdict v;

	memset(&f, 0, sizeof(f));
	launch_loop(&f, 1000 * US, 100, 4300, 100000, 2400, 3000);
	vverdict(&f, &v);
	ck_assert_str_eq(v.verdict, "overhead-bound");
	ck_assert_uint_gt(v.idle_by[CPROF_IDLE_HOST], 10 * v.idle_by[CPROF_IDLE_API]);
	ck_assert_str_eq(v.cause, "host work between launches");
	ck_assert_ptr_null(strstr(v.advice, "graph"));
	vfree(&f);
}
END_TEST

/* the same loop with the host's gaps inside op ranges: a collective, the DataLoader, torch.compile's
 * regions (a cache lookup, then the compiled region, the guards between them) each name their own cause */
START_TEST(test_verdict_cause_from_op_ranges)
{
	static struct vfix f;
	static const struct {
		const char *a, *b, *cause, *advice;
	} c[] = {
		{ "gloo:all_reduce", NULL, "waiting on other processes (collectives)", "collectives" },
		{ "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", NULL, "waiting for input data (DataLoader)",
		  "num_workers" },
		{ "TorchDynamo Cache Lookup", "Torch-Compiled Region: 0/0", "Python and Dynamo (torch.compile)", "recompiles" },
		{ "aten::add", NULL, "host time in ATen ops", "larger ops" },
	};
	struct cprof_verdict v;
	size_t k;
	int i;

	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		int64_t a, b;

		memset(&f, 0, sizeof(f));
		a = str(&f, c[k].a);
		b = c[k].b ? str(&f, c[k].b) : 0;
		launch_loop(&f, 1000 * US, 100, 4300, 100000, 2400, 3000);
		for (i = 0; i < 100; i++) {
			uint64_t h = 1000 * US + (uint64_t)i * (4300 + 100000) + 4300;

			if (b) { /* the lookup's range is short; the guards after it, then the region */
				f.nvtx[f.nnvtx++] = (struct cprof_nvtx_range){ .start = h, .end = h + 2 * US, .proc = 1, .text = a };
				f.nvtx[f.nnvtx++] = (struct cprof_nvtx_range){ .start = h + 60 * US, .end = h + 95 * US, .proc = 1,
									      .text = b };
			} else {
				f.nvtx[f.nnvtx++] = (struct cprof_nvtx_range){ .start = h, .end = h + 95 * US, .proc = 1, .text = a };
			}
		}
		vverdict(&f, &v);
		ck_assert_str_eq(v.verdict, "overhead-bound");
		ck_assert_str_eq(v.cause, c[k].cause);
		ck_assert_ptr_nonnull(strstr(v.advice, c[k].advice));
		vfree(&f);
	}
}
END_TEST

/* the starved time split by cause where causes overlap: each moment to the first cause in enum order (a
 * DataLoader range over an ATen one, the launch call over both), the rest to the host; every gap alike */
START_TEST(test_verdict_idle_causes_overlap_exact)
{
	static struct vfix f;
	struct cprof_verdict v;
	int64_t aten, data;
	uint64_t n;
	int i;

	memset(&f, 0, sizeof(f));
	aten = str(&f, "aten::add");
	data = str(&f, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
	launch_loop(&f, 1000 * US, 100, 4300, 100000, 2400, 3000);
	for (i = 0; i < 100; i++) {
		/* kernel i ends at c + 9700; the GPU starves until launch i + 1 returns at c + 108600 */
		uint64_t c = 1000 * US + (uint64_t)i * (4300 + 100000);

		f.nvtx[f.nnvtx++] = (struct cprof_nvtx_range){ .start = c + 20000, .end = c + 50000, .proc = 1, .text = aten };
		f.nvtx[f.nnvtx++] = (struct cprof_nvtx_range){ .start = c + 40000, .end = c + 60000, .proc = 1, .text = data };
		/* an ATen range over the next launch call: the call's time is the call's */
		f.nvtx[f.nnvtx++] = (struct cprof_nvtx_range){ .start = c + 104000, .end = c + 105000, .proc = 1, .text = aten };
	}
	vverdict(&f, &v);
	n = v.idle_by[CPROF_IDLE_DATA] / 20000;
	ck_assert_uint_ge(n, 90);
	ck_assert_uint_eq(v.idle_by[CPROF_IDLE_DATA], n * 20000);
	ck_assert_uint_eq(v.idle_by[CPROF_IDLE_ATEN], n * (20000 + 300));
	/* and the first launch call, before the first kernel */
	ck_assert_uint_eq(v.idle_by[CPROF_IDLE_API], (n + 1) * 4300);
	/* the rest is the host's: every moment once */
	ck_assert_uint_eq(v.idle_by[CPROF_IDLE_HOST] + v.idle_by[CPROF_IDLE_DATA] + v.idle_by[CPROF_IDLE_ATEN] +
				  v.idle_by[CPROF_IDLE_API], v.starved_ns);
	ck_assert_uint_ge(v.idle_by[CPROF_IDLE_HOST], n * (98900 - 20000 - 20300 - 4300));
	ck_assert_uint_eq(v.idle_by[CPROF_IDLE_COPY] + v.idle_by[CPROF_IDLE_COLL] + v.idle_by[CPROF_IDLE_DYNAMO], 0);
	vfree(&f);
}
END_TEST

/* issue 29 item 7: the advice leaves out what the program does already: copies from pinned memory, on a
 * stream of their own, asynchronous -> not "use pinned memory"; CUDA graphs replayed -> not "capture one" */
START_TEST(test_verdict_advice_not_what_it_does)
{
	static struct vfix f;
	struct cprof_verdict v;
	int i;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 20; i++) {
		uint64_t t = 1000 * US + (uint64_t)i * 500 * US;
		struct cprof_call *c = vcall(&f, t, t + 300 * US);
		struct cprof_op *o;

		c->copy = 1; /* cudaMemcpyAsync: class memcpy, not the blocking cudaMemcpy */
		o = op(&f, CPROF_OP_MEMCPY, t + 20 * US, t + 290 * US, t, t + 10 * US);
		o->copy = 1;
		o->srckind = 2; /* pinned */
		o->stream = 9;  /* the kernels run on stream 7 */
		vcall(&f, t + 310 * US, t + 314 * US)->launch = 1;
		op(&f, CPROF_OP_KERNEL, t + 320 * US, t + 330 * US, t + 310 * US, t + 314 * US);
	}
	vverdict(&f, &v);
	ck_assert_str_eq(v.cause, "copies between host and device");
	ck_assert_ptr_null(strstr(v.advice, "pinned host memory ("));
	ck_assert_ptr_nonnull(strstr(v.advice, "already"));
	vfree(&f);

	memset(&f, 0, sizeof(f));
	launch_loop(&f, 1000 * US, 300, 4300, 600, 2400, 3000);
	vcall(&f, 900 * US, 905 * US)->name = str(&f, "cudaGraphLaunch");
	vverdict(&f, &v);
	ck_assert_str_eq(v.cause, "launch cost inside the CUDA API");
	ck_assert_ptr_null(strstr(v.advice, "capture a CUDA graph"));
	vfree(&f);
}
END_TEST

/* issue 18 item 3: kernels launched through the driver API (no hook saw them): the launch time comes from
 * CUPTI's records, not "0 ns" */
START_TEST(test_verdict_launch_time_from_cupti_records)
{
	static struct vfix f;
	struct cprof_verdict v;
	int i;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 20; i++) {
		uint64_t t = 1000 * US + (uint64_t)i * 50 * US;
		struct cprof_op *o = op(&f, CPROF_OP_KERNEL, t + 12 * US, t + 20 * US, t, t + 7 * US);

		o->via = 2;
		o->corr = i + 1;
	}
	vverdict(&f, &v);
	ck_assert_uint_eq(v.launch_calls_cupti, 20);
	ck_assert_double_eq_tol(v.med_launch_ns, 7 * US, 1);
	vfree(&f);
}
END_TEST

/* issue 18 item 2: the run spans calls only CUPTI saw */
START_TEST(test_verdict_run_spans_cupti_only_calls)
{
	static struct vfix f;
	struct cprof_verdict v;

	memset(&f, 0, sizeof(f));
	vcall(&f, 2000 * US, 2010 * US);
	f.rt[f.nrt++] = (struct cprof_rt){ .start = 1000 * US, .end = 1020 * US, .proc = 1, .name = CPROF_NO_ID,
					   .corr = CPROF_NO_ID };
	f.rt[f.nrt++] = (struct cprof_rt){ .start = 5000 * US, .end = 5020 * US, .proc = 1, .name = CPROF_NO_ID,
					   .corr = CPROF_NO_ID };
	vverdict(&f, &v);
	ck_assert_uint_eq(v.run_start, 1000 * US);
	ck_assert_uint_eq(v.run_end, 5020 * US);
	vfree(&f);
}
END_TEST

static const struct cprof_finding *find(const struct cprof_finding *fd, int n, const char *id)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(fd[i].id, id))
			return &fd[i];
	return NULL;
}

/* issue 18 item 1: failures per API and code, named; the illegal address reported by a stream sync names
 * the kernels that ran on the synchronised stream (7), not the latest kernel of another stream (9) */
START_TEST(test_verdict_cuda_errors_named_with_faulting_kernel)
{
	static struct vfix f;
	static struct cprof_ext ext[1] = { { .proc = 1, .corr = 110, .ext = 10 } };
	struct cprof_verdict v;
	struct cprof_finding *fd = NULL;
	const struct cprof_finding *e;
	int64_t malloc_id = str(&f, "cudaMalloc"), launch_id = str(&f, "cudaLaunchKernel"),
		sync_id = str(&f, "cudaStreamSynchronize"), good = str(&f, "good_kernel"), bad = str(&f, "bad_kernel"),
		other = str(&f, "other_kernel");
	struct cprof_call *c;
	struct cprof_op *o;
	int n;

	c = vcall(&f, 1000 * US, 1010 * US);
	c->name = malloc_id;
	c->ret = 2;
	c = vcall(&f, 1020 * US, 1030 * US);
	c->name = malloc_id;
	c->ret = 2;
	c = vcall(&f, 1100 * US, 1105 * US);
	c->name = launch_id;
	c->launch = 1;
	o = op(&f, CPROF_OP_KERNEL, 1110 * US, 1120 * US, 1100 * US, 1105 * US);
	o->name = good;
	c = vcall(&f, 1200 * US, 1205 * US);
	c->name = launch_id;
	c->launch = 1;
	c->stream = 0x1234;
	c->corr = 10;
	o = op(&f, CPROF_OP_KERNEL, 1210 * US, 1220 * US, 1200 * US, 1205 * US);
	o->name = bad;
	o->corr = 110;
	c = vcall(&f, 1300 * US, 1305 * US);
	c->name = launch_id;
	c->launch = 1;
	o = op(&f, CPROF_OP_KERNEL, 1310 * US, 1320 * US, 1300 * US, 1305 * US);
	o->name = other;
	o->stream = 9;
	c = vcall(&f, 1400 * US, 1410 * US);
	c->name = sync_id;
	c->sync = c->cut = 1;
	c->stream = 0x1234;
	c->ret = 700;
	/* a call no hook saw, failing: CUPTI's record, its version suffix dropped */
	f.rt[f.nrt++] = (struct cprof_rt){ .start = 1500 * US, .end = 1501 * US, .proc = 1,
					   .name = str(&f, "cudaGetDeviceProperties_v12000"), .corr = 77, .ret = 100 };
	vverdict(&f, &v);
	f.m.ext = ext;
	f.m.next = 1;
	n = cprof_findings(&f.m, 0, &v, &fd);
	ck_assert_int_ge(n, 1);
	e = find(fd, n, "cuda-errors");
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(strstr(e->message, "4 CUDA call(s) failed (3 API/code pair(s))"));
	ck_assert_ptr_nonnull(strstr(e->evidence, "cudaGetDeviceProperties returned 100 (cudaErrorNoDevice) x1"));
	ck_assert_ptr_nonnull(strstr(e->evidence, "cudaMalloc returned 2 (cudaErrorMemoryAllocation) x2"));
	ck_assert_ptr_nonnull(strstr(e->evidence, "cudaStreamSynchronize returned 700 (cudaErrorIllegalAddress) x1"));
	ck_assert_ptr_nonnull(strstr(e->evidence, "the last on stream 7 before it: bad_kernel, good_kernel"));
	ck_assert_ptr_null(strstr(e->evidence, "other_kernel"));
	free(fd);
	f.m.ext = NULL;
	vfree(&f);
}
END_TEST

/* issue 18 item 4: a short device query first (driver load), the context created by cudaSetDevice, the
 * only launch carrying its module's load: each named with what it paid */
START_TEST(test_verdict_cold_start_on_the_calls_that_paid)
{
	static struct vfix f;
	struct cprof_verdict v;
	struct cprof_finding *fd = NULL;
	const struct cprof_finding *e;
	struct cprof_call *c;
	int n;

	memset(&f, 0, sizeof(f));
	c = vcall(&f, 0, 20000 * US);
	c->name = str(&f, "cudaGetDeviceCount");
	c = vcall(&f, 20100 * US, 70100 * US);
	c->name = str(&f, "cudaSetDevice");
	c = vcall(&f, 70200 * US, 71200 * US + 7 * US);
	c->name = str(&f, "__cudaGetKernel");
	c = vcall(&f, 71300 * US, 142300 * US);
	c->name = str(&f, "cudaLaunchKernel");
	c->launch = 1;
	op(&f, CPROF_OP_KERNEL, 142310 * US, 142320 * US, 71300 * US, 142300 * US);
	vverdict(&f, &v);
	n = cprof_findings(&f.m, 0, &v, &fd);
	e = find(fd, n, "cold-start");
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(strstr(e->evidence, "cudaGetDeviceCount took 20.000 ms: driver initialisation"));
	ck_assert_ptr_nonnull(strstr(e->evidence, "cudaSetDevice took 50.000 ms: context creation"));
	ck_assert_ptr_nonnull(strstr(e->evidence, "the first launch (cudaLaunchKernel) took 71.000 ms: lazy module loading"));
	ck_assert_ptr_null(strstr(e->evidence, "cudaGetDeviceCount took 20.000 ms: context"));
	/* the cold launch, before the steady window, is not the launch cost */
	{
		struct cprof_thresholds t;

		cprof_thresholds_default(&t);
		ck_assert_int_eq(cprof_analyse(&f.m, 0, 0, UINT64_MAX, &t, &v), 0);
		ck_assert_uint_gt(v.startup_ns, 0);
		ck_assert_double_eq(v.med_launch_ns, 0);
	}
	free(fd);
	vfree(&f);
}
END_TEST

/* issue 18 item 6: the copies finding: each direction's time and bandwidth, pageable memory, synchronous calls */
START_TEST(test_verdict_copies_finding)
{
	static struct vfix f;
	struct cprof_verdict v;
	struct cprof_finding *fd = NULL;
	const struct cprof_finding *e;
	int i, n;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 10; i++) {
		uint64_t t = 1000 * US + (uint64_t)i * 1000 * US;
		struct cprof_call *c = vcall(&f, t, t + 400 * US);
		struct cprof_op *o = op(&f, CPROF_OP_MEMCPY, t + 10 * US, t + 390 * US, t, t + 5 * US);

		c->copy = c->memcpy = c->cut = 1;
		o->copy = (uint8_t)(i % 2 ? 2 : 1);
		o->srckind = (uint8_t)(i % 2 ? 3 : 1);
		o->dstkind = (uint8_t)(i % 2 ? 2 : 3); /* device-to-host copies land in pinned memory */
		o->bytes = 3800000; /* 380 us: 10 GB/s */
	}
	vverdict(&f, &v);
	n = cprof_findings(&f.m, 0, &v, &fd);
	e = find(fd, n, "copies");
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(strstr(e->evidence, "host-to-device: 5 copies, 1900.000 us, 10.0 GB/s, 5 from pageable memory"));
	ck_assert_ptr_nonnull(strstr(e->evidence, "device-to-host: 5 copies, 1900.000 us, 10.0 GB/s, 0 to pageable memory"));
	ck_assert_ptr_nonnull(strstr(e->evidence, "10 of 10 copy calls synchronous"));
	ck_assert_ptr_nonnull(strstr(e->message, "pinned"));
	free(fd);
	vfree(&f);
}
END_TEST

/* s21 hunt: copies from pinned memory (simpleStreams' cudaHostRegister) and one small pageable copy: the
 * finding neither says the copies use pageable memory nor tells the program to pin its buffers */
START_TEST(test_verdict_copies_pinned_no_pin_advice)
{
	static struct vfix f;
	struct cprof_verdict v;
	struct cprof_finding *fd = NULL;
	const struct cprof_finding *e;
	int i, n;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 11; i++) {
		uint64_t t = 1000 * US + (uint64_t)i * 1000 * US, len = i ? 380 * US : 2 * US;
		struct cprof_call *c = vcall(&f, t, t + len + 20 * US);
		struct cprof_op *o = op(&f, CPROF_OP_MEMCPY, t + 10 * US, t + 10 * US + len, t, t + 5 * US);

		c->copy = c->memcpy = c->cut = 1;
		o->copy = (uint8_t)(i ? 2 : 1);
		o->srckind = (uint8_t)(i ? 3 : 1); /* the first, small one from pageable memory */
		o->dstkind = (uint8_t)(i ? 2 : 3); /* the others into pinned memory */
		o->bytes = i ? 3800000 : 4;
	}
	vverdict(&f, &v);
	n = cprof_findings(&f.m, 0, &v, &fd);
	e = find(fd, n, "copies");
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(strstr(e->evidence, "1 from pageable memory"));
	ck_assert_ptr_nonnull(strstr(e->evidence, "device-to-host: 10 copies, 3800.000 us, 10.0 GB/s, 0 to pageable memory"));
	ck_assert_ptr_null(strstr(e->message, "pinned"));
	ck_assert_ptr_null(strstr(e->message, "pageable"));
	ck_assert_ptr_nonnull(strstr(e->message, "cudaMemcpyAsync"));
	free(fd);
	vfree(&f);
}
END_TEST

/* issue 18 item 12: one process, two devices: each judged on its own ops */
START_TEST(test_verdict_per_device)
{
	static struct vfix f;
	struct cprof_verdict v;
	struct cprof_device_verdict *dv = NULL;
	struct cprof_thresholds t;
	size_t i;
	int n;

	memset(&f, 0, sizeof(f));
	launch_loop(&f, 1000 * US, 100, 4300, 600, 2400, 3000);
	for (i = 0; i < f.nops; i++)
		f.ops[i].dev = 0;
	vcall(&f, 900 * US, 901 * US)->launch = 1;
	for (i = 0; i < 10; i++) {
		struct cprof_op *o = op(&f, CPROF_OP_KERNEL, 1000 * US + i * 60 * US, 1060 * US + i * 60 * US, 900 * US, 901 * US);

		o->dev = 1;
	}
	vverdict(&f, &v);
	cprof_thresholds_default(&t);
	t.include_startup = 1;
	n = cprof_device_verdicts(&f.m, 0, &t, &dv);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(dv[0].device, 0);
	ck_assert_str_eq(dv[0].v.verdict, "overhead-bound");
	ck_assert_uint_eq(dv[0].v.kernels, 100);
	ck_assert_int_eq(dv[1].device, 1);
	ck_assert_str_eq(dv[1].v.verdict, "compute-bound");
	ck_assert_uint_eq(dv[1].v.kernels, 10);
	free(dv);
	vfree(&f);
}
END_TEST

Suite *verdict_suite(void)
{
	Suite *s = suite_create("verdict");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_verdict_launch_bound_loop_is_overhead_bound);
	tcase_add_test(tc, test_verdict_starved_gpu_no_flip_near_threshold);
	tcase_add_test(tc, test_verdict_host_blocked_in_syncs_is_compute_bound);
	tcase_add_test(tc, test_verdict_stalled_with_backlog_is_mixed);
	tcase_add_test(tc, test_verdict_copies_are_the_cause);
	tcase_add_test(tc, test_verdict_sync_copy_waiting_for_kernels_is_no_copy_cost);
	tcase_add_test(tc, test_verdict_cause_is_largest_idle_share);
	tcase_add_test(tc, test_verdict_cause_from_op_ranges);
	tcase_add_test(tc, test_verdict_idle_causes_overlap_exact);
	tcase_add_test(tc, test_verdict_advice_not_what_it_does);
	tcase_add_test(tc, test_verdict_launch_time_from_cupti_records);
	tcase_add_test(tc, test_verdict_run_spans_cupti_only_calls);
	tcase_add_test(tc, test_verdict_cuda_errors_named_with_faulting_kernel);
	tcase_add_test(tc, test_verdict_cold_start_on_the_calls_that_paid);
	tcase_add_test(tc, test_verdict_copies_finding);
	tcase_add_test(tc, test_verdict_copies_pinned_no_pin_advice);
	tcase_add_test(tc, test_verdict_per_device);
	suite_add_tcase(s, tc);
	return s;
}
