/* Fatal signals: what was recorded reaches the profile, then the program's own handler or default action runs. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/cprof.h"

/* SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT (abort, std::terminate) are the ones that end a program
 * with a core dump before any exit path runs. Signals are below 32 on Linux: a bit each. */
#define FATAL_MASK ((1u << SIGSEGV) | (1u << SIGBUS) | (1u << SIGILL) | (1u << SIGFPE) | (1u << SIGABRT))
#define ALTSTACK_SIZE (64 * 1024)

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* What the program believes each fatal signal's disposition is: what it last installed (through the
 * hooks below), or what was there when ours went in. The kernel keeps ours. Two slots per signal and
 * an index, so that the handler reads a whole one while a hook writes the other. */
static struct {
	struct sigaction slot[2];
	_Atomic int cur;
} app[32];

typedef sighandler_t (*signal_fn)(int, sighandler_t);
static sigaction_fn real_sigaction_p;
static signal_fn real_signal_p;
static _Atomic int installed;
static int crash_timeout_ms = -1;
static int fault_in_handler; /* CPROF_TEST_CRASH_IN_HANDLER: the tests' crash inside cprof's own handler */
static volatile int *volatile fault_addr; /* NULL: the address that crash faults on */
static _Atomic uint32_t crash_state; /* futex: 0 none yet, 1 a thread is sending, 2 sent (or given up) */
static __thread volatile sig_atomic_t in_handler __attribute__((tls_model("initial-exec")));
static __thread volatile sig_atomic_t handler_sig __attribute__((tls_model("initial-exec")));

static int is_fatal(int sig)
{
	return sig > 0 && sig < 32 && (FATAL_MASK & (1u << sig));
}

static sigaction_fn real_sigaction(void)
{
	sigaction_fn f = __atomic_load_n(&real_sigaction_p, __ATOMIC_ACQUIRE);

	if (f == NULL) {
		f = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
		__atomic_store_n(&real_sigaction_p, f, __ATOMIC_RELEASE);
	}
	return f;
}

static signal_fn real_signal(void)
{
	signal_fn f = __atomic_load_n(&real_signal_p, __ATOMIC_ACQUIRE);

	if (f == NULL) {
		f = (signal_fn)dlsym(RTLD_NEXT, "signal");
		__atomic_store_n(&real_signal_p, f, __ATOMIC_RELEASE);
	}
	return f;
}

/* Looked up at load: a program may call signal() or sigaction() first from inside a signal handler,
 * where dlsym is not safe. */
__attribute__((constructor)) static void crash_ctor(void)
{
	if (getauxval(AT_SECURE))
		return; /* setuid: nothing; the hooks resolve lazily if ever called */
	real_sigaction();
	real_signal();
}

void cprof_crash_reset_after_fork(void)
{
	atomic_store(&crash_state, 0);
}

static struct sigaction app_get(int sig)
{
	return app[sig].slot[atomic_load_explicit(&app[sig].cur, memory_order_acquire) & 1];
}

static void app_set(int sig, const struct sigaction *a)
{
	int next = (atomic_load_explicit(&app[sig].cur, memory_order_relaxed) + 1) & 1;

	app[sig].slot[next] = *a;
	atomic_store_explicit(&app[sig].cur, next, memory_order_release);
}

