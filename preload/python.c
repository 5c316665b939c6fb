/* Python call sites: CPython frames of the calling thread, through CPython's exported functions or, GIL released, from memory. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define PR_FMT "cprof: python"
#include "common/log.h"
#include "common/wire.h"
#include "preload/cprof.h"
#include "preload/python.h"

/* With the GIL held every object is opaque: only CPython's functions look inside. Without it, the frame
 * layouts below are used (no headers, no link either way). */
typedef void pyobj;

static struct {
	int (*IsInitialized)(void);
	int (*GILState_Check)(void);
	void *(*GILState_GetThisThreadState)(void);
	void *(*ThreadState_Unchecked)(void);
	pyobj *(*Eval_GetFrame)(void);
	pyobj *(*Frame_GetBack)(pyobj *f);
	pyobj *(*Frame_GetCode)(pyobj *f);
	int (*Frame_GetLineNumber)(pyobj *f);
	int (*Frame_GetLasti)(pyobj *f); /* 3.11+; NULL before */
	int (*Code_Addr2Line)(pyobj *code, int lasti);
	pyobj *(*Object_GetAttrString)(pyobj *o, const char *name);
	const char *(*Unicode_AsUTF8AndSize)(pyobj *s, ssize_t *len);
	void (*IncRef)(pyobj *o);
	void (*DecRef)(pyobj *o);
	pyobj *(*Err_Occurred)(void);
	void (*Err_Clear)(void);
	void (*Err_Fetch)(pyobj **t, pyobj **v, pyobj **tb);
	void (*Err_Restore)(pyobj *t, pyobj *v, pyobj *tb);
	pyobj *(*Err_GetRaisedException)(void); /* 3.12+: one object instead of the deprecated triple */
	void (*Err_SetRaisedException)(pyobj *exc);
	const void *Code_Type, *Frame_Type, *Unicode_Type; /* type checks of what is read from memory */
	int (*IsFinalizing)(void);
	const void *Runtime; /* _PyRuntime: 3.13's layout table (_Py_DebugOffsets) opens it */
	int minor;
	/* Up to 3.11 the "current" thread state is the GIL holder's, process-wide, not this thread's own,
	 * and PyGILState_Check answers 1 once sub-interpreters exist: compare with this thread's state. */
	int owner_check;
} py;

enum { PY_UNKNOWN = 0, PY_ON, PY_OFF /* final */, PY_NOT_YET /* no CPython symbols: look again later */ };
static _Atomic int py_state;
static pthread_mutex_t py_lock = PTHREAD_MUTEX_INITIALIZER;
/* per thread, so a process without Python shares no counter between its threads */
static __thread uint32_t py_retry_in __attribute__((tls_model("initial-exec")));
#define PY_RETRY_EVERY 4096

static void *sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

#define NEED(field, name)                                  \
	do {                                               \
		*(void **)&py.field = sym(name);           \
		if (py.field == NULL) {                    \
			missing = name;                    \
			goto off;                          \
		}                                          \
	} while (0)

/* ---- frames read from memory: a thread that released the GIL (PyTorch ops, ctypes.CDLL calls) ----
 *
 * Such a thread may not call into CPython, but its own frames cannot change while it is inside the hooked
 * call: it runs no bytecode until it takes the GIL back, and each frame holds its code object. So its
 * thread state (PyGILState_GetThisThreadState: a thread-local read) and frame chain are read directly,
 * with the layout of the running version: 3.13 publishes it in _Py_DebugOffsets at the head of
 * _PyRuntime (what py-spy and austin read); 3.9 to 3.12 have a table here. Only pure CPython functions
 * are called (PyCode_Addr2Line reads the code's immutable line table). The layout is checked before it is
 * used: the first walk reads through the kernel (a wrong offset faults there, not here) and every code
 * object, frame and string must have its type; the first walk with the GIL held must match what CPython's
 * own functions say. Any failure turns these reads off, with one message. */
struct pylayout {
	int frame_objects;   /* 3.9/3.10: a chain of PyFrameObject, f_lasti an int */
	int lasti_unit;      /* 3.9: f_lasti counts bytes; 3.10: code units of 2 bytes */
	long ts_frame;       /* thread state -> innermost frame (3.9/3.10/3.13), or -1 */
	long ts_cframe, cf_frame; /* 3.11/3.12: thread state -> _PyCFrame -> innermost frame */
	long fr_back, fr_code, fr_instr, fr_owner; /* fr_instr: f_lasti or the instruction pointer */
	int owner_gen, owner_cstack; /* owner values: generator frames, C-stack shims (-1: none) */
	long co_code, co_first;      /* first code unit; _co_firsttraceable (-1: not known) */
	long co_filename, co_name, co_qualname; /* co_qualname -1 before 3.11 */
	long str_ascii, str_compact, str_utf8;  /* sizeof PyASCIIObject / PyCompactUnicodeObject, utf8 */
};
static struct pylayout lay;
enum { LAY_NONE = 0 /* no layout for this version */, LAY_UNCHECKED, LAY_STRUCT /* shapes checked */, LAY_OK, LAY_BAD };
static _Atomic int lay_state;

