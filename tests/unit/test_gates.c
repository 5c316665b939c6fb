/* Unit tests of the CI gate and diff (issue 30): conditions, ranked changes, changes that fit, XML and Markdown
 * escaping, --sort, and names off a terminal. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/cprof.h"
#include "report/model/gates.h"
#include "report/model/report.h"
#include "report/render/check.h"
#include "report/term.h"
#include "common/textsafe.h"
#include "tests/unit/tests.h"

static char *written(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	fn(f, s);
	fclose(f);
	return buf;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cprof_kstat *)a)->name, ((const struct cprof_kstat *)b)->name);
}

/* a summary of kernels and calls: {name, api, count, ns}, sorted by name as cprof_summary_load leaves it */
static void fake(struct cprof_summary *s, const struct cprof_kstat *k, size_t n, const char *verdict, double busy)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->names = calloc(n, sizeof(*k));
	ck_assert_ptr_nonnull(s->names);
	for (i = 0; i < n; i++) {
		s->names[i] = k[i];
		s->names[i].name = strdup(k[i].name);
		if (!k[i].api) {
			s->kernel_count += k[i].count;
			s->kernel_ns += k[i].total_ns;
		}
	}
	s->n = n;
	qsort(s->names, n, sizeof(*k), by_name);
	snprintf(s->v.verdict, sizeof(s->v.verdict), "%s", verdict);
	s->v.busy_pct = busy;
}

static void unfake(struct cprof_summary *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->names[i].name);
	free(s->names);
}

START_TEST(test_gates_change_fits)
{
	char b[32];

	cprof_fmt_change(b, sizeof(b), 100, 180);
	ck_assert_str_eq(b, "+80.0%");
	cprof_fmt_change(b, sizeof(b), 100, 90);
	ck_assert_str_eq(b, "-10.0%");
	cprof_fmt_change(b, sizeof(b), 100, 1100);
	ck_assert_str_eq(b, "+1000.0%");
	cprof_fmt_change(b, sizeof(b), 100, 1230);
	ck_assert_str_eq(b, "x12.3");
	/* the case of the issue: +3906202.7% */
	cprof_fmt_change(b, sizeof(b), 10, 390630.27);
	ck_assert_str_eq(b, "x39063");
	ck_assert_int_le(strlen(b), 8);
	cprof_fmt_change(b, sizeof(b), 0, 5);
	ck_assert_str_eq(b, "new");
	cprof_fmt_change(b, sizeof(b), 5, 0);
	ck_assert_str_eq(b, "gone");
	ck_assert(isnan(cprof_change_pct(0, 5)));
	ck_assert(fabs(cprof_change_pct(50, 90) - 80) < 1e-9);
}
END_TEST

START_TEST(test_gates_conditions)
{
	static const struct cprof_kstat old_k[] = {
		{ "gemm", 0, 50, 1000 }, { "tiny", 0, 5, 5 }, { "cudaLaunchKernel", 1, 55, 400 },
	};
	static const struct cprof_kstat new_k[] = {
		{ "gemm", 0, 90, 1800 }, { "tiny", 0, 500, 500 }, { "cudaLaunchKernel", 1, 590, 4000 },
	};
	struct cprof_summary old, now;
	struct cprof_gate_opts o = { "compute-bound", 50, 10 };
	struct cprof_gate *g = NULL;
	size_t n, i;
	int failed;

	fake(&old, old_k, 3, "overhead-bound", 30);
	fake(&now, new_k, 3, "overhead-bound", 40);
	failed = cprof_gates_build(&now, &old, &o, &g, &n);
	/* verdict, idle (60% > 50%), kernel time, launches, gemm; "tiny" is under 1% of the baseline: no gate */
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(failed, 5);
	ck_assert_str_eq(g[0].id, "verdict");
	ck_assert_str_eq(g[0].value_text, "overhead-bound");
	ck_assert_str_eq(g[1].id, "gpu_idle");
	ck_assert(fabs(g[1].value - 60) < 1e-9 && g[1].limit == 50);
	ck_assert_str_eq(g[3].id, "kernel_launches");
	ck_assert(g[3].value == 590 && g[3].baseline == 55 && fabs(g[3].limit - 60.5) < 1e-9);
	ck_assert_str_eq(g[3].detail, "590 vs baseline 55 (+972.7%, allowed +10.0%)");
	ck_assert_str_eq(g[4].id, "kernel");
	ck_assert_str_eq(g[4].name, "gemm");
	for (i = 0; i < n; i++)
		ck_assert(g[i].failed);
	free(g);
	/* within the limits: nothing fails; against itself at 0%: nothing fails */
	o.expect = "overhead-bound";
	o.max_idle = 70;
	o.max_reg = 10000;
	ck_assert_int_eq(cprof_gates_build(&now, &old, &o, &g, &n), 0);
	free(g);
	o.max_reg = 0;
	ck_assert_int_eq(cprof_gates_build(&now, &now, &o, &g, &n), 0);
	free(g);
	/* no baseline: only the conditions asked for */
	ck_assert_int_eq(cprof_gates_build(&now, NULL, &(struct cprof_gate_opts){ NULL, -1, 10 }, &g, &n), 0);
	ck_assert_int_eq(n, 0);
	free(g);
	unfake(&old);
	unfake(&now);
}
END_TEST

