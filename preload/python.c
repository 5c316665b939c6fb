/* Python call sites: CPython frames of the calling thread, through CPython's own exported functions (no headers, no link). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define PR_FMT "cprof: python"
#include "common/log.h"
#include "common/wire.h"
#include "preload/cprof.h"
#include "preload/python.h"

/* Every object is opaque here: only CPython's functions look inside, so no struct layout is assumed. */
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
		pr_dbg("Python %.20s: free-threading build, no Python frames", v);
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
	pr_dbg("Python %ld.%ld: Python frames on", major, minor);
	return PY_ON;
off:
	pr_dbg("Python %.20s without %s: no Python frames", v, missing);
	return PY_OFF;
}

static __attribute__((noinline)) int py_resolve(void)
{
	int st;

	pthread_mutex_lock(&py_lock);
	st = atomic_load_explicit(&py_state, memory_order_relaxed);
	if (st == PY_UNKNOWN || st == PY_NOT_YET) {
		st = py_resolve_locked();
		/* release: a reader that sees PY_ON sees every pointer in py */
		atomic_store_explicit(&py_state, st, memory_order_release);
	}
	pthread_mutex_unlock(&py_lock);
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

/* This thread holds the GIL and has a thread state, so its frames can be read and stay still. */
static inline __attribute__((always_inline)) int thread_can_read(void)
{
	void *ts;

	if (!py.IsInitialized())
		return 0;
	ts = py.ThreadState_Unchecked();
	if (ts == NULL)
		return 0;
	if (py.owner_check)
		return ts == py.GILState_GetThisThreadState();
	return py.GILState_Check();
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

uint64_t cprof_py_site(void)
{
	struct pyerr e;
	pyobj *f, *code;
	uint64_t k;
	int pos, pending;

	if (!py_ready() || !thread_can_read())
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

#define PY_MAX_WALK 128 /* 2 KiB of the caller's stack; CPROF_STACK_MAX_PY is less */

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

int cprof_py_capture(struct cprof_wire_frame *out, int max)
{
	struct pyfr w[PY_MAX_WALK];
	struct code_ent *ce;
	struct line_ent *le;
	struct pyerr e;
	uint32_t gen;
	int n, i, j, fresh, miss = 0;

	if (out == NULL || max <= 0 || !py_ready() || !thread_can_read())
		return 0;
	if (max > PY_MAX_WALK)
		max = PY_MAX_WALK;
	err_save(&e);
	n = walk(w, max);
	if (n == 0) {
		err_restore(&e);
		return 0;
	}
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
		if (out[i].module == 0 || out[i].func == 0)
			code_names(w[i].code, &out[i].module, &out[i].func);
		if (w[i].line < 0) {
			w[i].line = py.Code_Addr2Line(w[i].code, w[i].lasti);
			if (w[i].line < 0)
				w[i].line = 0; /* no line: known, not looked up again */
		}
	}
	pthread_mutex_lock(&ctab_lock);
	for (i = 0; i < n; i++) {
		ce = ctab_get(w[i].code, &fresh);
		if (ce == NULL)
			continue; /* full: looked up again next time, and its lines are not remembered */
		if (fresh)
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
	for (i = 0; i < n; i++) {
		out[i].off = w[i].line > 0 ? (uint64_t)w[i].line : 0;
		py.DecRef(w[i].code);
	}
	err_restore(&e);
	return n;
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