#define OB_TYPE 8  /* PyObject: ob_refcnt, ob_type (builds with a GIL, no Py_TRACE_REFS) */
#define OB_SIZE 16 /* PyVarObject */

static const struct pylayout lay_3_9 = {
	.frame_objects = 1, .lasti_unit = 1, .ts_frame = 24, .ts_cframe = -1, .fr_back = 24, .fr_code = 32,
	.fr_instr = 104, .fr_owner = -1, .owner_gen = -1, .owner_cstack = -1, .co_code = -1, .co_first = -1,
	.co_filename = 104, .co_name = 112, .co_qualname = -1, .str_ascii = 48, .str_compact = 72, .str_utf8 = 56,
};
static const struct pylayout lay_3_10 = {
	.frame_objects = 1, .lasti_unit = 2, .ts_frame = 24, .ts_cframe = -1, .fr_back = 24, .fr_code = 32,
	.fr_instr = 96, .fr_owner = -1, .owner_gen = -1, .owner_cstack = -1, .co_code = -1, .co_first = -1,
	.co_filename = 104, .co_name = 112, .co_qualname = -1, .str_ascii = 48, .str_compact = 72, .str_utf8 = 56,
};
static const struct pylayout lay_3_11 = {
	.ts_frame = -1, .ts_cframe = 56, .cf_frame = 8, .fr_back = 48, .fr_code = 32, .fr_instr = 56, .fr_owner = 69,
	.owner_gen = 1, .owner_cstack = -1, .co_code = 184, .co_first = 168, .co_filename = 112, .co_name = 120,
	.co_qualname = 128, .str_ascii = 48, .str_compact = 72, .str_utf8 = 56,
};
static const struct pylayout lay_3_12 = {
	.ts_frame = -1, .ts_cframe = 56, .cf_frame = 0, .fr_back = 8, .fr_code = 0, .fr_instr = 56, .fr_owner = 70,
	.owner_gen = 1, .owner_cstack = 3, .co_code = 192, .co_first = 176, .co_filename = 112, .co_name = 120,
	.co_qualname = 128, .str_ascii = 40, .str_compact = 56, .str_utf8 = 48,
};

/* The head of 3.13's _Py_DebugOffsets, as far as it is read (every field a uint64_t). 3.14 inserts
 * fields, so another version's table is not read with this shape. */
struct py313_debug_offsets {
	char cookie[8];
	uint64_t version, free_threaded;
	uint64_t runtime_state[3];
	uint64_t interpreter_state[13];
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
			localspluskinds, co_code_adaptive;
	} code_object;
	struct {
		uint64_t size, ob_type;
	} pyobject;
	uint64_t type_object[4], tuple_object[3], list_object[3], dict_object[3], float_object[2], long_object[3],
		bytes_object[3];
	struct {
		uint64_t size, state, length, asciiobject_size;
	} unicode_object;
};

static int lay_from_debug_offsets(const struct py313_debug_offsets *d)
{
	const uint64_t *f;
	size_t i;

	if (d == NULL || memcmp(d->cookie, "xdebugpy", 8) != 0 || (d->version >> 16) != 0x030d || d->free_threaded ||
	    d->pyobject.ob_type != OB_TYPE)
		return -1;
	/* every offset read is inside a small struct: a table of another shape shows here */
	for (f = &d->thread_state.size, i = 0; i < sizeof(d->thread_state) / 8; i++)
		if (f[i] > 4096)
			return -1;
	if (d->interpreter_frame.size > 512 || d->code_object.size > 1024 || d->unicode_object.asciiobject_size > 128)
		return -1;
	lay = (struct pylayout){
		.ts_frame = (long)d->thread_state.current_frame, .ts_cframe = -1,
		.fr_back = (long)d->interpreter_frame.previous, .fr_code = (long)d->interpreter_frame.executable,
		.fr_instr = (long)d->interpreter_frame.instr_ptr, .fr_owner = (long)d->interpreter_frame.owner,
		.owner_gen = 1, .owner_cstack = 3, .co_code = (long)d->code_object.co_code_adaptive, .co_first = -1,
		.co_filename = (long)d->code_object.filename, .co_name = (long)d->code_object.name,
		.co_qualname = (long)d->code_object.qualname, .str_ascii = (long)d->unicode_object.asciiobject_size,
		.str_compact = (long)d->unicode_object.asciiobject_size + 16,
		.str_utf8 = (long)d->unicode_object.asciiobject_size + 8,
	};
	return 0;
}

