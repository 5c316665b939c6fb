/* The one thread that talks to cprofd: drains the per-thread rings into PIPE_BUF frames, never on an application thread. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "preload/cprof.h"
#include "preload/flusher.h"

CPROF_HIDDEN _Atomic int cprof_wake_pending;

#define CUPTI_FLUSH_MS 100

struct pending_string {
	uint32_t id;
	uint16_t kind;
	char *s;
};

static struct {
	int fifo_fd;
	int wake_fd;
	int flush_ms;
	int exit_timeout_ms;
	pthread_t thread;
	int running;
	_Atomic int stop;
	_Atomic int final_done;
	_Atomic int dead;      /* the FIFO broke: nothing more can be sent */
	pthread_mutex_t drain_lock;
	pthread_mutex_t strings_lock;
	struct pending_string *strings;
	size_t nstrings, cap;
	uint32_t seq;
	int hello_sent;
	uint64_t sent;         /* events that reached the FIFO */
	uint64_t lost_reported;
	uint64_t lost_extra;   /* lost by the drainer itself (FIFO broke) */
	struct cprof_hello_info hello;
	struct cprof_wire_status *statuses; /* queued under strings_lock */
	size_t nstatus;
	struct cprof_wire_gpu *gpu;         /* converted CUPTI records not yet sent */
	size_t ngpu, gpu_sent, gpu_cap;
	uint64_t last_cupti_flush_ms;
	uint8_t frame[CPROF_WIRE_MAX_FRAME] __attribute__((aligned(8)));
} fl = { .fifo_fd = -1, .wake_fd = -1, .drain_lock = PTHREAD_MUTEX_INITIALIZER,
	 .strings_lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SIGPIPE from a write to a FIFO without a reader is thread-directed: with it blocked in the writing
 * thread it stays pending there, and is consumed here so it never reaches the target. */
static void consume_sigpipe(void)
{
	sigset_t set;
	struct timespec zero = { 0, 0 };

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	while (sigtimedwait(&set, NULL, &zero) == SIGPIPE)
		;
}

static void mark_dead(const char *why)
{
	if (!atomic_exchange(&fl.dead, 1))
		pr_warn("collector gone (%s); profiling stops, the program continues", why);
	atomic_store(&cprof_state, CPROF_ST_OFF);
}

/* One frame, one write: 0, -EAGAIN (pipe still full at the deadline) or -EPIPE. */
static int write_frame(const void *buf, size_t len, uint64_t deadline_ms)
{
	for (;;) {
		ssize_t n;

		if (atomic_load(&fl.dead))
			return -EPIPE;
		n = write(fl.fifo_fd, buf, len);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0) {
			/* cannot happen for writes <= PIPE_BUF; treat the stream as broken */
			mark_dead("short write");
			return -EPIPE;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			uint64_t now = mono_ms();
			struct pollfd p = { .fd = fl.fifo_fd, .events = POLLOUT };

			if (now >= deadline_ms)
				return -EAGAIN;
			poll(&p, 1, (int)(deadline_ms - now > 10 ? 10 : deadline_ms - now));
			continue;
		}
		if (errno == EPIPE)
			consume_sigpipe();
		mark_dead(strerror(errno));
		return -EPIPE;
	}
}

static int send_simple(uint16_t type, const void *payload, size_t plen, uint64_t deadline)
{
	struct cprof_wire_hdr *h = (void *)fl.frame;
	int ret;

	cprof_wire_hdr_init(h, type, fl.hello.fixed.pid, fl.seq, 1, sizeof(*h) + plen);
	memcpy(h + 1, payload, plen);
	ret = write_frame(fl.frame, sizeof(*h) + plen, deadline);
	if (ret == 0)
		fl.seq++;
	return ret;
}

static int send_hello(uint64_t deadline)
{
	size_t len;
	int ret;

	fl.seq = 0;
	len = cprof_wire_build_hello(fl.frame, fl.seq, &fl.hello.fixed, fl.hello.exe, fl.hello.host,
				     (const char *const *)fl.hello.argv, fl.hello.argc);
	ret = write_frame(fl.frame, len, deadline);
	if (ret == 0) {
		fl.seq++;
		fl.hello_sent = 1;
	}
	return ret;
}

