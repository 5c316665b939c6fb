/* Unit tests of the wire protocol: every message round-trips, every malformed frame is rejected. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "tests/unit/tests.h"

static uint8_t frame[CPROF_WIRE_MAX_FRAME * 2] __attribute__((aligned(8)));

static size_t make_hello(void)
{
	struct cprof_wire_hello h = { .pid = 42, .ppid = 7, .start_ns = 123456789, .clock = CPROF_CLOCK_REALTIME,
				      .wire_version = CPROF_WIRE_VERSION, .rank = 3, .local_rank = 1,
				      .world_size = 8 };
	const char *argv[] = { "python3", "-c", "print(1)", NULL };

	return cprof_wire_build_hello(frame, 0, &h, "/usr/bin/python3", "node1", argv, 3);
}

START_TEST(test_wire_hello_roundtrip)
{
	size_t len = make_hello(), flen = 0;
	const struct cprof_wire_hello *h = (const void *)(frame + sizeof(struct cprof_wire_hdr));
	const char *argv;

	ck_assert_int_eq(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
	ck_assert_uint_eq(flen, len);
	ck_assert_uint_eq(h->pid, 42);
	ck_assert_uint_eq(h->ppid, 7);
	ck_assert_int_eq(h->rank, 3);
	ck_assert_int_eq(h->local_rank, 1);
	ck_assert_int_eq(h->world_size, 8);
	ck_assert_uint_eq(h->start_ns, 123456789);
	ck_assert_str_eq(cprof_wire_hello_exe(h), "/usr/bin/python3");
	ck_assert_str_eq(cprof_wire_hello_host(h), "node1");
	ck_assert_uint_eq(h->argc, 3);
	argv = cprof_wire_hello_argv(h);
	ck_assert_str_eq(argv, "python3");
	ck_assert_str_eq(argv + 8, "-c");
	ck_assert_str_eq(argv + 11, "print(1)");
	ck_assert_uint_eq(h->flags & CPROF_HELLO_ARGV_TRUNCATED, 0);
}
END_TEST

START_TEST(test_wire_hello_truncates_long_argv)
{
	struct cprof_wire_hello h = { .pid = 1, .rank = -1, .local_rank = -1, .world_size = -1 };
	static char big[1000];
	const char *argv[8];
	size_t len, flen;
	int i;
	const struct cprof_wire_hello *out = (const void *)(frame + sizeof(struct cprof_wire_hdr));

	memset(big, 'x', sizeof(big) - 1);
	for (i = 0; i < 8; i++)
		argv[i] = big;
	len = cprof_wire_build_hello(frame, 0, &h, "/bin/x", "h", argv, 8);
	ck_assert_uint_le(len, CPROF_WIRE_MAX_FRAME);
	ck_assert_int_eq(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
	ck_assert(out->flags & CPROF_HELLO_ARGV_TRUNCATED);
	ck_assert_uint_lt(out->argc, 8);
}
END_TEST

START_TEST(test_wire_api_roundtrip)
{
	struct cprof_wire_hdr *h = (void *)frame;
	struct cprof_wire_api *ev = (void *)(h + 1);
	size_t n = CPROF_WIRE_API_PER_FRAME, i, flen;

	for (i = 0; i < n; i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].start_ns = 1000 + i;
		ev[i].end_ns = 2000 + i;
		ev[i].api = 3;
		ev[i].arg[7] = i;
	}
	cprof_wire_hdr_init(h, CPROF_MSG_API, 9, 5, n, sizeof(*h) + n * sizeof(*ev));
	ck_assert_uint_le(h->len, CPROF_WIRE_MAX_FRAME);
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_OK);
	ck_assert_uint_eq(h->seq, 5);
	ck_assert_uint_eq(ev[n - 1].arg[7], n - 1);
	/* one event more does not fit a PIPE_BUF frame */
	h->count = n + 1;
	h->len = sizeof(*h) + (n + 1) * sizeof(*ev);
	ck_assert_int_ne(cprof_wire_check(frame, sizeof(frame), &flen), CPROF_WIRE_OK);
}
END_TEST

