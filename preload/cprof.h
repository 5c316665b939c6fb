/* Internal interface of libcprof.so: state, per-thread rings, recording, the flusher, real-symbol lookup. */
#ifndef CPROF_PRELOAD_CPROF_H
#define CPROF_PRELOAD_CPROF_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/api.h"
#include "common/clock.h"
#include "common/wire.h"

#define CPROF_HIDDEN __attribute__((visibility("hidden")))
#define CPROF_EXPORT __attribute__((visibility("default")))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Library state. OFF is final (setuid, no collector, collector gone); ON records; PAUSED passes calls through
 * outside a capture range (capture.c) and may go back ON. */
enum cprof_state { CPROF_ST_UNINIT = 0, CPROF_ST_INITING, CPROF_ST_ON, CPROF_ST_OFF, CPROF_ST_PAUSED };

/* tick.c: the hooks' clock. A tick is a TSC reading while the hooks take the TSC (cprof_tick_tsc: the kernel
 * keeps time with it and nothing steers the wall clock), else CLOCK_REALTIME ns; ring events hold ticks,
 * mapped to ns (cprof_tick_ns) when they leave the rings. A reading of at least CPROF_TICK_NS_MIN is ns
 * already (2001 on): the hooks may leave the TSC mid-run. */
#define CPROF_TICK_NS_MIN 1000000000000000000ull
CPROF_HIDDEN extern int cprof_tick_tsc;
/* what adjtimex says of the kernel's clock; whether a daemon steers it (nominal_tick: 1e6 / USER_HZ) */
struct cprof_tick_kclock {
	long status, freq, tick, offset;
};
CPROF_HIDDEN int cprof_tick_steered(const struct cprof_tick_kclock *k, long nominal_tick);
CPROF_HIDDEN void cprof_tick_init(void);
CPROF_HIDDEN void cprof_tick_anchor(void); /* the flusher, at each round: a fresh (TSC, ns) pair */
/* the parts of both with the clocks' readings given (unit tests): a map from (t, n) at rate ns a tick, the
 * hooks on CLOCK_REALTIME (mode 0), the TSC (1) or on trial (2); one anchor more, whose TSC reads were width
 * ticks apart */
CPROF_HIDDEN void cprof_tick_start(int mode, uint64_t t, uint64_t n, double rate);
CPROF_HIDDEN void cprof_tick_add_anchor(uint64_t t, uint64_t n, uint64_t width);
CPROF_HIDDEN uint64_t cprof_tick_ns(uint64_t tick);     /* on the flusher's thread */
CPROF_HIDDEN uint64_t cprof_tick_ns_any(uint64_t tick); /* any thread, async-signal-safe (the crash paths) */
CPROF_HIDDEN uint64_t cprof_tick_dur_ns(uint64_t ticks);
/* tick.c: what one read of the hooks' clock costs (the median of two back to back) */
CPROF_HIDDEN extern uint64_t cprof_tick_read;
/* a timed stretch: none when its ends are in two clocks (the hooks left the TSC between them) */
static inline uint64_t cprof_tick_stretch(uint64_t ticks)
{
	return ticks < (1ull << 56) ? ticks : 0;
}
/* a timed stretch that has one read's worth in it that is not the program's cost (the clock read only to time it):
 * that read taken off */
static inline uint64_t cprof_tick_less_read(uint64_t ticks)
{
	uint64_t t = cprof_tick_stretch(ticks);

	return t > cprof_tick_read ? t - cprof_tick_read : 0;
}
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
static inline __attribute__((always_inline)) uint64_t cprof_tick(void)
{
#if defined(__x86_64__)
	if (likely(cprof_tick_tsc))
		return __rdtsc();
#endif
	return cprof_now_ns();
}

/* The calls counted and not recorded (a slot each in a ring's counted[]; cprof_counted_api names them): first
 * the device queries CPROF_HOOK_QUERY counts once CUPTI makes no record of them, then the cuBLAS handle
 * settings CPROF_HOOK_COUNTED always counts */
#define CPROF_COUNTED_SLOT_(s) CPROF_COUNTED_##s,
enum cprof_counted_slot { CPROF_COUNTED_QUERIES(CPROF_COUNTED_SLOT_) CPROF_COUNTED__QUERIES };
enum { CPROF_COUNTED__SETTINGS = CPROF_COUNTED__QUERIES - 1, CPROF_COUNTED_SETTINGS(CPROF_COUNTED_SLOT_) CPROF_COUNTED__N };
CPROF_HIDDEN extern const uint16_t cprof_counted_api[CPROF_COUNTED__N];

#define CPROF_RING_EVENTS 16384 /* per thread; power of two. 33 ms at 500k/s: a flusher that waits for a core on a busy machine loses nothing (4096 lost 11% there). mmap-ed: a thread pays only for what it touched */
/* CUPTI's completed buffers held unconverted while the machine has no spare core, at most (CPROF_DEFER_MB) of what
 * they keep resident (the 2 MiB pages their records and a quarter took, one at least a buffer: cupti.c): 8 MiB is
 * ~13,000 eager PyTorch steps of records (~600 B a step) recorded whole, or 4 windows. Each buffer held needs a fresh
 * one for the records after it, whose pages the flusher clears, and a buffer comes back for reuse only once
 * converted: at 64 MiB (the default until 2026-12-07) a busy eager run of 24 windows held them all to its exit and
 * its flusher cleared 130-320 ms of fresh pages in a 3 s run, up to 4.7 us a step (docs/bench.md, thirty-second
 * session) */
