/* libcprof.so life cycle: cheap constructor, lazy start on the first hooked call, fork and exit handling. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "preload/cprof.h"
#include "preload/python.h"
#include "common/shmring.h"
#include "preload/flusher.h"

CPROF_HIDDEN _Atomic int cprof_state = CPROF_ST_UNINIT;

/* what the rings (the bottom layer) call back into */
static const struct cprof_ring_ops ring_ops = { .wake = cprof_flusher_wake, .thread_start = cprof_flusher_thread_start,
						.thread_end = cprof_crash_thread_end, .fail = cprof_disable };

static struct cprof_flusher_cfg cfg;
static int atexit_registered;
static int secure;
static int forked;
static int stacks_started; /* cprof_stacks_init ran in this image (or the parent's, before a fork) */
static _Atomic int driver_up; /* the driver's cuInit called InitializeInjection in this image (or the parent's) */

void cprof_disable(const char *why)
{
	if (atomic_exchange(&cprof_state, CPROF_ST_OFF) != CPROF_ST_OFF && why)
		pr_warn("%s; profiling disabled, the program continues unprofiled", why);
}

static int env_int(const char *name, int def, int lo, int hi)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return def;
	n = strtol(v, &end, 10);
	if (*end != '\0' || n < lo || n > hi) {
		pr_warn("ignoring %s=%s (want %d..%d)", name, v, lo, hi);
		return def;
	}
	return (int)n;
}

static int env_rank(const char *const *names)
{
	for (; *names; names++) {
		const char *v = getenv(*names);
		char *end;
		long n;

		if (v && *v) {
			n = strtol(v, &end, 10);
			if (*end == '\0' && n >= 0 && n < INT32_MAX)
				return (int)n;
		}
	}
	return -1;
}

static void read_identity(struct cprof_hello_info *h)
{
	static const char *const rank_vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", NULL };
	static const char *const local_vars[] = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", NULL };
	static const char *const size_vars[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL };
	ssize_t n;
	int fd;

	memset(h, 0, sizeof(*h));
	h->fixed.pid = getpid();
	h->fixed.ppid = getppid();
	h->fixed.start_ns = cprof_now_ns();
	h->fixed.clock = CPROF_CLOCK_REALTIME;
	h->fixed.wire_version = CPROF_WIRE_VERSION;
	h->fixed.rank = env_rank(rank_vars);
	h->fixed.local_rank = env_rank(local_vars);
	h->fixed.world_size = env_rank(size_vars);

	n = readlink("/proc/self/exe", h->exe, sizeof(h->exe) - 1);
	if (n < 0)
		strcpy(h->exe, "?");
	else
		h->exe[n] = '\0';
	if (gethostname(h->host, sizeof(h->host) - 1) < 0)
		strcpy(h->host, "?");
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, h->args, sizeof(h->args) - 1);
		close(fd);
		if (n > 0) {
			char *p = h->args, *end = h->args + n;

			h->args[n] = '\0';
			if (n == (ssize_t)sizeof(h->args) - 1)
				h->fixed.flags |= CPROF_HELLO_ARGV_TRUNCATED;
			while (p < end && h->argc < CPROF_HELLO_MAX_ARGS) {
				h->argv[h->argc++] = p;
				p += strlen(p) + 1;
			}
		}
	}
}

/* The simulator's libraries share one engine library; its presence means every GPU figure is modelled. */
static int simulated_gpu(void)
{
	void *h = dlopen("libsimgpu_engine.so", RTLD_NOLOAD | RTLD_LAZY);

	if (h == NULL)
		return 0;
	dlclose(h);
	return 1;
}

static void at_exit_flush(void)
{
	cprof_capture_exit();
	cprof_flusher_final(CPROF_BYE_EXIT);
}

/* cprof does not start (no collector, a stale FIFO, setuid, no thread): the program's own CUPTI client must not start
 * cprof's session later, which no flusher would drain (its records piled up in the program's memory, 11 MB per 100k
 * calls: a review, 2026-12-06); one it started already is left to it */
