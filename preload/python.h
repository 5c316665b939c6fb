/* Python call sites: the CPython frames of the calling thread, through CPython's functions or (GIL released) from memory. */
#ifndef CPROF_PRELOAD_PYTHON_H
#define CPROF_PRELOAD_PYTHON_H

#include <stdint.h>

#include "common/wire.h"
#include "preload/cprof.h"

/* 1 once CPython 3.9+ (with a GIL) was found in the process. Checked lazily: cheap after the first
 * call; while no Python is found it looks again now and then (libpython may be dlopen'ed later). */
CPROF_HIDDEN int cprof_py_available(void);

/* A cheap key of the innermost Python frame: its code object mixed with the current instruction
 * offset (3.11+; the line on 3.9/3.10), so two calls on one line may differ. 0 when no Python frame
 * can be read now (no Python, not initialised, a thread Python does not know, a layout that failed its
 * check while the GIL is released, no frame). The same with the GIL held and released. */
CPROF_HIDDEN uint64_t cprof_py_site(void);

/* Python frames of the calling thread, innermost first (off = line, module = file string id,
 * func = qualified name string id); returns how many, at most max (0 when none can be read). */
CPROF_HIDDEN int cprof_py_capture(struct cprof_wire_frame *out, int max);

/* Tests only: moves one offset of the frame layout, as a CPython build with another layout would have
 * it, so that the layout check must fail. */
CPROF_HIDDEN void cprof_py_test_skew_layout(void);

/* In the child after fork (single-threaded): forgets state a thread that did not survive may have
 * been changing. */
CPROF_HIDDEN void cprof_py_reset_after_fork(void);

#endif