#define CPROF_DEFER_MB_DEFAULT 8

struct cprof_ring {
	_Alignas(64) _Atomic uint64_t head; /* written by the owning thread only */
	_Alignas(64) _Atomic uint64_t tail; /* written by the drainer only */
	_Alignas(64) _Atomic uint64_t lost; /* dropped: the ring was full, or (lost_nested) a record interrupted one */
	_Atomic uint64_t lost_nested;       /* part of lost: a signal handler's call while this thread was recording */
	_Atomic uint64_t lost_sent;         /* part of lost already reported (drainer) */
	_Atomic int state;                  /* CPROF_RING_* */
	uint32_t tid;
	/* what the hooks cost this ring's threads (written by the owner, read by the flusher; CPROF_MSG_COST) */
	_Alignas(64) _Atomic uint64_t cost_sampled_ns; /* hook time of the sampled calls, stacks left out */
	_Atomic uint64_t cost_sampled;                 /* calls measured */
	_Atomic uint64_t stack_ns, stack_calls;        /* stack captures, each timed */
	_Atomic uint64_t pass_ns, pass_calls, pass_sq; /* kernel launches passed through while paused: the real call, sampled */
	_Atomic uint64_t passed; /* every kernel launch passed through while paused: the report's pace outside the windows */
	/* device queries counted, not recorded, once CUPTI is on (CPROF_HOOK_QUERY; owner-written) */
	_Alignas(64) _Atomic uint64_t counted[CPROF_COUNTED__N];
	_Atomic uint64_t counted_sampled_ns, counted_sampled; /* one counted call in CPROF_COST_SAMPLE timed */
	/* the owner's schedstat when it took the ring (cprof_flusher_thread_start): written by the owner, start_tid
	 * last; the flusher takes it as the thread's baseline if start_tid is still the ring's tid around its read */
	_Atomic uint32_t start_tid;
	uint64_t start_run, start_wait;
	/* the flusher's alone: the owner's schedstat when last read (a reused ring starts again with its new tid) */
	uint32_t sched_tid;
	uint64_t sched_run, sched_wait;
	uint64_t sched_head;     /* head when the schedstat was last read: an idle thread is not read again */
	uint64_t snap;           /* head seen by the drainer at the start of a round */
	uint64_t exec_mark;      /* the drainer's: head when an exec's BYE counted what was left lost (flusher.c) */
	struct cprof_ring *next; /* registry list; never unlinked, reused when free */
	void *altstack;          /* crash.c: a signal stack for threads that have none; outlives the ring */
	struct cprof_wire_api ev[CPROF_RING_EVENTS];
};
enum { CPROF_RING_LIVE = 1, CPROF_RING_DEAD = 2, CPROF_RING_FREE = 3 };

/* Per-thread call sites for sampled stacks (stacks.c): the hook's return address, the kernel, the
 * innermost Python line (when there is Python). Two ways a set, the newer first: direct-mapped, two sites of
 * a PyTorch training step sharing a slot threw each other out, and each of their 3,000 calls took a stack. */
#define CPROF_SITES 512
struct cprof_site {
	uint64_t key;
	uint32_t left;   /* calls until the next stack is taken */
	uint32_t stack;  /* the last one taken here */
	uint32_t taken;
	uint32_t stride; /* the calls from one stack taken to the next, once past the first (cprof_site_taken) */
};

/* A steady site's stride doubles up to this: a loop's 65,536th call still takes a fresh stack */
#define CPROF_STACK_STRIDE_MAX 65536u

/* Site e's capture gave stack id (0: none): when the next is taken. The first calls of a site each take their
 * own, then one in every; each capture after those that gives the stack the last one gave doubles the stride
 * (to CPROF_STACK_STRIDE_MAX, never below every), and one that differs sets it back to every. A loop's site
 * stops paying an unwind (5-60 us through libtorch) every 256 calls: 154 captures in 20,000 eager PyTorch
 * steps became 20 (docs/bench.md, twenty-fourth session); a site reached from varying callers keeps every.
 * The calls between carry the site's stack, marked inherited. */
static inline void cprof_site_taken(struct cprof_site *e, uint32_t id, unsigned first, unsigned every)
{
	uint32_t prev = e->stack;

	if (id)
		e->stack = id;
	if (++e->taken < first) {
		e->left = 0;
		return;
	}
	if (id == 0 || id != prev || e->stride < every)
		e->stride = every;
	else if (e->stride < CPROF_STACK_STRIDE_MAX)
		e->stride = e->stride * 2 < CPROF_STACK_STRIDE_MAX ? e->stride * 2 : CPROF_STACK_STRIDE_MAX;
	e->left = e->stride - 1;
}
struct cprof_sites {
	uint32_t generation;
	uint32_t py_check_in; /* slow-path calls until Python is looked for again (it may be loaded late) */
	struct cprof_site s[CPROF_SITES];
};

