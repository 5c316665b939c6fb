/* Unit tests of the shared-memory ring between a flusher and cprofd's intake (common/shmring.c). */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/shmring.h"
#include "common/wire.h"
#include "tests/unit/tests.h"

#define SIZE CPROF_SHMRING_MIN

static uint8_t *map;
static struct cprof_shmring prod, cons;

static void setup(void)
{
	map = aligned_alloc(4096, CPROF_SHMRING_DATA + SIZE);
	ck_assert_ptr_nonnull(map);
	cprof_shmring_init(&prod, map, SIZE);
	ck_assert_int_eq(cprof_shmring_attach(&cons, map, SIZE), 0);
}

static void teardown(void)
{
	free(map);
}

/* the bytes the producer still counts as in use: its head less the tail the consumer released to it */
static uint64_t unreleased(void)
{
	return atomic_load(&prod.hdr->head) - atomic_load(&prod.hdr->tail);
}

/* a frame of len bytes whose payload says which one it is */
static size_t frame(uint8_t *buf, uint32_t seq, size_t len)
{
	struct cprof_wire_hdr *h = (void *)buf;
	size_t i;

	cprof_wire_hdr_init(h, CPROF_MSG_API, 42, seq, 0, (uint32_t)len);
	for (i = sizeof(*h); i < len; i++)
		buf[i] = (uint8_t)(seq + i);
	return len;
}

START_TEST(test_shmring_frames_in_order_across_the_wrap)
{
	uint8_t in[CPROF_WIRE_MAX_FRAME], out[3 * CPROF_WIRE_MAX_FRAME];
	uint32_t seq = 0, want = 0;
	int corrupt, round;

	/* many times around the ring, frames of every size, taken a few at a time */
	for (round = 0; round < 2000; round++) {
		size_t len = sizeof(struct cprof_wire_hdr) + (size_t)(round * 37) % (CPROF_WIRE_MAX_FRAME - 24);
		size_t got, off;

		frame(in, seq, len);
		ck_assert_int_eq(cprof_shmring_put(&prod, in, len), 0);
		seq++;
		if (round % 3 != 2)
			continue;
		got = cprof_shmring_take(&cons, out, sizeof(out), UINT64_MAX, &corrupt);
		ck_assert_int_eq(corrupt, 0);
		for (off = 0; off < got;) {
			struct cprof_wire_hdr h; /* frames of any length: the next one's header may be unaligned */
			uint8_t expect[CPROF_WIRE_MAX_FRAME];

			memcpy(&h, out + off, sizeof(h));
			ck_assert_uint_eq(h.seq, want);
			frame(expect, want, h.len);
			ck_assert_mem_eq(out + off, expect, h.len);
			want++;
			off += h.len;
		}
		ck_assert_uint_eq(unreleased(), 0);
	}
	ck_assert_uint_gt(atomic_load(&prod.hdr->head), 10 * SIZE);
	ck_assert_uint_eq(want, seq - (seq % 3));
}
END_TEST

START_TEST(test_shmring_full_refuses_whole_frame)
{
	uint8_t in[CPROF_WIRE_MAX_FRAME], out[CPROF_WIRE_MAX_FRAME];
	uint64_t head;
	int n = 0, corrupt;

	frame(in, 0, sizeof(in));
	while (cprof_shmring_put(&prod, in, sizeof(in)) == 0)
		n++;
	ck_assert_int_eq(n, SIZE / CPROF_WIRE_MAX_FRAME);
	head = atomic_load(&prod.hdr->head);
	ck_assert_int_eq(cprof_shmring_put(&prod, in, 100), -EAGAIN);
	ck_assert_uint_eq(atomic_load(&prod.hdr->head), head); /* nothing of it went in */
	/* one frame taken makes room for one */
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, sizeof(out), UINT64_MAX, &corrupt), sizeof(in));
	ck_assert_int_eq(cprof_shmring_put(&prod, in, sizeof(in)), 0);
	ck_assert_int_eq(cprof_shmring_put(&prod, in, 100), -EAGAIN);
}
END_TEST

START_TEST(test_shmring_take_stops_at_room)
{
	uint8_t in[1000], out[2500];
	int corrupt, i;

	for (i = 0; i < 3; i++) {
		frame(in, (uint32_t)i, sizeof(in));
		ck_assert_int_eq(cprof_shmring_put(&prod, in, sizeof(in)), 0);
	}
	/* two whole frames fit, never a part of the third; the third stays for the next take */
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, sizeof(out), UINT64_MAX, &corrupt), 2000);
	ck_assert_int_eq(corrupt, 0);
	ck_assert_uint_eq(unreleased(), 1000);
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, 999, UINT64_MAX, &corrupt), 0);
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, sizeof(out), UINT64_MAX, &corrupt), 1000);
	{
		struct cprof_wire_hdr h;

		memcpy(&h, out, sizeof(h));
		ck_assert_uint_eq(h.seq, 2);
	}
}
END_TEST