static void init_off(void)
{
	atomic_store(&cprof_state, CPROF_ST_OFF);
	cprof_cupti_orphan(1);
}

int cprof_init_slow(void)
{
	int expect = CPROF_ST_UNINIT, fd;
	const char *fifo, *no_cupti;
	struct stat st;

	if (!atomic_compare_exchange_strong(&cprof_state, &expect, CPROF_ST_INITING)) {
		/* another thread is starting us; its init does not call back into CUDA, so this ends */
		while ((expect = atomic_load(&cprof_state)) == CPROF_ST_INITING)
			sched_yield();
		return expect == CPROF_ST_ON ? 0 : -1;
	}
	if (secure) {
		init_off();
		return -1;
	}
	cprof_log_level = env_int("CPROF_DEBUG", CPROF_LOG_WARN, 0, 3);
	fifo = getenv("CPROF_FIFO");
	if (fifo == NULL || *fifo == '\0') {
		pr_dbg("CPROF_FIFO not set: not profiling");
		init_off();
		return -1;
	}
	/* O_NONBLOCK: no reader means ENXIO now, a full pipe means EAGAIN later, never a blocked thread */
	fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		pr_warn("cannot open the collector's FIFO %s (%s); not profiling", fifo,
			errno == ENXIO ? "no collector is reading it" : strerror(errno));
		init_off();
		return -1;
	}
	/* a stale CPROF_FIFO naming a regular file, a device or someone else's FIFO gets no bytes from us */
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode) || st.st_uid != geteuid() ||
	    strlen(fifo) >= sizeof(cfg.fifo_path)) {
		close(fd);
		pr_warn("%s is not a FIFO of this user; not profiling", fifo);
		init_off();
		return -1;
	}
	/* the flusher reopens it in a descriptor table of its own; this descriptor is the target's table's */
	close(fd);
	snprintf(cfg.fifo_path, sizeof(cfg.fifo_path), "%s", fifo);
	cfg.fifo_dev = st.st_dev;
	cfg.fifo_ino = st.st_ino;
	cfg.private_fds = env_int("CPROF_PRIVATE_FDS", 1, 0, 1);
	/* 50 ms: the flusher's wake-ups take cores from the program (issue 26); a thread that fills a quarter of
	 * its ring wakes it early, so high rates lose nothing */
	cfg.flush_ms = env_int("CPROF_FLUSH_MS", 50, 1, 10000);
	cfg.exit_timeout_ms = env_int("CPROF_EXIT_TIMEOUT_MS", 1000, 0, 600000);
	/* issue 26: while /proc/pressure/cpu says the machine has no spare core, CUPTI's records wait in their
	 * buffers, as Kineto's do until its stop, instead of taking the program's share of the CPU (with one
	 * competing process 0.38x torch.profiler's added time against 0.53x converting them as they come;
	 * docs/bench.md, thirteenth session); 0 converts them as they come */
	cfg.defer_mb = env_int("CPROF_DEFER_MB", CPROF_DEFER_MB_DEFAULT, 0, 4096);
	{
		/* frames to the collector through shared memory, a KICK a round on the FIFO (issue 26); 0: the FIFO */
		int kb = env_int("CPROF_RING_KB", 2048, 0, CPROF_SHMRING_MAX >> 10);

		cfg.ring_size = 0;
		if (kb > 0) {
			cfg.ring_size = CPROF_SHMRING_MIN;
			while (cfg.ring_size * 2 <= (uint32_t)kb << 10)
				cfg.ring_size *= 2;
		}
	}
	read_identity(&cfg.hello);
	if (forked)
		cfg.hello.fixed.flags |= CPROF_HELLO_FORKED;
	if (simulated_gpu())
		cfg.hello.fixed.flags |= CPROF_HELLO_SIMGPU;
	cprof_ring_set_ops(&ring_ops);
	cprof_tick_init();
	if (cprof_flusher_start(&cfg) < 0) {
		pr_warn("cannot start the flusher thread; not profiling");
		init_off();
		return -1;
	}
	if (cprof_loaded_after_libc())
		cprof_flusher_status(CPROF_STATUS_HOOKS_ABSENT, 0,
				     "cprof was loaded after libc, not preloaded (CUDA_INJECTION64_PATH alone: "
				     "cprof-run --inject-only, or LD_PRELOAD cleared; or a dlopen): CUPTI's records "
				     "of the calls, no hooked call, call site or stack");
	if (!atexit_registered) {
		/* registered once: a fork child inherits the registration */
		atexit_registered = 1;
		atexit(at_exit_flush);
	}
	/* once an image: a fork child of a parent that started keeps the parent's set-up, one whose parent never
	 * did sets up its own */
	if (!stacks_started) {
		stacks_started = 1;
		cprof_stacks_init();
	}
	/* CUPTI starts at the first call that brings the driver up (cprof_enter), once a driver has answered. CUDA
	 * does not work across fork without exec: the child of a parent that had started CUPTI records API calls
	 * only (cprof_cupti_reset_after_fork left it off); one whose parent never brought CUDA up starts its own. */
	/* CPROF_NO_CUPTI=1 (any value but empty and 0): "=0" reads as "keep CUPTI", as a user writing it means */
	if ((no_cupti = getenv("CPROF_NO_CUPTI")) != NULL && *no_cupti && strcmp(no_cupti, "0") != 0)
		atomic_store(&cprof_cupti_on, CPROF_CUPTI_OFF);
	if (cprof_capture_init()) {
		/* --capture-range: everything is in place, nothing is recorded until the range opens; a CUPTI session
		 * the program's own CUPTI client started before this (sharing) turns cprof's kinds off */
		atomic_store(&cprof_state, CPROF_ST_PAUSED);
		cprof_capture_settle_kinds();
		return 1;
	}
	atomic_store(&cprof_state, CPROF_ST_ON);
	pr_dbg("profiling pid %d into %s", (int)getpid(), fifo);
	return 0;
}

