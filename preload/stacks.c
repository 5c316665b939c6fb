/* Call stacks at hooked calls: libunwind (dlopen'ed, per-thread cache), sampled per call site, each distinct stack sent once. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define PR_FMT "cprof: stacks"
#include "common/log.h"
#include "preload/cprof.h"
#include "preload/python.h"

CPROF_HIDDEN int cprof_stack_mode; /* CPROF_STACKS_*; read by cprof_leave on every call */

static unsigned stack_first = 4;  /* sampled: the first calls of each site get their own stack ... */
static unsigned stack_every = 256; /* ... then one in this many or more (cprof_site_taken); the others reuse the site's last one */

/* libunwind, loaded RTLD_LOCAL: linking it would give the target's C++ exceptions to another unwinder */
static int (*unw_backtrace_fn)(void **buffer, int size);

/* ---- loaded modules: address -> (path, load bias) ---- */
struct mod {
	uintptr_t lo, hi, bias;
	const char *path;
	size_t len;
	/* the path interned at its first frame (not under modtab_lock: fork's handlers take the interner's
	 * lock first): hashing it for every frame of every stack cost ~40 us a PyTorch training step */
	_Atomic(struct cprof_istr *) str;
};
struct modtab {
	size_t n;
	unsigned long long adds, subs;
	struct mod m[];
};
static _Atomic(struct modtab *) modtab;
static pthread_mutex_t modtab_lock = PTHREAD_MUTEX_INITIALIZER;
static char exe_path[4096];
static uintptr_t self_lo, self_hi; /* libcprof.so itself: its frames are not the caller's */

struct build {
	struct mod *m;
	size_t n, cap;
	unsigned long long adds, subs;
};

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct build *b = arg;
	const char *path = info->dlpi_name;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int i;

	(void)size;
	b->adds = info->dlpi_adds;
	b->subs = info->dlpi_subs;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	if (path == NULL || *path == '\0')
		path = exe_path; /* the main program has no name here */
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct mod *m = realloc(b->m, cap * sizeof(*m));

		if (m == NULL)
			return 1;
		b->m = m;
		b->cap = cap;
	}
	b->m[b->n++] = (struct mod){ .lo = lo, .hi = hi, .bias = info->dlpi_addr, .path = path, .len = strlen(path) };
	return 0;
}

static int mod_cmp(const void *a, const void *b)
{
	const struct mod *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A new snapshot of the loaded modules; the old one stays readable (threads may be in it) and is leaked:
 * this happens once per dlopen that a stack runs into. */
static struct modtab *modtab_rebuild(void)
{
	struct modtab *cur, *t = NULL;
	struct build b = { 0 };
	size_t i;

	pthread_mutex_lock(&modtab_lock);
	cur = atomic_load(&modtab);
	dl_iterate_phdr(add_module, &b);
	if (cur && cur->adds == b.adds && cur->subs == b.subs)
		goto out; /* nothing was loaded since: the address is in no module (JIT code) */
	t = malloc(sizeof(*t) + b.n * sizeof(t->m[0]));
	if (t == NULL)
		goto out;
	t->n = b.n;
	t->adds = b.adds;
	t->subs = b.subs;
	memcpy(t->m, b.m, b.n * sizeof(t->m[0]));
	qsort(t->m, t->n, sizeof(t->m[0]), mod_cmp);
	for (i = 0; i < t->n; i++)
		t->m[i].path = strdup(t->m[i].path) ?: "";
	atomic_store(&modtab, t);
	cur = t;
out:
	pthread_mutex_unlock(&modtab_lock);
	free(b.m);
	return cur;
}

static const struct mod *mod_find(const struct modtab *t, uintptr_t a)
{
	size_t lo = 0, hi = t ? t->n : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (a < t->m[mid].lo)
			hi = mid;
		else if (a >= t->m[mid].hi)
			lo = mid + 1;
		else
			return &t->m[mid];
	}
	return NULL;
}