/* Called from py_resolve_locked: the layout for this minor version, or LAY_NONE. */
static int lay_setup(int minor)
{
	const struct pylayout *t = minor == 9 ? &lay_3_9 : minor == 10 ? &lay_3_10 : minor == 11 ? &lay_3_11 :
				   minor == 12 ? &lay_3_12 : NULL;
	const char *env = getenv("CPROF_PY_NOGIL");

	/* the way back if reading frames from memory ever misbehaves; the tests use it to show it is needed */
	if (env != NULL && !strcmp(env, "0")) {
		pr_dbg("CPROF_PY_NOGIL=0: frames only with the GIL held");
		return LAY_NONE;
	}
	*(void **)&py.IsFinalizing = sym(minor >= 13 ? "Py_IsFinalizing" : "_Py_IsFinalizing");
	py.Code_Type = sym("PyCode_Type");
	py.Frame_Type = sym("PyFrame_Type");
	py.Unicode_Type = sym("PyUnicode_Type");
	py.Runtime = sym("_PyRuntime");
	if (py.Code_Type == NULL || py.Unicode_Type == NULL || py.Code_Addr2Line == NULL ||
	    (minor <= 10 && py.Frame_Type == NULL)) {
		pr_dbg("Python 3.%d without its type objects: frames only with the GIL held", minor);
		return LAY_NONE;
	}
	if (t) {
		lay = *t;
		return LAY_UNCHECKED;
	}
	if (minor == 13 && lay_from_debug_offsets(py.Runtime) == 0)
		return LAY_UNCHECKED;
	pr_dbg("Python 3.%d: frame layout not known here: frames only with the GIL held", minor);
	return LAY_NONE;
}

/* Reads n bytes at src without trusting it: an unmapped address fails (EFAULT from the kernel) instead of
 * killing the process. Only the layout check uses it: a pipe round trip per read. */
static int careful_fd[2] = { -1, -1 };

static int careful_copy(void *dst, const void *src, size_t n)
{
	int saved = errno, ok;

	ok = write(careful_fd[1], src, n) == (ssize_t)n && read(careful_fd[0], dst, n) == (ssize_t)n;
	errno = saved;
	return ok ? 0 : -1;
}

static int careful_open(void)
{
	/* opened for one check and closed after it: a program that closes or reuses descriptors never meets it */
	if (pipe2(careful_fd, O_CLOEXEC) != 0) {
		careful_fd[0] = careful_fd[1] = -1;
		return -1;
	}
	return 0;
}

static void careful_close(void)
{
	close(careful_fd[0]);
	close(careful_fd[1]);
	careful_fd[0] = careful_fd[1] = -1;
}

/* Plain reads once the layout is checked; careful ones while it is being checked. */
#define PEEK(dst, base, off, careful)                                                                    \
	((careful) ? careful_copy(&(dst), (const char *)(base) + (off), sizeof(dst))                   \
		   : (memcpy(&(dst), (const char *)(base) + (off), sizeof(dst)), 0))

#define PY_MAX_WALK 128 /* 2 KiB of the caller's stack; CPROF_STACK_MAX_PY is less */
struct dfr {
	const void *code;
	int lasti; /* bytes, as PyFrame_GetLasti; 3.9/3.10 too */
};

/* This thread's frames from its thread state, innermost first, at most max. Returns how many, or -1 when
 * something read is not what the layout says (a code object that is none, a fault while careful). */
static inline __attribute__((always_inline)) int dwalk(const void *ts, struct dfr *w, int max, int careful)
{
	const char *f = NULL, *code, *cf;
	const void *type;
	intptr_t instr;
	int n = 0, lasti, guard;
	unsigned char owner = 0;

	if (lay.ts_frame >= 0) {
		if (PEEK(f, ts, lay.ts_frame, careful))
			return -1;
	} else {
		if (PEEK(cf, ts, lay.ts_cframe, careful))
			return -1;
		if (cf != NULL && PEEK(f, cf, lay.cf_frame, careful))
			return -1;
	}
	/* a cycle (a wrong offset) ends here, not in a hang */
	for (guard = 0; f != NULL && n < max && guard < 100000; guard++) {
		if (PEEK(code, f, lay.fr_code, careful))
			return -1;
		if (lay.frame_objects) {
			if (PEEK(type, f, OB_TYPE, careful) || type != py.Frame_Type)
				return -1;
		} else if (lay.fr_owner >= 0) {
			if (PEEK(owner, f, lay.fr_owner, careful))
				return -1;
			if (owner == lay.owner_cstack)
				goto next; /* the C stack's entry shim, no Python line of its own */
		}
		if (code == NULL || PEEK(type, code, OB_TYPE, careful))
			return -1;
		if (type != py.Code_Type) {
			if (lay.frame_objects || lay.owner_cstack < 0)
				return -1;
			goto next; /* 3.13: f_executable may be None */
		}
		if (lay.frame_objects) {
			if (PEEK(lasti, f, lay.fr_instr, careful))
				return -1;
			lasti = lasti < 0 ? -1 : lasti * lay.lasti_unit;
		} else {
			intptr_t units;

			if (PEEK(instr, f, lay.fr_instr, careful) || PEEK(units, code, OB_SIZE, careful))
				return -1;
			instr -= (intptr_t)(code + lay.co_code);
			/* outside the code's own bytecode: the layout is wrong */
			if (instr < -2 || instr > units * 2)
				return -1;
			if (lay.co_first >= 0 && owner != lay.owner_gen) {
				int first;

				if (PEEK(first, code, lay.co_first, careful))
					return -1;
				if (instr < first * 2)
					goto next; /* not started yet (as PyFrame_GetBack skips it) */
			}
			lasti = instr < 0 ? -1 : (int)(instr & ~(intptr_t)1);
		}
		w[n].code = code;
		w[n].lasti = lasti;
		n++;
next:
		if (PEEK(f, f, lay.fr_back, careful))
			return -1;
	}
	return n;
}

