/* Recording windows: --capture-range (cudaProfilerStart/Stop or cuProfilerStart/Stop, an NVTX range) and the
 * timed windows of --delay, --duration, --on-demand and cprof capture (a schedule file in the run's private
 * directory). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cuda_profiler_api.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "common/steps.h"
#include "common/windows.h"
#include "preload/hook.h"

#define CUDART "libcudart.so.13"

CPROF_HIDDEN int cprof_capture_mode;
/* nvtx:SPEC: a range named SPEC in any domain (as before 2026-12-06: names may hold '@'), or, when SPEC is
 * NAME@DOMAIN (nsys's form), one named NAME in DOMAIN ("*": any domain) */
static char nvtx_spec[200];
static char nvtx_name[200];
static char nvtx_domain[200]; /* "": SPEC has no '@' */
/* the thread (the address of its marker), nesting level and domain of the NVTX range that opened the capture */
static __thread char thread_marker;
static _Atomic(char *) nvtx_thread;
static int nvtx_level;
static const void *nvtx_open_domain;
static _Atomic uint64_t windows;

static int timed_start(const char *path);
static int steps_init(const char *spec);

int cprof_capture_init(void)
{
	const char *v = getenv("CPROF_CAPTURE"), *w = getenv("CPROF_WINDOWS");

	cprof_capture_mode = CPROF_CAPTURE_NONE;
	if (w != NULL && *w != '\0') {
		if (timed_start(w) < 0) {
			pr_warn("cannot follow the recording windows in %s; recording the whole run", w);
			return 0;
		}
		cprof_capture_mode = CPROF_CAPTURE_TIMED;
		return 1;
	}
	if (v == NULL || *v == '\0')
		return 0;
	if (!strncmp(v, "steps:", 6)) {
		if (steps_init(v + 6) < 0) {
			pr_warn("ignoring CPROF_CAPTURE=%s (want steps:FIRST:LAST[:every=N]); recording the whole run", v);
			return 0;
		}
		cprof_capture_mode = CPROF_CAPTURE_STEPS;
	} else if (!strcmp(v, "cudaProfilerApi")) {
		cprof_capture_mode = CPROF_CAPTURE_PROFILER_API;
	} else if (!strncmp(v, "nvtx:", 5) && v[5] != '\0' && strlen(v + 5) < sizeof(nvtx_spec)) {
		const char *at = strrchr(v + 5, '@');

		snprintf(nvtx_spec, sizeof(nvtx_spec), "%s", v + 5);
		if (at && at > v + 5 && at[1]) {
			snprintf(nvtx_name, sizeof(nvtx_name), "%.*s", (int)(at - (v + 5)), v + 5);
			snprintf(nvtx_domain, sizeof(nvtx_domain), "%s", at + 1);
		}
		cprof_capture_mode = CPROF_CAPTURE_NVTX;
	} else {
		pr_warn("ignoring CPROF_CAPTURE=%s (want cudaProfilerApi or nvtx:NAME); recording the whole run", v);
		return 0;
	}
	return 1;
}

/* Pauses (ON -> PAUSED) or resumes (PAUSED -> ON) recording; a library switched off stays off.
 * number: the window's (0: the next).
 *
 * A hooked call reads cprof_state once, on entry, and reaches CUDA (where CUPTI looks at its kinds) later, so
 * calls under way at a switch see the two switches at different times (CI, d0a59c6: a launch recorded
 * without its kernel). The order keeps both mistakes out of the window:
 *   start: stamp capture-start; CUPTI's kinds on; flip ON; stamp capture-on
 *   stop:  stamp capture-off; flip PAUSED; CUPTI's kinds off and flushed; stamp capture-stop
 * The window is [capture-on, capture-off] (cprofd's CPROF_WINDOWS): a call made wholly inside it entered while ON,
 * so it is recorded, and CUPTI's kinds were on from before it to after it, so with its GPU work. A call that
 * overlapped the stop may be recorded without it (it reached CUDA after the kinds went off). A call cprof passed
 * through may still reach CUDA while the kinds are on: it entered before the flip ON or after the flip PAUSED, so
 * its CUDA call started before capture-on or after capture-off, and cprofd drops GPU records of no recorded call
 * that started there (cprof_store_windows). The inner stamps are taken next to their flips, with nothing between;
 * the outer ones hold CUPTI's switches, so the time between windows is the program's alone (the report's pace,
 * report/model/cost.c), and calls made there, between an outer stamp and its flip, are passed through. */