static uint32_t module_id(struct mod *m)
{
	struct cprof_istr *e = atomic_load_explicit(&m->str, memory_order_acquire);

	if (unlikely(e == NULL)) {
		if ((e = cprof_intern_entry(CPROF_STR_MODULE, m->path, m->len)) == NULL)
			return 0;
		atomic_store_explicit(&m->str, e, memory_order_release);
	}
	return cprof_intern_id(e);
}

/* ---- distinct stacks: hash -> id, lock-free to read ---- */
#define DEDUP_BITS 16
#define DEDUP_SIZE (1u << DEDUP_BITS)
struct dslot {
	_Atomic uint64_t hash;
	uint32_t id;
};
static struct dslot dedup[DEDUP_SIZE];
static size_t dedup_used;
static pthread_mutex_t dedup_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t next_stack_id = 1;

/* Each step through a full 64-bit mixer: the stack's hash is its identity (stack_id never compares
 * frames), so stacks that differ in small numbers (string ids of new Python files) must not collide. A
 * shift-and-add combine kept such differences in the low bits: one pair in ~3,000 fresh call sites
 * shared a stack. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	return cprof_fmix64(h ^ v);
}

/* Returns the stack's id, sending it first when it is new; 0 when it cannot be kept. */
static uint32_t stack_id(uint64_t h, const struct cprof_wire_stack *st, const struct cprof_wire_frame *f)
{
	uint32_t i = (uint32_t)h & (DEDUP_SIZE - 1), n, id = 0;

	h = h ? h : 1;
	for (n = 0; n < DEDUP_SIZE; n++, i = (i + 1) & (DEDUP_SIZE - 1)) {
		uint64_t k = atomic_load_explicit(&dedup[i].hash, memory_order_acquire);

		if (k == h)
			return dedup[i].id;
		if (k == 0)
			break;
	}
	pthread_mutex_lock(&dedup_lock);
	if (dedup_used >= DEDUP_SIZE * 3 / 4)
		goto out; /* 49152 distinct stacks: later new ones are not kept */
	for (n = 0, i = (uint32_t)h & (DEDUP_SIZE - 1); n < DEDUP_SIZE; n++, i = (i + 1) & (DEDUP_SIZE - 1)) {
		uint64_t k = atomic_load_explicit(&dedup[i].hash, memory_order_relaxed);

		if (k == h) {
			id = dedup[i].id;
			goto out;
		}
		if (k == 0)
			break;
	}
	id = atomic_fetch_add(&next_stack_id, 1);
	struct cprof_wire_stack copy = *st;
	copy.id = id;
	if (cprof_stacks_add(&copy, f) < 0) {
		id = 0;
		goto out;
	}
	dedup[i].id = id;
	atomic_store_explicit(&dedup[i].hash, h, memory_order_release);
	dedup_used++;
out:
	pthread_mutex_unlock(&dedup_lock);
	return id;
}

CPROF_HIDDEN _Atomic int cprof_py_seen; /* once Python is there it stays: no more looking */

static uint32_t capture_stack(void);

/* Each capture timed: its cost goes to the ring's stack totals (CPROF_MSG_COST), not to the hook's sample. */
static uint32_t capture(void)
{
	uint64_t t0 = cprof_now_ns(), dt;
	uint32_t id = capture_stack();
	struct cprof_ring *r = cprof_tls.ring;

	dt = cprof_now_ns() - t0;
	cprof_tls.stack_call_ns += dt;
	if (r)
		cprof_ring_sample(&r->stack_ns, &r->stack_calls, dt);
	return id;
}

