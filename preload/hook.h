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

/* A query that makes no GPU work (cudaGetDevice): once CUPTI is on, its runtime record has the call's
 * thread, time and return code, so the hook passes it straight through, with no clock read, no external id
 * and no event. PyTorch asks cudaGetDevice before most of its calls: 14 of the eager step's 20 hooked calls
 * were these, a third of what cprof cost the step. Until CUPTI is on (or without it) they are recorded as
 * any call, so a run where CUDA never came up still says which query failed. */
#define CPROF_HOOK_QUERY(rtype, sym, soname, noreal, params, args, fill)                             \
	CPROF_EXPORT rtype sym params                                                                \
	{                                                                                            \
		if (likely(atomic_load_explicit(&cprof_cupti_on, memory_order_relaxed) == CPROF_CUPTI_ON)) { \
			__typeof__(&sym) real_q = CPROF_REAL(sym, soname);                           \
			return real_q ? real_q args : noreal;                                        \
		}                                                                                    \
		CPROF_HOOK_BODY(rtype, sym, soname, noreal, args, fill)                              \
	}

#endif