START_TEST(test_shmring_hostile_producer_is_corrupt)
{
	uint8_t in[200], out[4096];
	int corrupt;

	/* a head more than the data ahead of the tail */
	atomic_store(&prod.hdr->head, 2 * SIZE);
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, sizeof(out), UINT64_MAX, &corrupt), 0);
	ck_assert_int_eq(corrupt, 1);
	/* a head behind the consumer's own tail */
	cons.tail = 100;
	atomic_store(&prod.hdr->head, 50);
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, sizeof(out), UINT64_MAX, &corrupt), 0);
	ck_assert_int_eq(corrupt, 1);
	ck_assert_uint_eq(cprof_shmring_avail(&cons), 0);
	/* a good frame, then bytes that are no frame: the good one is taken, the rest refused */
	cons.tail = 0;
	atomic_store(&prod.hdr->head, 0);
	atomic_store(&prod.hdr->tail, 0);
	frame(in, 7, sizeof(in));
	ck_assert_int_eq(cprof_shmring_put(&prod, in, sizeof(in)), 0);
	memset(in, 0xee, sizeof(in));
	ck_assert_int_eq(cprof_shmring_put(&prod, in, sizeof(in)), 0);
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, sizeof(out), UINT64_MAX, &corrupt), 200);
	ck_assert_int_eq(corrupt, 1);
	/* a frame that claims more than was published */
	cons.tail = 0;
	atomic_store(&prod.hdr->head, 0);
	atomic_store(&prod.hdr->tail, 0);
	frame(in, 8, sizeof(in));
	{
		uint32_t claim = 300;

		memcpy(in + offsetof(struct cprof_wire_hdr, len), &claim, sizeof(claim));
	}
	ck_assert_int_eq(cprof_shmring_put(&prod, in, sizeof(in)), 0);
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, sizeof(out), UINT64_MAX, &corrupt), 0);
	ck_assert_int_eq(corrupt, 1);
}
END_TEST

START_TEST(test_shmring_take_bounded_and_own_tail)
{
	uint8_t in[500], out[4096];
	int corrupt, i;

	for (i = 0; i < 4; i++) {
		frame(in, (uint32_t)i, sizeof(in));
		ck_assert_int_eq(cprof_shmring_put(&prod, in, sizeof(in)), 0);
	}
	/* at most max bytes: what was there when the take was decided, not what the producer adds meanwhile */
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, sizeof(out), 1000, &corrupt), 1000);
	ck_assert_int_eq(corrupt, 0);
	ck_assert_uint_eq(cprof_shmring_avail(&cons), 1000);
	/* a producer that rewinds the shared tail gets nothing taken twice: the consumer keeps its own */
	atomic_store(&prod.hdr->tail, 0);
	ck_assert_uint_eq(cprof_shmring_take(&cons, out, sizeof(out), UINT64_MAX, &corrupt), 1000);
	{
		struct cprof_wire_hdr h;

		memcpy(&h, out, sizeof(h));
		ck_assert_uint_eq(h.seq, 2);
	}
	ck_assert_uint_eq(atomic_load(&prod.hdr->tail), 2000);
	ck_assert_uint_eq(cprof_shmring_avail(&cons), 0);
}
END_TEST

START_TEST(test_shmring_attach_checks_header)
{
	struct cprof_shmring r;

	ck_assert_int_eq(cprof_shmring_attach(&r, map, SIZE * 2), -EINVAL); /* not what the producer made */
	ck_assert_int_eq(cprof_shmring_attach(&r, map, SIZE + 1), -EINVAL);
	prod.hdr->magic = 0;
	ck_assert_int_eq(cprof_shmring_attach(&r, map, SIZE), -EINVAL);
}
END_TEST

Suite *shmring_suite(void)
{
	Suite *s = suite_create("shmring");
	TCase *tc = tcase_create("shmring");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_shmring_frames_in_order_across_the_wrap);
	tcase_add_test(tc, test_shmring_full_refuses_whole_frame);
	tcase_add_test(tc, test_shmring_take_stops_at_room);
	tcase_add_test(tc, test_shmring_hostile_producer_is_corrupt);
	tcase_add_test(tc, test_shmring_take_bounded_and_own_tail);
	tcase_add_test(tc, test_shmring_attach_checks_header);
	suite_add_tcase(s, tc);
	return s;
}