static pthread_mutex_t switching = PTHREAD_MUTEX_INITIALIZER; /* one switch at a time: kinds follow the state */
_Atomic int cprof_switching;

/* a fork child's copy of the lock may have been held by a parent's thread that was switching */
void cprof_capture_reset_after_fork(void)
{
	pthread_mutex_init(&switching, NULL);
	atomic_store(&cprof_switching, 0);
}

/* this thread is switching: a switch asked from inside it (a signal handler's cudaProfilerStop, the program's
 * CUPTI buffer callback that the flush calls) is dropped, not a wait on a lock the thread holds */
static __thread int switching_here;

static void capture_set_n(int on, const char *why, int32_t number)
{
	int from = on ? CPROF_ST_PAUSED : CPROF_ST_ON;
	uint64_t outer, inner;
	char text[240];

	if (switching_here)
		return; /* no log: a signal handler may be where it came from */
	snprintf(text, sizeof(text), "%s", why);
	switching_here = 1;
	pthread_mutex_lock(&switching);
	if (on) {
		if (atomic_load(&cprof_state) != CPROF_ST_PAUSED)
			goto out;
		if (number <= 0)
			number = (int32_t)atomic_load(&windows) + 1;
		/* before CUPTI's switch: the gap before the window holds none, nor do its passLaunches (a thread that
		 * launches meanwhile, a --duration window's, is not the one switching) */
		atomic_store(&cprof_switching, 1);
		outer = cprof_now_ns();
		cprof_cupti_pause(0);
		if (!atomic_compare_exchange_strong(&cprof_state, &from, CPROF_ST_ON)) {
			if (from != CPROF_ST_ON) /* switched off meanwhile (cprof_disable): the kinds go off again */
				cprof_cupti_pause(1);
			goto out;
		}
		inner = cprof_now_ns();
		atomic_store(&windows, (uint64_t)number);
		cprof_flusher_status_at(CPROF_STATUS_CAPTURE_START, number, text, outer);
		cprof_flusher_status_at(CPROF_STATUS_CAPTURE_ON, number, "", inner);
		cprof_flusher_cost_edge();
		goto out;
	}
	atomic_store(&cprof_switching, 1);
	inner = cprof_now_ns();
	if (!atomic_compare_exchange_strong(&cprof_state, &from, CPROF_ST_PAUSED)) {
		/* cprof switched itself off inside the window (the collector gone): CUPTI's kinds go off all the same,
		 * else CUPTI goes on recording into buffers no flusher drains, and costs every call */
		if (from != CPROF_ST_PAUSED)
			cprof_cupti_pause(1);
		goto out;
	}
	cprof_flusher_status_at(CPROF_STATUS_CAPTURE_OFF, (int32_t)atomic_load(&windows), "", inner);
	cprof_cupti_pause(1); /* after the flip: the flush takes what CUPTI finished for the window */
	outer = cprof_now_ns();
	cprof_flusher_status_at(CPROF_STATUS_CAPTURE_STOP, (int32_t)atomic_load(&windows), text, outer);
	cprof_flusher_cost_edge();
out:
	atomic_store(&cprof_switching, 0);
	pthread_mutex_unlock(&switching);
	switching_here = 0;
}

/* cprof's CUPTI session started, or cprof itself did, while cprof was not recording (paused outside its windows,
 * or off): cprof's kinds go off, unless a window opened meanwhile. Under the switches' lock: a window opening on
 * another thread between the state's test and the kinds' switch would be left with them off (a review's race,
 * 2026-12-06). */
void cprof_capture_settle_kinds(void)
{
	int st;

	if (switching_here)
		return; /* inside a switch of this thread (the program's CUPTI callback in its flush): it sets them */
	switching_here = 1;
	pthread_mutex_lock(&switching);
	st = atomic_load(&cprof_state);
	if (st == CPROF_ST_PAUSED || st == CPROF_ST_OFF)
		cprof_cupti_pause(1);
	pthread_mutex_unlock(&switching);
	switching_here = 0;
}

static void capture_set(int on, const char *why)
{
	capture_set_n(on, why, 0);
}

static void steps_push(const char *message, const void *domain, int level);
static void steps_pop(const void *domain, int level);

