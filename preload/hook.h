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

#endif