static void atfork_prepare(void)
{
	/* a signal handler's call meanwhile must not wait for this thread's own hold of the strings locks */
	cprof_in_strings = 1;
	atomic_signal_fence(memory_order_seq_cst);
	cprof_kernels_lock(1);
	cprof_strings_lock(1);
	cprof_stacks_lock(1);
	cprof_flusher_strings_lock(1);
}

static void atfork_parent(void)
{
	cprof_flusher_strings_lock(0);
	cprof_stacks_lock(0);
	cprof_strings_lock(0);
	cprof_kernels_lock(0);
	atomic_signal_fence(memory_order_seq_cst);
	cprof_in_strings = 0;
}

static void atfork_child(void)
{
	int st;

	cprof_flusher_strings_lock(0);
	cprof_stacks_lock(0);
	cprof_stacks_reset_after_fork();
	cprof_py_reset_after_fork();
	cprof_strings_lock(0);
	cprof_kernels_lock(0);
	atomic_signal_fence(memory_order_seq_cst);
	cprof_in_strings = 0;
	cprof_flusher_reset_after_fork();
	cprof_rings_reset_after_fork();
	cprof_cupti_reset_after_fork(atomic_load(&driver_up));
	cprof_capture_reset_after_fork();
	forked = 1;
	st = atomic_load(&cprof_state);
	/* the child starts over on its first hooked call: its own HELLO, pid and flusher */
	if (st == CPROF_ST_ON || st == CPROF_ST_INITING || st == CPROF_ST_PAUSED)
		atomic_store(&cprof_state, CPROF_ST_UNINIT);
}

CPROF_HIDDEN int cprof_forked(void)
{
	return forked;
}

__attribute__((constructor)) static void cprof_ctor(void)
{
	/* setuid and friends: read no CPROF_* variable, touch nothing */
	if (getauxval(AT_SECURE)) {
		secure = 1;
		atomic_store(&cprof_state, CPROF_ST_OFF);
		atomic_store(&cprof_cupti_on, CPROF_CUPTI_OFF); /* nor start a CUPTI session for the program's client */
		return;
	}
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	cprof_rings_init();
	cprof_nvtx_init();
}