void cprof_capture_nvtx_push(const char *message, const void *domain, const char *domain_name, int level)
{
	char why[240];

	char *none = NULL;

	if (cprof_capture_mode == CPROF_CAPTURE_STEPS) {
		steps_push(message, domain, level);
		return;
	}
	if (message == NULL ||
	    (strcmp(message, nvtx_spec) != 0 &&
	     (!nvtx_domain[0] || strcmp(message, nvtx_name) != 0 ||
	      (strcmp(nvtx_domain, "*") != 0 && (domain_name == NULL || strcmp(domain_name, nvtx_domain) != 0)))))
		return;
	if (!atomic_compare_exchange_strong(&nvtx_thread, &none, &thread_marker))
		return; /* a window is open already: nested or concurrent ranges of that name do not restart it */
	cprof_active(); /* the first annotation may come before any CUDA call: start (paused) first */
	nvtx_level = level;
	nvtx_open_domain = domain;
	snprintf(why, sizeof(why), "NVTX range %.200s pushed", message);
	capture_set(1, why);
}

void cprof_capture_nvtx_pop(const void *domain, int level)
{
	if (cprof_capture_mode == CPROF_CAPTURE_STEPS) {
		steps_pop(domain, level);
		return;
	}
	/* levels are counted per domain: another domain's pop at the same level is not this range's end */
	if (atomic_load(&nvtx_thread) != &thread_marker || level != nvtx_level || domain != nvtx_open_domain)
		return;
	capture_set(0, "NVTX range popped");
	atomic_store(&nvtx_thread, NULL);
}

static cudaError_t real_cudaProfilerStart(void)
	CPROF_HOOK_BODY(cudaError_t, cudaProfilerStart, CUDART, cudaErrorSharedObjectSymbolNotFound, (), {})
static cudaError_t real_cudaProfilerStop(void)
	CPROF_HOOK_BODY(cudaError_t, cudaProfilerStop, CUDART, cudaErrorSharedObjectSymbolNotFound, (), {})

/* inside cudaProfilerStart/Stop on this thread: the real cudart calls the driver's cuProfilerStart/Stop there,
 * through the entry point cuGetProcAddress gave it (and so through our hook, hooks-cuda.c) */
static __thread int in_runtime_profiler;

int cprof_capture_in_runtime_profiler(void)
{
	return in_runtime_profiler;
}

/* --capture-range cudaProfilerApi: the runtime's cudaProfilerStart/Stop and the driver's cuProfilerStart/Stop open
 * and close the windows alike, as nsys treats them (before 2026-12-06 the driver's opened nothing) */
void cprof_capture_profiler_api(int on, const char *why)
{
	if (on) {
		/* first: cprof reads the capture mode when it starts, and a program may call this before any other CUDA
		 * call (its window was missed whole, the profile empty, until 2026-12-06) */
		cprof_active();
		if (cprof_capture_mode == CPROF_CAPTURE_PROFILER_API && atomic_load(&cprof_state) != CPROF_ST_OFF)
			capture_set(1, why);
	} else if (cprof_capture_mode == CPROF_CAPTURE_PROFILER_API) {
		capture_set(0, why);
	}
}

/* cudaProfilerStart/Stop: recorded like any call, and in --capture-range=cudaProfilerApi they open and close
 * the windows (the start is inside its window, the stop too). The driver's call they make is theirs: it neither
 * switches again nor is recorded as a call of its own. */
CPROF_EXPORT cudaError_t cudaProfilerStart(void)
{
	cudaError_t ret;

	cprof_capture_profiler_api(1, "cudaProfilerStart");
	in_runtime_profiler++;
	ret = real_cudaProfilerStart();
	in_runtime_profiler--;
	return ret;
}

CPROF_EXPORT cudaError_t cudaProfilerStop(void)
{
	cudaError_t ret;

	in_runtime_profiler++;
	ret = real_cudaProfilerStop();
	in_runtime_profiler--;
	cprof_capture_profiler_api(0, "cudaProfilerStop");
	return ret;
}

/* Timed windows (CPROF_WINDOWS=FILE, from --delay/--duration, --on-demand and cprof capture): FILE lists one
 * window a line, "NUMBER START_NS END_NS WHY" (END_NS 0: until the process ends), and is replaced whole
 * (rename) by whoever adds one. A thread of ours follows it: it rereads FILE when it changed (looked at every
 * TIMED_POLL_NS) and flips recording at each boundary, asleep until the next one. Overlapping windows
 * merge into the first. */