int cprof_strings_add(uint32_t id, uint16_t kind, const char *s)
{
	int ret = 0;

	pthread_mutex_lock(&fl.strings_lock);
	if (fl.nstrings == fl.cap) {
		size_t cap = fl.cap ? fl.cap * 2 : 64;
		struct pending_string *p = realloc(fl.strings, cap * sizeof(*p));

		if (p == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		fl.strings = p;
		fl.cap = cap;
	}
	fl.strings[fl.nstrings].s = strdup(s);
	if (fl.strings[fl.nstrings].s == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	fl.strings[fl.nstrings].id = id;
	fl.strings[fl.nstrings].kind = kind;
	fl.nstrings++;
out:
	pthread_mutex_unlock(&fl.strings_lock);
	return ret;
}

void cprof_flusher_add_lost(uint64_t n)
{
	pthread_mutex_lock(&fl.drain_lock);
	fl.lost_extra += n;
	pthread_mutex_unlock(&fl.drain_lock);
}

void cprof_flusher_status(uint32_t code, int32_t err, const char *text)
{
	struct cprof_wire_status *p;

	pthread_mutex_lock(&fl.strings_lock);
	p = realloc(fl.statuses, (fl.nstatus + 1) * sizeof(*p));
	if (p) {
		fl.statuses = p;
		memset(&p[fl.nstatus], 0, sizeof(*p));
		p[fl.nstatus].code = code;
		p[fl.nstatus].err = err;
		p[fl.nstatus].time_ns = cprof_now_ns();
		snprintf(p[fl.nstatus].text, sizeof(p->text), "%s", text);
		fl.nstatus++;
	}
	pthread_mutex_unlock(&fl.strings_lock);
}

static int send_statuses(uint64_t deadline)
{
	struct cprof_wire_status st;
	int ret = 0;

	for (;;) {
		pthread_mutex_lock(&fl.strings_lock);
		if (fl.nstatus == 0) {
			pthread_mutex_unlock(&fl.strings_lock);
			return 0;
		}
		st = fl.statuses[0];
		pthread_mutex_unlock(&fl.strings_lock);
		ret = send_simple(CPROF_MSG_STATUS, &st, sizeof(st), deadline);
		if (ret < 0)
			return ret;
		pthread_mutex_lock(&fl.strings_lock);
		memmove(fl.statuses, fl.statuses + 1, (fl.nstatus - 1) * sizeof(st));
		fl.nstatus--;
		pthread_mutex_unlock(&fl.strings_lock);
	}
}

#define GPU_PENDING_MAX (256u * 1024) /* 24 MiB of records waiting for a stalled collector, then loss */

static int gpu_keep(const struct cprof_wire_gpu *rec, void *ctx)
{
	(void)ctx;
	if (fl.ngpu == fl.gpu_cap) {
		size_t cap = fl.gpu_cap ? fl.gpu_cap * 2 : 4096;
		struct cprof_wire_gpu *p;

		if (cap > GPU_PENDING_MAX || (p = realloc(fl.gpu, cap * sizeof(*p))) == NULL) {
			fl.lost_extra++;
			return -1;
		}
		fl.gpu = p;
		fl.gpu_cap = cap;
	}
	fl.gpu[fl.ngpu++] = *rec;
	return 0;
}

static int send_gpu(uint64_t deadline)
{
	struct cprof_wire_hdr *hdr = (void *)fl.frame;

	while (fl.gpu_sent < fl.ngpu) {
		size_t n = fl.ngpu - fl.gpu_sent;
		int ret;

		if (n > CPROF_WIRE_GPU_PER_FRAME)
			n = CPROF_WIRE_GPU_PER_FRAME;
		memcpy(hdr + 1, fl.gpu + fl.gpu_sent, n * sizeof(*fl.gpu));
		cprof_wire_hdr_init(hdr, CPROF_MSG_GPU, fl.hello.fixed.pid, fl.seq, n,
				    sizeof(*hdr) + n * sizeof(*fl.gpu));
		ret = write_frame(fl.frame, hdr->len, deadline);
		if (ret == -EAGAIN)
			return ret;
		if (ret == -EPIPE)
			fl.lost_extra += n;
		else {
			fl.seq++;
			fl.sent += n;
		}
		fl.gpu_sent += n;
	}
	fl.ngpu = fl.gpu_sent = 0;
	return 0;
}

/* Sends every queued string; on -EAGAIN the unsent ones stay queued, in order. */
static int send_strings(uint64_t deadline)
{
	struct pending_string *list;
	size_t n, i = 0, len = 0;
	int ret = 0;

	pthread_mutex_lock(&fl.strings_lock);
	list = fl.strings;
	n = fl.nstrings;
	fl.strings = NULL;
	fl.nstrings = fl.cap = 0;
	pthread_mutex_unlock(&fl.strings_lock);

	while (i < n) {
		struct cprof_wire_hdr *h = (void *)fl.frame;
		size_t first = i;

		len = sizeof(*h);
		cprof_wire_hdr_init(h, CPROF_MSG_STRINGS, fl.hello.fixed.pid, fl.seq, 0, len);
		while (i < n && cprof_wire_strings_add(fl.frame, &len, list[i].id, list[i].kind, list[i].s) == 0)
			i++;
		ret = write_frame(fl.frame, len, deadline);
		if (ret < 0) {
			i = first;
			break;
		}
		fl.seq++;
	}
	if (i < n) {
		/* put the rest back in front of anything queued meanwhile */
		size_t k;

		for (k = i; k < n; k++)
			if (ret == -EPIPE || cprof_strings_add(list[k].id, list[k].kind, list[k].s) < 0)
				break;
	}
	for (i = 0; i < n; i++)
		free(list[i].s);
	free(list);
	return ret;
}

/* Drains one ring up to its snapshot; events leave the ring only once their frame is written. */
static int drain_ring(struct cprof_ring *r, uint64_t deadline)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t h = r->snap;
	struct cprof_wire_hdr *hdr = (void *)fl.frame;
	struct cprof_wire_api *out = (void *)(hdr + 1);

	while (t < h) {
		uint64_t n = h - t, i;
		int ret;

		if (n > CPROF_WIRE_API_PER_FRAME)
			n = CPROF_WIRE_API_PER_FRAME;
		for (i = 0; i < n; i++)
			out[i] = r->ev[(t + i) & (CPROF_RING_EVENTS - 1)];
		cprof_wire_hdr_init(hdr, CPROF_MSG_API, fl.hello.fixed.pid, fl.seq, n,
				    sizeof(*hdr) + n * sizeof(*out));
		ret = write_frame(fl.frame, hdr->len, deadline);
		if (ret == -EAGAIN)
			return ret;
		if (ret == -EPIPE)
			fl.lost_extra += n;
		else {
			fl.seq++;
			fl.sent += n;
		}
		t += n;
		atomic_store_explicit(&r->tail, t, memory_order_release);
	}
	return 0;
}

static uint64_t lost_total(void)
{
	struct cprof_ring *r;
	uint64_t lost = fl.lost_extra;

	for (r = cprof_rings_head(); r; r = r->next)
		lost += atomic_load_explicit(&r->lost, memory_order_relaxed);
	return lost;
}

/* One round; returns 1 when every ring was empty at its snapshot. Caller holds drain_lock. */
static int drain_round(uint64_t deadline)
{
	struct cprof_ring *r;
	int empty = 1, ret;
	uint64_t lost;

	if (atomic_load(&fl.dead))
		return 1;
	if (!fl.hello_sent && send_hello(deadline) < 0)
		return 0;
	/* snapshot first: every event before it had its strings queued before it */
	for (r = cprof_rings_head(); r; r = r->next)
		r->snap = atomic_load_explicit(&r->head, memory_order_acquire);
	/* CUPTI records are converted here; the names they need are queued before the strings go */
	if (cprof_cupti_collect(gpu_keep, NULL) > 0)
		empty = 0;
	if (send_statuses(deadline) < 0 || send_strings(deadline) < 0)
		return 0;
	for (r = cprof_rings_head(); r; r = r->next) {
		int state = atomic_load_explicit(&r->state, memory_order_acquire);

		if (r->snap != atomic_load_explicit(&r->tail, memory_order_relaxed))
			empty = 0;
		ret = drain_ring(r, deadline);
		if (ret == -EAGAIN)
			return 0;
		if (state == CPROF_RING_DEAD && atomic_load(&r->head) == atomic_load(&r->tail))
			atomic_store(&r->state, CPROF_RING_FREE);
	}
	if (fl.ngpu > 0) {
		empty = 0;
		if (send_gpu(deadline) == -EAGAIN)
			return 0;
	}
	lost = lost_total();
	if (lost > fl.lost_reported && !atomic_load(&fl.dead)) {
		struct cprof_wire_lost l = { .lost = lost - fl.lost_reported, .emitted = fl.sent + lost };

		if (send_simple(CPROF_MSG_LOST, &l, sizeof(l), deadline) == 0)
			fl.lost_reported = lost;
	}
	return empty;
}

static void *flusher_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&fl.stop)) {
		struct pollfd p = { .fd = fl.wake_fd, .events = POLLIN };
		uint64_t v;

		if (poll(&p, 1, fl.flush_ms) > 0 && read(fl.wake_fd, &v, sizeof(v)) < 0) {
			/* nothing to do: the next poll tells again */
		}
		atomic_store(&cprof_wake_pending, 0);
		if (atomic_load(&fl.stop))
			break;
		if (mono_ms() - fl.last_cupti_flush_ms >= CUPTI_FLUSH_MS) {
			/* not under drain_lock: CUPTI calls our completion callback from here */
			fl.last_cupti_flush_ms = mono_ms();
			cprof_cupti_flush(0);
		}
		pthread_mutex_lock(&fl.drain_lock);
		if (!atomic_load(&fl.final_done))
			drain_round(mono_ms() + fl.flush_ms);
		pthread_mutex_unlock(&fl.drain_lock);
		if (atomic_load(&fl.dead))
			break;
	}
	return NULL;
}