START_TEST(test_wire_strings_roundtrip)
{
	struct cprof_wire_hdr *h = (void *)frame;
	size_t len = sizeof(*h), flen;
	const struct cprof_wire_string *s;
	static char longname[5000];

	cprof_wire_hdr_init(h, CPROF_MSG_STRINGS, 9, 0, 0, len);
	ck_assert_int_eq(cprof_wire_strings_add(frame, &len, 1, CPROF_STR_KERNEL, "_Z4addkPfi"), 0);
	ck_assert_int_eq(cprof_wire_strings_add(frame, &len, 2, CPROF_STR_KERNEL, "k2"), 0);
	ck_assert_int_eq(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
	ck_assert_uint_eq(h->count, 2);
	s = (const void *)(h + 1);
	ck_assert_uint_eq(s->id, 1);
	ck_assert_int_eq(memcmp(s + 1, "_Z4addkPfi", s->len), 0);
	/* a name longer than a frame is cut, in a frame of its own */
	memset(longname, 'n', sizeof(longname) - 1);
	ck_assert_int_eq(cprof_wire_strings_add(frame, &len, 3, CPROF_STR_KERNEL, longname), -ENOSPC);
	len = sizeof(*h);
	cprof_wire_hdr_init(h, CPROF_MSG_STRINGS, 9, 0, 0, len);
	ck_assert_int_eq(cprof_wire_strings_add(frame, &len, 3, CPROF_STR_KERNEL, longname), 0);
	ck_assert_int_eq(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
}
END_TEST

START_TEST(test_wire_small_messages_roundtrip)
{
	struct cprof_wire_hdr *h = (void *)frame;
	struct cprof_wire_lost l = { .lost = 5, .emitted = 100 };
	struct cprof_wire_bye b = { .end_ns = 9, .emitted = 100, .lost = 5, .reason = CPROF_BYE__EXIT };
	struct cprof_wire_run_end e = { .end_ns = 10, .exit_status = 137, .term_signal = 9 };
	size_t flen;

	cprof_wire_hdr_init(h, CPROF_MSG_LOST, 1, 1, 1, sizeof(*h) + sizeof(l));
	memcpy(h + 1, &l, sizeof(l));
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_OK);
	ck_assert_uint_eq(((struct cprof_wire_lost *)(h + 1))->lost, 5);
	cprof_wire_hdr_init(h, CPROF_MSG_BYE, 1, 2, 1, sizeof(*h) + sizeof(b));
	memcpy(h + 1, &b, sizeof(b));
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_OK);
	ck_assert_uint_eq(((struct cprof_wire_bye *)(h + 1))->reason, CPROF_BYE__EXIT);
	cprof_wire_hdr_init(h, CPROF_MSG_RUN_END, 1, 0, 1, sizeof(*h) + sizeof(e));
	memcpy(h + 1, &e, sizeof(e));
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_OK);
	ck_assert_int_eq(((struct cprof_wire_run_end *)(h + 1))->exit_status, 137);
}
END_TEST

/* Table of corruptions applied to a valid HELLO frame, each with the error it must produce. */
struct corruption {
	const char *what;
	void (*apply)(uint8_t *f, size_t *len);
	int expect;
};

static void bad_magic(uint8_t *f, size_t *len) { (void)len; f[0] ^= 0xff; }
static void bad_version(uint8_t *f, size_t *len) { (void)len; ((struct cprof_wire_hdr *)f)->version = 99; }
static void bad_type0(uint8_t *f, size_t *len) { (void)len; ((struct cprof_wire_hdr *)f)->type = 0; }
static void bad_type_big(uint8_t *f, size_t *len) { (void)len; ((struct cprof_wire_hdr *)f)->type = 77; }
static void len_small(uint8_t *f, size_t *len) { (void)len; ((struct cprof_wire_hdr *)f)->len = 3; }
static void len_huge(uint8_t *f, size_t *len) { (void)len; ((struct cprof_wire_hdr *)f)->len = 1u << 30; }
static void hello_exe_len(uint8_t *f, size_t *len)
{
	(void)len;
	((struct cprof_wire_hello *)(f + sizeof(struct cprof_wire_hdr)))->exe_len += 5;
}
static void hello_no_nul(uint8_t *f, size_t *len)
{
	struct cprof_wire_hello *h = (void *)(f + sizeof(struct cprof_wire_hdr));

	(void)len;
	h->data[h->exe_len - 1] = 'X';
}
static void hello_argc(uint8_t *f, size_t *len)
{
	(void)len;
	((struct cprof_wire_hello *)(f + sizeof(struct cprof_wire_hdr)))->argc = 9;
}
static void hello_pid(uint8_t *f, size_t *len)
{
	(void)len;
	((struct cprof_wire_hello *)(f + sizeof(struct cprof_wire_hdr)))->pid = 43;
}
static void hello_count(uint8_t *f, size_t *len) { (void)len; ((struct cprof_wire_hdr *)f)->count = 2; }
static void truncated(uint8_t *f, size_t *len) { (void)f; *len -= 1; }

