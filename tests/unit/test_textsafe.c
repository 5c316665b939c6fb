/* Unit tests of the hostile-text writers: terminal/log escaping, CSV fields, JSON strings. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/shquote.h"
#include "common/textsafe.h"
#include "tests/unit/tests.h"

/* What fn writes for s, in a malloc'd string. */
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

#define ck_writes(fn, in, want)                          \
	do {                                             \
		char *got_ = written(fn, in);            \
		ck_assert_str_eq(got_, want);            \
		free(got_);                              \
	} while (0)

START_TEST(test_textsafe_controls_escaped)
{
	char buf[128];

	/* ESC ] 0 ; title BEL: sets an xterm's title when printed raw */
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), "a\x1b]0;pwned\x07z"), "a\\x1b]0;pwned\\x07z");
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), "k\nFAIL: x\r\t"), "k\\nFAIL: x\\r\\t");
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), "del\x7f"), "del\\x7f");
	/* C1 CSI as UTF-8, and a lone 0x9b byte (CSI on an 8-bit terminal) */
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), "c1\xc2\x9b" "2J"), "c1\\u009b2J");
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), "raw\x9b"), "raw\\x9b");
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), NULL), "");
	ck_writes(cprof_text_fput, "x\x1b[2Jy\n", "x\\x1b[2Jy\\n");
}
END_TEST

START_TEST(test_textsafe_text_kept)
{
	char buf[128];
	const char *s = "void gemm<float, 128>(float*) \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xc2\xa0";

	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), s), s);
	ck_writes(cprof_text_fput, s, s);
	/* a sequence cut at the end of the string is not UTF-8: each byte escaped, nothing read past the NUL */
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), "e\xe2\x82"), "e\\xe2\\x82");
}
END_TEST

START_TEST(test_textsafe_backslash_escaped)
{
	char buf[64], ctl[64];

	/* the four characters \x1b and an ESC read apart, in text and in CSV */
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), "a\\x1b"), "a\\\\x1b");
	ck_assert_str_eq(cprof_text_safe(ctl, sizeof(ctl), "a\x1b"), "a\\x1b");
	ck_assert_str_ne(buf, ctl);
	ck_writes(cprof_text_fput, "C:\\tmp\\n", "C:\\\\tmp\\\\n");
	ck_writes(cprof_csv_fput, "k\\x07,", "\"k\\\\x07,\"");
	/* never half an escape at a cut */
	ck_assert_str_eq(cprof_text_safe(buf, 4, "ab\\c"), "ab");
}
END_TEST

/* a HELLO's argv (NUL-separated, the last NUL perhaps cut off) as one line a shell reads back */
START_TEST(test_textsafe_sh_join)
{
	static const char args[] = "python\0-c\0print('a b')\0\0x\033y\\\0plain=1,a/b";
	char *s = cprof_sh_join(args, sizeof(args) - 1);

	ck_assert_str_eq(s, "python -c 'print('\\''a b'\\'')' '' $'x\\x1by\\\\' plain=1,a/b");
	free(s);
	s = cprof_sh_join(args, sizeof(args));
	ck_assert_str_eq(s, "python -c 'print('\\''a b'\\'')' '' $'x\\x1by\\\\' plain=1,a/b");
	free(s);
	s = cprof_sh_join("", 0);
	ck_assert_str_eq(s, "");
	free(s);
	{
		/* the last argument without its NUL, at the very end of its buffer: nothing past it is read (ASan) */
		char *exact = malloc(4);

		memcpy(exact, "a\0\xc3\xa9", 4);
		s = cprof_sh_join(exact, 4);
		ck_assert_str_eq(s, "a '\xc3\xa9'");
		free(s);
		memcpy(exact, "a\0b\xc3", 4);
		s = cprof_sh_join(exact, 4);
		ck_assert_str_eq(s, "a $'b\\xc3'");
		free(s);
		free(exact);
	}
}
END_TEST

START_TEST(test_textsafe_truncates_whole_escapes)
{
	char buf[6];

	/* "ab" + "\x1b" needs 6 bytes and a NUL: the escape is left out whole */
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), "ab\x1b" "cd"), "ab");
	ck_assert_str_eq(cprof_text_safe(buf, sizeof(buf), "abcdefgh"), "abcde");
	ck_assert_str_eq(cprof_text_safe(buf, 1, "abc"), "");
}
END_TEST

START_TEST(test_textsafe_log_line_one_line)
{
	int saved = dup(STDERR_FILENO), p[2];
	char got[256];
	ssize_t n;

	ck_assert_int_eq(pipe(p), 0);
	dup2(p[1], STDERR_FILENO);
	cprof_log(CPROF_LOG_ERR, "t", "cannot execute %s: %s", "evil\ncprof: gate PASSED\x1b]0;x\x07", "No such file");
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[1]);
	n = read(p[0], got, sizeof(got) - 1);
	close(p[0]);
	ck_assert_int_gt(n, 0);
	got[n] = '\0';
	ck_assert_str_eq(got, "t: cannot execute evil\\ncprof: gate PASSED\\x1b]0;x\\x07: No such file\n");
}
END_TEST

