/* Unit tests of the cuda-graphs and torch-compile findings (issue 27) on small in-memory models: each fires with its exact counts on one built to show it, and stays silent on one built not to. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/model/analysis.h"
#include "report/model/model.h"
#include "tests/unit/tests.h"

#define US 1000ULL
#define MS 1000000ULL

enum { S_LAUNCH = 1, S_GRAPH_LAUNCH, S_END_CAPTURE, S_INSTANTIATE, S_KERNEL, S_LOOKUP, S_REGION0, S_REGION1 };

static struct cprof_string strings[] = {
	{ S_LAUNCH, "cudaLaunchKernel" },
	{ S_GRAPH_LAUNCH, "cudaGraphLaunch" },
	{ S_END_CAPTURE, "cudaStreamEndCapture" },
	{ S_INSTANTIATE, "cudaGraphInstantiate" },
	{ S_KERNEL, "_Z4kernPf" },
	{ S_LOOKUP, "TorchDynamo Cache Lookup" },
	{ S_REGION0, "Torch-Compiled Region: 0/0" },
	{ S_REGION1, "Torch-Compiled Region: 0/1" },
};

struct cfix {
	struct cprof_op ops[96];
	struct cprof_call calls[64];
	struct cprof_ext ext[64];
	struct cprof_torch_range torch[32];
	size_t nops, ncalls, next, ntorch;
	int64_t corr;
	struct cprof_model m;
	struct cprof_verdict v;
	struct cprof_finding *f;
	int nf;
};

static struct cfix c;

static void setup(void)
{
	memset(&c, 0, sizeof(c));
	c.corr = 100;
}

static void teardown(void)
{
	free(c.f);
	cprof_model_free_indexes(&c.m);
	c.f = NULL;
}

/* a hooked call; returns its correlation id */
static int64_t call(int64_t name, uint64_t s, uint64_t e, int launch, uint8_t graph, int32_t ret)
{
	int64_t corr = c.corr++;

	ck_assert_uint_lt(c.ncalls, 64);
	c.calls[c.ncalls++] = (struct cprof_call){ .start = s, .end = e, .proc = 1, .tid = 7, .name = name, .corr = corr,
						   .a0 = CPROF_NO_ID, .stream = CPROF_NO_ID, .ret = ret, .outer = 1,
						   .launch = (uint8_t)launch, .graph = graph };
	return corr;
}

/* n kernels of dur from s that CUPTI correlates with the call corr (a graph replay's kernels share its id) */
static void kernels(int64_t corr, uint64_t s, uint64_t dur, int n, int graph)
{
	ck_assert_uint_lt(c.next, 64);
	/* CUPTI's correlation id is the call's own + 1000, joined back through the external id record */
	c.ext[c.next++] = (struct cprof_ext){ .proc = 1, .corr = corr + 1000, .ext = corr };
	for (int i = 0; i < n; i++) {
		ck_assert_uint_lt(c.nops, 96);
		c.ops[c.nops] = (struct cprof_op){ .start = s + (uint64_t)i * dur, .end = s + (uint64_t)(i + 1) * dur, .proc = 1,
						   .name = S_KERNEL, .corr = corr + 1000, .kname = 0, .kind = CPROF_OP_KERNEL,
						   .via = 1, .hooked = 1, .graph = (uint8_t)graph, .stream = 7,
						   .row = (uint32_t)c.nops };
		c.nops++;
	}
}

static void range(int64_t text, uint64_t s, uint64_t e, int lookup)
{
	ck_assert_uint_lt(c.ntorch, 32);
	c.torch[c.ntorch++] = (struct cprof_torch_range){ .start = s, .end = e, .proc = 1, .tid = 7, .text = text,
							  .lookup = (uint8_t)lookup };
}

/* the finding with this id, NULL when it did not fire */
static const struct cprof_finding *finding(const char *id)
{
	teardown(); /* a test may ask twice: the last call's findings and the model's lookups go first */
	ck_assert_int_eq(cprof_model_from_arrays(&c.m, c.ops, c.nops, c.calls, c.ncalls, NULL, 0, 1), 0);
	c.m.strings = strings;
	c.m.nstrings = sizeof(strings) / sizeof(strings[0]);
	c.m.ext = c.ext; /* built in (proc, corr) order */
	c.m.next = c.next;
	c.m.torch = c.torch; /* built by start */
	c.m.ntorch = c.ntorch;
	c.v.run_start = c.ncalls ? c.m.calls[0].start : 0;
	c.v.run_end = c.nops ? c.m.ops[c.nops - 1].end : 0;
	c.v.gpu_span_start = c.nops ? c.m.ops[0].start : 0;
	c.nf = cprof_findings(&c.m, 0, &c.v, &c.f);
	ck_assert_int_ge(c.nf, 0);
	for (int i = 0; i < c.nf; i++)
		if (!strcmp(c.f[i].id, id))
			return &c.f[i];
	return NULL;
}

/* 6 eager launches of 10 us, a capture and an instantiation, then replays of 5 us running 3 kernels each */
static void graph_run(int replays, int failed)
{
	uint64_t t = 1 * MS;
	int i;

	for (i = 0; i < 6; i++, t += 50 * US)
		kernels(call(S_LAUNCH, t, t + 10 * US, 1, CPROF_GRAPH_NONE, 0), t + 20 * US, 2 * US, 1, 0);
	call(S_END_CAPTURE, t, t + 30 * US, 0, CPROF_GRAPH_CAPTURED, 0);
	t += 100 * US;
	call(S_INSTANTIATE, t, t + 40 * US, 0, CPROF_GRAPH_INSTANTIATED, 0);
	t += 100 * US;
	for (i = 0; i < replays; i++, t += 50 * US)
		kernels(call(S_GRAPH_LAUNCH, t, t + 5 * US, 1, CPROF_GRAPH_REPLAY, 0), t + 10 * US, 2 * US, 3, 1);
	/* a replay CUDA refused: no kernels, not a replay */
	for (i = 0; i < failed; i++, t += 50 * US)
		call(S_GRAPH_LAUNCH, t, t + 5 * US, 1, CPROF_GRAPH_REPLAY, 900);
}