START_TEST(test_gates_changes_ranked)
{
	static const struct cprof_kstat old_k[] = {
		{ "cudaDeviceSynchronize", 1, 1, 1000 }, { "cudaMemcpy", 1, 4, 100 }, { "k1", 0, 10, 100 },
		{ "k2", 0, 10, 100 }, { "same", 0, 3, 30 },
	};
	static const struct cprof_kstat new_k[] = {
		{ "cudaDeviceSynchronize", 1, 1, 90000 }, { "cudaMemcpy", 1, 4, 5000 }, { "k1", 0, 10, 150 },
		{ "k2", 0, 10, 900 }, { "k3", 0, 1, 10 }, { "same", 0, 3, 30 },
	};
	struct cprof_summary old, now;
	struct cprof_change *c = NULL;
	size_t n;

	fake(&old, old_k, 5, "mixed", 50);
	fake(&now, new_k, 6, "mixed", 50);
	ck_assert_int_eq(cprof_changes_build(&old, &now, &c, &n), 0);
	/* unchanged rows are left out; kernels by |change in GPU time|, calls by host time, the sync wait last */
	ck_assert_int_eq(n, 5);
	ck_assert_str_eq(c[0].name, "k2");
	ck_assert_str_eq(c[1].name, "k1");
	ck_assert_str_eq(c[2].name, "k3");
	ck_assert(c[2].old_ns == 0 && c[2].new_n == 1);
	ck_assert_str_eq(c[3].name, "cudaMemcpy");
	ck_assert_str_eq(c[4].name, "cudaDeviceSynchronize");
	free(c);
	unfake(&old);
	unfake(&now);
}
END_TEST

START_TEST(test_check_xml_escape)
{
	char *s = written(cprof_xml_fput, "a<b>&\"'\x1b[31m\x01\xff\t\nz\xc2\x85\xc3\xa9");

	ck_assert_str_eq(s, "a&lt;b&gt;&amp;&quot;&apos;\\x1B[31m\\x01\\xFF&#9;&#10;z\\u0085\xc3\xa9");
	free(s);
}
END_TEST

START_TEST(test_check_md_escape)
{
	char *s = written(cprof_md_fput, "a|b*c_d`e[f](g)<h>&~\\\x1b");

	/* the backslash doubled as text (\\), then each of those and the escape's own escaped for Markdown */
	ck_assert_str_eq(s, "a\\|b\\*c\\_d\\`e\\[f\\](g)&lt;h&gt;&amp;\\~\\\\\\\\\\\\x1b");
	free(s);
}
END_TEST

/* a path in a Markdown heading's code span: nothing escaped there but controls (a code span shows backslashes and
 * entities as they are), fenced longer than any run of backticks in it */
START_TEST(test_check_md_code_span)
{
	char *s = written(cprof_md_code_fput, "run<1>&a\\b.db");

	ck_assert_str_eq(s, "`run<1>&a\\\\b.db`");
	free(s);
	s = written(cprof_md_code_fput, "a``b\x1b");
	ck_assert_str_eq(s, "```a``b\\x1b```");
	free(s);
	s = written(cprof_md_code_fput, "`x");
	ck_assert_str_eq(s, "`` `x ``");
	free(s);
}
END_TEST

START_TEST(test_term_name_off_tty)
{
	static const char name[] = "void gemm<float, 128, 64, cutlass::arch::Sm90, cutlass::layout::RowMajor>(Params const&, float*)";
	char a[96], b[96];
	const char *got;

	/* off a terminal (the unit runner's stdout is a pipe or a file): exactly as cprof_shorten made it */
	got = cprof_term_name(name, 93, a, sizeof(a));
	cprof_shorten(name, b, sizeof(b));
	ck_assert_str_eq(got, b);
}
END_TEST