static uint32_t capture_stack(void)
{
	void *ips[CPROF_STACK_MAX_NATIVE + 16];
	struct cprof_wire_frame f[CPROF_STACK_MAX_NATIVE + CPROF_STACK_MAX_PY];
	struct cprof_wire_stack st = { 0 };
	struct modtab *t = atomic_load_explicit(&modtab, memory_order_acquire);
	uint64_t h = 0;
	int n = 0, i = 0, k, rebuilt = 0;

	if (unw_backtrace_fn)
		n = unw_backtrace_fn(ips, (int)(sizeof(ips) / sizeof(ips[0])));
	/* our own frames (the hook, this file) come first: the stack starts at the hook's caller */
	while (i < n && (uintptr_t)ips[i] >= self_lo && (uintptr_t)ips[i] < self_hi)
		i++;
	for (; i < n && st.nnative < CPROF_STACK_MAX_NATIVE; i++) {
		uintptr_t a = (uintptr_t)ips[i];
		const struct mod *m = mod_find(t, a);

		if (m == NULL && !rebuilt) {
			rebuilt = 1;
			t = modtab_rebuild();
			m = mod_find(t, a);
		}
		k = st.nnative++;
		f[k].off = m ? a - m->bias : a;
		f[k].module = m ? module_id((struct mod *)m) : 0;
		f[k].func = 0;
		h = mix(h, a);
	}
	if (atomic_load_explicit(&cprof_py_seen, memory_order_relaxed) || cprof_py_available()) {
		st.npy = (uint16_t)cprof_py_capture(f + st.nnative, CPROF_STACK_MAX_PY);
		for (k = 0; k < st.npy; k++)
			h = mix(mix(mix(h, f[st.nnative + k].off), f[st.nnative + k].module), f[st.nnative + k].func);
	}
	if (st.nnative + st.npy == 0)
		return 0;
	return stack_id(cprof_fmix64(h ^ ((uint64_t)st.npy << 48)), &st, f);
}

static pthread_key_t sites_key;

static void sites_free(void *p)
{
	free(p);
}

static __attribute__((noinline)) int py_look(struct cprof_sites *ts)
{
	ts->py_check_in = 64;
	if (!cprof_py_available())
		return 0;
	atomic_store_explicit(&cprof_py_seen, 1, memory_order_relaxed);
	return 1;
}

void cprof_stack_attach(struct cprof_wire_api *ev, const void *ret_addr)
{
	struct cprof_sites *ts = cprof_tls.sites;
	uint32_t gen = cprof_tls.generation;
	struct cprof_site *e;
	uint64_t key;

	if (cprof_stack_mode == CPROF_STACKS_ALL) {
		ev->stack = capture();
		return;
	}
	if (unlikely(ts == NULL || ts->generation != gen)) {
		/* a fork child's ids are its own: the parent's sites name stacks the child never sent */
		if (ts == NULL) {
			ts = calloc(1, sizeof(*ts));
			if (ts == NULL)
				return;
			cprof_tls.sites = ts;
			pthread_setspecific(sites_key, ts);
		} else
			memset(ts, 0, sizeof(*ts));
		ts->generation = gen;
	}
	key = cprof_site_key(ret_addr, ev);
	if (atomic_load_explicit(&cprof_py_seen, memory_order_relaxed) || (ts->py_check_in-- == 0 && py_look(ts)))
		key = cprof_fmix64(key ^ cprof_py_site());
	e = cprof_site_of(ts, key);
	if (e->key != key) {
		e->key = key;
		e->left = 0;
		e->stack = 0;
		e->taken = 0;
		e->stride = 0;
	}
	if (e->left == 0) {
		uint32_t id = capture();

		ev->stack = id;
		cprof_site_taken(e, id, stack_first, stack_every);
	} else if (e->left--, e->stack) {
		ev->stack = e->stack;
		ev->flags |= CPROF_API_F_STACK_INHERITED;
	}
}

static unsigned env_uint(const char *name, unsigned def, unsigned lo, unsigned hi)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (s == NULL || *s == '\0')
		return def;
	v = strtoul(s, &end, 10);
	if (*end || v < lo || v > hi) {
		pr_warn("%s=%s ignored (expected %u..%u)", name, s, lo, hi);
		return def;
	}
	return (unsigned)v;
}