#define TIMED_MAX 256
#define TIMED_POLL_NS 20000000ull

struct timed_window {
	int32_t number;
	uint64_t start, end;
	char why[160];
};

static struct {
	char path[PATH_MAX];
	struct timed_window w[TIMED_MAX];
	int n;
	struct stat seen;     /* FILE as last read (ino, size, mtime) */
	pthread_mutex_t lock; /* held while a flip is under way: the exit waits for it */
	_Atomic int stopped;  /* the process is exiting: flip nothing more */
	pid_t owner;          /* the process whose thread follows FILE (a fork child has none until it starts) */
} tm;

static int timed_parse_line(const char *line, struct timed_window *w)
{
	int number, off;

	if (cprof_windows_parse(line, &number, &w->start, &w->end, &off) < 0)
		return -EINVAL;
	w->number = number;
	snprintf(w->why, sizeof(w->why), "%s", line + off);
	return 0;
}

/* Rereads FILE when it changed; a file that is not ours, or unreadable, leaves the windows as they were. */
static void timed_reload(void)
{
	char buf[TIMED_MAX * 200], *line, *save = NULL;
	struct stat st;
	ssize_t len;
	int fd, n = 0;

	if (stat(tm.path, &st) < 0 || (st.st_ino == tm.seen.st_ino && st.st_size == tm.seen.st_size &&
				       st.st_mtim.tv_sec == tm.seen.st_mtim.tv_sec &&
				       st.st_mtim.tv_nsec == tm.seen.st_mtim.tv_nsec))
		return;
	fd = open(tm.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return;
	buf[len] = '\0';
	tm.seen = st;
	for (line = strtok_r(buf, "\n", &save); line && n < TIMED_MAX; line = strtok_r(NULL, "\n", &save))
		if (timed_parse_line(line, &tm.w[n]) == 0)
			n++;
	tm.n = n;
}

static void *timed_main(void *arg)
{
	(void)arg;
	/* started from inside the library's start-up: the first flip waits until it is over */
	while (atomic_load(&cprof_state) == CPROF_ST_INITING) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	for (;;) {
		uint64_t now, next, wake;
		struct timespec ts;
		int st, cur = -1;

		timed_reload();
		now = cprof_now_ns();
		next = UINT64_MAX;
		for (int i = 0; i < tm.n; i++) {
			const struct timed_window *w = &tm.w[i];

			if (w->start <= now && (w->end == 0 || now < w->end)) {
				if (cur < 0)
					cur = i;
			} else if (w->start > now && w->start < next) {
				next = w->start;
			}
			if (w->end > now && w->end < next)
				next = w->end;
		}
		st = atomic_load(&cprof_state);
		if (st == CPROF_ST_OFF || st == CPROF_ST_UNINIT)
			return NULL; /* switched off, or this is a fork child's copy of the flag: nothing to follow */
		pthread_mutex_lock(&tm.lock);
		if (atomic_load(&tm.stopped)) {
			pthread_mutex_unlock(&tm.lock);
			return NULL;
		}
		if (cur >= 0 && st == CPROF_ST_PAUSED)
			capture_set_n(1, tm.w[cur].why, tm.w[cur].number);
		else if (cur < 0 && st == CPROF_ST_ON)
			capture_set_n(0, "window ended", 0);
		pthread_mutex_unlock(&tm.lock);
		wake = now + TIMED_POLL_NS < next ? now + TIMED_POLL_NS : next;
		ts.tv_sec = (time_t)(wake / 1000000000ull);
		ts.tv_nsec = (long)(wake % 1000000000ull);
		while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
}

static int timed_start(const char *path)
{
	pthread_attr_t attr;
	pthread_t thread;
	sigset_t all, old;
	int ret;

	if (strlen(path) >= sizeof(tm.path))
		return -ENAMETOOLONG;
	/* also in a fork child, whose copy of the lock may have been held by the parent's thread */
	memset(&tm, 0, sizeof(tm));
	pthread_mutex_init(&tm.lock, NULL);
	tm.owner = getpid();
	snprintf(tm.path, sizeof(tm.path), "%s", path);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* the target's signals go to the target's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&thread, &attr, timed_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -ret;
}

/* The process is exiting: no flip after this returns (one under way is waited for), so the exit's own
 * CUPTI flush does not meet ours. What the open window recorded stays; cprofd closes it at the process's end. */
void cprof_capture_exit(void)
{
	/* a fork child that never started its own: the lock may be the parent thread's, held at the fork */
	if (cprof_capture_mode != CPROF_CAPTURE_TIMED || tm.owner != getpid())
		return;
	pthread_mutex_lock(&tm.lock);
	atomic_store(&tm.stopped, 1);
	pthread_mutex_unlock(&tm.lock);
}

/* --steps FIRST:LAST[:every=N] (CPROF_CAPTURE=steps:...): a step is an NVTX range (ASCII push/pop) whose name
 * matches the report's step pattern (CPROF_STEP_RE_DEFAULT), the outermost such range of the first thread that
 * opens one, counted from 1 as the report numbers them. Recording is on from the push of step FIRST to the pop
 * of step LAST, and again every N steps. */
static struct {
	regex_t re;
	long first, last, every;
	_Atomic(char *) thread; /* the thread whose step ranges count */
	long count;             /* steps opened so far (that thread only) */
	int open_level;         /* the open step's nesting level (in its domain: levels are per domain); -1 none */
	const void *open_domain;
	int window;             /* the open window's number; 0 none */
} st;

static int steps_init(const char *spec)
{
	char *end;

	memset(&st, 0, sizeof(st));
	st.open_level = -1;
	st.first = strtol(spec, &end, 10);
	if (end == spec || *end != ':' || st.first < 1)
		return -EINVAL;
	spec = end + 1;
	st.last = strtol(spec, &end, 10);
	if (end == spec || st.last < st.first)
		return -EINVAL;
	if (*end == ':') {
		if (strncmp(end + 1, "every=", 6))
			return -EINVAL;
		spec = end + 7;
		st.every = strtol(spec, &end, 10);
		if (end == spec || st.every <= st.last - st.first)
			return -EINVAL;
	}
	if (*end != '\0')
		return -EINVAL;
	return regcomp(&st.re, CPROF_STEP_RE_DEFAULT, REG_EXTENDED | REG_NOSUB) == 0 ? 0 : -EINVAL;
}

/* the window step n (1-based) lies in: its number (1, 2, ...), 0 outside every window */
static int step_window(long n)
{
	long k = 0;

	if (n < st.first)
		return 0;
	if (st.every)
		k = (n - st.first) / st.every;
	n -= k * st.every;
	return n <= st.last ? (int)k + 1 : 0;
}

/* the pattern's names start with P, S or s: most ranges (PyTorch's ops) are told apart without the regex */
static int step_name(const char *message)
{
	return (message[0] == 'P' || message[0] == 'S' || message[0] == 's') && regexec(&st.re, message, 0, NULL, 0) == 0;
}

static void steps_push(const char *message, const void *domain, int level)
{
	char why[240], *none = NULL;
	int w;

	if (message == NULL)
		return;
	if (atomic_load(&st.thread) != &thread_marker &&
	    !(atomic_load(&st.thread) == NULL && step_name(message) &&
	      atomic_compare_exchange_strong(&st.thread, &none, &thread_marker)))
		return;
	/* a step range inside the open step is part of it */
	if (st.open_level >= 0 || !step_name(message))
		return;
	st.count++;
	st.open_level = level;
	st.open_domain = domain;
	w = step_window(st.count);
	if (w && !st.window) {
		cprof_active(); /* the first annotation may come before any CUDA call: start (paused) first */
		snprintf(why, sizeof(why), "--steps %ld:%ld%s: step %ld (NVTX range '%.80s', as the report finds steps)",
			 st.first + (long)(w - 1) * st.every, st.last + (long)(w - 1) * st.every, st.every ? " (repeating)" : "",
			 st.count, message);
		st.window = w;
		capture_set_n(1, why, w);
	}
}

static void steps_pop(const void *domain, int level)
{
	char why[160];

	if (atomic_load(&st.thread) != &thread_marker || level != st.open_level || domain != st.open_domain)
		return;
	st.open_level = -1;
	/* the window closes after its last step, when the next one would be outside it */
	if (st.window && step_window(st.count + 1) != st.window) {
		snprintf(why, sizeof(why), "step %ld ended", st.count);
		st.window = 0;
		capture_set_n(0, why, 0);
	}
}