/* One message, then no more reads from memory. */
static void lay_fail(const char *why)
{
	int st = atomic_exchange(&lay_state, LAY_BAD);

	if (st != LAY_BAD)
		pr_warn("Python 3.%d: the frame layout check failed (%s): Python call sites only where the GIL is held",
			py.minor, why);
}

/* The first careful walk of a thread state, the whole chain whatever max is: the shapes must hold. Under
 * py_lock. */
static int lay_check_struct_locked(const void *ts, struct dfr *w, int max)
{
	struct dfr all[PY_MAX_WALK];
	int n;

	if (careful_open() < 0)
		return -1;
	n = dwalk(ts, all, PY_MAX_WALK, 1);
	careful_close();
	if (n < 0) {
		lay_fail("a frame or code object read is not one");
		return -1;
	}
	if (n > max)
		n = max;
	memcpy(w, all, (size_t)n * sizeof(*w));
	return n;
}

/* This thread (without the GIL) has a thread state and Python is not being torn down; its frames may be
 * read with the layout once it is checked. */
static int own_walk(const void *ts, struct dfr *w, int max)
{
	int st = atomic_load_explicit(&lay_state, memory_order_acquire), n;

	if (likely(st == LAY_OK || st == LAY_STRUCT))
		return dwalk(ts, w, max, 0);
	if (st != LAY_UNCHECKED)
		return -1;
	pthread_mutex_lock(&py_lock);
	st = atomic_load_explicit(&lay_state, memory_order_relaxed);
	if (st == LAY_UNCHECKED) {
		n = lay_check_struct_locked(ts, w, max);
		if (n > 0)
			atomic_store_explicit(&lay_state, LAY_STRUCT, memory_order_release);
	} else {
		n = st == LAY_BAD || st == LAY_NONE ? -1 : dwalk(ts, w, max, 0);
	}
	pthread_mutex_unlock(&py_lock);
	return n;
}

/* Called with py_lock held; returns the new state. */
static int py_resolve_locked(void)
{
	const char *(*get_version)(void);
	const char *v, *missing = NULL;
	char *end;
	long major, minor;

	*(void **)&get_version = sym("Py_GetVersion");
	if (get_version == NULL || sym("Py_IsInitialized") == NULL)
		return PY_NOT_YET;
	v = get_version();
	major = strtol(v, &end, 10);
	minor = *end == '.' ? strtol(end + 1, NULL, 10) : -1;
	if (major != 3 || minor < 9) {
		pr_dbg("Python %.20s: too old for frame capture (3.9+)", v);
		return PY_OFF;
	}
	/* Free-threaded builds: no GIL to keep the walk and the frames still; not supported yet */
	if (strstr(v, "free-threading") != NULL) {
		pr_warn("Python %.*s free-threading build: not supported, no Python call sites (native stacks only)",
			(int)strcspn(v, " "), v);
		return PY_OFF;
	}
	NEED(IsInitialized, "Py_IsInitialized");
	NEED(GILState_Check, "PyGILState_Check");
	NEED(GILState_GetThisThreadState, "PyGILState_GetThisThreadState");
	*(void **)&py.ThreadState_Unchecked = sym("PyThreadState_GetUnchecked"); /* 3.13 */
	if (py.ThreadState_Unchecked == NULL)
		NEED(ThreadState_Unchecked, "_PyThreadState_UncheckedGet");
	NEED(Eval_GetFrame, "PyEval_GetFrame");
	NEED(Frame_GetBack, "PyFrame_GetBack");
	NEED(Frame_GetCode, "PyFrame_GetCode");
	NEED(Frame_GetLineNumber, "PyFrame_GetLineNumber");
	NEED(Object_GetAttrString, "PyObject_GetAttrString");
	NEED(Unicode_AsUTF8AndSize, "PyUnicode_AsUTF8AndSize");
	NEED(IncRef, "Py_IncRef");
	NEED(DecRef, "Py_DecRef");
	NEED(Err_Occurred, "PyErr_Occurred");
	NEED(Err_Clear, "PyErr_Clear");
	NEED(Err_Fetch, "PyErr_Fetch");
	NEED(Err_Restore, "PyErr_Restore");
	/* 3.11+: the instruction offset, and its line from the code object (remembered) */
	*(void **)&py.Code_Addr2Line = sym("PyCode_Addr2Line");
	if (minor >= 11 && py.Code_Addr2Line)
		*(void **)&py.Frame_GetLasti = sym("PyFrame_GetLasti");
	*(void **)&py.Err_GetRaisedException = sym("PyErr_GetRaisedException");
	*(void **)&py.Err_SetRaisedException = sym("PyErr_SetRaisedException");
	if (py.Err_GetRaisedException == NULL || py.Err_SetRaisedException == NULL)
		py.Err_GetRaisedException = NULL;
	py.minor = (int)minor;
	py.owner_check = minor <= 11;
	atomic_store(&lay_state, lay_setup((int)minor));
	pr_dbg("Python %ld.%ld: Python frames on", major, minor);
	return PY_ON;
off:
	pr_dbg("Python %.20s without %s: no Python frames", v, missing);
	return PY_OFF;
}

static void lay_check_startup(void);