void cprof_flusher_wake(void)
{
	uint64_t one = 1;

	if (atomic_exchange_explicit(&cprof_wake_pending, 1, memory_order_relaxed))
		return;
	if (fl.wake_fd >= 0 && write(fl.wake_fd, &one, sizeof(one)) < 0) {
		/* the periodic tick still drains */
	}
}

int cprof_flusher_start(const struct cprof_flusher_cfg *cfg)
{
	sigset_t all, old;
	int ret;

	fl.fifo_fd = cfg->fifo_fd;
	fl.flush_ms = cfg->flush_ms;
	fl.exit_timeout_ms = cfg->exit_timeout_ms;
	fl.hello = cfg->hello;
	for (int i = 0; i < fl.hello.argc; i++)
		fl.hello.argv[i] = fl.hello.args + (cfg->hello.argv[i] - cfg->hello.args);
	fl.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fl.wake_fd < 0)
		return -errno;
	/* the flusher takes no signal: the target's handlers run on the target's threads, and SIGPIPE
	 * raised by our writes stays pending on our thread where it is consumed */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&fl.thread, NULL, flusher_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret != 0) {
		close(fl.wake_fd);
		fl.wake_fd = -1;
		return -ret;
	}
	fl.running = 1;
	return 0;
}

/* Drains everything recorded so far from the calling thread, bounded by the exit timeout; with
 * reason != 0 also says BYE. Returns with drain_lock released. */