/* _exit skips atexit: flush here so os._exit() and _exit() keep what they produced. A vfork child's
 * _exit (exec failed) is not ours to flush: cprof_flusher_final checks the pid. */
static void exit_common(void)
{
	if (!cprof_flusher_owner())
		return;
	cprof_capture_exit();
	/* what CUPTI still holds is part of what the process produced (exit() does this in cupti.c's atexit) */
	cprof_cupti_flush(1);
	cprof_flusher_final(CPROF_BYE__EXIT);
}

CPROF_EXPORT void _exit(int status)
{
	void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "_exit");

	exit_common();
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

CPROF_EXPORT void _Exit(int status)
{
	void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "_Exit");

	exit_common();
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* The driver's cuInit dlopens CUDA_INJECTION64_PATH and calls this; returning 0 would make the
 * driver report an injection failure, so it always reports success. */
CPROF_EXPORT int InitializeInjection(void)
{
	/* first, whatever cprof's state: a fork child must know its CUDA is the parent's, broken (cupti.c) */
	atomic_store(&driver_up, 1);
	/* also the way in for programs with static cudart and driver-API programs, which no hook sees; the
	 * driver is calling us from cuInit, so it is there and CUPTI may start */
	if (cprof_active())
		cprof_cupti_start_checked(1);
	return 1;
}

/* A counted call that reported an error: an instant event with its code (the count has the call already) */
void cprof_record_error(unsigned api, int ret)
{
	struct cprof_wire_api ev = { 0 };

	if (atomic_load_explicit(&cprof_state, memory_order_relaxed) != CPROF_ST_ON)
		return;
	ev.start_ns = ev.end_ns = cprof_tick();
	ev.api = (uint16_t)api;
	ev.ret = ret;
	cprof_record(&ev);
}

void cprof_counted_cost_sample(uint64_t ticks)
{
	struct cprof_ring *r = cprof_tls.ring;
	uint64_t ns = cprof_tick_dur_ns(ticks);

	if (r == NULL || cprof_tls.generation != atomic_load_explicit(&cprof_generation, memory_order_relaxed) ||
	    atomic_load_explicit(&cprof_state, memory_order_relaxed) != CPROF_ST_ON ||
	    ns >= CPROF_COST_SAMPLE_MAX_NS) /* a negative difference wraps above the bound too */
		return;
	cprof_ring_sample(&r->counted_sampled_ns, &r->counted_sampled, ns);
}

/* A launch passed through (CPROF_PASS) is timed only while a window is closed and CUPTI records nothing, on a
 * thread with a ring of this process: the report compares it with the launches recorded in the windows. */
uint64_t cprof_pass_begin_slow(void)
{
	if (atomic_load_explicit(&cprof_state, memory_order_relaxed) != CPROF_ST_PAUSED ||
	    atomic_load_explicit(&cprof_cupti_on, memory_order_relaxed) != CPROF_CUPTI_ON || cprof_tls.ring == NULL ||
	    cprof_tls.generation != atomic_load_explicit(&cprof_generation, memory_order_relaxed) ||
	    !cprof_cupti_unrecorded())
		return 0;
	return cprof_tick();
}

void cprof_pass_sample(uint64_t ticks)
{
	struct cprof_ring *r = cprof_tls.ring;
	uint64_t ns = cprof_tick_dur_ns(ticks);

	/* a call that lost its core, or a window that opened meanwhile, is no sample (the report drops the recorded
	 * launches as long) */
	if (r == NULL || ns == 0 || ns >= CPROF_PASS_MAX_NS || ticks >= (1ull << 56) ||
	    atomic_load_explicit(&cprof_state, memory_order_relaxed) != CPROF_ST_PAUSED || !cprof_cupti_unrecorded())
		return;
	cprof_ring_sample(&r->pass_ns, &r->pass_calls, ns);
	/* the squares, for the report's test that the difference is more than noise */
	atomic_store_explicit(&r->pass_sq, atomic_load_explicit(&r->pass_sq, memory_order_relaxed) + ns * ns,
			      memory_order_relaxed);
}