struct cprof_tls {
	struct cprof_ring *ring;
	struct cprof_sites *sites;
	uint64_t tail_seen; /* the ring's tail when last read: re-read only when the ring looks full */
	uint32_t generation; /* rings of another generation belong to a parent process (fork) */
	uint32_t tid;
	int depth;           /* hooked calls in progress on this thread (cuBLAS -> cuBLASLt) */
	int recording;       /* inside cprof_record: a signal handler's hooked call must not write the same slot */
	uint64_t taking_ns;  /* inside cprof_ring_for_thread since then (CLOCK_MONOTONIC; 0: not): a signal handler's
	                      * hooked call then takes no second ring */
	uint32_t calls_left;   /* hooked calls until the next whose hook is timed (cprof_enter; about one in CPROF_COST_SAMPLE) */
	uint32_t counted_left; /* the same for the counted calls (preload/hook.h) */
	uint32_t pass_left;    /* the same for the kernel launches passed through (cprof_pass_begin) */
	uint32_t cost_rng;     /* the strides' xorshift state (0: not yet seeded) */
	uint64_t corr_lo;
	uint64_t stack_call_ns; /* the current call's stack capture, left out of its sampled hook time */
};

extern CPROF_HIDDEN _Atomic int cprof_state;
extern CPROF_HIDDEN __thread struct cprof_tls cprof_tls __attribute__((tls_model("initial-exec")));
/* Set while this thread holds the interner's or the flusher's strings lock (strings.c, flusher.c, the fork
 * handlers): a signal handler's call on it then takes neither again (it would wait for itself). Apart from
 * cprof_tls, which a thread's first ring wipes (ring_take), perhaps inside such a handler. */
extern CPROF_HIDDEN __thread int cprof_in_strings __attribute__((tls_model("initial-exec")));

/* Takes m unless this thread holds it already (*held set: a signal handler's call that interrupted the thread in
 * there would wait for itself): -EDEADLK then, nothing taken. held is the thread's own flag for m. */
static inline int cprof_lock_unless_held(pthread_mutex_t *m, int *held)
{
	if (*held)
		return -EDEADLK;
	*held = 1;
	atomic_signal_fence(memory_order_seq_cst);
	pthread_mutex_lock(m);
	return 0;
}

static inline void cprof_unlock_held(pthread_mutex_t *m, int *held)
{
	pthread_mutex_unlock(m);
	atomic_signal_fence(memory_order_seq_cst);
	*held = 0;
}

/* A warning from the flusher thread waits for an application thread to print it (the flusher may have
 * no stderr of its own). flusher.c */
CPROF_HIDDEN extern _Atomic int cprof_warn_pending;
CPROF_HIDDEN void cprof_warn_flush(void);

/* init.c */
CPROF_HIDDEN int cprof_init_slow(void);
CPROF_HIDDEN void cprof_disable(const char *why);

static inline __attribute__((always_inline)) int cprof_active(void)
{
	int st = atomic_load_explicit(&cprof_state, memory_order_acquire);

	if (likely(st == CPROF_ST_ON))
		return 1;
	if (st == CPROF_ST_UNINIT || st == CPROF_ST_INITING)
		return cprof_init_slow() == 0; /* waits while another thread initialises; 1: started paused */
	if (unlikely(atomic_load_explicit(&cprof_warn_pending, memory_order_relaxed)))
		cprof_warn_flush();
	return 0;
}

/* capture.c: --capture-range (CPROF_CAPTURE). */
/* NVTX and STEPS follow the annotations (nvtx.c calls the capture functions for mode >= NVTX) */
enum { CPROF_CAPTURE_NONE = 0, CPROF_CAPTURE_PROFILER_API, CPROF_CAPTURE_TIMED, CPROF_CAPTURE_NVTX, CPROF_CAPTURE_STEPS };
CPROF_HIDDEN extern int cprof_capture_mode;
CPROF_HIDDEN int cprof_capture_init(void); /* 1: start paused */
/* domain: the range's domain handle (NULL: the default domain), domain_name its name (NULL: none known) */
CPROF_HIDDEN void cprof_capture_nvtx_push(const char *message, const void *domain, const char *domain_name, int level);
CPROF_HIDDEN void cprof_capture_nvtx_pop(const void *domain, int level);
CPROF_HIDDEN void cprof_capture_exit(void); /* the process is exiting: timed windows flip no more */
CPROF_HIDDEN void cprof_capture_reset_after_fork(void);
/* cudaProfilerApi: a profiler start (on) or stop opens or closes the window; why: the call */
CPROF_HIDDEN void cprof_capture_profiler_api(int on, const char *why);
CPROF_HIDDEN int cprof_capture_in_runtime_profiler(void); /* inside cudaProfilerStart/Stop on this thread */
CPROF_HIDDEN void cprof_capture_settle_kinds(void); /* cprof not recording: its CUPTI kinds off (under the switches' lock) */

