/* Unit tests of the preload's per-thread event rings (preload/ring.c and the record path in preload/cprof.h). */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "preload/cprof.h"
#include "tests/unit/tests.h"

static int wakes, starts, ends, fails;
static int nest_in_start; /* on_start records once more, as a signal handler's hooked call inside the take would */

static void record(uint64_t i);

static void on_wake(void)
{
	wakes++;
}
static void on_start(struct cprof_ring *r)
{
	(void)r;
	starts++;
	if (nest_in_start) {
		nest_in_start = 0;
		record(99);
	}
}
static void on_end(struct cprof_ring *r)
{
	(void)r;
	ends++;
}
static void on_fail(const char *why)
{
	(void)why;
	fails++;
}
static const struct cprof_ring_ops ops = { .wake = on_wake, .thread_start = on_start, .thread_end = on_end,
					   .fail = on_fail };

static void setup(void)
{
	wakes = starts = ends = fails = nest_in_start = 0;
	cprof_ring_set_ops(&ops);
	cprof_rings_reset_after_fork(); /* each test from no ring, also where Check does not fork (CK_FORK=no) */
}

static void record(uint64_t i)
{
	struct cprof_wire_api ev = { .start_ns = i, .end_ns = i + 1, .api = 1 };

	cprof_record(&ev);
}

/* events land in order, stamped with the thread's id; the thread's first event claimed one ring */
START_TEST(test_ring_record_in_order)
{
	struct cprof_ring *r;

	for (uint64_t i = 0; i < 100; i++)
		record(i);
	r = cprof_tls.ring;
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_eq(cprof_rings_head(), r);
	ck_assert_ptr_null(r->next);
	ck_assert_uint_eq(atomic_load(&r->head), 100);
	for (uint64_t i = 0; i < 100; i++) {
		ck_assert_uint_eq(r->ev[i].start_ns, i);
		ck_assert_uint_eq(r->ev[i].tid, cprof_tls.tid);
	}
	ck_assert_int_eq(starts, 1);
	ck_assert_uint_eq(atomic_load(&r->lost), 0);
}
END_TEST

/* a full ring never overwrites: the excess is counted lost (as ring-full, not nested) and the flusher woken */
START_TEST(test_ring_full_counts_lost_and_wakes)
{
	struct cprof_ring *r;

	for (uint64_t i = 0; i < CPROF_RING_EVENTS + 5; i++)
		record(i);
	r = cprof_tls.ring;
	ck_assert_uint_eq(atomic_load(&r->head), CPROF_RING_EVENTS);
	ck_assert_uint_eq(atomic_load(&r->lost), 5);
	ck_assert_uint_eq(atomic_load(&r->lost_nested), 0);
	ck_assert_uint_eq(r->ev[CPROF_RING_EVENTS - 1].start_ns, CPROF_RING_EVENTS - 1);
	ck_assert_uint_eq(r->ev[0].start_ns, 0);
	ck_assert_int_ge(wakes, 1);
	/* the drainer takes half: recording goes on into the freed slots */
	atomic_store(&r->tail, CPROF_RING_EVENTS / 2);
	record(777);
	ck_assert_uint_eq(atomic_load(&r->head), CPROF_RING_EVENTS + 1);
	ck_assert_uint_eq(r->ev[0].start_ns, 777);
	ck_assert_uint_eq(atomic_load(&r->lost), 5);
}
END_TEST

/* a record that interrupts a record on the same thread (a signal handler's hooked call) writes nothing and is
 * counted as a nested loss */
START_TEST(test_ring_nested_record_counted)
{
	struct cprof_ring *r;

	record(1);
	r = cprof_tls.ring;
	cprof_tls.recording = 1; /* as if a handler ran inside cprof_record */
	record(2);
	cprof_tls.recording = 0;
	ck_assert_uint_eq(atomic_load(&r->head), 1);
	ck_assert_uint_eq(atomic_load(&r->lost), 1);
	ck_assert_uint_eq(atomic_load(&r->lost_nested), 1);
	record(3);
	ck_assert_uint_eq(atomic_load(&r->head), 2);
	ck_assert_uint_eq(r->ev[1].start_ns, 3);
}
END_TEST

/* a hooked call from a signal handler while the thread takes its first ring passes through, counted lost: it takes
 * no second ring (which nothing would free at the thread's exit, and whose thread the flusher would count twice) */
START_TEST(test_ring_nested_take_passes_through)
{
	struct cprof_ring *r;
	int rings = 0;
	uint64_t lost0 = atomic_load(&cprof_ring_lost_nested);

	nest_in_start = 1;
	record(1);
	r = cprof_tls.ring;
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(starts, 1);
	for (struct cprof_ring *p = cprof_rings_head(); p; p = p->next)
		rings++;
	ck_assert_int_eq(rings, 1);
	ck_assert_uint_eq(atomic_load(&r->head), 1);
	ck_assert_uint_eq(r->ev[0].start_ns, 1);
	ck_assert_uint_eq(atomic_load(&cprof_ring_lost_nested), lost0 + 1); /* counted, as a nested record is */
	ck_assert_uint_eq(cprof_tls.taking_ns, 0);
	record(2); /* the thread records on after it */
	ck_assert_uint_eq(atomic_load(&r->head), 2);
}
END_TEST

