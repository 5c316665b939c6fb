/* Unit tests of the model's sorts (stable radix by start, by a key anywhere, of indices; signed keys, doubles; qsort after an in-order check) and of the joins in memory of the stack attribution, the NVTX range table and the op ranges. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/schema.h"
#include "common/wire.h"
#include "report/model/model.h"
#include "report/model/ops-nvtx.h"
#include "report/model/ranges.h"
#include "report/model/stacks.h"
#include "tests/unit/tests.h"

struct big {
	uint64_t start;
	uint32_t seq;
	char pad[60];
};

/* ties keep the order given, big elements (sorted by index and permuted) and small ones alike */
START_TEST(test_radix_stable_by_start)
{
	enum { N = 5000 };
	struct big *b = malloc(N * sizeof(*b));
	uint64_t (*s)[2] = malloc(N * sizeof(*s));
	uint64_t x = 88172645463325252ull;
	size_t i;

	for (i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b[i].start = 1796000000000000000ull + (x % 97) * 1000003ull; /* many ties, a wide span */
		b[i].seq = (uint32_t)i;
		s[i][0] = b[i].start;
		s[i][1] = i;
	}
	ck_assert_int_eq(cprof_radix_sort(b, N, sizeof(*b)), 0);
	ck_assert_int_eq(cprof_radix_sort(s, N, sizeof(*s)), 0);
	for (i = 1; i < N; i++) {
		ck_assert(b[i - 1].start < b[i].start || (b[i - 1].start == b[i].start && b[i - 1].seq < b[i].seq));
		ck_assert(s[i - 1][0] < s[i][0] || (s[i - 1][0] == s[i][0] && s[i - 1][1] < s[i][1]));
	}
	free(b);
	free(s);
}
END_TEST

START_TEST(test_radix_keyed_and_doubles)
{
	struct cprof_keyed kd[] = { { 5, 30 }, { -2, 7 }, { 5, -1 }, { 0, 0 }, { -2, 3 }, { INT64_MAX, 1 }, { INT64_MIN, 2 } };
	double d[] = { 3.5, 0, 1e12, 2.25, 0.5 }, neg[] = { 1, -3, 2, -0.0 };
	size_t n = sizeof(kd) / sizeof(kd[0]), i;

	ck_assert_int_eq(cprof_radix_sort_keyed(kd, n), 0);
	for (i = 1; i < n; i++)
		ck_assert(kd[i - 1].key < kd[i].key || (kd[i - 1].key == kd[i].key && kd[i - 1].d <= kd[i].d));
	ck_assert_int_eq(kd[0].key, INT64_MIN);
	ck_assert_int_eq(kd[1].d, 3);
	ck_assert_int_eq(kd[4].d, -1);
	ck_assert_int_eq(cprof_radix_sort_doubles(d, 5), 0);
	ck_assert(d[0] == 0 && d[1] == 0.5 && d[2] == 2.25 && d[3] == 3.5 && d[4] == 1e12);
	/* negatives go through the comparison sort */
	ck_assert_int_eq(cprof_radix_sort_doubles(neg, 4), 0);
	ck_assert(neg[0] == -3 && neg[1] == 0 && neg[2] == 1 && neg[3] == 2);
}
END_TEST

struct rec {
	int64_t name, proc;
	size_t seq;
};