static const struct corruption corruptions[] = {
	{ "bad magic", bad_magic, CPROF_WIRE_BAD_MAGIC },
	{ "bad version", bad_version, CPROF_WIRE_BAD_VERSION },
	{ "type 0", bad_type0, CPROF_WIRE_BAD_TYPE },
	{ "unknown type", bad_type_big, CPROF_WIRE_BAD_TYPE },
	{ "length below header", len_small, CPROF_WIRE_BAD_LENGTH },
	{ "length above PIPE_BUF", len_huge, CPROF_WIRE_BAD_LENGTH },
	{ "exe length beyond payload", hello_exe_len, CPROF_WIRE_BAD_PAYLOAD },
	{ "string without NUL", hello_no_nul, CPROF_WIRE_BAD_PAYLOAD },
	{ "argc mismatch", hello_argc, CPROF_WIRE_BAD_PAYLOAD },
	{ "pid mismatch", hello_pid, CPROF_WIRE_BAD_PAYLOAD },
	{ "count 2", hello_count, CPROF_WIRE_BAD_PAYLOAD },
	{ "truncated", truncated, CPROF_WIRE_SHORT },
};

/* STACKS: variable records, each its header then nnative + npy frames; every size is checked */
static size_t make_stacks(uint16_t nnative, uint16_t npy, uint32_t count)
{
	struct cprof_wire_hdr *h = (void *)frame;
	size_t len = sizeof(*h);
	uint32_t i;
	int k;

	for (i = 0; i < count; i++) {
		struct cprof_wire_stack st = { .id = i + 1, .nnative = nnative, .npy = npy };
		struct cprof_wire_frame f = { .off = 0x1234 + i, .module = 3, .func = 0 };

		memcpy(frame + len, &st, sizeof(st));
		len += sizeof(st);
		for (k = 0; k < nnative + npy; k++) {
			memcpy(frame + len, &f, sizeof(f));
			len += sizeof(f);
		}
	}
	cprof_wire_hdr_init(h, CPROF_MSG_STACKS, 42, 0, count, (uint32_t)len);
	return len;
}

START_TEST(test_wire_stacks_checked)
{
	size_t flen = 0, len;
	struct cprof_wire_hdr *h = (void *)frame;

	ck_assert_uint_eq(sizeof(struct cprof_wire_api), 104);
	len = make_stacks(20, 3, 10);
	ck_assert_int_eq(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
	ck_assert_uint_eq(flen, len);
	/* a frame count that runs past the payload */
	((struct cprof_wire_stack *)(h + 1))->nnative = 21;
	ck_assert_int_ne(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
	/* more stacks announced than present */
	len = make_stacks(2, 0, 3);
	h->count = 4;
	ck_assert_int_ne(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
	/* deeper than the limit, empty, or id 0 */
	len = make_stacks(CPROF_STACK_MAX_NATIVE + 1, 0, 1);
	ck_assert_int_ne(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
	len = make_stacks(0, 0, 1);
	ck_assert_int_ne(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
	len = make_stacks(1, 1, 1);
	((struct cprof_wire_stack *)(h + 1))->id = 0;
	ck_assert_int_ne(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
	/* the biggest stack fits one frame */
	len = make_stacks(CPROF_STACK_MAX_NATIVE, CPROF_STACK_MAX_PY, 1);
	ck_assert_uint_le(len, CPROF_WIRE_MAX_FRAME);
	ck_assert_int_eq(cprof_wire_check(frame, len, &flen), CPROF_WIRE_OK);
}
END_TEST

START_TEST(test_wire_malformed_rejected)
{
	const struct corruption *c = &corruptions[_i];
	size_t len = make_hello(), flen = 0;
	int err;

	c->apply(frame, &len);
	err = cprof_wire_check(frame, len, &flen);
	ck_assert_msg(err == c->expect, "%s: got %s, want %s", c->what, cprof_wire_strerror(err),
		      cprof_wire_strerror(c->expect));
}
END_TEST

START_TEST(test_wire_fixed_records_checked)
{
	struct cprof_wire_hdr *h = (void *)frame;
	size_t flen;

	/* API frame whose length is not a whole number of events */
	cprof_wire_hdr_init(h, CPROF_MSG_API, 1, 0, 1, sizeof(*h) + sizeof(struct cprof_wire_api) - 8);
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_BAD_LENGTH);
	/* count 0 */
	cprof_wire_hdr_init(h, CPROF_MSG_API, 1, 0, 0, sizeof(*h));
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_BAD_LENGTH);
	/* LOST with two records */
	cprof_wire_hdr_init(h, CPROF_MSG_LOST, 1, 0, 2, sizeof(*h) + 2 * sizeof(struct cprof_wire_lost));
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_BAD_LENGTH);
	/* STRINGS whose record runs past the frame */
	{
		size_t len = sizeof(*h);
		struct cprof_wire_string *s = (void *)(h + 1);

		cprof_wire_hdr_init(h, CPROF_MSG_STRINGS, 1, 0, 0, len);
		ck_assert_int_eq(cprof_wire_strings_add(frame, &len, 1, CPROF_STR_KERNEL, "abc"), 0);
		s->len = 200;
		ck_assert_int_eq(cprof_wire_check(frame, len, &flen), CPROF_WIRE_BAD_PAYLOAD);
		s->len = 3;
		s->id = 0;
		ck_assert_int_eq(cprof_wire_check(frame, len, &flen), CPROF_WIRE_BAD_PAYLOAD);
	}
}
END_TEST

START_TEST(test_wire_crash_checked)
{
	struct cprof_wire_hdr *h = (void *)frame;
	struct cprof_wire_crash *c = (void *)(h + 1);
	size_t flen, base = sizeof(*h) + sizeof(*c), rec = sizeof(struct cprof_wire_crash_thread);

	memset(frame, 0, sizeof(frame));
	c->signo = 11;
	/* no thread had a ring yet: count 0 is a CRASH frame too */
	cprof_wire_hdr_init(h, CPROF_MSG_CRASH, 1, 0, 0, base);
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_OK);
	ck_assert_uint_eq(flen, base);
	cprof_wire_hdr_init(h, CPROF_MSG_CRASH, 1, 0, 2, base + 2 * rec);
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_OK);
	/* count and length disagree */
	cprof_wire_hdr_init(h, CPROF_MSG_CRASH, 1, 0, 3, base + 2 * rec);
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_BAD_LENGTH);
	cprof_wire_hdr_init(h, CPROF_MSG_CRASH, 1, 0, 0, base - 8);
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_BAD_LENGTH);
	/* more threads than a frame holds: refused */
	cprof_wire_hdr_init(h, CPROF_MSG_CRASH, 1, 0, (uint32_t)CPROF_WIRE_CRASH_MAX_THREADS + 1, base);
	ck_assert_int_eq(cprof_wire_check(frame, h->len, &flen), CPROF_WIRE_BAD_LENGTH);
	ck_assert_uint_le(base + CPROF_WIRE_CRASH_MAX_THREADS * rec, CPROF_WIRE_MAX_FRAME);
}
END_TEST