/* The head of libunwind's public unw_accessors_t (libunwind.h): access_mem is its fourth member. */
struct unw_accessors_head {
	void *find_proc_info, *put_unwind_info, *get_dyn_info_list_addr;
	int (*access_mem)(void *as, uintptr_t addr, uintptr_t *val, int write, void *arg);
};

struct unwinder_init_args {
	int (*set_caching)(void *as, int policy);
	struct unw_accessors_head *(*get_accessors)(void *as);
	void *as;
	int done;
};

/* Pages known readable, per thread (libunwind keeps 4 the same way). */
#define READABLE_PAGES 8
static __thread uintptr_t readable_page[READABLE_PAGES];
static __thread unsigned readable_next;
static int vm_readv_works; /* probed once, on the set-up thread */

/* libunwind's memory reads, checked without a descriptor: libunwind's own check writes the word into
 * its pipe, whose number means another file in the program's table. A page not seen readable is read
 * with process_vm_readv (EFAULT, not SIGSEGV, when it is not), or checked mapped with mincore where
 * a seccomp policy forbids that call. */
static int access_mem_checked(void *as, uintptr_t addr, uintptr_t *val, int write, void *arg)
{
	uintptr_t page = addr & ~(uintptr_t)4095;
	struct iovec local = { val, sizeof(*val) }, remote = { (void *)addr, sizeof(*val) };
	unsigned char vec[2];
	unsigned i;

	(void)as;
	(void)arg;
	if (write) {
		*(uintptr_t *)addr = *val;
		return 0;
	}
	if (page == 0)
		return -1;
	if (((addr + sizeof(*val) - 1) & ~(uintptr_t)4095) == page)
		for (i = 0; i < READABLE_PAGES; i++)
			if (readable_page[i] == page) {
				*val = *(const uintptr_t *)addr;
				return 0;
			}
	if (vm_readv_works) {
		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof(*val))
			goto readable;
		return -1;
	}
	if (mincore((void *)page, ((addr + sizeof(*val) - 1) & ~(uintptr_t)4095) == page ? 4096 : 8192, vec) != 0)
		return -1;
	*val = *(const uintptr_t *)addr;
readable:
	readable_page[readable_next++ % READABLE_PAGES] = page;
	return 0;
}

static void *unwinder_init(void *arg)
{
	struct unwinder_init_args *u = arg;
	struct unw_accessors_head *acc;
	uintptr_t probe = 1, got = 0;
	struct iovec local = { &got, sizeof(got) }, remote = { &probe, sizeof(probe) };

	/* first, on this thread: a seccomp policy that kills the caller of a forbidden call kills this
	 * thread only (no native stacks then), never an application thread in the middle of an unwind */
	vm_readv_works = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof(got) && got == 1;
	/* where seccomp forbids unshare the pipe lands in the shared table, as without this thread */
	if (unshare(CLONE_FILES) != 0)
		pr_dbg("unshare(CLONE_FILES) for libunwind: %s", strerror(errno));
	/* UNW_CACHE_PER_THREAD (2): no lock shared between the program's threads while unwinding */
	u->set_caching(u->as, 2);
	acc = u->get_accessors(u->as);
	if (acc && acc->access_mem) {
		acc->access_mem = access_mem_checked;
		u->done = 1;
	}
	return NULL;
}