static int64_t rec_proc(const void *ctx, uint32_t i)
{
	return ((const struct rec *)ctx)[i].proc;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_seq_calls;

static int cmp_seq(const void *a, const void *b)
{
	cmp_seq_calls++;
	return cmp_rec(a, b);
}

/* two stable sorts by keys anywhere in the element (minor, then major) give the comparison sort's order,
 * negative keys first; indices by a key; an array in order already costs one pass of the comparison */
START_TEST(test_radix_at_ix_and_sorted)
{
	enum { N = 3000 };
	struct rec *r = malloc(N * sizeof(*r)), *q = malloc(N * sizeof(*q));
	uint32_t *ix = malloc(N * sizeof(*ix));
	uint64_t x = 88172645463325252ull;
	size_t i;

	for (i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		r[i] = (struct rec){ (int64_t)(x % 7) - 3, (int64_t)(x % 5) * 1000000007ll - 2, i };
		ix[i] = (uint32_t)(N - 1 - i);
	}
	memcpy(q, r, N * sizeof(*r));
	ck_assert_int_eq(cprof_radix_sort_ix(ix, N, rec_proc, r), 0);
	for (i = 1; i < N; i++)
		ck_assert(r[ix[i - 1]].proc < r[ix[i]].proc || (r[ix[i - 1]].proc == r[ix[i]].proc && ix[i - 1] > ix[i]));
	ck_assert_int_eq(cprof_radix_sort_at(r, N, sizeof(*r), offsetof(struct rec, proc)), 0);
	ck_assert_int_eq(cprof_radix_sort_at(r, N, sizeof(*r), offsetof(struct rec, name)), 0);
	qsort(q, N, sizeof(*q), cmp_rec);
	ck_assert(!memcmp(r, q, N * sizeof(*r)));
	ck_assert_int_eq(r[0].name, -3);
	cmp_seq_calls = 0;
	cprof_sort(q, N, sizeof(*q), cmp_seq);
	ck_assert_int_eq(cmp_seq_calls, N - 1);
	ck_assert(!memcmp(r, q, N * sizeof(*r)));
	/* out of order: sorted as qsort sorts it */
	q[0] = r[N - 1];
	q[N - 1] = r[0];
	cprof_sort(q, N, sizeof(*q), cmp_seq);
	ck_assert(!memcmp(r, q, N * sizeof(*r)));
	free(r);
	free(q);
	free(ix);
}
END_TEST

struct timed {
	uint64_t start;
	int64_t proc, tid;
};

static const struct timed *timed_sorted;

static int64_t timed_proc(const void *ctx, uint32_t i)
{
	return ((const struct timed *)ctx)[i].proc;
}

static int64_t timed_tid(const void *ctx, uint32_t i)
{
	return ((const struct timed *)ctx)[i].tid;
}

/* the comparators the findings sorted their indices with: (proc, tid, start, index) */
static int cmp_timed_ix(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct timed *x = &timed_sorted[i], *y = &timed_sorted[j];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* indices into an array by start, by (major, minor) in radix passes: the comparison sort's order, equal starts
 * included; indices not ascending, or an array not by start, are refused untouched */
START_TEST(test_radix_ix_by)
{
	enum { N = 4000 };
	struct timed *t = malloc(N * sizeof(*t));
	uint32_t *ix = malloc(N * sizeof(*ix)), *q = malloc(N * sizeof(*q));
	uint64_t x = 88172645463325252ull, start = 1000;
	size_t i, n = 0;

	for (i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		start += x % 3; /* ties of start */
		t[i] = (struct timed){ start, (int64_t)(x % 3) - 1, (int64_t)(x >> 8) % 5 - 2 };
		if (x % 4)
			ix[n++] = (uint32_t)i;
	}
	memcpy(q, ix, n * sizeof(*ix));
	timed_sorted = t;
	qsort(q, n, sizeof(*q), cmp_timed_ix);
	ck_assert_int_eq(cprof_radix_sort_ix_by(ix, n, t, sizeof(*t), timed_proc, timed_tid, t), 0);
	ck_assert(!memcmp(ix, q, n * sizeof(*ix)));
	/* sorted already: not ascending, refused as it is */
	ck_assert_int_eq(cprof_radix_sort_ix_by(ix, n, t, sizeof(*t), timed_proc, timed_tid, t), -EINVAL);
	ck_assert(!memcmp(ix, q, n * sizeof(*ix)));
	for (i = 0; i < N; i++)
		ix[i] = (uint32_t)i;
	t[7].start = 0;
	ck_assert_int_eq(cprof_radix_sort_ix_by(ix, N, t, sizeof(*t), timed_proc, timed_tid, t), -EINVAL);
	for (i = 0; i < N; i++)
		ck_assert_uint_eq(ix[i], i);
	free(t);
	free(ix);
	free(q);
}
END_TEST

/* the search from hints finds what a binary search finds, whatever the hints: before, at or past the answer,
 * past the end, with repeated keys, keys absent, and keys before and after all */
START_TEST(test_lower_pk_hint)
{
	enum { N = 1500 };
	struct cprof_pkv *a = malloc(N * sizeof(*a));
	uint64_t x = 88172645463325252ull;
	struct cprof_hint hint = { 0 };
	size_t i, j;

	for (i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a[i] = (struct cprof_pkv){ (int64_t)(i * 3 / N) - 1, (int64_t)(i % 500) * 2 + (int64_t)(x % 2), 0 };
	}
	qsort(a, N, sizeof(*a), cprof_pkv_cmp);
	for (i = 0; i < 20000; i++) {
		int64_t proc, key;
		size_t want;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		proc = (int64_t)(x % 5) - 2;
		key = (int64_t)((x >> 8) % 1010) - 4;
		if (x % 3 == 0)
			for (j = 0; j < CPROF_HINTS; j++)
				hint.at[j] = (x >> (20 + j)) % (N + 10);
		want = cprof_pkv_lower(a, N, proc, key);
		ck_assert_uint_eq(cprof_lower_pk(a, N, sizeof(*a), proc, key, &hint), want);
	}
	hint.at[0] = 7;
	ck_assert_uint_eq(cprof_lower_pk(a, 0, sizeof(*a), 0, 0, &hint), 0);
	free(a);
}
END_TEST

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the median by selection is the sorted array's: odd and even counts, repeats, one value, zeros, a spread
 * past 2^53; a negative value or NaN is refused, an empty array too */
START_TEST(test_median_doubles)
{
	enum { N = 777 };
	double *d = malloc(N * sizeof(*d)), *s = malloc(N * sizeof(*s)), med, neg[2] = { 1, -1 }, nan[2] = { 1, NAN };
	uint64_t x = 88172645463325252ull;
	size_t n, i;

	for (n = 1; n <= N; n += n < 20 ? 1 : 97) {
		for (i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			d[i] = n % 3 == 0 ? (double)(x % 4) : n % 3 == 1 ? (double)(x % 100000) * 1000 : (double)(x >> 1) * 1e3;
		}
		memcpy(s, d, n * sizeof(*d));
		qsort(s, n, sizeof(*s), cmp_dbl);
		ck_assert_int_eq(cprof_median_doubles(d, n, &med), 0);
		ck_assert(med == (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2));
	}
	ck_assert_int_eq(cprof_median_doubles(neg, 2, &med), -EINVAL);
	ck_assert_int_eq(cprof_median_doubles(nan, 2, &med), -EINVAL);
	ck_assert_int_eq(cprof_median_doubles(d, 0, &med), -EINVAL);
	free(d);
	free(s);
}
END_TEST

/* Two calls with stack 1 (call site a.py:1): call 5 made CUPTI ids 50 (kernel 'kb', 100 ns, then 'ka', 3 ns,
 * as a graph replay runs several kernels under one id) and 51 (kernel 'ka', 40 ns; a second
 * external-correlation row for 51 counts it twice, as API_GPU's join does), call 6 a copy (10 ns); call 7 has
 * a stack no table knows. */
START_TEST(test_attr_joins_in_arrays)
{
	static const char *const rows =
		"INSERT INTO PROCESSES(id, pid) VALUES (1, 100);"
		"INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'kb'), (3, 'ka'), (4, 'cudaMemcpyAsync'),"
		" (5, 'a.py'), (6, 'step');"
		"INSERT INTO CPROF_API(processId, tid, start, end, correlationId, nameId, class, nested, stackId) VALUES"
		" (1, 1, 0, 30, 5, 1, 'launch', 0, 1), (1, 1, 40, 45, 6, 4, 'memcpy', 0, 1), (1, 1, 50, 60, 7, 1, 'launch', 0, 9);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES (1, 5, 5, 50), (1, 5, 5, 51), (1, 5, 5, 51),"
		" (1, 5, 6, 60);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(processId, start, end, correlationId, nameId) VALUES"
		" (1, 100, 200, 50, 2), (1, 300, 340, 51, 3), (1, 200, 203, 50, 3);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(processId, start, end, correlationId) VALUES (1, 400, 410, 60);"
		"INSERT INTO CPROF_STACK_FRAMES(processId, stackId, level, kind, fileId, line, funcId) VALUES (1, 1, 0, 'python', 5, 1, 6);";
	struct cprof_attr_table t;
	struct cprof_stacks st;
	sqlite3 *db;
	char *err = NULL;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, cprof_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	if (sqlite3_exec(db, rows, NULL, NULL, &err) != SQLITE_OK)
		ck_abort_msg("fixture: %s", err);
	ck_assert_int_eq(cprof_stacks_load(db, &st), 0);
	ck_assert_uint_ge(st.n, 1);
	ck_assert_int_eq(cprof_attr_build(db, &st, CPROF_BY_CALLSITE, 0, &t), 0);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_uint_eq(t.calls_with_stack, 2);
	ck_assert_uint_eq(t.rows[0].calls, 2);
	ck_assert_uint_eq(t.rows[0].gpu_ops, 5);           /* 50 twice, 51 twice, the copy */
	ck_assert(fabs(t.rows[0].gpu_ns - 193) < 1e-9);   /* 100 + 3 + 40 + 40 + 10 */
	ck_assert(fabs(t.rows[0].cpu_ns - 35) < 1e-9);
	cprof_attr_free(&t);
	/* by chain: a row per kernel name the launch ran, each with its own kernels and GPU time (a graph replay
	 * labelled with one of its kernels gave it all of them), the call's host time shared by their count;
	 * the copy launched no kernel */
	ck_assert_int_eq(cprof_attr_build(db, &st, CPROF_BY_CHAIN, 0, &t), 0);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_uint_eq(t.calls_with_stack, 2);
	ck_assert_str_eq(t.rows[0].label, "kb");
	ck_assert_uint_eq(t.rows[0].gpu_ops, 1);
	ck_assert(fabs(t.rows[0].gpu_ns - 100) < 1e-9);
	ck_assert_uint_eq(t.rows[0].calls, 1);
	ck_assert(fabs(t.rows[0].cpu_ns - 30.0 / 4) < 1e-9);
	ck_assert_str_eq(t.rows[1].label, "ka");
	ck_assert_uint_eq(t.rows[1].gpu_ops, 3);
	ck_assert(fabs(t.rows[1].gpu_ns - 83) < 1e-9);
	ck_assert(fabs(t.rows[1].cpu_ns - 30.0 * 3 / 4) < 1e-9);
	cprof_attr_free(&t);
	cprof_stacks_free(&st);
	sqlite3_close(db);
}
END_TEST

/* The NVTX range table from scans and joins in memory: a range nested in a step, an open step measured to
 * the latest of its process's exit and last call, a mark counted, a call on a thread without ranges left out,
 * the GPU time of every external-correlation row of a call (two CUPTI ids, two kernels). */
START_TEST(test_ranges_joins_in_arrays)
{
	static const char *const rows =
		"INSERT INTO PROCESSES(id, pid, endNs) VALUES (1, 100, 1000);"
		"INSERT INTO StringIds VALUES (1, 'step'), (2, 'forward');"
		"INSERT INTO NVTX_EVENTS(id, processId, tid, start, end, eventType, textId, parentId) VALUES"
		" (1, 1, 1, 0, 500, 'range', 1, NULL), (2, 1, 1, 100, 200, 'range', 2, 1), (3, 1, 1, 600, NULL, 'range', 1, NULL),"
		" (4, 1, 1, 650, NULL, 'mark', 2, NULL);"
		"INSERT INTO CPROF_API(processId, tid, start, end, correlationId, nameId, class, nested) VALUES"
		" (1, 1, 150, 160, 5, 1, 'launch', 0), (1, 1, 700, 1200, 6, 1, 'sync', 0), (1, 2, 120, 130, 7, 1, 'launch', 0);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES (1, 5, 5, 50), (1, 5, 5, 51), (1, 5, 7, 52);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(processId, start, end, correlationId, nameId) VALUES"
		" (1, 1000, 1100, 50, 2), (1, 2000, 2030, 51, 2), (1, 3000, 3900, 52, 2);";
	struct cprof_range_table t;
	sqlite3 *db;
	char *err = NULL;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, cprof_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	if (sqlite3_exec(db, rows, NULL, NULL, &err) != SQLITE_OK)
		ck_abort_msg("fixture: %s", err);
	ck_assert_int_eq(cprof_ranges_build(db, 0, &t), 0);
	ck_assert_uint_eq(t.ranges, 3);
	ck_assert_uint_eq(t.open_ranges, 1);
	ck_assert_uint_eq(t.marks, 1);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_str_eq(t.rows[0].path, "step");
	ck_assert_uint_eq(t.rows[0].count, 2);
	ck_assert(fabs(t.rows[0].cpu_ns - (500 + 600)) < 1e-9); /* the open one up to the last call's end, 1200 */
	ck_assert_uint_eq(t.rows[0].calls, 2);
	ck_assert(fabs(t.rows[0].api_ns - (10 + 500)) < 1e-9);
	ck_assert(fabs(t.rows[0].gpu_ns - 130) < 1e-9);
	ck_assert_uint_eq(t.rows[0].gpu_ops, 2);
	ck_assert_str_eq(t.rows[1].path, "step/forward");
	ck_assert_uint_eq(t.rows[1].calls, 1);
	ck_assert(fabs(t.rows[1].gpu_ns - 130) < 1e-9);
	ck_assert(fabs(t.rows[0].self_cpu_ns - (400 + 600)) < 1e-9);
	cprof_ranges_free(&t);
	sqlite3_close(db);
}
END_TEST

/* ATen op ranges and the GPU work of each call from scans and joins in memory: ended op ranges only (an open
 * one, a range of another category left out), by (thread, start, end descending) with ties in table order; a
 * call's GPU work through each external-correlation row, a call whose name is in no string left out */
START_TEST(test_op_ranges_joins_in_arrays)
{
	char rows[2048];
	struct cprof_op_ranges r;
	sqlite3 *db;
	char *err = NULL;

	snprintf(rows, sizeof(rows),
		 "INSERT INTO PROCESSES(id, pid) VALUES (1, 100);"
		 "INSERT INTO StringIds VALUES (1, 'aten::linear'), (2, 'aten::addmm'), (3, 'cudaLaunchKernel');"
		 "INSERT INTO NVTX_EVENTS(id, processId, tid, start, end, eventType, textId, categoryId) VALUES"
		 " (1, 1, 1, 10, 60, 'range', 2, %d), (2, 1, 1, 0, 100, 'range', 1, %d), (3, 1, 1, 10, 90, 'range', 1, %d),"
		 " (4, 1, 1, 5, NULL, 'range', 1, %d), (5, 1, 1, 1, 2, 'range', 1, NULL), (6, 1, 2, 7, 8, 'range', 77, %d);"
		 "INSERT INTO CPROF_API(processId, tid, start, end, correlationId, nameId, class, nested) VALUES"
		 " (1, 1, 20, 30, 5, 3, 'launch', 0), (1, 1, 40, 45, 6, 99, 'launch', 0);"
		 "INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES (1, 5, 5, 50), (1, 5, 5, 51), (1, 5, 6, 52);"
		 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(processId, start, end, correlationId, nameId) VALUES"
		 " (1, 1000, 1040, 50, 2), (1, 2000, 2005, 51, 2), (1, 3000, 3900, 52, 2);",
		 CPROF_NVTX_CATEGORY_TORCH_OP, CPROF_NVTX_CATEGORY_TORCH_OP, CPROF_NVTX_CATEGORY_TORCH_OP,
		 CPROF_NVTX_CATEGORY_TORCH_OP, CPROF_NVTX_CATEGORY_TORCH_OP);
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, cprof_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	if (sqlite3_exec(db, rows, NULL, NULL, &err) != SQLITE_OK)
		ck_abort_msg("fixture: %s", err);
	ck_assert_int_eq(cprof_op_ranges_load(db, 0, &r), 0);
	ck_assert_uint_eq(r.n, 4);
	ck_assert(r.r[0].start == 0 && r.r[0].end == 100);
	ck_assert(r.r[1].start == 10 && r.r[1].end == 90); /* the longer of two at one start first */
	ck_assert(r.r[2].start == 10 && r.r[2].end == 60);
	ck_assert_str_eq(r.r[2].name, "aten::addmm");
	ck_assert_int_eq(r.r[3].tid, 2);
	ck_assert_str_eq(r.r[3].name, "(no message)");
	ck_assert_uint_eq(r.ng, 2);
	ck_assert(r.g[0].at == 20 && r.g[1].at == 20 && r.g[0].ns + r.g[1].ns == 45);
	cprof_op_ranges_free(&r);
	sqlite3_close(db);
}
END_TEST

Suite *radix_attr_suite(void)
{
	Suite *s = suite_create("radix_attr");
	TCase *tc = tcase_create("radix_attr");

	tcase_add_test(tc, test_radix_stable_by_start);
	tcase_add_test(tc, test_radix_keyed_and_doubles);
	tcase_add_test(tc, test_radix_at_ix_and_sorted);
	tcase_add_test(tc, test_radix_ix_by);
	tcase_add_test(tc, test_lower_pk_hint);
	tcase_add_test(tc, test_median_doubles);
	tcase_add_test(tc, test_attr_joins_in_arrays);
	tcase_add_test(tc, test_ranges_joins_in_arrays);
	tcase_add_test(tc, test_op_ranges_joins_in_arrays);
	suite_add_tcase(s, tc);
	return s;
}
