/* The shape of a hook: time the call, keep its arguments, forward it unchanged (hand-written and generated hooks). */
#ifndef CPROF_PRELOAD_HOOK_H
#define CPROF_PRELOAD_HOOK_H

#include "preload/cprof.h"

/* fill is a statement run after the real call, with ev, ret and the arguments in scope. A missing real
 * function gives noreal, an error, never a crash. */
#define CPROF_HOOK_BODY(rtype, sym, soname, noreal, args, fill)                                      \
	{                                                                                            \
		__typeof__(&sym) real = CPROF_REAL(sym, soname);                                     \
		struct cprof_wire_api ev = { 0 };                                                    \
		struct cprof_call c;                                                                 \
		rtype ret;                                                                           \
                                                                                                     \
		if (unlikely(real == NULL))                                                          \
			return noreal;                                                               \
		if (!cprof_enter(&c, CPROF_API_##sym))                                               \
			return real args;                                                            \
		ret = real args;                                                                     \
		fill;                                                                                \
		cprof_leave(&c, &ev, CPROF_API_##sym, (int)ret);                                     \
		return ret;                                                                          \
	}

#define CPROF_HOOK(rtype, sym, soname, noreal, params, args, fill)                                   \
	CPROF_EXPORT rtype sym params CPROF_HOOK_BODY(rtype, sym, soname, noreal, args, fill)

/* A counted call done: one more in its count, and an instant event with the code when it failed */
#define CPROF_COUNT_DONE(sym, ret)                                                                   \
	do {                                                                                         \
		cprof_count_query(CPROF_COUNTED_##sym);                                              \
		if (unlikely((ret) != 0))                                                            \
			cprof_record_error(CPROF_API_##sym, (int)(ret));                             \
	} while (0)

/* A query that makes no GPU work (cudaGetDevice): once CUPTI is on, cprof switches CUPTI's records of it off
 * (as Kineto does for cudaGetDevice) and the hook only counts it: no clock read (but in one call of 64, which
 * times the count for the stated cost), no external id, no event, no record for the flusher, the collector and
 * the writer; one that fails is recorded (an instant event with
 * its code). PyTorch asks cudaGetDevice before most of its calls:
 * ~1,350 a training step, 14 of the eager step's 20 hooked calls. Where CUPTI would not switch them off it
 * records them and the hook passes them through. Until CUPTI is on (or without it) they are recorded as any
 * call, so a run where CUDA never came up still says which query failed. */
#define CPROF_HOOK_QUERY(rtype, sym, soname, noreal, params, args, fill)                             \
	static __attribute__((noinline, cold)) rtype cprof_slow_##sym params                          \
		CPROF_HOOK_BODY(rtype, sym, soname, noreal, args, fill)                              \
	/* one call in CPROF_COST_SAMPLE: the hook's own time after the real call (the count; before it there is   \
	 * one load), its clock read taken off, for the stated cost */                                        \
	static __attribute__((noinline, cold)) rtype cprof_timed_##sym params                         \
	{                                                                                            \
		__typeof__(&sym) real_q = CPROF_REAL(sym, soname);                                   \
		rtype ret_q;                                                                         \
		uint64_t t_q;                                                                        \
                                                                                                     \
		if (unlikely(real_q == NULL))                                                        \
			return noreal;                                                               \
		ret_q = real_q args;                                                                 \
		t_q = cprof_tick();                                                                  \
		if (likely(atomic_load_explicit(&cprof_queries_counted, memory_order_relaxed)))      \
			CPROF_COUNT_DONE(sym, ret_q);                                                \
		cprof_counted_cost_sample(cprof_tick_less_read(cprof_tick() - t_q));                 \
		return ret_q;                                                                        \
	}                                                                                            \
	CPROF_EXPORT rtype sym params                                                                \
	{                                                                                            \
		/* the slow path (recorded as any call) is out of line: this one saves no registers */  \
		if (likely(atomic_load_explicit(&cprof_cupti_on, memory_order_relaxed) == CPROF_CUPTI_ON)) { \
			__typeof__(&sym) real_q = CPROF_REAL(sym, soname);                           \
			rtype ret_q;                                                                 \
                                                                                                     \
			if (unlikely(real_q == NULL))                                                \
				return noreal;                                                       \
			if (cprof_counted_timed())                                                   \
				return cprof_timed_##sym args;                                       \
			ret_q = real_q args;                                                         \
			if (likely(atomic_load_explicit(&cprof_queries_counted, memory_order_relaxed))) \
				CPROF_COUNT_DONE(sym, ret_q);                                        \
			return ret_q;                                                                \
		}                                                                                    \
		return cprof_slow_##sym args;                                                        \
	}

/* A counted call: the real one, then, when cprof records and when holds, one more in the count, and an instant
 * event with the code when it failed (0 is success for cudart and cuBLAS alike). */
#define CPROF_HOOK_COUNTED_WHEN(rtype, sym, soname, noreal, params, args, when)                      \
	static __attribute__((noinline, cold)) rtype cprof_timed_##sym params                         \
	{                                                                                            \
		__typeof__(&sym) real = CPROF_REAL(sym, soname);                                     \
		rtype ret;                                                                           \
		uint64_t t_c;                                                                        \
		int counts;                                                                          \
                                                                                                     \
		if (unlikely(real == NULL))                                                          \
			return noreal;                                                               \
		ret = real args;                                                                     \
		counts = likely(cprof_active()) && (when); /* outside the timing: it may start cprof */  \
		t_c = cprof_tick();                                                                  \
		if (counts) {                                                                        \
			CPROF_COUNT_DONE(sym, ret);                                                  \
			cprof_counted_cost_sample(cprof_tick_less_read(cprof_tick() - t_c));         \
		}                                                                                    \
		return ret;                                                                          \
	}                                                                                            \
	CPROF_EXPORT rtype sym params                                                                \
	{                                                                                            \
		__typeof__(&sym) real = CPROF_REAL(sym, soname);                                     \
		rtype ret;                                                                           \
                                                                                                     \
		if (unlikely(real == NULL))                                                          \
			return noreal;                                                               \
		if (cprof_counted_timed())                                                           \
			return cprof_timed_##sym args;                                               \
		ret = real args;                                                                     \
		if (likely(cprof_active()) && (when))                                                \
			CPROF_COUNT_DONE(sym, ret);                                                  \
		return ret;                                                                          \
	}

/* A call that makes no GPU work and has no CUPTI record (cuBLAS's handle settings, which PyTorch makes around
 * every GEMM: 4 of the eager step's 6 hooked calls after the queries): counted, with or without CUPTI. */
#define CPROF_HOOK_COUNTED(rtype, sym, soname, noreal, params, args)                                 \
	CPROF_HOOK_COUNTED_WHEN(rtype, sym, soname, noreal, params, args, 1)

/* An error check PyTorch makes after every launch (cudaGetLastError): counted once CUPTI is on only while CUPTI
 * makes no record of it (cprof switched it off), before that always (a program that polls it without CUPTI
 * fills no ring). */
#define CPROF_HOOK_COUNTED_QUERY(rtype, sym, soname, noreal, params, args)                           \
	CPROF_HOOK_COUNTED_WHEN(rtype, sym, soname, noreal, params, args,                           \
				atomic_load_explicit(&cprof_queries_counted, memory_order_relaxed) ||        \
					atomic_load_explicit(&cprof_cupti_on, memory_order_relaxed) != CPROF_CUPTI_ON)

#endif