static void drain_sync(int reason)
{
	uint64_t deadline = mono_ms() + fl.exit_timeout_ms;
	struct timespec abs;
	sigset_t pipe_set, old;

	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += fl.exit_timeout_ms / 1000;
	abs.tv_nsec += (fl.exit_timeout_ms % 1000) * 1000000L;
	if (abs.tv_nsec >= 1000000000L) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000L;
	}
	/* waiting for the flusher's round is bounded: its writes give up at their own deadline */
	if (pthread_mutex_timedlock(&fl.drain_lock, &abs) != 0)
		return;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	while (!atomic_load(&fl.dead) && mono_ms() < deadline && !drain_round(deadline))
		;
	if (cprof_log_level >= CPROF_LOG_DBG) {
		struct cprof_ring *r;

		for (r = cprof_rings_head(); r; r = r->next)
			pr_dbg("ring tid %u: head %llu tail %llu lost %llu state %d", r->tid,
			       (unsigned long long)atomic_load(&r->head), (unsigned long long)atomic_load(&r->tail),
			       (unsigned long long)atomic_load(&r->lost), atomic_load(&r->state));
	}
	if (reason && !atomic_load(&fl.dead)) {
		uint64_t lost;
		struct cprof_wire_bye b;

		drain_round(deadline); /* a last LOST if anything dropped meanwhile */
		lost = lost_total();
		b = (struct cprof_wire_bye){ .end_ns = cprof_now_ns(), .emitted = fl.sent + lost, .lost = lost,
					     .reason = reason };
		send_simple(CPROF_MSG_BYE, &b, sizeof(b), deadline);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_unlock(&fl.drain_lock);
}

void cprof_flusher_final(int reason)
{
	if (!fl.running || atomic_exchange(&fl.final_done, 1))
		return;
	atomic_store(&fl.stop, 1);
	cprof_flusher_wake();
	drain_sync(reason);
}

void cprof_flusher_drain_now(void)
{
	if (!fl.running || atomic_load(&fl.final_done))
		return;
	drain_sync(0);
}

void cprof_flusher_reset_after_fork(void)
{
	size_t i;

	/* the flusher thread does not exist in the child; its locks may have been held at fork */
	pthread_mutex_init(&fl.drain_lock, NULL);
	pthread_mutex_init(&fl.strings_lock, NULL);
	for (i = 0; i < fl.nstrings; i++)
		free(fl.strings[i].s);
	free(fl.strings);
	fl.strings = NULL;
	fl.nstrings = fl.cap = 0;
	free(fl.statuses);
	fl.statuses = NULL;
	fl.nstatus = 0;
	fl.ngpu = fl.gpu_sent = 0;
	if (fl.wake_fd >= 0)
		close(fl.wake_fd);
	if (fl.fifo_fd >= 0)
		close(fl.fifo_fd);
	fl.wake_fd = fl.fifo_fd = -1;
	fl.running = 0;
	fl.hello_sent = 0;
	fl.seq = 0;
	fl.sent = fl.lost_reported = fl.lost_extra = 0;
	atomic_store(&fl.stop, 0);
	atomic_store(&fl.final_done, 0);
	atomic_store(&fl.dead, 0);
	atomic_store(&cprof_wake_pending, 0);
}

void cprof_flusher_strings_lock(int lock)
{
	if (lock)
		pthread_mutex_lock(&fl.strings_lock);
	else
		pthread_mutex_unlock(&fl.strings_lock);
}