/* Called once from cprof_init_slow, before any hook records. */
void cprof_stacks_init(void)
{
	const char *mode = getenv("CPROF_STACKS");
	void *h, **as;
	const char *lib;
	const struct mod *self;
	struct unwinder_init_args ui = { 0 };
	int (*backtrace_fn)(void **, int);
	sigset_t all, old;
	pthread_t t;
	ssize_t n;

	if (mode == NULL || *mode == '\0' || strcmp(mode, "sampled") == 0)
		cprof_stack_mode = CPROF_STACKS_SAMPLED;
	else if (strcmp(mode, "all") == 0)
		cprof_stack_mode = CPROF_STACKS_ALL;
	else {
		if (strcmp(mode, "off") != 0)
			pr_warn("CPROF_STACKS=%s: expected off, sampled or all; stacks are off", mode);
		cprof_stack_mode = CPROF_STACKS_OFF;
		return;
	}
	stack_first = env_uint("CPROF_STACK_FIRST", 4, 0, 1u << 30);
	stack_every = env_uint("CPROF_STACK_EVERY", 256, 1, 1u << 30);
	pthread_key_create(&sites_key, sites_free);
	n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	exe_path[n > 0 ? n : 0] = '\0';
	/* our own code's range: its frames are cut from every stack */
	self = mod_find(modtab_rebuild(), (uintptr_t)cprof_stacks_init);
	if (self) {
		self_lo = self->lo;
		self_hi = self->hi;
	}
	/* CPROF_LIBUNWIND names another copy (a machine without libunwind8 can carry one) */
	lib = getenv("CPROF_LIBUNWIND");
	h = dlopen(lib && *lib ? lib : "libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
	if (h == NULL) {
		/* dlerror says which: not found, or found and not a library (CPROF_LIBUNWIND=/bin/ls) */
		const char *why = dlerror();

		pr_warn("cannot load %s (%s): no native call stacks (Python call sites still work)",
			lib && *lib ? lib : "libunwind.so.8", why ? why : "not found");
		cprof_flusher_status(CPROF_STATUS_STACKS_NATIVE_MISSING, 0, "libunwind could not be loaded (not found, or not a library): no native call stacks");
		return;
	}
	ui.set_caching = (int (*)(void *, int))dlsym(h, "_ULx86_64_set_caching_policy");
	ui.get_accessors = (struct unw_accessors_head * (*)(void *))dlsym(h, "_Ux86_64_get_accessors");
	as = dlsym(h, "_ULx86_64_local_addr_space");
	backtrace_fn = (int (*)(void **, int))dlsym(h, "unw_backtrace");
	if (backtrace_fn == NULL || ui.set_caching == NULL || ui.get_accessors == NULL || as == NULL) {
		pr_warn("%s lacks the functions cprof uses: no native call stacks", lib && *lib ? lib : "libunwind.so.8");
		cprof_flusher_status(CPROF_STATUS_STACKS_NATIVE_MISSING, 0, "libunwind unusable: no native call stacks");
		return;
	}
	ui.as = *as;
	/* libunwind's first use opens a pipe (pipe2, its memory check) in the calling thread's descriptor
	 * table: a short-lived thread with a table of its own takes it, so the program's descriptor
	 * numbers stay what they were */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, unwinder_init, &ui) == 0)
		pthread_join(t, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ui.done) {
		pr_warn("cannot set up libunwind: no native call stacks");
		cprof_flusher_status(CPROF_STATUS_STACKS_NATIVE_MISSING, 0, "libunwind set-up failed: no native call stacks");
		return;
	}
	unw_backtrace_fn = backtrace_fn;
}

void cprof_stacks_lock(int lock)
{
	if (lock) {
		pthread_mutex_lock(&dedup_lock);
		pthread_mutex_lock(&modtab_lock);
	} else {
		pthread_mutex_unlock(&modtab_lock);
		pthread_mutex_unlock(&dedup_lock);
	}
}

/* In a fork child: the parent's stacks were sent as the parent's; the child sends its own. */
void cprof_stacks_reset_after_fork(void)
{
	pthread_mutex_init(&dedup_lock, NULL);
	pthread_mutex_init(&modtab_lock, NULL);
	memset(dedup, 0, sizeof(dedup));
	dedup_used = 0;
	atomic_store(&next_stack_id, 1);
}