static __attribute__((noinline)) int py_resolve(void)
{
	int st, found = 0;

	pthread_mutex_lock(&py_lock);
	st = atomic_load_explicit(&py_state, memory_order_relaxed);
	if (st == PY_UNKNOWN || st == PY_NOT_YET) {
		st = py_resolve_locked();
		found = st == PY_ON;
		/* release: a reader that sees PY_ON sees every pointer in py */
		atomic_store_explicit(&py_state, st, memory_order_release);
	}
	pthread_mutex_unlock(&py_lock);
	if (found)
		lay_check_startup();
	return st == PY_ON;
}

static inline __attribute__((always_inline)) int py_ready(void)
{
	int st = atomic_load_explicit(&py_state, memory_order_acquire);

	if (likely(st == PY_ON))
		return 1;
	if (st == PY_OFF)
		return 0;
	if (st == PY_NOT_YET) {
		/* an embedding program may dlopen libpython (RTLD_GLOBAL) long after the first hooked call */
		if (likely(py_retry_in-- != 0))
			return 0;
		py_retry_in = PY_RETRY_EVERY;
	}
	return py_resolve();
}

int cprof_py_available(void)
{
	return py_ready();
}

enum { TM_NONE = 0, TM_GIL, TM_OWN };

/* How this thread's frames can be read: TM_GIL, it holds the GIL (CPython's functions read them);
 * TM_OWN, it released the GIL inside a call and has a thread state (*ts), read from memory. */
static inline __attribute__((always_inline)) int thread_mode(void **ts)
{
	void *cur, *mine;

	if (!py.IsInitialized())
		return TM_NONE;
	cur = py.ThreadState_Unchecked();
	if (py.owner_check) {
		mine = py.GILState_GetThisThreadState();
		if (cur != NULL && cur == mine) {
			*ts = cur;
			return TM_GIL;
		}
	} else {
		if (cur != NULL) {
			*ts = cur;
			/* 3.12+: cur is this thread's own, attached; not the GILState one only in a sub-interpreter */
			return py.GILState_Check() ? TM_GIL : TM_NONE;
		}
		mine = py.GILState_GetThisThreadState();
	}
	if (mine == NULL || atomic_load_explicit(&lay_state, memory_order_relaxed) < LAY_UNCHECKED ||
	    atomic_load_explicit(&lay_state, memory_order_relaxed) == LAY_BAD)
		return TM_NONE;
	/* Py_Finalize frees every thread state, including that of a daemon thread inside a CUDA call */
	if (py.IsFinalizing && py.IsFinalizing())
		return TM_NONE;
	*ts = mine;
	return TM_OWN;
}

/* A pending exception of the program's, kept aside while our own calls may raise and clear theirs. */
struct pyerr {
	pyobj *t, *v, *tb;
};

static void err_save(struct pyerr *e)
{
	e->t = e->tb = NULL;
	if (py.Err_GetRaisedException)
		e->v = py.Err_GetRaisedException();
	else
		py.Err_Fetch(&e->t, &e->v, &e->tb);
}

/* Puts the program's exception (or none) back; steals the references, drops any error of ours. */
static void err_restore(struct pyerr *e)
{
	if (py.Err_GetRaisedException)
		py.Err_SetRaisedException(e->v);
	else
		py.Err_Restore(e->t, e->v, e->tb);
}

/* A frame read from memory as the key part CPython's functions give: the offset (3.11+) or the line. */
static inline int dfr_pos(const struct dfr *d)
{
	return py.Frame_GetLasti ? d->lasti : py.Code_Addr2Line((pyobj *)d->code, d->lasti);
}

uint64_t cprof_py_site(void)
{
	struct pyerr e;
	struct dfr d;
	pyobj *f, *code;
	void *ts;
	uint64_t k;
	int pos, pending, mode;

	if (!py_ready())
		return 0;
	mode = thread_mode(&ts);
	if (mode == TM_OWN) {
		if (own_walk(ts, &d, 1) <= 0)
			return 0;
		code = (pyobj *)d.code;
		pos = dfr_pos(&d);
		goto key;
	}
	if (mode != TM_GIL)
		return 0;
	/* 3.11+ may allocate the frame object here and clears the error when that fails */
	pending = py.Err_Occurred() != NULL;
	if (unlikely(pending))
		err_save(&e);
	f = py.Eval_GetFrame(); /* borrowed */
	if (f == NULL) {
		if (unlikely(pending))
			err_restore(&e);
		return 0;
	}
	code = py.Frame_GetCode(f);
	/* the instruction offset is O(1); the line is a scan of the line table (long for module code) */
	pos = py.Frame_GetLasti ? py.Frame_GetLasti(f) : py.Frame_GetLineNumber(f);
	if (unlikely(pending))
		err_restore(&e);
	if (code == NULL)
		return 0;
	/* the pointer is only a key: the frame keeps its code alive while it runs */
	py.DecRef(code);
key:
	k = cprof_fmix64((uint64_t)(uintptr_t)code ^ ((uint64_t)(uint32_t)pos << 47));
	return k ? k : 1;
}

/* ---- code object -> (file id, function id), pinned so that an address is never reused while cached ---- */