/* a take a handler left by siglongjmp (the mark still set, long ago) does not keep the thread from recording */
START_TEST(test_ring_stale_take_mark_ignored)
{
	uint64_t lost0 = atomic_load(&cprof_ring_lost_nested);

	cprof_tls.taking_ns = 1;
	record(5);
	ck_assert_ptr_nonnull(cprof_tls.ring);
	ck_assert_uint_eq(atomic_load(&cprof_tls.ring->head), 1);
	ck_assert_uint_eq(cprof_tls.ring->ev[0].start_ns, 5);
	ck_assert_uint_eq(cprof_tls.taking_ns, 0);
	ck_assert_uint_eq(atomic_load(&cprof_ring_lost_nested), lost0);
}
END_TEST

static void *records(void *arg)
{
	uint64_t n = (uintptr_t)arg;

	for (uint64_t i = 0; i < n; i++)
		record(i);
	return cprof_tls.ring;
}

/* a thread that exits with events unsent leaves its ring to the drainer (DEAD, and a wake-up); one that exits
 * with nothing left frees its ring, and the next thread reuses it */
START_TEST(test_ring_thread_exit_and_reuse)
{
	pthread_t t;
	struct cprof_ring *a, *b, *c;

	ck_assert_int_eq(pthread_create(&t, NULL, records, (void *)(uintptr_t)3), 0);
	ck_assert_int_eq(pthread_join(t, (void **)&a), 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(atomic_load(&a->state), CPROF_RING_DEAD);
	ck_assert_int_eq(ends, 1);
	ck_assert_int_ge(wakes, 1);
	/* the drainer sent them and marked it free */
	atomic_store(&a->tail, atomic_load(&a->head));
	atomic_store(&a->state, CPROF_RING_FREE);
	ck_assert_int_eq(pthread_create(&t, NULL, records, (void *)(uintptr_t)2), 0);
	ck_assert_int_eq(pthread_join(t, (void **)&b), 0);
	ck_assert_ptr_eq(b, a);
	atomic_store(&b->tail, atomic_load(&b->head));
	/* a thread whose ring is empty at exit frees it itself */
	ck_assert_int_eq(pthread_create(&t, NULL, records, (void *)(uintptr_t)0), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	record(1);
	c = cprof_tls.ring;
	ck_assert_int_eq(atomic_load(&c->state), CPROF_RING_LIVE);
}
END_TEST

/* a fork child drops the parent's rings: its first event claims a new one */
START_TEST(test_ring_reset_after_fork)
{
	uint32_t gen = atomic_load(&cprof_generation);

	record(1);
	ck_assert_ptr_nonnull(cprof_rings_head());
	cprof_rings_reset_after_fork();
	ck_assert_ptr_null(cprof_rings_head());
	ck_assert_uint_eq(atomic_load(&cprof_generation), gen + 1);
	record(2);
	ck_assert_ptr_nonnull(cprof_tls.ring);
	ck_assert_uint_eq(atomic_load(&cprof_tls.ring->head), 1);
	ck_assert_uint_eq(cprof_tls.ring->ev[0].start_ns, 2);
}
END_TEST

/* The sampled stacks' site table: two sites in one set keep their entries however they alternate (direct-
 * mapped, a PyTorch training step had two sites throw each other out: a stack taken on each of 3,000 calls);
 * a third evicts the one used longest ago. */
/* the timed calls are drawn, not every 64th: a step of two hooked calls gets both timed, about equally, and
 * about one call in 64 is timed in all (before 2026-12-04 the same one of the two always was) */
START_TEST(test_ring_cost_strides_not_aliased)
{
	uint32_t left = 0, gap = 0, min_gap = UINT32_MAX, max_gap = 0;
	unsigned timed[2] = { 0, 0 }, n = 2 * 64 * 2000;

	cprof_tls.cost_rng = 0;
	for (unsigned i = 0; i < n; i++) {
		gap++;
		if (!cprof_cost_due(&left))
			continue;
		timed[i % 2]++;
		if (timed[0] + timed[1] > 1) {
			min_gap = gap < min_gap ? gap : min_gap;
			max_gap = gap > max_gap ? gap : max_gap;
		}
		gap = 0;
	}
	ck_assert_uint_gt(timed[0], 1600);
	ck_assert_uint_gt(timed[1], 1600);
	ck_assert_uint_gt(timed[0] + timed[1], 4000 * 85 / 100);
	ck_assert_uint_lt(timed[0] + timed[1], 4000 * 115 / 100);
	ck_assert_uint_ge(min_gap, CPROF_COST_SAMPLE / 2);
	ck_assert_uint_le(max_gap, 3 * CPROF_COST_SAMPLE / 2);
}
END_TEST

/* a timed hook sample that lost its core (CPROF_COST_SAMPLE_MAX_NS or more: another process's time slice) is no
 * sample: the program's schedstat counts that wait already */
START_TEST(test_ring_cost_sample_drops_preempted)
{
	struct cprof_ring *r;

	record(1); /* the thread's ring */
	r = cprof_tls.ring;
	ck_assert_ptr_nonnull(r);
	cprof_cost_sample(120);
	cprof_cost_sample(CPROF_COST_SAMPLE_MAX_NS - 1);
	cprof_cost_sample(CPROF_COST_SAMPLE_MAX_NS);
	cprof_cost_sample(3000000);
	ck_assert_uint_eq(atomic_load(&r->cost_sampled), 2);
	ck_assert_uint_eq(atomic_load(&r->cost_sampled_ns), 120 + CPROF_COST_SAMPLE_MAX_NS - 1);
}
END_TEST

static struct cprof_site *site_use(struct cprof_sites *ts, uint64_t key)
{
	struct cprof_site *e = cprof_site_of(ts, key);

	if (e->key != key) {
		e->key = key;
		e->taken = 0;
	}
	e->taken++;
	return e;
}

START_TEST(test_ring_sites_two_ways)
{
	static struct cprof_sites ts;
	/* the set index is a function of (key ^ key >> 8 ^ key >> 20) & 255: these differ only above bit 40 */
	const uint64_t a = 0x7f0000001234ull, b = a ^ (1ull << 41), c = a ^ (1ull << 42);
	int i;

	for (i = 0; i < 100; i++) {
		site_use(&ts, a);
		site_use(&ts, b);
	}
	ck_assert_uint_eq(site_use(&ts, a)->taken, 101);
	ck_assert_uint_eq(site_use(&ts, b)->taken, 101);
	site_use(&ts, c); /* a is the older now */
	ck_assert_uint_eq(site_use(&ts, b)->taken, 102);
	ck_assert_uint_eq(site_use(&ts, a)->taken, 1);
	/* a new site asked for twice (the inline path, then the slow one) still evicts the older: b, not a */
	(void)cprof_site_of(&ts, c);
	site_use(&ts, c);
	ck_assert_uint_eq(site_use(&ts, a)->taken, 2);
	ck_assert_uint_eq(site_use(&ts, b)->taken, 1);
}
END_TEST

/* A site's stride after each capture: the first calls each take one, then the base, doubling while the
 * stack stays the same, back to the base when it changes or a capture fails, never below a base set high */
static uint32_t site_capture(struct cprof_site *e, uint32_t id, unsigned every)
{
	e->left = 0; /* the calls between spent it */
	cprof_site_taken(e, id, 4, every);
	return e->left + 1;
}

START_TEST(test_ring_site_stride_backs_off)
{
	struct cprof_site e = { .key = 1 };
	uint32_t n;
	int i;

	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(site_capture(&e, 7, 256), 1);
	ck_assert_uint_eq(site_capture(&e, 7, 256), 256); /* the 4th: past the first, the base */
	ck_assert_uint_eq(site_capture(&e, 7, 256), 512);
	ck_assert_uint_eq(site_capture(&e, 7, 256), 1024);
	for (i = 0; i < 10; i++)
		n = site_capture(&e, 7, 256);
	ck_assert_uint_eq(n, CPROF_STACK_STRIDE_MAX);
	ck_assert_uint_eq(e.stack, 7);
	ck_assert_uint_eq(site_capture(&e, 9, 256), 256); /* another stack: the base again */
	ck_assert_uint_eq(e.stack, 9);
	ck_assert_uint_eq(site_capture(&e, 9, 256), 512);
	ck_assert_uint_eq(site_capture(&e, 0, 256), 256); /* a failed capture keeps the last stack, not the stride */
	ck_assert_uint_eq(e.stack, 9);
	ck_assert_uint_eq(site_capture(&e, 9, 256), 512); /* the same stack as the last one kept */
	/* CPROF_STACK_EVERY above the cap: kept as it is */
	memset(&e, 0, sizeof(e));
	for (i = 0; i < 3; i++)
		(void)site_capture(&e, 5, 1u << 20);
	ck_assert_uint_eq(site_capture(&e, 5, 1u << 20), 1u << 20);
	ck_assert_uint_eq(site_capture(&e, 5, 1u << 20), 1u << 20);
}
END_TEST

Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("ring");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_ring_record_in_order);
	tcase_add_test(tc, test_ring_full_counts_lost_and_wakes);
	tcase_add_test(tc, test_ring_nested_record_counted);
	tcase_add_test(tc, test_ring_nested_take_passes_through);
	tcase_add_test(tc, test_ring_stale_take_mark_ignored);
	tcase_add_test(tc, test_ring_thread_exit_and_reuse);
	tcase_add_test(tc, test_ring_reset_after_fork);
	tcase_add_test(tc, test_ring_sites_two_ways);
	tcase_add_test(tc, test_ring_site_stride_backs_off);
	tcase_add_test(tc, test_ring_cost_strides_not_aliased);
	tcase_add_test(tc, test_ring_cost_sample_drops_preempted);
	suite_add_tcase(s, tc);
	return s;
}