/* ring.c: the bottom layer; the layers above tell it what to call (set once by init, before any ring) */
struct cprof_ring_ops {
	void (*wake)(void);                            /* events are waiting (the flusher) */
	void (*thread_start)(struct cprof_ring *r);    /* a thread (cprof_tls.tid) takes a ring, before r->tid is set
							* (the crash handler's signal stack, the flusher's schedstat baseline) */
	void (*thread_end)(struct cprof_ring *r);      /* it exits */
	void (*fail)(const char *why);                 /* no ring could be had: stop profiling */
};
CPROF_HIDDEN void cprof_ring_set_ops(const struct cprof_ring_ops *ops);
CPROF_HIDDEN void cprof_ring_wake(void);
CPROF_HIDDEN struct cprof_ring *cprof_ring_for_thread(void);
CPROF_HIDDEN void cprof_rings_init(void); /* from the library's constructor: the thread-exit key, early */
CPROF_HIDDEN void cprof_nvtx_init(void);  /* the same for the deep NVTX domains' level pages (nvtx.c) */
/* hooked calls passed through because a signal handler made them while their thread took its first ring */
CPROF_HIDDEN extern _Atomic uint64_t cprof_ring_lost_nested;
CPROF_HIDDEN void cprof_rings_reset_after_fork(void);
CPROF_HIDDEN struct cprof_ring *cprof_rings_head(void);
CPROF_HIDDEN extern _Atomic uint32_t cprof_generation;
/* 1 while a window's edge switches CUPTI (from its capture-start to its flip on, from its flip off to its
 * capture-stop; capture.c): launches passed through then are not counted in passLaunches, whose gaps run between
 * those outer stamps (report/model/cost.c) */
CPROF_HIDDEN extern _Atomic int cprof_switching;

/* flusher.c */

CPROF_HIDDEN void cprof_flusher_wake(void);
CPROF_HIDDEN void cprof_flusher_cost_edge(void); /* a window opened or closed: a COST row from the next round */
CPROF_HIDDEN void cprof_flusher_final(int reason);

CPROF_HIDDEN void cprof_flusher_reset_after_fork(void);
struct cprof_istr;
CPROF_HIDDEN int cprof_strings_add_once(struct cprof_istr *e, uint32_t gen);
CPROF_HIDDEN extern _Atomic int cprof_wake_pending;