static pid_t gettid_raw(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The signal's default action, now, on this thread: disposition SIG_DFL, unblocked, sent again. */
static void die_by(int sig)
{
	struct sigaction dfl;
	sigset_t set;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (real_sigaction_p)
		real_sigaction_p(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	syscall(SYS_tgkill, getpid(), gettid_raw(), sig);
	/* a fault that came from an instruction comes back when the handler returns, at default now */
}

static void record_crash(int sig, const siginfo_t *si, int app_handler)
{
	struct cprof_wire_crash c;

	if (atomic_load(&cprof_state) != CPROF_ST_ON)
		return;
	memset(&c, 0, sizeof(c));
	c.time_ns = cprof_now_ns();
	c.tid = (uint32_t)gettid_raw();
	c.signo = sig;
	if (si) {
		c.code = si->si_code;
		/* si_addr means the faulting address only for a fault the kernel raised */
		if (si->si_code > 0 && sig != SIGABRT)
			c.addr = (uint64_t)(uintptr_t)si->si_addr;
	}
	if (app_handler)
		c.flags |= CPROF_CRASH_F_APP_HANDLER;
	/* inside CUDA the driver's and CUPTI's state is whatever the fault left: no CUPTI call then */
	if (cprof_tls.depth > 0)
		c.flags |= CPROF_CRASH_F_IN_CUDA;
	cprof_flusher_crash(&c, crash_timeout_ms);
}

/* The program's disposition, as it would have run without us. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = app_get(sig);
	sigset_t mask, old;

	if (a.sa_handler == SIG_IGN) {
		/* the kernel does not let a fault be ignored: it kills; a sent signal is ignored */
		if (si && si->si_code > 0 && sig != SIGABRT)
			die_by(sig);
		return;
	}
	if (a.sa_handler == SIG_DFL) {
		die_by(sig);
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		app_set(sig, &dfl);
	}
	mask = a.sa_mask;
	if (!(a.sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	/* a signal the program's handler raised again (after resetting it) is delivered here, to us */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	struct sigaction a;
	uint32_t st;

	if (in_handler) {
		/* a fault inside cprof's own handler: never again through here; the first signal's default
		 * action ends the process (SA_NODEFER lets the same signal reach us to do so) */
		die_by(handler_sig);
		die_by(sig);
		return;
	}
	a = app_get(sig);
	/* a signal sent to a program that ignores it is no crash */
	if (a.sa_handler == SIG_IGN && !(si && si->si_code > 0 && sig != SIGABRT))
		return;
	in_handler = 1;
	handler_sig = sig;
	if (unlikely(fault_in_handler))
		*fault_addr = 1;
	st = 0;
	if (atomic_compare_exchange_strong(&crash_state, &st, 1)) {
		record_crash(sig, si, a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN);
		atomic_store(&crash_state, 2);
		syscall(SYS_futex, &crash_state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	} else if (st == 1) {
		/* another thread is sending: the process must not end under it (bounded: it is) */
		struct timespec ts = { 0, 10 * 1000000L };
		int i;

		for (i = 0; i < 300 && atomic_load(&crash_state) == 1; i++)
			syscall(SYS_futex, &crash_state, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
	}
	in_handler = 0;
	chain(sig, si, uc);
	errno = saved_errno;
}

static int env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

void cprof_crash_install(void)
{
	sigaction_fn real = real_sigaction();
	const char *v = getenv("CPROF_CRASH");
	struct sigaction ours, cur;
	int sig;

	if (real == NULL || (v && strcmp(v, "0") == 0))
		return;
	if (atomic_load(&installed)) {
		/* a fork child inherits the handler and what the program installed */
		return;
	}
	fault_in_handler = env_on("CPROF_TEST_CRASH_IN_HANDLER");
	v = getenv("CPROF_CRASH_TIMEOUT_MS");
	if (v && *v)
		crash_timeout_ms = atoi(v);
	memset(&ours, 0, sizeof(ours));
	ours.sa_sigaction = crash_handler;
	ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&ours.sa_mask);
	for (sig = 1; sig < 32; sig++) {
		if (!is_fatal(sig) || real(sig, NULL, &cur) != 0)
			continue;
		app_set(sig, &cur);
	}
	atomic_store(&installed, 1);
	for (sig = 1; sig < 32; sig++)
		if (is_fatal(sig))
			real(sig, &ours, NULL);
	if (cprof_tls.ring)
		cprof_crash_thread_start(cprof_tls.ring);
}

/* A stack overflow needs a signal stack to run the handler at all; the program's, if it set one. */
void cprof_crash_thread_start(struct cprof_ring *r)
{
	stack_t cur, ss;

	if (!atomic_load_explicit(&installed, memory_order_relaxed) || sigaltstack(NULL, &cur) != 0 ||
	    !(cur.ss_flags & SS_DISABLE))
		return;
	if (r->altstack == NULL) {
		void *p = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			       -1, 0);

		if (p == MAP_FAILED)
			return;
		r->altstack = p;
	}
	ss.ss_sp = r->altstack;
	ss.ss_size = ALTSTACK_SIZE;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
}

void cprof_crash_thread_end(struct cprof_ring *r)
{
	stack_t cur, off = { .ss_flags = SS_DISABLE };

	if (r->altstack && sigaltstack(NULL, &cur) == 0 && cur.ss_sp == r->altstack && !(cur.ss_flags & SS_ONSTACK))
		sigaltstack(&off, NULL);
}

/* exec keeps an ignored signal ignored and resets a handled one: the new image must see the program's
 * SIG_IGN, not our handler turned default. The vfork child of posix_spawn shares our memory: it only
 * touches the kernel's table, which is its own. */
void cprof_crash_exec(int begin)
{
	sigaction_fn real = real_sigaction_p;
	struct sigaction ours;
	int sig;

	if (real == NULL || !atomic_load(&installed))
		return;
	memset(&ours, 0, sizeof(ours));
	ours.sa_sigaction = crash_handler;
	ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&ours.sa_mask);
	for (sig = 1; sig < 32; sig++) {
		struct sigaction a;

		if (!is_fatal(sig))
			continue;
		a = app_get(sig);
		if (a.sa_handler == SIG_IGN)
			real(sig, begin ? &a : &ours, NULL);
	}
}

/* ---- the program's view: its handlers are kept, and called by ours ---- */

CPROF_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn real = real_sigaction();

	if (!is_fatal(sig) || !atomic_load_explicit(&installed, memory_order_acquire)) {
		if (real == NULL) {
			errno = ENOSYS;
			return -1;
		}
		return real(sig, act, old);
	}
	if (old)
		*old = app_get(sig);
	if (act)
		app_set(sig, act);
	return 0;
}

CPROF_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;

	if (!is_fatal(sig) || !atomic_load_explicit(&installed, memory_order_acquire)) {
		signal_fn real = real_signal();

		if (real == NULL) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		return real(sig, handler);
	}
	/* glibc's signal(): BSD semantics */
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	act.sa_flags = SA_RESTART;
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}