START_TEST(test_findings_compiled_graphs_fire)
{
	const struct cprof_finding *f;

	graph_run(4, 1);
	f = finding("cuda-graphs");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->severity, "info");
	ck_assert_str_eq(f->evidence, "1 graphs captured, 1 instantiated, 4 replays; 12 kernels ran in graphs (3 per "
				      "replay); a replay (median) cost the host 5000 ns against 30.000 us for launching "
				      "its kernels one by one");
}
END_TEST

START_TEST(test_findings_compiled_graphs_capture_only)
{
	const struct cprof_finding *f;

	graph_run(0, 0); /* captured and instantiated, never replayed */
	f = finding("cuda-graphs");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->evidence, "1 graphs captured, 1 instantiated, 0 replays");
}
END_TEST

START_TEST(test_findings_compiled_graphs_silent)
{
	uint64_t t = 1 * MS;

	for (int i = 0; i < 6; i++, t += 50 * US)
		kernels(call(S_LAUNCH, t, t + 10 * US, 1, CPROF_GRAPH_NONE, 0), t + 20 * US, 2 * US, 1, 0);
	ck_assert_ptr_null(finding("cuda-graphs"));
}
END_TEST

/* calls of one compiled region: each a 4 us cache lookup, then the region of 50 us with one 10 us launch in it
 * whose kernel runs kernel_ns; text: the region's name per call */
static void compiled_calls(int n, uint64_t kernel_ns, const int64_t *text)
{
	uint64_t t = 1 * MS;

	for (int i = 0; i < n; i++, t += 200 * US) {
		range(S_LOOKUP, t, t + 4 * US, 1);
		range(text ? text[i] : S_REGION0, t + 5 * US, t + 55 * US, 0);
		kernels(call(S_LAUNCH, t + 20 * US, t + 30 * US, 1, CPROF_GRAPH_NONE, 0), t + 40 * US, kernel_ns, 1, 0);
	}
}

START_TEST(test_findings_compiled_torch_compile_host_cost_warn)
{
	const struct cprof_finding *f;

	compiled_calls(4, 2 * US, NULL);
	f = finding("torch-compile-host-cost");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->severity, "warn");
	/* the first call compiles: the medians are over the 3 after it */
	ck_assert_str_eq(f->evidence, "4 calls of 1 compiled regions, 3 after each region's first; per call (median): "
				      "Dynamo cache lookup 4000 ns + compiled region 50.000 us = 54.000 us on the host, of "
				      "which 10.000 us in CUDA calls; 1 kernels per call, 2000 ns on the GPU");
	ck_assert_ptr_nonnull(strstr(f->message, "is 27x the GPU time of the kernels it runs"));
	ck_assert_ptr_null(finding("torch-compile-recompiles"));
}
END_TEST

START_TEST(test_findings_compiled_torch_compile_host_cost_info)
{
	const struct cprof_finding *f;

	compiled_calls(4, 200 * US, NULL); /* kernels longer than the host's part */
	f = finding("torch-compile-host-cost");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->severity, "info");
	ck_assert_ptr_nonnull(strstr(f->evidence, "1 kernels per call, 200.000 us on the GPU"));
}
END_TEST

START_TEST(test_findings_compiled_torch_compile_recompiles)
{
	static const int64_t text[] = { S_REGION0, S_REGION0, S_REGION1, S_REGION0, S_REGION1 };
	const struct cprof_finding *f;

	compiled_calls(5, 2 * US, text);
	f = finding("torch-compile-recompiles");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->evidence, "1 recompilations: Torch-Compiled Region 0/1");
	/* 0/0's first and 0/1's first compile: 3 calls left */
	ck_assert_ptr_nonnull(strstr(finding("torch-compile-host-cost")->evidence,
				     "5 calls of 2 compiled regions, 3 after each region's first"));
}
END_TEST

START_TEST(test_findings_compiled_torch_compile_silent)
{
	const struct cprof_finding *f;

	compiled_calls(1, 2 * US, NULL); /* one call: it compiled, no steady call to measure */
	ck_assert_ptr_null(finding("torch-compile-host-cost"));
	ck_assert_ptr_null(finding("torch-compile-recompiles"));
	teardown();
	setup();
	graph_run(2, 0); /* no torch.compile ranges at all */
	f = finding("torch-compile-host-cost");
	ck_assert_ptr_null(f);
}
END_TEST

Suite *findings_compiled_suite(void)
{
	Suite *s = suite_create("findings_compiled");
	TCase *tc = tcase_create("rules");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_findings_compiled_graphs_fire);
	tcase_add_test(tc, test_findings_compiled_graphs_capture_only);
	tcase_add_test(tc, test_findings_compiled_graphs_silent);
	tcase_add_test(tc, test_findings_compiled_torch_compile_host_cost_warn);
	tcase_add_test(tc, test_findings_compiled_torch_compile_host_cost_info);
	tcase_add_test(tc, test_findings_compiled_torch_compile_recompiles);
	tcase_add_test(tc, test_findings_compiled_torch_compile_silent);
	suite_add_tcase(s, tc);
	return s;
}