/* Record one finished call into this thread's ring. Never blocks; a full ring counts a loss. */
static inline __attribute__((always_inline)) void cprof_record(const struct cprof_wire_api *ev)
{
	struct cprof_ring *r = cprof_tls.ring;
	uint64_t h, t;

	if (unlikely(r == NULL || cprof_tls.generation != atomic_load_explicit(&cprof_generation, memory_order_relaxed))) {
		r = cprof_ring_for_thread();
		if (r == NULL)
			return;
	}
	/* one producer per ring: a hooked call from a signal handler that interrupted this one would write the
	 * same slot; it is counted lost instead */
	if (unlikely(cprof_tls.recording)) {
		atomic_store_explicit(&r->lost_nested, atomic_load_explicit(&r->lost_nested, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_store_explicit(&r->lost, atomic_load_explicit(&r->lost, memory_order_relaxed) + 1, memory_order_relaxed);
		return;
	}
	cprof_tls.recording = 1;
	atomic_signal_fence(memory_order_seq_cst);
	h = atomic_load_explicit(&r->head, memory_order_relaxed);
	/* the tail is the flusher's cache line: read it only when the ring looks full, not per event */
	if (unlikely(h - cprof_tls.tail_seen >= CPROF_RING_EVENTS)) {
		cprof_tls.tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (h - cprof_tls.tail_seen >= CPROF_RING_EVENTS) {
			atomic_store_explicit(&r->lost, atomic_load_explicit(&r->lost, memory_order_relaxed) + 1,
					      memory_order_relaxed);
			if (!atomic_load_explicit(&cprof_wake_pending, memory_order_relaxed))
				cprof_ring_wake();
			goto out;
		}
	}
	r->ev[h & (CPROF_RING_EVENTS - 1)] = *ev;
	r->ev[h & (CPROF_RING_EVENTS - 1)].tid = cprof_tls.tid;
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	/* the ring (1.7 MB) is larger than the caches: each slot's lines were evicted a lap ago, and writing them
	 * cold cost the hook a miss per line. Fetched now, they arrive while the program runs to its next call. */
	{
		const char *next = (const char *)&r->ev[(h + 1) & (CPROF_RING_EVENTS - 1)];

		__builtin_prefetch(next, 1, 3);
		__builtin_prefetch(next + 64, 1, 3);
		__builtin_prefetch(next + sizeof(*ev) - 1, 1, 3);
	}
	/* every quarter ring: wake the flusher early when a quarter is waiting */
	if (unlikely((h & (CPROF_RING_EVENTS / 4 - 1)) == 0)) {
		t = atomic_load_explicit(&r->tail, memory_order_acquire);
		cprof_tls.tail_seen = t;
		if (h - t >= CPROF_RING_EVENTS / 4 && !atomic_load_explicit(&cprof_wake_pending, memory_order_relaxed))
			cprof_ring_wake();
	}
out:
	atomic_signal_fence(memory_order_seq_cst);
	cprof_tls.recording = 0;
}

/* A device query once CUPTI is on: one relaxed add in the thread's own ring, no clock read, no event. Outside a
 * capture window (or stopped) it is not counted, as no call is. */
/* the counts of threads with no ring (their only calls were counted ones): a thread gets no ring, no signal
 * stack and no key destructor for a query, e.g. one asked in its exit, as before the queries were counted */
CPROF_HIDDEN extern _Atomic uint64_t cprof_counted_ringless[];

static inline __attribute__((always_inline)) void cprof_count_query(unsigned slot)
{
	struct cprof_ring *r = cprof_tls.ring;

	if (unlikely(atomic_load_explicit(&cprof_state, memory_order_relaxed) != CPROF_ST_ON))
		return;
	if (unlikely(r == NULL || cprof_tls.generation != atomic_load_explicit(&cprof_generation, memory_order_relaxed))) {
		atomic_fetch_add_explicit(&cprof_counted_ringless[slot], 1, memory_order_relaxed);
		return;
	}
	atomic_store_explicit(&r->counted[slot], atomic_load_explicit(&r->counted[slot], memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* ring.c: the next stride between two timed calls, drawn from [CPROF_COST_SAMPLE / 2, 3 CPROF_COST_SAMPLE / 2),
 * into *left; whether this call is timed (not the one that makes the thread's first draw, which seeds it) */
CPROF_HIDDEN int cprof_cost_refill(uint32_t *left);

/* Whether this call is one whose hook is timed. The strides are drawn, not fixed: a step makes its calls in a
 * fixed order, and one in every 64th would always be the same call of the step (the eager PyTorch step makes two
 * hooked calls, cublasGemmEx and the add's launch: a process timed only the one its start's parity gave it, and
 * its stated hook cost was 314 or 520 ns a step, 2026-12-04) */
static inline __attribute__((always_inline)) int cprof_cost_due(uint32_t *left)
{
	if (likely(*left != 0)) {
		--*left;
		return 0;
	}
	return cprof_cost_refill(left);
}

/* Whether this counted call is one whose hook is timed (the timed path is out of line) */
static inline __attribute__((always_inline)) int cprof_counted_timed(void)
{
	return unlikely(cprof_cost_due(&cprof_tls.counted_left));
}
/* init.c: a timed counted call's own time (ticks), into its thread's ring */
CPROF_HIDDEN void cprof_counted_cost_sample(uint64_t ticks);

/* A counted call that reported an error: an instant event with its code (the count has the call already) */
CPROF_HIDDEN void cprof_record_error(unsigned api, int ret) __attribute__((cold)); /* init.c */

/* cupti.c: the GPU lane. CUPTI starts at the first call that brings the driver up, once a driver has
 * answered; until then cprof_cupti_on is PENDING. */
enum { CPROF_CUPTI_OFF = 0, CPROF_CUPTI_ON = 1, CPROF_CUPTI_PENDING = 2, CPROF_CUPTI_STARTING = 3 };
CPROF_HIDDEN extern _Atomic int cprof_cupti_on; /* ON while our CUPTI session is live: push external ids */
/* 1 while CUPTI makes no records of the device queries (cprof switched them off): the hooks count them */
CPROF_HIDDEN extern _Atomic int cprof_queries_counted;
/* driver_known: called from the driver's own cuInit (InitializeInjection) */
CPROF_HIDDEN void cprof_cupti_start_checked(int driver_known);
/* Outside a capture range GPU records are not collected: pause flushes what is done and disables them. */
CPROF_HIDDEN void cprof_cupti_pause(int pause);
CPROF_HIDDEN void cprof_cupti_orphan(int may_switch); /* cprof stopped for good: its buffers dropped, kinds off */
/* whether a call made now leaves CUPTI nothing to record: paused by cprof, no other client's kinds on */
CPROF_HIDDEN int cprof_cupti_unrecorded(void);
CPROF_HIDDEN void cprof_cupti_push(uint64_t corr);
CPROF_HIDDEN void cprof_cupti_pop(void);
CPROF_HIDDEN void cprof_cupti_flush(int forced);
/* the flusher drained gemms recorded GEMM calls in all: at CPROF_OCCUPANCY_GEMMS the occupancy queries' CUPTI
 * records go off (cuBLAS makes one in each; their time is the GEMM call's) */
#define CPROF_OCCUPANCY_GEMMS 256
CPROF_HIDDEN void cprof_cupti_gemms_drained(uint64_t gemms);
/* the flusher, after its round once CUPTI has started: the empty slots of CUPTI's buffer pool filled with buffers whose
 * pages this thread has written (as far as CUPTI writes lately), once at CUPTI's start, then while paused between
 * windows with buffers held, and a step a round while recording with a slot empty, so the program's thread does not
 * clear them when CUPTI writes there */
CPROF_HIDDEN void cprof_cupti_pool_fill(void);
/* how many converted CUPTI buffers are kept for reuse, from CPROF_DEFER_MB (the flusher's start) */
CPROF_HIDDEN void cprof_cupti_spares(unsigned defer_mb);
/* CUPTI buffers made fresh (pages someone clears) and converted ones reused, so far (the exit's debug log) */
CPROF_HIDDEN void cprof_cupti_buffer_counts(uint64_t *made, uint64_t *reused);
/* an exec that failed: the image goes on, so does the program's own CUPTI client (cupti-share.c) */
CPROF_HIDDEN void cprof_cupti_exec_failed(void);
/* driver_up: the parent's driver was initialised (its cuInit called InitializeInjection), CUPTI started or not */
CPROF_HIDDEN void cprof_cupti_reset_after_fork(int driver_up);
struct cprof_gpu_sink;
/* Converts completed CUPTI buffers into wire records, at most max a call (the next call goes on from there);
 * returns how many. Called by the drainer only. */
CPROF_HIDDEN int cprof_cupti_collect(int (*emit)(const struct cprof_wire_gpu *rec, void *ctx), void *ctx, int max);
/* a drain out of time as the image ends: how many events CUPTI's records not converted yet were (counted until
 * deadline_ms, CLOCK_MONOTONIC, then estimated); an exit or a crash drops them (drop), an exec keeps them until it
 * fails (then cprof_cupti_drop_taken) */
CPROF_HIDDEN uint64_t cprof_cupti_unconverted(uint64_t deadline_ms, int drop);
CPROF_HIDDEN void cprof_cupti_drop_taken(void);
/* bytes of records CUPTI completed that cprof_cupti_collect has not converted yet */
CPROF_HIDDEN uint64_t cprof_cupti_pending_bytes(void);

/* pressure.c: /proc/pressure/cpu's "some" total (us) from its text, 0 or -EINVAL; and whether a stall of
 * stall_us over elapsed_ms says the machine has no spare core (1) */
CPROF_HIDDEN int cprof_psi_some_total(const char *text, uint64_t *total_us);
CPROF_HIDDEN int cprof_psi_busy(uint64_t stall_us, uint64_t elapsed_ms);

/* stacks.c: call stacks at launches, copies, memsets, GEMMs and syncs (CPROF_STACKS). */
enum { CPROF_STACKS_OFF = 0, CPROF_STACKS_SAMPLED, CPROF_STACKS_ALL };
CPROF_HIDDEN extern int cprof_stack_mode;
CPROF_HIDDEN void cprof_stacks_init(void);
CPROF_HIDDEN void cprof_stacks_lock(int lock);
CPROF_HIDDEN void cprof_stacks_reset_after_fork(void);
static inline __attribute__((always_inline)) int cprof_api_stacked(unsigned api)
{
	enum cprof_api_class c = cprof_api_class_of(api);

	return c == CPROF_CLASS_LAUNCH || c == CPROF_CLASS_MEMCPY || c == CPROF_CLASS_MEMSET || c == CPROF_CLASS_GEMM ||
	       c == CPROF_CLASS_SYNC;
}
/* Sets ev->stack (and CPROF_API_F_STACK_INHERITED) for a call returning to ret_addr. */
CPROF_HIDDEN void cprof_stack_attach(struct cprof_wire_api *ev, const void *ret_addr);
CPROF_HIDDEN extern _Atomic int cprof_py_seen;

static inline __attribute__((always_inline)) uint64_t cprof_site_key(const void *ret_addr, const struct cprof_wire_api *ev)
{
	return (uintptr_t)ret_addr ^ (ev->ptr << 16);
}

/* The site's entry, moved to the front of its set; or, for a new site, the front one to reuse (its key
 * differs), the newer having been moved over the older. Asking twice gives the same (the inline path asks,
 * then cprof_stack_attach). */
static inline __attribute__((always_inline)) struct cprof_site *cprof_site_of(struct cprof_sites *ts, uint64_t key)
{
	/* return addresses and host stubs differ in their low bits */
	struct cprof_site *e = &ts->s[2 * ((key ^ (key >> 8) ^ (key >> 20)) & (CPROF_SITES / 2 - 1))], t;

	if (likely(e[0].key == key))
		return e;
	if (e[1].key == key) {
		t = e[1];
		e[1] = e[0];
		e[0] = t;
		return e;
	}
	e[1] = e[0];
	return e;
}

/* The common case inline: a known site between two samples reuses its stack; the rest (a new site, a
 * sample, Python in the process, mode all) goes to cprof_stack_attach. */
static inline __attribute__((always_inline)) void cprof_stack_fast(struct cprof_wire_api *ev, const void *ret_addr)
{
	struct cprof_sites *ts = cprof_tls.sites;

	if (likely(ts != NULL && ts->generation == cprof_tls.generation && cprof_stack_mode == CPROF_STACKS_SAMPLED &&
		   !atomic_load_explicit(&cprof_py_seen, memory_order_relaxed))) {
		uint64_t key = cprof_site_key(ret_addr, ev);
		struct cprof_site *e = cprof_site_of(ts, key);

		if (likely(e->key == key && e->left != 0)) {
			e->left--;
			if (e->stack) {
				ev->stack = e->stack;
				ev->flags |= CPROF_API_F_STACK_INHERITED;
			}
			return;
		}
	}
	cprof_stack_attach(ev, ret_addr);
}

/* One timed sample into a pair of a ring's totals (time, samples); the ring's owner is their only writer. */
static inline void cprof_ring_sample(_Atomic uint64_t *total_ns, _Atomic uint64_t *samples, uint64_t ns)
{
	atomic_store_explicit(total_ns, atomic_load_explicit(total_ns, memory_order_relaxed) + ns, memory_order_relaxed);
	atomic_store_explicit(samples, atomic_load_explicit(samples, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* A sampled call's hook time into this thread's ring. */
static inline void cprof_cost_sample(uint64_t ns)
{
	struct cprof_ring *r = cprof_tls.ring;

	if (r == NULL || ns >= CPROF_COST_SAMPLE_MAX_NS) /* a negative difference wraps above the bound too */
		return;
	cprof_ring_sample(&r->cost_sampled_ns, &r->cost_sampled, ns);
}

/* Begin/end of a hooked call. enter returns 0 when the call must only be passed through. */
struct cprof_call {
	uint64_t start;
	uint64_t corr;
	uint64_t t_in; /* nonzero on a sampled call: when the hook was entered */
	int nested;
	int pushed;
};

static inline __attribute__((always_inline)) int cprof_enter(struct cprof_call *c, unsigned api)
{
	int cu;

	if (!cprof_active())
		return 0;
	if (unlikely(cprof_tls.ring == NULL ||
		     cprof_tls.generation != atomic_load_explicit(&cprof_generation, memory_order_relaxed))) {
		if (cprof_ring_for_thread() == NULL)
			return 0;
	}
	/* about one call in CPROF_COST_SAMPLE measures what the hook itself costs (two clock reads more) */
	c->t_in = unlikely(cprof_cost_due(&cprof_tls.calls_left)) ? cprof_tick() : 0;
	c->nested = cprof_tls.depth++ > 0;
	/* unique in the process: thread id above, per-thread counter below */
	c->corr = ((uint64_t)cprof_tls.tid << 40) | (++cprof_tls.corr_lo & ((1ull << 40) - 1));
	/* CUPTI tags the runtime record of this call, and through it the GPU work, with our id */
	cu = atomic_load_explicit(&cprof_cupti_on, memory_order_relaxed);
	if (unlikely(cu == CPROF_CUPTI_PENDING) && cprof_api_inits_driver(api)) {
		cprof_cupti_start_checked(0);
		cu = atomic_load_explicit(&cprof_cupti_on, memory_order_relaxed);
	}
	c->pushed = cu == CPROF_CUPTI_ON;
	if (c->pushed)
		cprof_cupti_push(c->corr);
	c->start = cprof_tick();
	return 1;
}

static inline __attribute__((always_inline)) void cprof_leave(struct cprof_call *c, struct cprof_wire_api *ev, unsigned api, int ret)
{
	ev->end_ns = cprof_tick(); /* ticks until the flusher maps them (cprof_tick_ns) */
	if (c->pushed)
		cprof_cupti_pop();
	cprof_tls.depth--;
	ev->start_ns = c->start;
	ev->corr = c->corr;
	ev->api = api;
	ev->ret = ret;
	ev->flags |= c->nested ? CPROF_API_F_NESTED : 0;
	/* after end_ns: the time spent unwinding is not charged to the call. The class test folds away in
	 * each hook (api is a constant there). */
	if (unlikely(c->t_in))
		cprof_tls.stack_call_ns = 0;
	if (cprof_stack_mode != CPROF_STACKS_OFF && cprof_api_stacked(api))
		cprof_stack_fast(ev, __builtin_return_address(0));
	cprof_record(ev);
	if (unlikely(c->t_in))
		/* each stretch has one read's worth in it, which stands for the call's start and end reads: the
		 * program pays those on every recorded call, so none is taken off (taking the least read off each
		 * under-counted a hooked call by ~56 ns on this VM's CLOCK_REALTIME) */
		cprof_cost_sample(cprof_tick_dur_ns(cprof_tick_stretch(c->start - c->t_in) +
						    cprof_tick_stretch(cprof_tick() - ev->end_ns)) -
				  cprof_tls.stack_call_ns);
}

/* A kernel launch passed through while a window is closed (CUPTI's kinds all off): about one in CPROF_COST_SAMPLE
 * times the real call alone, the same two reads around it as a recorded launch's start and end. The report sets
 * the mean of these against the recorded launches' to measure CUPTI's time inside a call, which the call less
 * its CUPTI record over-counted (cudart's own work outside the record: 2x CUPTI's on the simulated GPU's eager
 * PyTorch step, 2026-12-06) and, on a real GPU, may under-count (CUPTI's work inside the record). init.c. */
CPROF_HIDDEN uint64_t cprof_pass_begin_slow(void);
CPROF_HIDDEN void cprof_pass_sample(uint64_t ticks);
static inline __attribute__((always_inline)) uint64_t cprof_pass_begin(unsigned api)
{
	struct cprof_ring *r;

	/* a kernel launch only (a graph's launch is another cost): the test folds away in each hook */
	if (cprof_api_class_of(api) != CPROF_CLASS_LAUNCH || api == CPROF_API_cudaGraphLaunch ||
	    api == CPROF_API_cudaGraphLaunch_ptsz)
		return 0;
	/* each one counted while a window is closed, on a thread with a ring of this process: against the launches
	 * recorded in the windows, the program's pace with and without cprof recording (cost.c) */
	r = cprof_tls.ring;
	if (r != NULL && atomic_load_explicit(&cprof_state, memory_order_relaxed) == CPROF_ST_PAUSED &&
	    !atomic_load_explicit(&cprof_switching, memory_order_relaxed) &&
	    cprof_tls.generation == atomic_load_explicit(&cprof_generation, memory_order_relaxed))
		atomic_store_explicit(&r->passed, atomic_load_explicit(&r->passed, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	if (likely(!cprof_cost_due(&cprof_tls.pass_left)))
		return 0;
	return cprof_pass_begin_slow();
}
/* the real call of a hook that passes it through: call is evaluated once */
#define CPROF_PASS(api, call)                                                                        \
	({                                                                                           \
		uint64_t t_p_ = cprof_pass_begin(api);                                               \
		__typeof__(call) r_p_ = (call);                                                      \
		if (unlikely(t_p_ != 0))                                                             \
			cprof_pass_sample(cprof_tick() - t_p_);                                      \
		r_p_;                                                                                \
	})

/* dlsym.c: whether libcprof was loaded after libc (a dlopen: CUDA's of CUDA_INJECTION64_PATH, or the program's),
 * not preloaded, so that no hook interposes; 0 where libc is not found by its name (nothing is claimed). */
CPROF_HIDDEN int cprof_loaded_after_libc(void);

/* symbols.c: the next definition of sym in the hook chain (see DESIGN.md on version nodes). */
CPROF_HIDDEN void *cprof_resolve(const char *sym, const char *soname);

#define CPROF_MISSING ((void *)1)
#define CPROF_REAL(fn, soname)                                                               \
	({                                                                                   \
		static void *real_##fn##_p;                                                  \
		void *p_ = __atomic_load_n(&real_##fn##_p, __ATOMIC_ACQUIRE);                \
		if (unlikely(p_ == NULL)) {                                                  \
			p_ = cprof_resolve(#fn, soname);                                     \
			__atomic_store_n(&real_##fn##_p, p_ ? p_ : CPROF_MISSING, __ATOMIC_RELEASE); \
		}                                                                            \
		(__typeof__(&fn))(p_ == CPROF_MISSING ? NULL : p_);                          \
	})

/* kernels.c: host stub / cudaKernel_t -> per-process string id of the kernel's name. */
CPROF_HIDDEN void cprof_kernel_register(const void *key, const char *name);
CPROF_HIDDEN void cprof_kernel_alias(const void *alias, const void *key);
CPROF_HIDDEN uint32_t cprof_kernel_name_id(const void *key);
CPROF_HIDDEN void cprof_kernels_lock(int lock);

/* MurmurHash3's 64-bit finaliser: hash table keys from pointers and mixed values. */
static inline uint64_t cprof_fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/* strings.c, the one interner: text of a kind (kernel and API names, module paths, Python names, NVTX
 * messages) -> per-process string id, queued for the collector once per process; 0 when it cannot be
 * interned. Lock-free when already known. cprof_intern_entry finds or adds the entry without queueing it
 * (a kernel registered is named only if launched); cprof_intern_id queues it (once) and gives its id. */
struct cprof_istr {
	uint64_t hash;
	uint32_t id;
	uint16_t kind;
	uint16_t len;
	_Atomic uint32_t queued_gen;     /* generation in which it was queued for the collector */
	struct cprof_istr *next_queued; /* the flusher's queue of strings to send, under its strings lock */
	char text[];
};
CPROF_HIDDEN uint32_t cprof_intern(uint16_t kind, const char *s, size_t len);
CPROF_HIDDEN struct cprof_istr *cprof_intern_entry(uint16_t kind, const char *s, size_t len);
CPROF_HIDDEN uint32_t cprof_intern_id(struct cprof_istr *e);
CPROF_HIDDEN void cprof_strings_lock(int lock);

/* flusher.c: a stack for the collector (sent after the strings it names, before later events). */
CPROF_HIDDEN int cprof_stacks_add(const struct cprof_wire_stack *st, const struct cprof_wire_frame *frames);

/* crash.c: the fatal-signal handler, installed when the flusher starts; a thread's signal stack. */
CPROF_HIDDEN void cprof_crash_install(void);
CPROF_HIDDEN void cprof_crash_thread_start(struct cprof_ring *r);
CPROF_HIDDEN void cprof_crash_thread_end(struct cprof_ring *r);
CPROF_HIDDEN void cprof_crash_reset_after_fork(void);
CPROF_HIDDEN void cprof_crash_exec(int begin); /* around exec: the program's SIG_IGN in the kernel's table */
/* flusher.c, from the handler (async-signal-safe): everything recorded, a forced CUPTI flush and a CRASH
 * frame, by the flusher within timeout_ms, else the crashing thread's own ring and CRASH by this thread.
 * Returns 0 (flusher), 1 (this thread), -1 (nothing could be sent). */
CPROF_HIDDEN int cprof_flusher_crash(const struct cprof_wire_crash *info, int timeout_ms);

/* flusher.c: a STATUS message for the collector (and the profile). */
CPROF_HIDDEN void cprof_flusher_add_lost(uint64_t n);
CPROF_HIDDEN void cprof_flusher_status(uint32_t code, int32_t err, const char *text);
/* the same, stamped time_ns (a window's bounds are stamped next to the switch, before anything else is done) */
CPROF_HIDDEN void cprof_flusher_status_at(uint32_t code, int32_t err, const char *text, uint64_t time_ns);

#endif