START_TEST(test_textsafe_path_component)
{
	char a[] = "node1.example.org", b[] = "a/../../etc", c[] = "..", d[] = "x\ny z", e[4] = "";

	ck_assert_str_eq(cprof_path_component(a), "node1.example.org");
	ck_assert_str_eq(cprof_path_component(b), "a_.._.._etc");
	ck_assert_str_eq(cprof_path_component(c), "_.");
	ck_assert_str_eq(cprof_path_component(d), "x_y_z");
	ck_assert_str_eq(cprof_path_component(e), "_");
}
END_TEST

START_TEST(test_textsafe_csv_fields)
{
	ck_writes(cprof_csv_fput, "plain kernel", "plain kernel");
	ck_writes(cprof_csv_fput, "a,b", "\"a,b\"");
	ck_writes(cprof_csv_fput, "say \"hi\"", "\"say \"\"hi\"\"\"");
	/* CR, LF, tab, ESC, C1 and bytes that are not UTF-8 are escaped as in text, file or terminal alike:
	 * a record is one line, the file valid UTF-8 */
	ck_writes(cprof_csv_fput, "a\rb", "a\\rb");
	ck_writes(cprof_csv_fput, "a\nb", "a\\nb");
	ck_writes(cprof_csv_fput, "k\x1b]0;t\x07\xff\xc2\x9b", "k\\x1b]0;t\\x07\\xff\\u009b");
	ck_writes(cprof_csv_fput, "a\xe2\x80\xae" "b,", "\"a\\u202eb,\"");
	ck_writes(cprof_csv_fput, "caf\xc3\xa9", "caf\xc3\xa9");
	/* formulas: OWASP's leading quote, inside a quoted field */
	ck_writes(cprof_csv_fput, "=cmd|' /C calc'!A0", "\"'=cmd|' /C calc'!A0\"");
	ck_writes(cprof_csv_fput, "+1", "\"'+1\"");
	ck_writes(cprof_csv_fput, "-2+3", "\"'-2+3\"");
	ck_writes(cprof_csv_fput, "@SUM(A1)", "\"'@SUM(A1)\"");
	/* an escaped tab or CR starts with a backslash: no formula */
	ck_writes(cprof_csv_fput, "\t=1", "\\t=1");
	ck_writes(cprof_csv_fput, "\r=1", "\\r=1");
	ck_writes(cprof_csv_fput, "a=b", "a=b");
	ck_writes(cprof_csv_fput, "", "");
	ck_writes(cprof_csv_fput, NULL, "");
}
END_TEST

START_TEST(test_textsafe_json_strings)
{
	ck_writes(cprof_json_fput, "a\"b\\c\nd\te\x01\x7f", "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f\"");
	ck_writes(cprof_json_fput, "caf\xc3\xa9 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
	/* invalid UTF-8: a stray continuation byte, an overlong NUL, a surrogate, a cut sequence */
	ck_writes(cprof_json_fput, "x\x80y", "\"x\\ufffdy\"");
	ck_writes(cprof_json_fput, "\xc0\x80", "\"\\ufffd\\ufffd\"");
	ck_writes(cprof_json_fput, "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	ck_writes(cprof_json_fput, "\xe2\x82", "\"\\ufffd\\ufffd\"");
	ck_writes(cprof_json_fput, NULL, "\"\"");
}
END_TEST

START_TEST(test_textsafe_utf8_seq)
{
	ck_assert_int_eq(cprof_utf8_seq((const unsigned char *)"a"), 1);
	ck_assert_int_eq(cprof_utf8_seq((const unsigned char *)"\xc3\xa9"), 2);
	ck_assert_int_eq(cprof_utf8_seq((const unsigned char *)"\xe2\x82\xac"), 3);
	ck_assert_int_eq(cprof_utf8_seq((const unsigned char *)"\xf4\x8f\xbf\xbf"), 4);
	ck_assert_int_eq(cprof_utf8_seq((const unsigned char *)"\xf4\x90\x80\x80"), 0); /* > U+10FFFF */
	ck_assert_int_eq(cprof_utf8_seq((const unsigned char *)"\xe0\x80\xaf"), 0);     /* overlong */
	ck_assert_int_eq(cprof_utf8_seq((const unsigned char *)"\xff"), 0);
}
END_TEST

Suite *textsafe_suite(void)
{
	Suite *s = suite_create("textsafe");
	TCase *tc = tcase_create("textsafe");

	tcase_add_test(tc, test_textsafe_controls_escaped);
	tcase_add_test(tc, test_textsafe_text_kept);
	tcase_add_test(tc, test_textsafe_backslash_escaped);
	tcase_add_test(tc, test_textsafe_sh_join);
	tcase_add_test(tc, test_textsafe_truncates_whole_escapes);
	tcase_add_test(tc, test_textsafe_log_line_one_line);
	tcase_add_test(tc, test_textsafe_path_component);
	tcase_add_test(tc, test_textsafe_csv_fields);
	tcase_add_test(tc, test_textsafe_json_strings);
	tcase_add_test(tc, test_textsafe_utf8_seq);
	suite_add_tcase(s, tc);
	return s;
}