/* a long name cut after its head: never inside a folded "<...>" ("vectorized<......" was shown, 2026-12-06) */
START_TEST(test_demangle_shorten_cut_whole)
{
	static const char name[] = "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, "
				   "float, false>(float const*, float const*)";
	char b[128];

	cprof_shorten(name, b, sizeof(b));
	ck_assert_ptr_null(strstr(b, "...."));
	ck_assert_str_eq(b, "void at::native::(...)::layer_norm_grad_input_kernel_vectorized...");
}
END_TEST

/* cut in the middle to the width asked, a mark where, UTF-8 sequences whole; as it is when it fits */
START_TEST(test_term_fit_middle)
{
	char b[128];

	snprintf(b, sizeof(b), "%s", "short");
	cprof_fit(b, sizeof(b), 60);
	ck_assert_str_eq(b, "short");
	snprintf(b, sizeof(b), "%s", "abcdefghijklmnopqrstuvwxyz0123456789");
	cprof_fit(b, sizeof(b), 20);
	ck_assert_uint_le(strlen(b), 20);
	ck_assert_str_eq(b, "abcdefghijk...456789");
	/* a UTF-8 sequence is one column */
	snprintf(b, sizeof(b), "%s", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9xxxxxxxxxxxxxxxx");
	cprof_fit(b, sizeof(b), 12);
	ck_assert_uint_eq(cprof_text_cols(b), 12);
	ck_assert_str_eq(b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...xxx");
}
END_TEST

/* the columns counted are those of the escaped text the table prints: an ESC takes 4 (\x1b), a backslash 2; the
 * cut falls between units, so no escape is split (the raw bytes used to be counted: such a name overran) */
START_TEST(test_term_fit_escaped_columns)
{
	char b[128], shown[512];

	snprintf(b, sizeof(b), "%s", "k\x1b[2Jname\\with\\backslashes_and_a_long_tail_0123456789");
	cprof_fit(b, sizeof(b), 30);
	cprof_text_safe(shown, sizeof(shown), b);
	ck_assert_uint_eq(strlen(shown), 30);
	ck_assert_str_eq(shown, "k\\x1b[2Jname\\\\with...123456789");
	/* "..." longer than the one byte it stands for: never past the buffer */
	memset(b, 0x1b, 11);
	b[11] = '\0';
	cprof_fit(b, 12, 10);
	ck_assert_uint_le(strlen(b), 11);
	ck_assert_uint_le(cprof_text_cols(b), 10);
	ck_assert_ptr_nonnull(strstr(b, "..."));
}
END_TEST

START_TEST(test_demangle_shown_names_distinct)
{
	static const char *const names[] = {
		"void cutlass_like::device_gemm::gemm_tensorop_kernel_with_a_long_name<float, 128, 64>(float const*, int)",
		"void cutlass_like::device_gemm::gemm_tensorop_kernel_with_a_long_name<double, 128, 64>(double const*, int)",
		/* overloads: the same template arguments, other parameters */
		"void cutlass_like::device_gemm::gemm_tensorop_kernel_with_a_long_name<half, 128, 64>(half const*, int)",
		"void cutlass_like::device_gemm::gemm_tensorop_kernel_with_a_long_name<half, 128, 64>(half const*, long)",
		"void other_kernel_with_a_name_long_enough_to_be_folded_by_the_table<float>(float*, float*, int)",
		"short_kernel",
		"short_kernel",
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	unsigned char lv[N];
	char a[512], b[512];
	size_t i, j;

	ck_assert_int_eq(cprof_shown_levels(names, N, lv), 0);
	ck_assert_int_eq(lv[0], 1);
	ck_assert_int_eq(lv[1], 1);
	ck_assert_int_eq(lv[2], 2);
	ck_assert_int_eq(lv[3], 2);
	/* alone in its shortened form, and one name twice: as before */
	ck_assert_int_eq(lv[4], 0);
	ck_assert_int_eq(lv[5], 0);
	ck_assert_int_eq(lv[6], 0);
	ck_assert_str_eq(cprof_term_name_at(names[0], lv[0], 93, a, sizeof(a)),
			 "void cutlass_like::device_gemm::gemm_tensorop_kernel_with_a_long_name<float, 128, 64>(...)");
	/* no two different names are shown alike */
	for (i = 0; i < N; i++)
		for (j = i + 1; j < N; j++)
			if (strcmp(names[i], names[j]))
				ck_assert_str_ne(cprof_term_name_at(names[i], lv[i], 93, a, sizeof(a)),
						 cprof_term_name_at(names[j], lv[j], 93, b, sizeof(b)));
	/* too long for the buffer: whole */
	ck_assert_ptr_eq(cprof_term_name_at(names[0], 1, 93, a, 20), names[0]);
	ck_assert_int_eq(cprof_shorten_targs("k<(int)3>(a, (b))::x", a, sizeof(a)), 0);
	ck_assert_str_eq(a, "k<(int)3>(...)::x");
}
END_TEST

/* 10,000 template twins (a report's --top 0): each numbered, #1 .. #10000 in the order given, the lone name not. The
 * numbering is one sort (a walk of the names before each took 23 s of a report: a review, 2026-12-06); its time is
 * not asserted here (budgets live in make bench, not in timed unit tests) */
START_TEST(test_demangle_twin_numbers_many)
{
	enum { N = 10000 };
	const char **names = calloc(N + 1, sizeof(*names));
	unsigned *num = calloc(N + 1, sizeof(*num));
	char *s;

	ck_assert_ptr_nonnull(names);
	ck_assert_ptr_nonnull(num);
	for (int i = 0; i < N; i++) {
		ck_assert_int_ge(asprintf(&s, "void at::native::vectorized_elementwise_kernel<4, at::native::Functor<T%d>, "
					  "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, "
					  "1ul>)", i), 0);
		names[i] = s;
	}
	names[N] = "lone_kernel(int)";
	ck_assert_int_eq(cprof_twin_numbers(names, N + 1, num), 0);
	for (int i = 0; i < N; i++)
		ck_assert_uint_eq(num[i], (unsigned)i + 1);
	ck_assert_uint_eq(num[N], 0);
	for (int i = 0; i < N; i++)
		free((char *)names[i]);
	free(names);
	free(num);
}
END_TEST

/* a name longer than the cell's work buffer (a 6 KiB template instantiation) ends with its own tail, its last
 * UTF-8 characters whole: the buffer held only its first 4 KiB, cut inside a sequence that showed as \xNN */
START_TEST(test_term_cell_long_name_keeps_its_tail)
{
	static char name[6001];
	char out[512];
	size_t i;

	name[0] = 'k';
	for (i = 1; i + 2 <= 5990; i += 2)
		memcpy(name + i, "\xc3\xa9", 2);
	snprintf(name + i, sizeof(name) - i, "%s", "_the_end");
	cprof_cell(out, sizeof(out), name, NULL, 60);
	ck_assert_ptr_nonnull(strstr(out, "..."));
	ck_assert_ptr_null(strstr(out, "\\x"));
	ck_assert_ptr_nonnull(strstr(out, "\xc3\xa9_the_end"));
	ck_assert_int_eq(strncmp(out, "k\xc3\xa9", 3), 0);
	/* the same cell whatever the length of the middle cut away */
	{
		char out2[512];

		memmove(name + 1001, name + 3001, strlen(name + 3001) + 1);
		cprof_cell(out2, sizeof(out2), name, NULL, 60);
		ck_assert_str_eq(out, out2);
	}
	/* a run of continuation bytes is no sequence: shown escaped, the head's "k" kept (a walk to a sequence's edge
	 * without bound emptied the head) */
	name[0] = 'k';
	memset(name + 1, 0x80, 5000);
	snprintf(name + 5001, sizeof(name) - 5001, "%s", "_end");
	cprof_cell(out, sizeof(out), name, NULL, 60);
	ck_assert_int_eq(strncmp(out, "k\\x80", 5), 0);
	ck_assert_ptr_nonnull(strstr(out, "\\x80_end"));
}
END_TEST

/* The Self table's name cell: escaped, then cut, so a name of control bytes keeps its tail and its twin number (it was
 * cut after escaping by printf's %-60.60s: "k\x01...\x0", tail and " #2" gone), never inside an escape or a UTF-8
 * sequence, and padded to 60 columns, not 60 bytes (a review, 2026-12-06) */
START_TEST(test_term_cell_escaped_then_cut)
{
	char name[256], out[8192];
	size_t cols = 0;

	memset(name, 1, sizeof(name));
	name[0] = 'k';
	snprintf(name + 31, sizeof(name) - 31, "%s", "tail_distinct_A");
	cprof_cell(out, sizeof(out), name, " #2", 60);
	ck_assert_ptr_nonnull(strstr(out, "..."));
	ck_assert_ptr_nonnull(strstr(out, "\\x01tail_distinct_A #2"));
	ck_assert_ptr_nonnull(strstr(out, "\\x01..."));
	ck_assert_uint_eq(strlen(out), 60);
	/* 40 two-byte characters and 11 more: 51 columns, whole, padded with 9 spaces */
	snprintf(name, sizeof(name), "%s", "kernel_");
	for (int i = 0; i < 40; i++)
		strcat(name, "\xc3\xa9");
	strcat(name, "_end");
	cprof_cell(out, sizeof(out), name, "", 60);
	ck_assert_int_eq(strncmp(out, name, strlen(name)), 0);
	for (const unsigned char *p = (const unsigned char *)out; *p; p++)
		cols += (*p & 0xc0) != 0x80;
	ck_assert_uint_eq(cols, 60);
	/* longer: cut by columns, each sequence whole */
	for (int i = 0; i < 30; i++)
		strcat(name, "\xc3\xa9");
	cprof_cell(out, sizeof(out), name, " #1", 60);
	cols = 0;
	for (const unsigned char *p = (const unsigned char *)out; *p; p++)
		cols += (*p & 0xc0) != 0x80;
	ck_assert_uint_eq(cols, 60);
	ck_assert_ptr_nonnull(strstr(out, "\xc3\xa9...\xc3\xa9"));
	ck_assert_ptr_nonnull(strstr(out, "\xc3\xa9 #1"));
	/* backslashes escaped (\\), and a cut never between the two of one */
	memset(name, '\\', 100);
	name[100] = '\0';
	cprof_cell(out, sizeof(out), name, "", 60);
	ck_assert_ptr_nonnull(strstr(out, "..."));
	ck_assert_uint_eq((size_t)(strstr(out, "...") - out) % 2, 0);
	ck_assert_uint_eq(strspn(strstr(out, "...") + 3, "\\") % 2, 0);
}
END_TEST

START_TEST(test_report_sort_rows)
{
	struct row rows[3] = {
		{ .name = "b", .st = { .n = 5, .total = 100, .avg = 20, .max = 30 } },
		{ .name = "a", .st = { .n = 50, .total = 50, .avg = 1, .max = 90 } },
		{ .name = "c", .st = { .n = 1, .total = 10, .avg = 10, .max = 10 } },
	};
	struct table t = { rows, 3, 3, 160 };

	ck_assert_int_eq(report_sort_key("calls"), REPORT_SORT_CALLS);
	ck_assert_int_eq(report_sort_key("instances"), REPORT_SORT_CALLS);
	ck_assert_int_eq(report_sort_key("fast"), -1);
	report_table_sort(&t, REPORT_SORT_CALLS);
	ck_assert_str_eq(rows[0].name, "a");
	ck_assert_str_eq(rows[2].name, "c");
	report_table_sort(&t, REPORT_SORT_AVG);
	ck_assert_str_eq(rows[0].name, "b");
	ck_assert_str_eq(rows[1].name, "c");
	report_table_sort(&t, REPORT_SORT_NAME);
	ck_assert_str_eq(rows[0].name, "a");
	ck_assert_str_eq(rows[1].name, "b");
}
END_TEST

Suite *gates_suite(void)
{
	Suite *s = suite_create("gates");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_gates_change_fits);
	tcase_add_test(tc, test_gates_conditions);
	tcase_add_test(tc, test_gates_changes_ranked);
	tcase_add_test(tc, test_check_xml_escape);
	tcase_add_test(tc, test_check_md_escape);
	tcase_add_test(tc, test_check_md_code_span);
	tcase_add_test(tc, test_term_name_off_tty);
	tcase_add_test(tc, test_demangle_shown_names_distinct);
	tcase_add_test(tc, test_demangle_shorten_cut_whole);
	tcase_add_test(tc, test_term_fit_middle);
	tcase_add_test(tc, test_term_fit_escaped_columns);
	tcase_add_test(tc, test_report_sort_rows);
	tcase_add_test(tc, test_demangle_twin_numbers_many);
	tcase_add_test(tc, test_term_cell_escaped_then_cut);
	tcase_add_test(tc, test_term_cell_long_name_keeps_its_tail);
	suite_add_tcase(s, tc);
	return s;
}