struct code_ent {
	pyobj *code;
	uint32_t file, func;
	uint32_t gen; /* cprof_generation when interned: a fork child must queue its strings again */
};

#define CODE_TAB_MIN 1024u
#define CODE_TAB_MAX (1u << 17) /* at most half full: 65536 code objects, then names are looked up each time */

/* Only under ctab_lock, which is never held across a call into Python: sub-interpreters with their own
 * GIL (3.12+) may walk at the same time, and holding a lock while Python waits on something may deadlock. */
static pthread_mutex_t ctab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct code_ent *ctab;
static uint32_t ctab_cap, ctab_used;

static inline uint32_t code_slot(const void *code, uint32_t cap)
{
	return (uint32_t)(cprof_fmix64((uintptr_t)code) & (cap - 1));
}

static struct code_ent *ctab_find(const void *code)
{
	uint32_t i;

	if (ctab == NULL)
		return NULL;
	for (i = code_slot(code, ctab_cap);; i = (i + 1) & (ctab_cap - 1)) {
		if (ctab[i].code == code)
			return &ctab[i];
		if (ctab[i].code == NULL)
			return NULL;
	}
}

static int ctab_grow(void)
{
	uint32_t cap = ctab_cap ? ctab_cap * 2 : CODE_TAB_MIN, i, j;
	struct code_ent *t;

	if (cap > CODE_TAB_MAX)
		return -ENOSPC;
	t = calloc(cap, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	for (i = 0; i < ctab_cap; i++) {
		if (ctab[i].code == NULL)
			continue;
		for (j = code_slot(ctab[i].code, cap); t[j].code; j = (j + 1) & (cap - 1))
			;
		t[j] = ctab[i];
	}
	free(ctab);
	ctab = t;
	ctab_cap = cap;
	return 0;
}

/* The entry of code, a new one if needed (*fresh set); NULL when the table is full. */
static struct code_ent *ctab_get(pyobj *code, int *fresh)
{
	struct code_ent *e = ctab_find(code);
	uint32_t i;

	*fresh = 0;
	if (e)
		return e;
	if ((ctab_used + 1) * 2 > ctab_cap && ctab_grow() < 0)
		return NULL;
	for (i = code_slot(code, ctab_cap); ctab[i].code; i = (i + 1) & (ctab_cap - 1))
		;
	ctab[i].code = code;
	ctab[i].gen = 0;
	ctab_used++;
	*fresh = 1;
	return &ctab[i];
}

/* Interns the str attribute attr of o; never leaves an error set. */
static uint32_t attr_id(pyobj *o, const char *attr, uint16_t kind)
{
	const char *s;
	ssize_t len;
	uint32_t id;
	pyobj *v = py.Object_GetAttrString(o, attr);

	if (v == NULL) {
		py.Err_Clear();
		return 0;
	}
	s = py.Unicode_AsUTF8AndSize(v, &len);
	if (s == NULL || len < 0) {
		py.Err_Clear(); /* e.g. a lone surrogate in a file name */
		s = "?";
		len = 1;
	}
	id = cprof_intern(kind, s, (size_t)len);
	py.DecRef(v);
	return id;
}

static void code_names(pyobj *code, uint32_t *file, uint32_t *func)
{
	*file = attr_id(code, "co_filename", CPROF_STR_PYFILE);
	*func = py.minor >= 11 ? attr_id(code, "co_qualname", CPROF_STR_PYFUNC) : 0;
	if (*func == 0)
		*func = attr_id(code, "co_name", CPROF_STR_PYFUNC);
}

/* Interns the str at offset off of a code object read from memory (no GIL: no call into CPython). The
 * compiler makes compact strings; another kind gives "?". Non-ASCII text without a cached UTF-8 copy is
 * encoded here from its 1, 2 or 4-byte form. */
static uint32_t str_id_direct(const char *code, long off, uint16_t kind)
{
	const char *s = NULL, *data;
	const char *utf8;
	uint32_t state, k, i, c;
	intptr_t len;
	char buf[512];
	size_t o = 0;

	if (off < 0)
		return 0;
	memcpy(&s, code + off, sizeof(s));
	if (s == NULL || *(const void *const *)(s + OB_TYPE) != py.Unicode_Type)
		return cprof_intern(kind, "?", 1);
	memcpy(&len, s + 16, sizeof(len));
	memcpy(&state, s + 32, sizeof(state));
	k = (state >> 2) & 7;
	if (!((state >> 5) & 1) || len < 0)
		return cprof_intern(kind, "?", 1); /* not compact */
	if ((state >> 6) & 1)
		return cprof_intern(kind, s + lay.str_ascii, (size_t)len);
	memcpy(&utf8, s + lay.str_utf8, sizeof(utf8));
	if (utf8 != NULL) {
		memcpy(&len, s + lay.str_ascii, sizeof(len)); /* utf8_length comes first */
		return cprof_intern(kind, utf8, (size_t)len);
	}
	data = s + lay.str_compact;
	for (i = 0; i < (uint32_t)len && o + 4 <= sizeof(buf); i++) {
		c = k == 1 ? ((const uint8_t *)data)[i] : k == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
		if (c < 0x80) {
			buf[o++] = (char)c;
		} else if (c < 0x800) {
			buf[o++] = (char)(0xc0 | c >> 6);
			buf[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			buf[o++] = (char)(0xe0 | c >> 12);
			buf[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[o++] = (char)(0xf0 | c >> 18);
			buf[o++] = (char)(0x80 | ((c >> 12) & 0x3f));
			buf[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return cprof_intern(kind, buf, o);
}

static void code_names_direct(const void *code, uint32_t *file, uint32_t *func)
{
	*file = str_id_direct(code, lay.co_filename, CPROF_STR_PYFILE);
	*func = str_id_direct(code, lay.co_qualname, CPROF_STR_PYFUNC);
	if (*func == 0)
		*func = str_id_direct(code, lay.co_name, CPROF_STR_PYFUNC);
}

/* (code object, instruction offset) -> line: the line is a scan of the code's line table, long for a
 * module's code. Only pinned code objects go in, so a key is never another object's. Under ctab_lock. */
#define LINE_MEMO 8192u
static struct line_ent {
	pyobj *code;
	int lasti;
	int line;
} line_memo[LINE_MEMO];

static inline struct line_ent *line_slot(const void *code, int lasti)
{
	return &line_memo[cprof_fmix64((uintptr_t)code ^ ((uint64_t)(uint32_t)lasti << 40)) & (LINE_MEMO - 1)];
}

struct pyfr {
	pyobj *code; /* a reference of ours */
	int lasti;   /* 3.11+; before, the line is read from the frame itself */
	int line;    /* -1 until known */
};


/* The frames, innermost first, with a reference to each code object. */
static int walk(struct pyfr *w, int max)
{
	pyobj *f = py.Eval_GetFrame(), *back;
	int n = 0, memo = py.Frame_GetLasti != NULL;

	if (f == NULL)
		return 0;
	py.IncRef(f); /* borrowed; each PyFrame_GetBack below gives a new reference */
	while (f != NULL && n < max) {
		w[n].code = py.Frame_GetCode(f);
		if (w[n].code != NULL) {
			w[n].lasti = memo ? py.Frame_GetLasti(f) : -1;
			w[n].line = memo ? -1 : py.Frame_GetLineNumber(f);
			if (!memo && w[n].line < 0)
				w[n].line = 0;
			n++;
		}
		back = py.Frame_GetBack(f);
		/* the running interpreter frame still owns the frame object: this never frees it */
		py.DecRef(f);
		f = back;
	}
	if (f != NULL)
		py.DecRef(f);
	return n;
}

/* The known frames: with the GIL held, CPython's own functions gave w; the same thread state read from
 * memory must give the same code objects at the same offsets (lines on 3.9/3.10). */
static void lay_check_known(const void *ts, const struct pyfr *w, int n)
{
	struct dfr d[PY_MAX_WALK];
	int st, m, i, ok = 1;

	pthread_mutex_lock(&py_lock);
	st = atomic_load_explicit(&lay_state, memory_order_relaxed);
	if (st != LAY_UNCHECKED && st != LAY_STRUCT)
		goto out;
	if (careful_open() < 0)
		goto out;
	m = dwalk(ts, d, n, 1);
	careful_close();
	if (m != n) {
		ok = 0;
	} else {
		for (i = 0; i < n && ok; i++)
			ok = d[i].code == w[i].code &&
			     (py.Frame_GetLasti ? d[i].lasti == w[i].lasti
						: py.Code_Addr2Line((pyobj *)d[i].code, d[i].lasti) == w[i].line);
	}
	if (!ok)
		lay_fail("frames read differ from CPython's");
	else
		atomic_store_explicit(&lay_state, LAY_OK, memory_order_release);
out:
	pthread_mutex_unlock(&py_lock);
}

/* Names and lines of w[0..n) into out. gil: this thread holds the GIL, so CPython is asked for what is not
 * cached and new code objects are pinned; otherwise only pinned entries are used and the rest is read
 * from memory each time. */
static void frames_out(struct pyfr *w, int n, struct cprof_wire_frame *out, int gil)
{
	struct code_ent *ce;
	struct line_ent *le;
	uint32_t gen;
	int i, j, fresh, miss = 0;

	gen = atomic_load_explicit(&cprof_generation, memory_order_relaxed);
	/* ctab_lock is never held across a call into Python: that may run a finalizer that captures again */
	pthread_mutex_lock(&ctab_lock);
	for (i = 0; i < n; i++) {
		out[i].module = out[i].func = 0;
		ce = ctab_find(w[i].code);
		if (ce && ce->gen == gen) {
			out[i].module = ce->file;
			out[i].func = ce->func;
		}
		if (ce && w[i].line < 0) {
			le = line_slot(w[i].code, w[i].lasti);
			if (le->code == w[i].code && le->lasti == w[i].lasti)
				w[i].line = le->line;
		}
		miss += out[i].module == 0 || out[i].func == 0 || w[i].line < 0;
	}
	pthread_mutex_unlock(&ctab_lock);
	if (miss == 0)
		goto done;

	for (i = 0; i < n; i++) {
		/* recursion: the same code further out may have been looked up already in this walk */
		for (j = 0; j < i && (out[i].module == 0 || out[i].func == 0 || w[i].line < 0); j++) {
			if (w[j].code != w[i].code)
				continue;
			if ((out[i].module == 0 || out[i].func == 0) && out[j].module && out[j].func) {
				out[i].module = out[j].module;
				out[i].func = out[j].func;
			}
			if (w[i].line < 0 && w[j].lasti == w[i].lasti)
				w[i].line = w[j].line;
		}
		if (out[i].module == 0 || out[i].func == 0) {
			if (gil)
				code_names(w[i].code, &out[i].module, &out[i].func);
			else
				code_names_direct(w[i].code, &out[i].module, &out[i].func);
		}
		if (w[i].line < 0) {
			w[i].line = py.Code_Addr2Line(w[i].code, w[i].lasti);
			if (w[i].line < 0)
				w[i].line = 0; /* no line: known, not looked up again */
		}
	}
	pthread_mutex_lock(&ctab_lock);
	for (i = 0; i < n; i++) {
		/* without the GIL no reference may be taken: only entries already pinned are filled in */
		ce = gil ? ctab_get(w[i].code, &fresh) : ctab_find(w[i].code);
		if (ce == NULL)
			continue; /* full: looked up again next time, and its lines are not remembered */
		if (gil && fresh)
			py.IncRef(w[i].code); /* the pin */
		if (ce->gen != gen) {
			ce->file = out[i].module;
			ce->func = out[i].func;
			/* an id of 0 (interning failed, maybe for a moment) is looked up again next time */
			ce->gen = ce->file && ce->func ? gen : 0;
		}
		if (py.Frame_GetLasti) {
			le = line_slot(w[i].code, w[i].lasti);
			le->code = w[i].code;
			le->lasti = w[i].lasti;
			le->line = w[i].line;
		}
	}
	pthread_mutex_unlock(&ctab_lock);
done:
	for (i = 0; i < n; i++)
		out[i].off = w[i].line > 0 ? (uint64_t)w[i].line : 0;
}

/* At start-up, when the thread that found Python holds the GIL: its frames are the known ones the layout
 * is checked against, before any thread reads frames from memory. */
static void lay_check_startup(void)
{
	struct pyfr w[PY_MAX_WALK];
	struct pyerr e;
	void *ts;
	int n, i;

	if (atomic_load(&lay_state) != LAY_UNCHECKED || thread_mode(&ts) != TM_GIL)
		return;
	err_save(&e);
	n = walk(w, PY_MAX_WALK);
	if (n > 0)
		lay_check_known(ts, w, n);
	for (i = 0; i < n; i++)
		py.DecRef(w[i].code);
	err_restore(&e);
}

int cprof_py_capture(struct cprof_wire_frame *out, int max)
{
	struct pyfr w[PY_MAX_WALK];
	struct dfr d[PY_MAX_WALK];
	struct pyerr e;
	void *ts;
	int n, i, mode, st;

	if (out == NULL || max <= 0 || !py_ready())
		return 0;
	if (max > PY_MAX_WALK)
		max = PY_MAX_WALK;
	mode = thread_mode(&ts);
	if (mode == TM_OWN) {
		n = own_walk(ts, d, max);
		for (i = 0; i < n; i++) {
			w[i].code = (pyobj *)d[i].code;
			w[i].lasti = d[i].lasti;
			w[i].line = py.Frame_GetLasti ? -1 : py.Code_Addr2Line(w[i].code, d[i].lasti);
			if (w[i].line < -1 || (!py.Frame_GetLasti && w[i].line < 0))
				w[i].line = 0;
		}
		if (n <= 0)
			return 0;
		frames_out(w, n, out, 0);
		return n;
	}
	if (mode != TM_GIL)
		return 0;
	err_save(&e);
	n = walk(w, max);
	if (n == 0) {
		err_restore(&e);
		return 0;
	}
	st = atomic_load_explicit(&lay_state, memory_order_relaxed);
	if (unlikely(st == LAY_UNCHECKED || st == LAY_STRUCT))
		lay_check_known(ts, w, n);
	frames_out(w, n, out, 1);
	for (i = 0; i < n; i++)
		py.DecRef(w[i].code);
	err_restore(&e);
	return n;
}

void cprof_py_test_skew_layout(void)
{
	int st = LAY_OK;

	if (!py_ready())
		return;
	lay.fr_code += 8;
	/* checked again, as a fresh process with that layout would be */
	atomic_compare_exchange_strong(&lay_state, &st, LAY_UNCHECKED);
	st = LAY_STRUCT;
	atomic_compare_exchange_strong(&lay_state, &st, LAY_UNCHECKED);
}

void cprof_py_reset_after_fork(void)
{
	/* a lock held by a thread that did not survive the fork: its half-changed table is left behind */
	if (pthread_mutex_trylock(&ctab_lock) != 0) {
		ctab = NULL;
		ctab_cap = ctab_used = 0;
		memset(line_memo, 0, sizeof(line_memo));
		ctab_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	} else {
		pthread_mutex_unlock(&ctab_lock);
	}
	if (pthread_mutex_trylock(&py_lock) != 0)
		py_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	else
		pthread_mutex_unlock(&py_lock);
}
