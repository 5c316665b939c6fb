/* Per-thread event rings: single producer (the thread), single consumer (the drainer), reused after thread exit.
 * The bottom layer of the preload: it calls nothing above it; what it must tell the flusher, the crash handler
 * or init goes through the ops they register (cprof_ring_set_ops). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PR_FMT "cprof: ring"
#include "common/log.h"
#include "preload/cprof.h"

CPROF_HIDDEN __thread struct cprof_tls cprof_tls __attribute__((tls_model("initial-exec")));
CPROF_HIDDEN _Atomic uint32_t cprof_generation = 1;
CPROF_HIDDEN _Atomic int cprof_wake_pending; /* a wake-up is on its way: the record path need not ask again */

static _Atomic(struct cprof_ring *) rings;
static const struct cprof_ring_ops *ring_ops;

void cprof_ring_set_ops(const struct cprof_ring_ops *ops)
{
	ring_ops = ops;
}

void cprof_ring_wake(void)
{
	if (ring_ops && ring_ops->wake)
		ring_ops->wake();
}
static pthread_key_t ring_key;
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;

struct cprof_ring *cprof_rings_head(void)
{
	return atomic_load_explicit(&rings, memory_order_acquire);
}

static void ring_thread_exit(void *arg)
{
	struct cprof_ring *r = arg;
	int live = CPROF_RING_LIVE;

	if (r == NULL)
		return;
	/* a hooked call from a later TLS destructor of this thread must not write into a ring that another
	 * thread may own by then: it claims a new one */
	if (cprof_tls.ring == r)
		cprof_tls.ring = NULL;
	if (ring_ops && ring_ops->thread_end)
		ring_ops->thread_end(r); /* the ring's signal stack may be the next thread's */
	/* nothing left to send: free for the next thread now, so many short threads reuse few rings */
	if (atomic_load_explicit(&r->head, memory_order_relaxed) == atomic_load_explicit(&r->tail, memory_order_acquire) &&
	    atomic_compare_exchange_strong(&r->state, &live, CPROF_RING_FREE))
		return;
	/* the drainer sends what is left, then marks it FREE; soon, so that the ring is reused soon */
	atomic_store_explicit(&r->state, CPROF_RING_DEAD, memory_order_release);
	cprof_ring_wake();
}

static void ring_key_create(void)
{
	if (pthread_key_create(&ring_key, ring_thread_exit) != 0)
		pr_warn("cannot track thread exit; rings of finished threads are not reused");
}

/* In the constructor the key gets one of the first slots, whose pthread_setspecific allocates nothing (a later
 * key's first set on a thread callocs, which a first take from a signal handler must not do) */
void cprof_rings_init(void)
{
	pthread_once(&ring_key_once, ring_key_create);
}

static struct cprof_ring *ring_claim_free(void)
{
	struct cprof_ring *r;

	for (r = cprof_rings_head(); r; r = r->next) {
		int expect = CPROF_RING_FREE;

		if (atomic_compare_exchange_strong(&r->state, &expect, CPROF_RING_LIVE))
			return r;
	}
	return NULL;
}

static struct cprof_ring *ring_take(void)
{
	struct cprof_ring *r;
	uint32_t gen = atomic_load_explicit(&cprof_generation, memory_order_acquire);

	if (cprof_tls.generation != gen) {
		/* first event of this thread, or first in a fork child: parent's ring is not ours */
		int depth = cprof_tls.depth;

		uint64_t taking = cprof_tls.taking_ns;

		memset(&cprof_tls, 0, sizeof(cprof_tls));
		cprof_tls.depth = depth;
		cprof_tls.taking_ns = taking;
		cprof_tls.generation = gen;
		cprof_tls.tid = (uint32_t)syscall(SYS_gettid);
	}
	if (cprof_tls.ring)
		return cprof_tls.ring;

	r = ring_claim_free();
	if (r == NULL) {
		r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r == MAP_FAILED) {
			if (ring_ops && ring_ops->fail)
				ring_ops->fail("cannot allocate an event buffer");
			return NULL;
		}
		atomic_store(&r->state, CPROF_RING_LIVE);
		r->next = atomic_load(&rings);
		while (!atomic_compare_exchange_weak(&rings, &r->next, r))
			;
	}
	/* before the tid is out: the flusher reads a ring's thread by it, and finds the thread's start (its
	 * schedstat baseline) set then */
	if (ring_ops && ring_ops->thread_start)
		ring_ops->thread_start(r);
	__atomic_store_n(&r->tid, cprof_tls.tid, __ATOMIC_RELEASE);
	cprof_tls.ring = r;
	cprof_tls.tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
	pthread_once(&ring_key_once, ring_key_create);
	pthread_setspecific(ring_key, r);
	return r;
}

_Atomic uint64_t cprof_ring_lost_nested;

/* A take left by a handler's siglongjmp is stale after this: the thread takes again (a second ring, as before the
 * guard) rather than pass every later call through */
#define TAKE_STALE_NS 100000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 1; /* never 0 */
}

struct cprof_ring *cprof_ring_for_thread(void)
{
	struct cprof_ring *r;
	uint64_t now = mono_ns();

	/* a hooked call from a signal handler that interrupted this thread's take would claim a second ring, which
	 * nothing frees at the thread's exit and whose thread the flusher would count twice: it passes through,
	 * counted lost */
	if (cprof_tls.taking_ns && now - cprof_tls.taking_ns < TAKE_STALE_NS) {
		atomic_fetch_add_explicit(&cprof_ring_lost_nested, 1, memory_order_relaxed);
		return NULL;
	}
	cprof_tls.taking_ns = now;
	atomic_signal_fence(memory_order_seq_cst);
	r = ring_take();
	atomic_signal_fence(memory_order_seq_cst);
	cprof_tls.taking_ns = 0;
	return r;
}

void cprof_rings_reset_after_fork(void)
{
	struct cprof_ring *r = atomic_load(&rings), *next;

	/* only this thread exists in the child; the parent's unsent events are the parent's */
	atomic_store(&rings, NULL);
	for (; r; r = next) {
		next = r->next;
		munmap(r, sizeof(*r));
	}
	atomic_fetch_add(&cprof_generation, 1);
	if (pthread_once(&ring_key_once, ring_key_create) == 0)
		pthread_setspecific(ring_key, NULL);
	cprof_tls.ring = NULL;
	cprof_tls.generation = 0;
}

/* The timed calls' strides (cprof_cost_due): here beside the thread state they live in. */
__attribute__((noinline, cold)) int cprof_cost_refill(uint32_t *left)
{
	uint32_t x = cprof_tls.cost_rng;
	int first = x == 0;

	if (first)
		x = (uint32_t)(uintptr_t)left * 2654435761u ^ cprof_tls.tid ^ 0x9e3779b9u; /* nonzero in practice */
	if (x == 0)
		x = 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	cprof_tls.cost_rng = x;
	*left = CPROF_COST_SAMPLE / 2 + x % CPROF_COST_SAMPLE;
	return !first;
}