/* The readers' magic scan: every place, the first of several, a prefix of it, none, a cut at the end. */
START_TEST(test_wire_find_magic)
{
	uint8_t b[64];
	const uint32_t magic = CPROF_WIRE_MAGIC;
	size_t at;

	memset(b, 'C', sizeof(b)); /* the magic's first byte everywhere: every candidate is a false start */
	ck_assert_ptr_null(cprof_wire_find_magic(b, sizeof(b)));
	ck_assert_ptr_null(cprof_wire_find_magic(b, 3));
	ck_assert_ptr_null(cprof_wire_find_magic(b, 0));
	for (at = 0; at + 4 <= sizeof(b); at++) {
		memset(b, 'C', sizeof(b));
		memcpy(b + at, &magic, 4);
		ck_assert_ptr_eq(cprof_wire_find_magic(b, sizeof(b)), b + at);
		/* cut one byte short of its end: not there */
		ck_assert_ptr_null(cprof_wire_find_magic(b, at + 3));
		ck_assert_ptr_eq(cprof_wire_find_magic(b, at + 4), b + at);
	}
	memset(b, 0, sizeof(b));
	memcpy(b + 40, &magic, 4);
	memcpy(b + 9, &magic, 4);
	ck_assert_ptr_eq(cprof_wire_find_magic(b, sizeof(b)), b + 9);
	ck_assert_ptr_eq(cprof_wire_find_magic(b + 10, sizeof(b) - 10), b + 40);
}
END_TEST

Suite *wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("wire");

	tcase_add_test(tc, test_wire_hello_roundtrip);
	tcase_add_test(tc, test_wire_hello_truncates_long_argv);
	tcase_add_test(tc, test_wire_api_roundtrip);
	tcase_add_test(tc, test_wire_strings_roundtrip);
	tcase_add_test(tc, test_wire_small_messages_roundtrip);
	tcase_add_loop_test(tc, test_wire_malformed_rejected, 0, sizeof(corruptions) / sizeof(corruptions[0]));
	tcase_add_test(tc, test_wire_fixed_records_checked);
	tcase_add_test(tc, test_wire_stacks_checked);
	tcase_add_test(tc, test_wire_crash_checked);
	tcase_add_test(tc, test_wire_find_magic);
	suite_add_tcase(s, tc);
	return s;
}
