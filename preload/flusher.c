/* The one thread that talks to cprofd: drains the per-thread rings into PIPE_BUF frames, never on an application thread. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "common/procfs.h"
#include "common/shmring.h"
#include "preload/cprof.h"
#include "preload/fifo.h"
#include "preload/flusher.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif


#define CUPTI_FLUSH_MS 100
#define BYE_GRACE_MS 250 /* past the exit's deadline, while the final BYE is being sent or filed */
#define SCHED_READS 64 /* schedstat files read per cost round at most */
#define COST_EVERY_MS 100 /* the report reads its time series over a window: ~10 rows a second */
/* a window's edge sends a row unless one went this recently: a program that opens thousands of windows a second
 * (an NVTX range a step) gets at most 200 more rows a second, and what a short window grew is still its own (the
 * report spreads what grows only while cprof records over the recorded time between rows) */
#define COST_EDGE_MIN_MS 5

static struct {
	struct cprof_fifo fifo; /* the transport (fifo.c); its table is the flusher thread's own when private */
	int flush_ms;
	int exit_timeout_ms;
	pid_t pid;             /* the process that started the flusher */
	pthread_t thread;
	int running;
	_Atomic int alive;     /* the thread has not returned */
	_Atomic int stop;
	_Atomic int final_done;
	_Atomic int paused;    /* BYE(exec) sent; nothing more until exec fails */
	_Atomic int dead;      /* the FIFO broke: nothing more can be sent */
	_Atomic uint32_t wake_word;   /* futex: application threads never touch a descriptor to wake us */
	/* a thread that exits or execs asks the flusher for the last drain: only the flusher holds the FIFO */
	pthread_mutex_t req_lock;     /* one exit/exec request at a time */
	_Atomic uint32_t req_seq, done_seq; /* done_seq is a futex the requester waits on */
	_Atomic int req_reason;
	_Atomic uint64_t req_deadline_ms;
	/* set while the flusher sends the final BYE: the exiting thread waits for it a little past its deadline
	 * (BYE_GRACE_MS), so a BYE that has to go to a file is not cut off by the process ending */
	_Atomic int bye_phase;
	pthread_mutex_t strings_lock;
	/* the interned strings to send, in the order queued: linked through the entries (strings.c), which live as long
	 * as the process, so that queueing allocates nothing (a signal handler's call may queue one) */
	struct cprof_istr *strings, **strings_tail;
	uint32_t seq;
	int hello_sent;
	uint64_t sent;         /* events that reached the FIFO */
	uint64_t gemms;        /* GEMM calls drained (cprof_cupti_gemms_drained) */
	uint64_t lost_reported;
	_Atomic uint64_t lost_extra;   /* lost outside the rings (FIFO broke, CUPTI dropped, ...) */
	_Atomic uint64_t lost_cupti, lost_pipe; /* lost_extra by cause (CPROF_MSG_COST) */
	uint64_t last_cost_ms;         /* when the last COST went */
	_Atomic int cost_edge;         /* a window opened or closed: a COST now (cprof_flusher_cost_edge) */
	size_t sched_next;             /* send_cost: the ring whose schedstat is read first next time */
	uint64_t app_run_ns, app_wait_ns; /* the program's threads' schedstat, summed over what the rings saw */
	uint64_t counted_sent[CPROF_COUNTED__N]; /* the device-query totals in the last COUNTS */
	struct cprof_hello_info hello;
	/* queued under status_lock, apart from the strings: a capture window's edge from a signal handler that
	 * interrupted its thread's interning is still recorded; STATUS_KEEP of them need no allocation */
	pthread_mutex_t status_lock;
	struct cprof_wire_status *statuses;
	size_t nstatus, status_cap;
	uint8_t *stacks;                    /* serialised STACKS records, queued under strings_lock */
	size_t stacks_len, stacks_cap, nstacks;
	/* the buffer the last round sent, kept for the next swap (stacks_take): queueing allocates nothing until a
	 * round's stacks pass STACKS_KEEP, and then maps (stacks_map), so a signal handler's stack is safe either way */
	uint8_t *stacks_spare;
	size_t spare_cap;
	struct cprof_wire_gpu *gpu;         /* converted CUPTI records not yet sent */
	size_t ngpu, gpu_sent, gpu_cap;
	uint64_t last_cupti_flush_ms;
	/* deferring CUPTI's records while the machine is busy (CPROF_DEFER_MB; 0: never) */
	uint64_t defer_cap;            /* bytes */
	int defer_gpu;                 /* this round leaves CUPTI's completed buffers as they are */
	int busy;                      /* the last reading of /proc/pressure/cpu said so */
	uint64_t psi_total_us, psi_ms; /* its "some" total and when it was read */
	uint64_t deferred_rounds;
	int disabled;                  /* cprof_disable seen (its collector alive): CUPTI orphaned once */
	int exec_counted;              /* an exec's BYE counted CUPTI's unsent records lost: dropped if it failed */
	uint64_t longest_round_ms;     /* of its own rounds, for the debug log */
	/* the shared-memory ring (common/shmring.h): once cprofd has mapped it, frames go there and a KICK on the
	 * FIFO a round says so, instead of a write(2) every 4 KiB (issue 26: the pipe's write was 60% of this
	 * thread's time on the eager step) */
	uint32_t ring_size;            /* bytes of data; 0: the FIFO only (CPROF_RING_KB=0, no private table) */
	struct cprof_shmring ring;
	void *ring_map;
	size_t ring_map_len;
	int ring_fd;                   /* the memfd, in this thread's own table (cprofd opens it by /proc) */
	int ring_announced;            /* RING sent */
	int ring_on;                   /* the switching KICK sent: every frame goes to the ring */
	int ring_dirty;                /* frames went there since the last KICK that went out */
	size_t ring_since_kick;        /* bytes put since a KICK was last tried */
	uint64_t ring_full_kick_ms;    /* a full ring's last KICK: one every RING_FULL_KICK_MS while it stays full */
	uint8_t frame[CPROF_WIRE_MAX_FRAME] __attribute__((aligned(8)));
} fl = { .fifo = { .fd = -1 }, .req_lock = PTHREAD_MUTEX_INITIALIZER, .strings_lock = PTHREAD_MUTEX_INITIALIZER,
	.strings_tail = &fl.strings, .status_lock = PTHREAD_MUTEX_INITIALIZER };

/* the counted calls of threads with no ring (cprof_count_query) */
CPROF_HIDDEN _Atomic uint64_t cprof_counted_ringless[CPROF_COUNTED__N];

/* The crash path (crash.c's handler asks, the flusher answers; see cprof_flusher_crash). */
static struct {
	_Atomic int req;           /* 1: a fatal signal came; drain everything, then send info */
	_Atomic uint32_t done;     /* futex: 1 the flusher sent the CRASH frame, 2 it could not */
	_Atomic int takeover;      /* the crashing thread writes from now on: the flusher writes nothing more */
	_Atomic int writing;       /* >0: the flusher is between its takeover check and the end of its write(2),
				    * or of a ring's tail update after it */
	struct cprof_wire_crash info;
	uint8_t frame[CPROF_WIRE_MAX_FRAME] __attribute__((aligned(8))); /* the crashing thread's own */
} cr;

/* The collector-gone warning is printed by an application thread (see cprof_warn_flush): the flusher's
 * descriptor table has no stderr, and a warning belongs on the target's current stderr anyway. */
static char warn_text[256];
CPROF_HIDDEN _Atomic int cprof_warn_pending;

void cprof_warn_flush(void)
{
	if (atomic_exchange(&cprof_warn_pending, 0))
		pr_warn("%s", warn_text);
}

static uint64_t mono_ms(void)
{
	return cprof_fifo_mono_ms();
}

static void futex_wait(_Atomic uint32_t *w, uint32_t seen, int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };

	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, seen, timeout_ms >= 0 ? &ts : NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

static void mark_dead(const char *why)
{
	if (!atomic_exchange(&fl.dead, 1)) {
		snprintf(warn_text, sizeof(warn_text), "collector gone (%s); profiling stops, the program continues", why);
		atomic_store(&cprof_warn_pending, 1);
	}
	atomic_store(&cprof_state, CPROF_ST_OFF);
}

/* One frame, one write: 0, -EAGAIN (pipe still full at the deadline) or -EPIPE. */
static int fifo_frame(const void *buf, size_t len, uint64_t deadline_ms)
{
	for (;;) {
		int ret;

		if (atomic_load(&fl.dead))
			return -EPIPE;
		if (!cprof_fifo_usable(&fl.fifo)) {
			mark_dead("its FIFO was closed by the program and cannot be reopened");
			return -EPIPE;
		}
		/* a crashing thread took the pipe over: what is not written stays where it is (-EAGAIN); one
		 * attempt at a time, so that it never waits on us for longer than a write */
		atomic_fetch_add(&cr.writing, 1);
		if (atomic_load(&cr.takeover)) {
			atomic_fetch_sub(&cr.writing, 1);
			return -EAGAIN;
		}
		ret = cprof_fifo_write(fl.fifo.fd, buf, len, 0);
		atomic_fetch_sub(&cr.writing, 1);
		if (ret == 0)
			return 0;
		if (ret == -EAGAIN) {
			if (cprof_fifo_wait(fl.fifo.fd, deadline_ms) < 0)
				return -EAGAIN;
			continue;
		}
		/* cannot happen for writes <= PIPE_BUF; the stream is broken */
		mark_dead(ret == -EIO ? "short write" : strerror(-ret));
		return -EPIPE;
	}
}

/* A KICK through the FIFO: what is in the ring goes to the collector before anything this process writes to
 * the FIFO after it. Never waits for room: a full pipe is read soon, and the intake looks at every ring then. */
static int ring_kick(void)
{
	struct cprof_wire_hdr h;
	int ret;

	cprof_wire_hdr_init(&h, CPROF_MSG_KICK, fl.hello.fixed.pid, 0, 0, sizeof(h));
	fl.ring_since_kick = 0;
	ret = fifo_frame(&h, sizeof(h), 0);
	if (ret == 0)
		fl.ring_dirty = 0;
	return ret;
}

#define RING_FULL_KICK_MS 10

static void ring_kick_if_dirty(void)
{
	if (fl.ring_on && fl.ring_dirty && !atomic_load(&fl.dead))
		ring_kick();
}

/* One frame into the ring, waiting for room until deadline_ms as a full pipe would be waited for. */
static int ring_frame(const void *buf, size_t len, uint64_t deadline_ms)
{
	for (;;) {
		int ret;

		if (atomic_load(&fl.dead))
			return -EPIPE;
		atomic_fetch_add(&cr.writing, 1);
		if (atomic_load(&cr.takeover)) {
			atomic_fetch_sub(&cr.writing, 1);
			return -EAGAIN;
		}
		ret = cprof_shmring_put(&fl.ring, buf, len);
		atomic_fetch_sub(&cr.writing, 1);
		if (ret == 0) {
			/* a quarter of the ring since the last KICK tried: the collector is told now, not at the round's
			 * end (a KICK the full pipe refused is not tried again for each frame after it) */
			fl.ring_dirty = 1;
			fl.ring_since_kick += len;
			if (fl.ring_since_kick >= fl.ring_size / 4)
				ring_kick();
			return 0;
		}
		/* full: the collector is told, again only every RING_FULL_KICK_MS (many processes' KICKs must not fill
		 * the pipe the others still write their frames to) */
		if (mono_ms() - fl.ring_full_kick_ms >= RING_FULL_KICK_MS) {
			fl.ring_full_kick_ms = mono_ms();
			if (ring_kick() == -EPIPE)
				return -EPIPE;
		}
		if (mono_ms() >= deadline_ms)
			return -EAGAIN;
		{
			struct timespec ts = { 0, 1000000L };

			nanosleep(&ts, NULL);
		}
	}
}

static int write_frame(const void *buf, size_t len, uint64_t deadline_ms)
{
	/* the collector mapped the ring: the KICK that switches goes first, through the FIFO, after every frame
	 * written there so far */
	if (fl.ring_announced && !fl.ring_on &&
	    atomic_load_explicit(&fl.ring.hdr->attached, memory_order_acquire) == 1 && ring_kick() == 0)
		fl.ring_on = 1;
	/* the collector let the ring go (it found it corrupt, or took this process's last BYE): the FIFO again */
	if (fl.ring_on && atomic_load_explicit(&fl.ring.hdr->attached, memory_order_acquire) != 1)
		fl.ring_on = 0;
	if (fl.ring_on)
		return ring_frame(buf, len, deadline_ms);
	return fifo_frame(buf, len, deadline_ms);
}

/* The ring in a sealed memfd of this thread's own table: cprofd maps it by /proc and can never be cut short
 * by it (no shrinking: no SIGBUS in the collector). Any failure leaves the FIFO alone doing the work. */
static void ring_create(void)
{
	size_t len = CPROF_SHMRING_DATA + (size_t)fl.ring_size;
	void *map;
	int fd;

	if (!fl.ring_size || !fl.fifo.private_fds)
		return;
	fd = (int)syscall(SYS_memfd_create, "cprof-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return;
	if (ftruncate(fd, (off_t)len) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		close(fd);
		return;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return;
	}
	cprof_shmring_init(&fl.ring, map, fl.ring_size);
	fl.ring_map = map;
	fl.ring_map_len = len;
	fl.ring_fd = fd;
}

/* RING through the FIFO, once, after the HELLO: where the collector finds the ring. */
static void ring_announce(uint64_t deadline)
{
	struct {
		struct cprof_wire_hdr h;
		struct cprof_wire_ring r;
	} f;

	if (fl.ring_map == NULL || fl.ring_announced)
		return;
	f.r = (struct cprof_wire_ring){ .tid = (uint32_t)syscall(SYS_gettid), .fd = fl.ring_fd, .size = fl.ring_size };
	cprof_wire_hdr_init(&f.h, CPROF_MSG_RING, fl.hello.fixed.pid, 0, 1, sizeof(f));
	if (fifo_frame(&f, sizeof(f), deadline) == 0)
		fl.ring_announced = 1;
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

/* The BYE when the pipe stayed full to the exit's deadline (the collector stopped or starved): a file beside
 * the FIFO, in cprof-run's private run directory, that cprofd reads at the finish, so the process's end and
 * its count of what was lost are not lost too. A regular file: the write never waits for the collector. */
static void bye_to_file(size_t len)
{
	char path[PATH_MAX + 64], *slash;
	int fd;

	snprintf(path, sizeof(path), "%s", fl.fifo.path);
	slash = strrchr(path, '/');
	if (slash == NULL)
		return;
	snprintf(slash + 1, sizeof(path) - (size_t)(slash + 1 - path), "bye.%u.%llu", fl.hello.fixed.pid,
		 (unsigned long long)fl.hello.fixed.start_ns);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, fl.frame, len) != (ssize_t)len)
		unlink(path); /* a torn BYE would be refused anyway */
	close(fd);
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

/* Queues a string once per process generation: its queued_gen says it is queued only once it is, so a
 * thread that finds it marked and queues a stack or an event naming it queues that after the string. A signal
 * handler's call that interrupted this thread under strings_lock would wait for itself: it queues nothing. */
int cprof_strings_add_once(struct cprof_istr *e, uint32_t gen)
{
	if (cprof_lock_unless_held(&fl.strings_lock, &cprof_in_strings) < 0)
		return -EDEADLK;
	if (atomic_load_explicit(&e->queued_gen, memory_order_relaxed) != gen) {
		e->next_queued = NULL;
		*fl.strings_tail = e;
		fl.strings_tail = &e->next_queued;
		atomic_store_explicit(&e->queued_gen, gen, memory_order_release);
	}
	cprof_unlock_held(&fl.strings_lock, &cprof_in_strings);
	return 0;
}

/* The stack and status queues' buffers are mapped, not malloc'd: a signal handler's stack or status (a window's
 * edge) may be queued while it interrupted its thread inside malloc, and mmap, mremap and munmap are system calls,
 * safe there (realloc would take the arena's lock its thread holds). The kernel rounds the sizes to pages. */
static void *queue_map(void *old, size_t old_cap, size_t cap)
{
	void *p = old ? mremap(old, old_cap, cap, MREMAP_MAYMOVE)
		      : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void queue_unmap(void *buf, size_t cap)
{
	if (buf != NULL)
		munmap(buf, cap);
}

int cprof_stacks_add(const struct cprof_wire_stack *st, const struct cprof_wire_frame *frames)
{
	size_t n = sizeof(*st) + ((size_t)st->nnative + st->npy) * sizeof(*frames);
	int ret = 0;

	/* a signal handler's call that interrupted this thread under strings_lock would wait for itself */
	if (cprof_lock_unless_held(&fl.strings_lock, &cprof_in_strings) < 0)
		return -EDEADLK;
	if (fl.stacks_len + n > fl.stacks_cap) {
		size_t cap = fl.stacks_cap ? fl.stacks_cap * 2 : 16384;
		uint8_t *p;

		while (cap < fl.stacks_len + n)
			cap *= 2;
		p = queue_map(fl.stacks, fl.stacks_cap, cap);
		if (p == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		fl.stacks = p;
		fl.stacks_cap = cap;
	}
	memcpy(fl.stacks + fl.stacks_len, st, sizeof(*st));
	memcpy(fl.stacks + fl.stacks_len + sizeof(*st), frames, n - sizeof(*st));
	fl.stacks_len += n;
	fl.nstacks++;
out:
	cprof_unlock_held(&fl.strings_lock, &cprof_in_strings);
	return ret;
}

#define STACKS_KEEP (64u << 10) /* bytes: a round's new stacks (~0.2-1 KiB each) before the queue grows */

/* The queued stacks, taken before the strings are: a stack is queued after the strings it names (its
 * own thread interned them first; another thread's are queued before they are marked, strings.c), so
 * every string a taken stack names goes out with the strings sent after this. Taken after the strings,
 * a stack queued in between would reach cprofd before its names, stored with no file or function. */
static uint8_t *stacks_take(size_t *len, size_t *cap)
{
	uint8_t *buf;

	pthread_mutex_lock(&fl.strings_lock);
	buf = fl.stacks;
	*len = fl.stacks_len;
	*cap = fl.stacks_cap;
	/* the queue goes on in the spare, so that queueing allocates nothing while the queue stays in it */
	fl.stacks = fl.stacks_spare;
	fl.stacks_cap = fl.stacks ? fl.spare_cap : 0;
	fl.stacks_spare = NULL;
	fl.spare_cap = 0;
	fl.stacks_len = fl.nstacks = 0;
	pthread_mutex_unlock(&fl.strings_lock);
	return buf;
}

/* A taken buffer, sent: the spare for the next swap (stacks_take), or freed when there is one */
static void stacks_recycle(uint8_t *buf, size_t cap)
{
	pthread_mutex_lock(&fl.strings_lock);
	if (fl.stacks_spare == NULL && buf != NULL && cap <= 4 * STACKS_KEEP) { /* a burst's big one goes back */
		fl.stacks_spare = buf;
		fl.spare_cap = cap;
		buf = NULL;
	}
	pthread_mutex_unlock(&fl.strings_lock);
	queue_unmap(buf, cap);
}

/* Puts buf[at..len) back in the queue (their strings went already), then recycles buf. */
static void stacks_requeue(uint8_t *buf, size_t cap, size_t at, size_t len)
{
	while (at < len) {
		const struct cprof_wire_stack *st = (const void *)(buf + at);

		if (cprof_stacks_add(st, (const void *)(st + 1)) < 0)
			break;
		at += sizeof(*st) + ((size_t)st->nnative + st->npy) * sizeof(struct cprof_wire_frame);
	}
	stacks_recycle(buf, cap);
}

/* Sends stacks taken by stacks_take (and frees them), after the strings they name and before the events
 * that refer to them. A stack that cannot be sent is lost with the stream; its events then name an id
 * the profile does not have. */
static int send_stacks(uint8_t *buf, size_t cap, size_t len, uint64_t deadline)
{
	size_t off = 0;
	int ret = 0;

	while (off < len && ret == 0) {
		struct cprof_wire_hdr *h = (void *)fl.frame;
		size_t flen = sizeof(*h);
		uint32_t count = 0;

		while (off < len) {
			const struct cprof_wire_stack *st = (const void *)(buf + off);
			size_t n = sizeof(*st) + ((size_t)st->nnative + st->npy) * sizeof(struct cprof_wire_frame);

			if (flen + n > CPROF_WIRE_MAX_FRAME)
				break;
			memcpy(fl.frame + flen, st, n);
			flen += n;
			off += n;
			count++;
		}
		cprof_wire_hdr_init(h, CPROF_MSG_STACKS, fl.hello.fixed.pid, fl.seq, count, flen);
		ret = write_frame(fl.frame, flen, deadline);
		if (ret == 0)
			fl.seq++;
		else if (ret == -EAGAIN) {
			/* requeue what is left (this frame's too): only its order before the events matters,
			 * and no event is drained in a round whose stacks did not all go */
			stacks_requeue(buf, cap, off - (flen - sizeof(*h)), len);
			return ret;
		}
	}
	stacks_recycle(buf, cap);
	return ret;
}

void cprof_flusher_add_lost(uint64_t n)
{
	atomic_fetch_add(&fl.lost_cupti, n); /* its one caller: records CUPTI dropped */
	atomic_fetch_add(&fl.lost_extra, n);
}

void cprof_flusher_status(uint32_t code, int32_t err, const char *text)
{
	cprof_flusher_status_at(code, err, text, cprof_now_ns());
}

#define STATUS_KEEP 64
/* set while this thread holds status_lock: a signal handler's status on it would wait for itself */
static __thread int in_status __attribute__((tls_model("initial-exec")));

void cprof_flusher_status_at(uint32_t code, int32_t err, const char *text, uint64_t time_ns)
{
	struct cprof_wire_status *p;
	size_t i;

	if (cprof_lock_unless_held(&fl.status_lock, &in_status) < 0)
		return; /* a handler's, on a thread inside this very function: dropped (it would wait for itself) */
	if (fl.nstatus == fl.status_cap) {
		/* the first STATUS_KEEP at the flusher's start (cprof_flusher_start); more only when that many wait */
		size_t cap = fl.status_cap ? 2 * fl.status_cap : STATUS_KEEP;

		p = queue_map(fl.statuses, fl.status_cap * sizeof(*p), cap * sizeof(*p));
		if (p == NULL)
			goto out;
		fl.statuses = p;
		fl.status_cap = cap;
	}
	p = &fl.statuses[fl.nstatus++];
	memset(p, 0, sizeof(*p));
	p->code = code;
	p->err = err;
	p->time_ns = time_ns;
	for (i = 0; text && text[i] && i + 1 < sizeof(p->text); i++) /* no snprintf: a handler may be here */
		p->text[i] = text[i];
out:
	cprof_unlock_held(&fl.status_lock, &in_status);
}

/* The queued statuses in order, each copied out under the lock and sent without it; those sent leave the queue in
 * one move at the end: moving the queue down after each was quadratic in a round's statuses (1,600 of them, a
 * window toggled 400 times, would move ~330 MB), under the lock the program's threads take at each window edge.
 * Those queued while these go wait for the next round. Returns a negative errno, or whether any is left. */
static int send_statuses(uint64_t deadline)
{
	struct cprof_wire_status st;
	size_t sent = 0, n;
	int ret = 0;

	/* those queued by now: a window toggled in a loop adds more as they go, which wait for the next round */
	pthread_mutex_lock(&fl.status_lock);
	n = fl.nstatus;
	pthread_mutex_unlock(&fl.status_lock);
	while (sent < n) {
		pthread_mutex_lock(&fl.status_lock);
		st = fl.statuses[sent];
		pthread_mutex_unlock(&fl.status_lock);
		ret = send_simple(CPROF_MSG_STATUS, &st, sizeof(st), deadline);
		if (ret < 0)
			break;
		sent++;
	}
	pthread_mutex_lock(&fl.status_lock);
	if (sent > 0) {
		memmove(fl.statuses, fl.statuses + sent, (fl.nstatus - sent) * sizeof(st));
		fl.nstatus -= sent;
	}
	n = fl.nstatus;
	pthread_mutex_unlock(&fl.status_lock);
	return ret < 0 ? ret : n > 0;
}

#define GPU_PENDING_MAX (256u * 1024) /* 24 MiB of records waiting for a stalled collector, then loss */

static int gpu_keep(const struct cprof_wire_gpu *rec, void *ctx)
{
	(void)ctx;
	if (fl.ngpu == fl.gpu_cap) {
		size_t cap = fl.gpu_cap ? fl.gpu_cap * 2 : 4096;
		struct cprof_wire_gpu *p;

		if (cap > GPU_PENDING_MAX || (p = realloc(fl.gpu, cap * sizeof(*p))) == NULL) {
			atomic_fetch_add(&fl.lost_extra, 1);
			atomic_fetch_add(&fl.lost_cupti, 1);
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

	size_t first = fl.gpu_sent;

	while (fl.gpu_sent < fl.ngpu) {
		size_t n = fl.ngpu - fl.gpu_sent;
		int ret;

		if (fl.gpu_sent != first && mono_ms() >= deadline)
			return -EAGAIN; /* the rest in the next round, as after a full pipe */

		if (n > CPROF_WIRE_GPU_PER_FRAME)
			n = CPROF_WIRE_GPU_PER_FRAME;
		memcpy(hdr + 1, fl.gpu + fl.gpu_sent, n * sizeof(*fl.gpu));
		cprof_wire_hdr_init(hdr, CPROF_MSG_GPU, fl.hello.fixed.pid, fl.seq, n,
				    sizeof(*hdr) + n * sizeof(*fl.gpu));
		ret = write_frame(fl.frame, hdr->len, deadline);
		if (ret == -EAGAIN)
			return ret;
		if (ret == -EPIPE) {
			atomic_fetch_add(&fl.lost_extra, n);
			atomic_fetch_add(&fl.lost_pipe, n);
		} else {
			fl.seq++;
			fl.sent += n;
		}
		fl.gpu_sent += n;
	}
	fl.ngpu = fl.gpu_sent = 0;
	return 0;
}

/* Sends every queued string; on -EAGAIN the unsent ones stay queued, in order, before any queued meanwhile. */
static int send_strings(uint64_t deadline)
{
	struct cprof_istr *list, *e;
	size_t len;
	int ret = 0;

	pthread_mutex_lock(&fl.strings_lock);
	list = fl.strings;
	fl.strings = NULL;
	fl.strings_tail = &fl.strings;
	pthread_mutex_unlock(&fl.strings_lock);

	while (list != NULL) {
		struct cprof_wire_hdr *h = (void *)fl.frame;

		len = sizeof(*h);
		cprof_wire_hdr_init(h, CPROF_MSG_STRINGS, fl.hello.fixed.pid, fl.seq, 0, len);
		for (e = list; e != NULL && cprof_wire_strings_add(fl.frame, &len, e->id, e->kind, e->text) == 0;)
			e = e->next_queued;
		ret = write_frame(fl.frame, len, deadline);
		if (ret < 0)
			break;
		fl.seq++;
		list = e;
	}
	if (list != NULL && ret != -EPIPE) {
		/* the rest back in front of anything queued meanwhile */
		pthread_mutex_lock(&fl.strings_lock);
		for (e = list; e->next_queued != NULL; e = e->next_queued)
			;
		e->next_queued = fl.strings;
		if (fl.strings == NULL)
			fl.strings_tail = &e->next_queued;
		fl.strings = list;
		pthread_mutex_unlock(&fl.strings_lock);
	}
	return ret;
}

/* Drains one ring up to its snapshot; events leave the ring only once their frame is written. */
static int drain_ring(struct cprof_ring *r, uint64_t deadline)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed), t0 = t;
	uint64_t h = r->snap;
	struct cprof_wire_hdr *hdr = (void *)fl.frame;
	struct cprof_wire_api *out = (void *)(hdr + 1);

	uint64_t k;
	int ret;

	/* kernel names, named here rather than on the launching thread; the slots up to the snapshot are
	 * published and the owner no longer writes them. A name seen for the first time goes out first. */
	for (k = t; k < h; k++) {
		struct cprof_wire_api *e = &r->ev[k & (CPROF_RING_EVENTS - 1)];
		const char *ahead = (const char *)&r->ev[(k + 8) & (CPROF_RING_EVENTS - 1)];

		/* the events were written on another core: half of a round's time went to waiting for their lines */
		__builtin_prefetch(ahead);
		__builtin_prefetch(ahead + 64);

		if (e->flags & CPROF_API_F_KERNEL_KEY) {
			e->name = cprof_kernel_name_id((const void *)(uintptr_t)e->ptr);
			e->flags &= ~CPROF_API_F_KERNEL_KEY;
		}
	}
	if (t < h && (ret = send_strings(deadline)) < 0)
		return ret;
	while (t < h) {
		uint64_t n = h - t, i, gemms = 0;

		/* a flood must not run a round past its deadline (an exit's BYE waits behind it); one frame
		 * always goes, so every round makes progress */
		if (t != t0 && mono_ms() >= deadline)
			return -EAGAIN;
		if (n > CPROF_WIRE_API_PER_FRAME)
			n = CPROF_WIRE_API_PER_FRAME;
		for (i = 0; i < n; i++) {
			out[i] = r->ev[(t + i) & (CPROF_RING_EVENTS - 1)];
			out[i].start_ns = cprof_tick_ns(out[i].start_ns);
			out[i].end_ns = cprof_tick_ns(out[i].end_ns);
			gemms += cprof_api_class_of(out[i].api) == CPROF_CLASS_GEMM;
		}
		cprof_wire_hdr_init(hdr, CPROF_MSG_API, fl.hello.fixed.pid, fl.seq, n,
				    sizeof(*hdr) + n * sizeof(*out));
		/* a crashing thread that takes over must see this ring's tail after our write, not before */
		atomic_fetch_add(&cr.writing, 1);
		ret = write_frame(fl.frame, hdr->len, deadline);
		if (ret == -EAGAIN) {
			atomic_fetch_sub(&cr.writing, 1);
			return ret;
		}
		if (ret == -EPIPE) {
			atomic_fetch_add(&fl.lost_extra, n);
			atomic_fetch_add(&fl.lost_pipe, n);
		} else {
			fl.seq++;
			fl.sent += n;
			fl.gemms += gemms;
		}
		t += n;
		atomic_store_explicit(&r->tail, t, memory_order_release);
		atomic_fetch_sub(&cr.writing, 1);
	}
	return 0;
}

/* A thread takes a ring (its first recorded call, on that thread): its schedstat now is where its cost starts. A
 * thread's schedstat counts from the thread's start, so a ring first read later added all the thread had run and
 * waited before: Python's start-up, 4.3 s of run and 157 ms of wait on a training run's two threads, went into
 * its first window (2026-12-06). One /proc read, once a thread. The ring's sched_* stay the flusher's: a reused
 * ring still shows its last owner's tid until this one's is out, and the flusher may be reading that thread. */
void cprof_flusher_thread_start(struct cprof_ring *r)
{
	uint64_t run, wait;
	int saved = errno;

	atomic_store_explicit(&r->start_tid, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release); /* a reader that sees the new values sees start_tid 0 first */
	if (cprof_schedstat_read(cprof_tls.tid, &run, &wait) == 0) {
		__atomic_store_n(&r->start_run, run, __ATOMIC_RELAXED);
		__atomic_store_n(&r->start_wait, wait, __ATOMIC_RELAXED);
		atomic_store_explicit(&r->start_tid, cprof_tls.tid, memory_order_release);
	}
	errno = saved;
	cprof_crash_thread_start(r);
}

/* The baseline of a thread the flusher reads for the first time: what it had when it took its ring, if the ring
 * says so for this tid before and after the values are read (a seqlock on start_tid); else now. */
static void sched_start(struct cprof_ring *r, uint32_t tid, uint64_t *run, uint64_t *wait)
{
	uint64_t sr, sw;

	if (atomic_load_explicit(&r->start_tid, memory_order_acquire) != tid)
		return;
	sr = __atomic_load_n(&r->start_run, __ATOMIC_RELAXED);
	sw = __atomic_load_n(&r->start_wait, __ATOMIC_RELAXED);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&r->start_tid, memory_order_relaxed) == tid && sr <= *run && sw <= *wait) {
		*run = sr;
		*wait = sw;
	}
}

/* The counted calls' running totals by slot, summed over the rings (a ring's counters never go back: a reused
 * ring goes on from its last thread's) and the ringless threads'. Async-signal-safe. */
static void counted_sums(uint64_t sum[CPROF_COUNTED__N])
{
	struct cprof_ring *r;
	size_t i;

	for (i = 0; i < CPROF_COUNTED__N; i++)
		sum[i] = atomic_load_explicit(&cprof_counted_ringless[i], memory_order_relaxed);
	for (r = cprof_rings_head(); r; r = r->next)
		for (i = 0; i < CPROF_COUNTED__N; i++)
			sum[i] += atomic_load_explicit(&r->counted[i], memory_order_relaxed);
}

/* Those totals as a COUNTS frame in frame; 0 when they did not grow since the last one sent. Async-signal-safe
 * (the crashing thread's fallback uses it). */
static size_t counts_build(uint8_t *frame, uint32_t seq, uint64_t *sum)
{
	struct cprof_wire_hdr *h = (void *)frame;
	struct cprof_wire_count *rec = (void *)(h + 1);
	uint32_t n = 0;
	size_t i;

	counted_sums(sum);
	if (memcmp(sum, fl.counted_sent, CPROF_COUNTED__N * sizeof(*sum)) == 0)
		return 0;
	for (i = 0; i < CPROF_COUNTED__N; i++)
		if (sum[i])
			rec[n++] = (struct cprof_wire_count){ .api = cprof_counted_api[i], .calls = sum[i] };
	if (n == 0)
		return 0;
	cprof_wire_hdr_init(h, CPROF_MSG_COUNTS, fl.hello.fixed.pid, seq, n, sizeof(*h) + n * sizeof(*rec));
	return sizeof(*h) + n * sizeof(*rec);
}

static int send_counts(uint64_t deadline)
{
	uint64_t sum[CPROF_COUNTED__N];
	size_t len = counts_build(fl.frame, fl.seq, sum);
	int ret;

	if (len == 0)
		return 0;
	if ((ret = write_frame(fl.frame, len, deadline)) < 0)
		return ret;
	fl.seq++;
	memcpy(fl.counted_sent, sum, sizeof(sum));
	return 0;
}

/* What profiling has cost the process so far (CPROF_MSG_COST), after the counted calls' totals. Flusher thread
 * only. */
static int send_cost(uint64_t deadline, int edge)
{
	struct cprof_wire_cost c = { .time_ns = cprof_now_ns() };
	uint64_t sampled_ns = 0, counted_ns = 0, counted_sampled = 0, counted[CPROF_COUNTED__N];
	struct cprof_ring *r;
	struct timespec ts;

	counted_sums(counted);
	for (size_t i = 0; i < CPROF_COUNTED__N; i++)
		c.counted_calls += counted[i];
	/* the calls a handler made while its thread took its first ring: nested, and in no ring */
	c.lost_nested = atomic_load_explicit(&cprof_ring_lost_nested, memory_order_relaxed);
	c.hook_calls = c.lost_nested;

	/* a program with thousands of threads must not pay thousands of /proc reads ten times a second: only
	 * threads that made calls since their last reading are read, at most SCHED_READS a round, the turn
	 * going round the list (a reading adds all the growth since the last one, so one put off loses nothing) */
	size_t idx = 0, reads = 0, first = edge ? 0 : fl.sched_next;

	for (r = cprof_rings_head(); r; r = r->next, idx++) {
		uint64_t run, wait, head = atomic_load_explicit(&r->head, memory_order_relaxed);
		uint32_t tid = __atomic_load_n(&r->tid, __ATOMIC_ACQUIRE);

		c.hook_calls += head + atomic_load_explicit(&r->lost, memory_order_relaxed);
		sampled_ns += atomic_load_explicit(&r->cost_sampled_ns, memory_order_relaxed);
		c.sampled_calls += atomic_load_explicit(&r->cost_sampled, memory_order_relaxed);
		c.stack_ns += atomic_load_explicit(&r->stack_ns, memory_order_relaxed);
		c.stack_calls += atomic_load_explicit(&r->stack_calls, memory_order_relaxed);
		counted_ns += atomic_load_explicit(&r->counted_sampled_ns, memory_order_relaxed);
		counted_sampled += atomic_load_explicit(&r->counted_sampled, memory_order_relaxed);
		c.pass_ns += atomic_load_explicit(&r->pass_ns, memory_order_relaxed);
		c.pass_calls += atomic_load_explicit(&r->pass_calls, memory_order_relaxed);
		c.pass_sq += atomic_load_explicit(&r->pass_sq, memory_order_relaxed);
		c.pass_launches += atomic_load_explicit(&r->passed, memory_order_relaxed);
		c.lost_nested += atomic_load_explicit(&r->lost_nested, memory_order_relaxed);
		c.lost_ring_full += atomic_load_explicit(&r->lost, memory_order_relaxed) -
				    atomic_load_explicit(&r->lost_nested, memory_order_relaxed);
		/* a thread's schedstat counts from its start: only what grew since the last reading is added */
		/* at a window's edge every thread is read: what they waited while it was closed (no calls) is
		 * then before the window, not in its first rows */
		if (atomic_load_explicit(&r->state, memory_order_relaxed) != CPROF_RING_LIVE || tid == 0 ||
		    (!edge && r->sched_tid == tid && r->sched_head == head) || idx < first || reads >= SCHED_READS)
			continue;
		reads++;
		fl.sched_next = idx + 1;
		if (cprof_schedstat_read(tid, &run, &wait) < 0)
			continue;
		r->sched_head = head;
		if (r->sched_tid != tid) { /* from when it took its ring, or from now: never from the thread's start */
			r->sched_tid = tid;
			r->sched_run = run;
			r->sched_wait = wait;
			sched_start(r, tid, &r->sched_run, &r->sched_wait);
		}
		if (run >= r->sched_run && wait >= r->sched_wait) {
			fl.app_run_ns += run - r->sched_run;
			fl.app_wait_ns += wait - r->sched_wait;
		}
		r->sched_run = run;
		r->sched_wait = wait;
	}
	if (reads < SCHED_READS)
		fl.sched_next = 0; /* the end of the list was reached: start from the head next time */
	c.hook_ns = c.sampled_calls ? (uint64_t)((double)sampled_ns * c.hook_calls / c.sampled_calls) : 0;
	c.counted_ns = counted_sampled ? (uint64_t)((double)counted_ns * c.counted_calls / counted_sampled) : 0;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		c.flusher_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	c.app_run_ns = fl.app_run_ns;
	c.app_wait_ns = fl.app_wait_ns;
	c.lost_cupti = atomic_load(&fl.lost_cupti);
	c.lost_pipe = atomic_load(&fl.lost_pipe);
	fl.last_cost_ms = mono_ms();
	if (send_counts(deadline) < 0)
		return -EAGAIN;
	return send_simple(CPROF_MSG_COST, &c, sizeof(c), deadline);
}

static uint64_t lost_total(void)
{
	struct cprof_ring *r;
	uint64_t lost = atomic_load(&fl.lost_extra) + atomic_load_explicit(&cprof_ring_lost_nested, memory_order_relaxed);

	for (r = cprof_rings_head(); r; r = r->next)
		lost += atomic_load_explicit(&r->lost, memory_order_relaxed);
	return lost;
}

/* A LOST frame with what was dropped since the last one went */
static void send_lost(uint64_t deadline)
{
	uint64_t lost = lost_total();

	if (lost > fl.lost_reported && !atomic_load(&fl.dead)) {
		struct cprof_wire_lost l = { .lost = lost - fl.lost_reported, .emitted = fl.sent + lost };

		if (send_simple(CPROF_MSG_LOST, &l, sizeof(l), deadline) == 0)
			fl.lost_reported = lost;
	}
}

/* The image went on after an exec whose BYE counted these lost: dropped, before any drain or count can send them or
 * count them again (an exit right after a failed exec may leave no time for a round first) */
static void exec_drop_counted(void)
{
	if (likely(!fl.exec_counted))
		return;
	fl.exec_counted = 0;
	fl.ngpu = fl.gpu_sent = 0;
	cprof_cupti_drop_taken();
	for (struct cprof_ring *r = cprof_rings_head(); r; r = r->next)
		if (r->exec_mark > atomic_load_explicit(&r->tail, memory_order_relaxed))
			atomic_store_explicit(&r->tail, r->exec_mark, memory_order_release);
}

/* As the image ends (an exit, an exec, a crash), CUPTI's records not converted or sent by the drain's deadline are lost:
 * counted as CUPTI's. An exit or a crash drops them (drop); an exec keeps them until the next drain, which drops them
 * if the exec failed (exec_counted): they were counted in its BYE and must not be sent too. Until 2026-12-07 they went
 * uncounted (t-rel-defer's CI run stored 10,554 of 20,010 kernels with lost_events 0); after a successful exec, until
 * a session later that day (t-rel-exec-lost). Returns how many. */
static uint64_t lose_unsent_gpu(uint64_t deadline, int drop)
{
	uint64_t n;

	exec_drop_counted();
	n = fl.ngpu - fl.gpu_sent + cprof_cupti_unconverted(deadline, drop);
	if (drop)
		fl.ngpu = fl.gpu_sent = 0;
	else
		fl.exec_counted = 1;
	atomic_fetch_add(&fl.lost_cupti, n);
	atomic_fetch_add(&fl.lost_extra, n);
	return n;
}

/* The same for what the rings hold (other threads' calls after the drain's snapshot, or what the time left unsent):
 * lost at an exit; at an exec too, and dropped up to each ring's exec_mark if the exec failed. Returns how many. */
static uint64_t lose_unsent_rings(void)
{
	uint64_t n = 0;

	for (struct cprof_ring *r = cprof_rings_head(); r; r = r->next) {
		uint64_t head = atomic_load(&r->head);

		n += head - atomic_load(&r->tail);
		r->exec_mark = head;
	}
	atomic_fetch_add(&fl.lost_extra, n);
	return n;
}

/* CUPTI records converted at a time: 192 KiB, which stay in the cache until they are written */
#define GPU_BATCH 2048
/* How long the flusher's own round converts CUPTI's records before the rings' turn comes again. A backlog held while the
 * machine was busy (up to CPROF_DEFER_MB) was converted in one round: 673 ms without a COST row in a busy eager run
 * (2026-12-07, the bench's in-process row, 1 process of 12), the rings unread meanwhile, and 5,216 calls were lost to
 * a full ring. An exit's, exec's or crash's drain converts all it can until its deadline, as before. */
#define GPU_SLICE_MS 10

/* One round; returns 1 when every ring was empty at its snapshot. Flusher thread only. cut: a round of the flusher's
 * own, whose CUPTI batches stop after GPU_SLICE_MS (*cut set when they did: the next round comes at once); NULL for
 * a drain that converts all it can until its deadline. */
static int drain_round(uint64_t deadline, int *cut)
{
	struct cprof_ring *r;
	uint64_t slice;
	int empty = 1, ret, ngpu;
	uint8_t *stacks;
	size_t stacks_len, stacks_cap;

	if (atomic_load(&fl.dead))
		return 1;
	exec_drop_counted();
	if (!fl.hello_sent && send_hello(deadline) < 0)
		return 0;
	ring_announce(deadline);
	/* an anchor before the snapshot: every event drained now was recorded before it */
	cprof_tick_anchor();
	/* snapshot first: every event before it had its strings queued before it */
	for (r = cprof_rings_head(); r; r = r->next)
		r->snap = atomic_load_explicit(&r->head, memory_order_acquire);
	/* CUPTI records are converted here; the names they need are queued before the strings go */
	ngpu = fl.defer_gpu ? 0 : cprof_cupti_collect(gpu_keep, NULL, GPU_BATCH);
	if (ngpu > 0)
		empty = 0;
	stacks = stacks_take(&stacks_len, &stacks_cap);
	if ((ret = send_statuses(deadline)) < 0 || send_strings(deadline) < 0) {
		stacks_requeue(stacks, stacks_cap, 0, stacks_len);
		return 0;
	}
	if (ret > 0)
		empty = 0; /* statuses queued while these went: the last round is not over */
	if (send_stacks(stacks, stacks_cap, stacks_len, deadline) < 0)
		return 0;
	for (r = cprof_rings_head(); r; r = r->next) {
		int state = atomic_load_explicit(&r->state, memory_order_acquire);

		if (r->snap != atomic_load_explicit(&r->tail, memory_order_relaxed))
			empty = 0;
		ret = drain_ring(r, deadline);
		if (ret == -EAGAIN)
			return 0;
		if (state == CPROF_RING_DEAD && atomic_load(&r->head) == atomic_load(&r->tail))
			atomic_compare_exchange_strong(&r->state, &state, CPROF_RING_FREE);
	}
	if (fl.ngpu > 0) {
		empty = 0;
		if (send_gpu(deadline) == -EAGAIN)
			return 0;
	}
	/* the rest of what CUPTI completed, a batch at a time, each batch's names before it; in the flusher's own rounds
	 * for GPU_SLICE_MS at most, then a round again at once, the rings drained first */
	slice = cut ? mono_ms() + GPU_SLICE_MS : UINT64_MAX;
	while (ngpu == GPU_BATCH) {
		if (mono_ms() >= slice) {
			*cut = 1;
			empty = 0;
			break;
		}
		ngpu = cprof_cupti_collect(gpu_keep, NULL, GPU_BATCH);
		if (send_strings(deadline) < 0 || (fl.ngpu > 0 && send_gpu(deadline) == -EAGAIN))
			return 0;
	}
	send_lost(deadline);
	return empty;
}

#define BUSY_EVERY_MS 100

/* Whether the machine has had no spare core lately, by the kernel's CPU pressure (PSI). Flusher thread only;
 * without PSI the flusher never defers. */
static int machine_busy(void)
{
	char buf[256];
	uint64_t total, now = mono_ms();

	if (fl.psi_ms != 0 && now - fl.psi_ms < BUSY_EVERY_MS)
		return fl.busy;
	if (cprof_read_proc("/proc/pressure/cpu", buf, sizeof(buf)) < 0 || cprof_psi_some_total(buf, &total) < 0) {
		fl.defer_cap = 0;
		return fl.busy = 0;
	}
	if (fl.psi_ms != 0 && total >= fl.psi_total_us)
		fl.busy = cprof_psi_busy(total - fl.psi_total_us, now - fl.psi_ms);
	fl.psi_total_us = total;
	fl.psi_ms = now;
	return fl.busy;
}

static int request_pending(void)
{
	return atomic_load(&fl.req_seq) != atomic_load(&fl.done_seq);
}

/* A drain for a thread that exits (final, BYE, stop) or execs (BYE, pause until exec fails). */
static void serve_request(void)
{
	uint32_t seq = atomic_load(&fl.req_seq);
	int reason = atomic_load(&fl.req_reason);
	uint64_t deadline = atomic_load(&fl.req_deadline_ms);
	/* the BYE keeps a slice of the time: a collector slow to take a flood of other threads' events must
	 * not cost the process its goodbye (and its count of what was lost) */
	uint64_t reserve = fl.exit_timeout_ms / 4 < 100 ? fl.exit_timeout_ms / 4 : 100;
	uint64_t drain_deadline = deadline - reserve;
	uint64_t t0 = mono_ms(), sent0 = fl.sent, unsent = 0;

	atomic_store(&fl.paused, 0);
	while (!atomic_load(&fl.dead) && mono_ms() < drain_deadline && !drain_round(drain_deadline, NULL))
		;
	if (cprof_log_level >= CPROF_LOG_DBG) {
		struct cprof_ring *r;
		uint64_t made, reused;

		cprof_cupti_buffer_counts(&made, &reused);
		pr_dbg("CUPTI's records deferred in %llu rounds (the machine had no spare core; cap %llu MiB); the longest "
		       "round took %llu ms; CUPTI buffers made %llu, reused %llu", (unsigned long long)fl.deferred_rounds,
		       (unsigned long long)(fl.defer_cap >> 20), (unsigned long long)fl.longest_round_ms,
		       (unsigned long long)made, (unsigned long long)reused);

		for (r = cprof_rings_head(); r; r = r->next)
			pr_dbg("ring tid %u: head %llu tail %llu lost %llu state %d", r->tid,
			       (unsigned long long)atomic_load(&r->head), (unsigned long long)atomic_load(&r->tail),
			       (unsigned long long)atomic_load(&r->lost), atomic_load(&r->state));
	}
	if (reason && !atomic_load(&fl.dead)) {
		uint64_t lost, rings;
		struct cprof_wire_bye b;
		int ret;

		atomic_store(&fl.bye_phase, 1);
		if (mono_ms() < drain_deadline)
			drain_round(drain_deadline, NULL); /* a last LOST if anything dropped meanwhile */
		/* in the last COST and BYE; what CUPTI still holds is counted exactly in a quarter of the reserve */
		unsent = lose_unsent_gpu(drain_deadline + reserve / 4, reason != CPROF_BYE_EXEC);
		rings = lose_unsent_rings();
		pr_dbg("the drain for the %s took %llu ms: %llu events sent, %llu of CUPTI's and %llu of the rings' lost "
		       "(not sent in time)", reason == CPROF_BYE_EXEC ? "exec" : "exit", (unsigned long long)(mono_ms() - t0),
		       (unsigned long long)(fl.sent - sent0), (unsigned long long)unsent, (unsigned long long)rings);
		if (fl.hello_sent)
			send_cost(drain_deadline > mono_ms() ? drain_deadline : deadline, 1);
		lost = lost_total();
		b = (struct cprof_wire_bye){ .end_ns = cprof_now_ns(), .emitted = fl.sent + lost, .lost = lost,
					     .reason = reason };
		/* the requester stops waiting at the deadline and the process ends: the file, when the pipe
		 * stays full, is written in the last half of the reserve */
		ret = send_simple(CPROF_MSG_BYE, &b, sizeof(b), deadline - reserve / 2);
		if (ret == 0)
			fl.lost_reported = lost; /* the collector holds the BYE's total: a failed exec's LOSTs go on from it */
		else if (ret == -EAGAIN && fl.hello_sent && reason != CPROF_BYE_EXEC)
			bye_to_file(sizeof(struct cprof_wire_hdr) + sizeof(b));
		atomic_store(&fl.bye_phase, 0);
	}
	/* the requester may end the process as soon as it is told: the KICK goes first */
	ring_kick_if_dirty();
	if (reason == CPROF_BYE_EXEC)
		atomic_store(&fl.paused, 1);
	else if (reason)
		atomic_store(&fl.stop, 1);
	atomic_store(&fl.done_seq, seq);
	futex_wake(&fl.done_seq);
}

/* Fills one record per thread ring that ever recorded a call: its last call. Async-signal-safe (the
 * crashing thread's fallback uses it too): rings are never unmapped while the process runs. */
static uint32_t crash_threads(struct cprof_wire_crash_thread *out, uint32_t max)
{
	struct cprof_ring *r;
	uint32_t n = 0;

	for (r = cprof_rings_head(); r && n < max; r = r->next) {
		uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
		const struct cprof_wire_api *e;

		if (h == 0 || atomic_load_explicit(&r->state, memory_order_relaxed) == CPROF_RING_FREE)
			continue;
		e = &r->ev[(h - 1) & (CPROF_RING_EVENTS - 1)];
		out[n] = (struct cprof_wire_crash_thread){ .start_ns = cprof_tick_ns_any(e->start_ns),
							   .end_ns = cprof_tick_ns_any(e->end_ns), .tid = r->tid,
							   .api = e->api, .flags = e->flags, .ret = e->ret,
							   .name = (e->flags & CPROF_API_F_KERNEL_KEY) ? 0 : e->name };
		n++;
	}
	return n;
}

static size_t crash_build(uint8_t *frame, uint32_t seq)
{
	struct cprof_wire_hdr *h = (void *)frame;
	struct cprof_wire_crash *c = (void *)(h + 1);
	uint32_t n;

	*c = cr.info;
	n = crash_threads((void *)(c + 1), CPROF_WIRE_CRASH_MAX_THREADS);
	cprof_wire_hdr_init(h, CPROF_MSG_CRASH, fl.hello.fixed.pid, seq, n,
			    sizeof(*h) + sizeof(*c) + n * sizeof(struct cprof_wire_crash_thread));
	return h->len;
}

/* On the flusher thread, for a crashing thread: everything recorded, then what CUPTI holds, then CRASH.
 * The crashing thread waits for this only so long; a CUPTI flush that hangs leaves the rest to it. */
static void serve_crash(void)
{
	uint64_t deadline = mono_ms() + (fl.exit_timeout_ms > 1 ? fl.exit_timeout_ms / 2 : 1);
	uint64_t sent0 = fl.sent;
	size_t len;
	int ret, i;

	/* a few rounds, not "until empty": other threads may go on launching while this one is dying, and
	 * the CUPTI flush and the CRASH record must get their turn before the deadline */
	for (i = 0; i < 4 && !atomic_load(&fl.dead) && mono_ms() < deadline && !drain_round(deadline, NULL); i++)
		;
	if (!(cr.info.flags & CPROF_CRASH_F_IN_CUDA)) {
		cprof_cupti_flush(1);
		cr.info.flags |= CPROF_CRASH_F_CUPTI_FLUSH;
	}
	for (i = 0; i < 4 && !atomic_load(&fl.dead) && mono_ms() < deadline && !drain_round(deadline, NULL); i++)
		;
	cr.info.drained = fl.sent - sent0;
	/* a crash the program's own handler may survive keeps them for the rounds after it; inside CUDA, CUPTI's state is
	 * whatever the fault left: not read more than the rounds did */
	if (!atomic_load(&fl.dead) && !(cr.info.flags & (CPROF_CRASH_F_APP_HANDLER | CPROF_CRASH_F_IN_CUDA))) {
		lose_unsent_gpu(deadline, 1);
		send_lost(deadline);
	}
	/* the counted calls too: a crash has no exit's last COST */
	if (!atomic_load(&fl.dead))
		send_counts(deadline);
	len = crash_build(fl.frame, fl.seq);
	ret = atomic_load(&fl.dead) ? -EPIPE : write_frame(fl.frame, len, deadline + 50);
	if (ret == 0)
		fl.seq++;
	ring_kick_if_dirty();
	atomic_store(&cr.req, 0);
	atomic_store(&cr.done, ret == 0 ? 1 : 2);
	futex_wake(&cr.done);
}

static void *flusher_main(void *arg)
{
	(void)arg;
	/* named so that top, perf and the report's schedstat reading tell cprof's thread from the program's */
	prctl(PR_SET_NAME, "cprof-flusher", 0, 0, 0);
	cprof_fifo_isolate(&fl.fifo);
	fl.fifo.fd = cprof_fifo_open(&fl.fifo);
	if (fl.fifo.fd < 0)
		mark_dead(fl.fifo.fd == -ESTALE ? "its FIFO was replaced" : strerror(-fl.fifo.fd));
	else
		ring_create();
	int serving = 0; /* the last round served an exit, exec or crash: the image may be ending */
	int cut = 0;     /* the last round's conversion was cut by its slice: the next comes at once */
	int more;        /* this round follows such a one */
	uint64_t round_ms;

	while (!atomic_load(&fl.stop) && !atomic_load(&fl.dead)) {
		uint32_t seen = atomic_load(&fl.wake_word);

		/* what the last round (or a request's or a crash's drain) put in the ring is the collector's to take */
		ring_kick_if_dirty();
		/* a wake-up that came while the last round drained left cprof_wake_pending set, and producers ask
		 * no more while it is: sleeping on it now would leave them a full period with no one draining */
		if (!request_pending() && !atomic_load(&cr.req) && !atomic_load(&cprof_wake_pending) && !cut)
			futex_wait(&fl.wake_word, seen, fl.flush_ms);
		more = cut;
		cut = 0;
		atomic_store(&cprof_wake_pending, 0);
		serving = 1;
		if (atomic_load(&cr.req)) {
			serve_crash();
			continue;
		}
		if (request_pending()) {
			serve_request();
			continue;
		}
		serving = 0;
		/* cprof_disable (a thread's ring could not be had) stopped cprof with its collector alive: what CUPTI holds
		 * now goes out, then its kinds go off as when the collector is gone (they stayed on, every later call
		 * recorded, converted and sent by this thread, until 2026-12-06). The rings keep what they had for the exit. */
		if (unlikely(!fl.disabled && atomic_load(&cprof_state) == CPROF_ST_OFF && !atomic_load(&fl.dead))) {
			fl.disabled = 1;
			cprof_cupti_flush(0);
			drain_round(mono_ms() + fl.flush_ms, NULL);
			if (!atomic_load(&fl.dead))
				cprof_cupti_orphan(1);
		}
		if (atomic_load(&fl.paused))
			continue;
		/* no periodic flush while deferring either: buffers complete when CUPTI has filled them. A conversion cut
		 * by its slice goes on to the end of the backlog, as one round took it before the slices: deferring again
		 * just under the cap kept the program's memory there, and left the exit that much to convert */
		fl.defer_gpu = !more && fl.defer_cap && cprof_cupti_pending_bytes() < fl.defer_cap && machine_busy();
		fl.deferred_rounds += fl.defer_gpu;
		if (!fl.defer_gpu && mono_ms() - fl.last_cupti_flush_ms >= CUPTI_FLUSH_MS) {
			fl.last_cupti_flush_ms = mono_ms();
			cprof_cupti_flush(0);
		}
		/* a window's edge is read before the round's drain (a window's stop leaves the most to drain) */
		if (atomic_exchange(&fl.cost_edge, 0) && fl.hello_sent && mono_ms() - fl.last_cost_ms >= COST_EDGE_MIN_MS)
			send_cost(mono_ms() + fl.flush_ms, 1);
		round_ms = mono_ms();
		drain_round(round_ms + fl.flush_ms, &cut);
		round_ms = mono_ms() - round_ms;
		fl.longest_round_ms = round_ms > fl.longest_round_ms ? round_ms : fl.longest_round_ms;
		fl.defer_gpu = 0; /* every other drain (exit, exec, crash, stop) converts all */
		/* here, not in drain_round: an exit's, exec's or crash's drain calls CUPTI no more (a crash may hold its
		 * locks; an exit may have torn cudart down) */
		if (fl.gemms >= CPROF_OCCUPANCY_GEMMS)
			cprof_cupti_gemms_drained(fl.gemms);
		if (fl.hello_sent && mono_ms() - fl.last_cost_ms >= COST_EVERY_MS)
			send_cost(mono_ms() + fl.flush_ms, 0);
		/* after the round's COST row: writing a buffer's pages takes this thread a few ms on this VM, and a
		 * wake-up for it at CUPTI's start moved a short run's first COST row from ~50 ms to ~2 ms, before the
		 * calls the report spreads between rows (t-rel-writer-idle's counted calls, CI 2026-12-07) */
		cprof_cupti_pool_fill();
	}
	/* the collector is gone: nothing will take CUPTI's records, which would pile up in the program's memory. Its
	 * kinds go off only when this thread found it in its own rounds: an exit or a crash it served has gone on
	 * meanwhile, perhaps to unload CUPTI (a crash may hold CUPTI's locks). This thread calls CUPTI (flushes) with
	 * its own descriptor table already; not yet seen on a real GPU. */
	if (atomic_load(&fl.dead))
		cprof_cupti_orphan(!serving && !atomic_load(&fl.stop));
	/* a requester that posted after our last look must not wait for its timeout */
	atomic_store(&fl.alive, 0);
	atomic_store(&fl.done_seq, atomic_load(&fl.req_seq));
	futex_wake(&fl.done_seq);
	futex_wake(&cr.done); /* nor a crashing thread: it sees alive = 0 and writes itself */
	if (fl.fifo.private_fds && fl.fifo.fd >= 0)
		close(fl.fifo.fd); /* our table only; the thread's table goes with it anyway */
	return NULL;
}

/* A window opened or closed: the next round sends the cost's totals, every live thread's schedstat read, so the
 * report reads a window's growth at its edges instead of interpolating rows 100 ms apart (2026-12-06: 40-80 ms
 * windows of the bench's in-process rows). */
void cprof_flusher_cost_edge(void)
{
	atomic_store(&fl.cost_edge, 1);
	cprof_flusher_wake();
}

void cprof_flusher_wake(void)
{
	if (atomic_exchange_explicit(&cprof_wake_pending, 1, memory_order_relaxed))
		return;
	atomic_fetch_add(&fl.wake_word, 1);
	futex_wake(&fl.wake_word);
}

static int quick_exit_registered;

static void at_quick_exit_flush(void)
{
	if (!cprof_flusher_owner())
		return;
	cprof_cupti_flush(1);
	cprof_flusher_final(CPROF_BYE__EXIT);
}

int cprof_flusher_start(const struct cprof_flusher_cfg *cfg)
{
	sigset_t all, old;
	int ret;

	snprintf(fl.fifo.path, sizeof(fl.fifo.path), "%s", cfg->fifo_path);
	fl.fifo.dev = cfg->fifo_dev;
	fl.fifo.ino = cfg->fifo_ino;
	fl.fifo.want_private = cfg->private_fds;
	fl.flush_ms = cfg->flush_ms;
	fl.exit_timeout_ms = cfg->exit_timeout_ms;
	fl.defer_cap = (uint64_t)cfg->defer_mb << 20;
	cprof_cupti_spares((unsigned)cfg->defer_mb);
	fl.ring_size = cfg->ring_size;
	fl.hello = cfg->hello;
	for (int i = 0; i < fl.hello.argc; i++)
		fl.hello.argv[i] = fl.hello.args + (cfg->hello.argv[i] - cfg->hello.args);
	fl.pid = getpid();
	/* room for the statuses a run queues (its windows' edges), had here and not in a signal handler's call */
	pthread_mutex_lock(&fl.status_lock);
	if (fl.status_cap < STATUS_KEEP) {
		struct cprof_wire_status *p;

		p = queue_map(fl.statuses, fl.status_cap * sizeof(*p), STATUS_KEEP * sizeof(*p));

		if (p != NULL) {
			fl.statuses = p;
			fl.status_cap = STATUS_KEEP;
		}
	}
	pthread_mutex_unlock(&fl.status_lock);
	/* and for the stacks a round queues, in the queue and in its spare */
	pthread_mutex_lock(&fl.strings_lock);
	if (fl.stacks_cap < STACKS_KEEP) {
		uint8_t *p = queue_map(fl.stacks, fl.stacks_cap, STACKS_KEEP);

		if (p != NULL) {
			fl.stacks = p;
			fl.stacks_cap = STACKS_KEEP;
		}
	}
	if (fl.stacks_spare == NULL && (fl.stacks_spare = queue_map(NULL, 0, STACKS_KEEP)) != NULL)
		fl.spare_cap = STACKS_KEEP;
	pthread_mutex_unlock(&fl.strings_lock);
	/* the first forced CUPTI flush one period after the start, not at the first round: a short program's
	 * GPU window is not cut by a flush and the buffer request after it */
	fl.last_cupti_flush_ms = mono_ms();
	atomic_store(&fl.alive, 1);
	/* the flusher takes no signal: the target's handlers run on the target's threads, and SIGPIPE
	 * raised by our writes stays pending on our thread where it is consumed */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&fl.thread, NULL, flusher_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret != 0) {
		atomic_store(&fl.alive, 0);
		return -ret;
	}
	fl.running = 1;
	/* from now on a fatal signal has somewhere to send what was recorded */
	cprof_crash_install();
	/* quick_exit skips atexit and calls libc's own _exit, which no hook sees: registered first, this
	 * runs after the program's at_quick_exit handlers (once: a fork child inherits it) */
	if (!quick_exit_registered) {
		quick_exit_registered = 1;
		at_quick_exit(at_quick_exit_flush);
	}
	return 0;
}

int cprof_flusher_owner(void)
{
	return fl.running && getpid() == fl.pid;
}

/* Has the flusher drain what was recorded (and say BYE with reason != 0), waiting at most the exit
 * timeout. Never from a vfork child: its writes would be its parent's, and its parent lives on. */
static void request(int reason)
{
	uint64_t deadline = mono_ms() + fl.exit_timeout_ms;
	struct timespec abs;
	uint32_t seq;

	if (!cprof_flusher_owner() || !atomic_load(&fl.alive))
		return;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += fl.exit_timeout_ms / 1000;
	abs.tv_nsec += (fl.exit_timeout_ms % 1000) * 1000000L;
	if (abs.tv_nsec >= 1000000000L) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000L;
	}
	if (pthread_mutex_timedlock(&fl.req_lock, &abs) != 0)
		return;
	atomic_store(&fl.req_reason, reason);
	atomic_store(&fl.req_deadline_ms, deadline);
	seq = atomic_fetch_add(&fl.req_seq, 1) + 1;
	atomic_fetch_add(&fl.wake_word, 1);
	futex_wake(&fl.wake_word);
	for (;;) {
		uint32_t done = atomic_load(&fl.done_seq);
		uint64_t now = mono_ms();

		if ((int32_t)(done - seq) >= 0 || !atomic_load(&fl.alive))
			break;
		if (now >= deadline && (!atomic_load(&fl.bye_phase) || now >= deadline + BYE_GRACE_MS))
			break;
		futex_wait(&fl.done_seq, done, now < deadline ? (int)(deadline - now) : 10);
	}
	pthread_mutex_unlock(&fl.req_lock);
}

void cprof_flusher_final(int reason)
{
	if (!cprof_flusher_owner() || atomic_exchange(&fl.final_done, 1))
		return;
	request(reason);
	cprof_warn_flush();
}

void cprof_flusher_exec_begin(void)
{
	if (!cprof_flusher_owner() || atomic_load(&fl.final_done))
		return;
	request(CPROF_BYE_EXEC);
	cprof_warn_flush();
}

void cprof_flusher_exec_failed(void)
{
	/* the process goes on: the instance the BYE closed receives its further events, and its exit BYE */
	if (!cprof_flusher_owner() || !atomic_exchange(&fl.paused, 0))
		return;
	atomic_fetch_add(&fl.wake_word, 1);
	futex_wake(&fl.wake_word);
}

void cprof_flusher_reset_after_fork(void)
{
	size_t i;

	/* the flusher thread does not exist in the child; its locks may have been held at fork */
	pthread_mutex_init(&fl.req_lock, NULL);
	pthread_mutex_init(&fl.strings_lock, NULL);
	pthread_mutex_init(&fl.status_lock, NULL);
	/* the parent's queue: its strings are sent again by the child, in its own generation (strings.c) */
	fl.strings = NULL;
	fl.strings_tail = &fl.strings;
	queue_unmap(fl.statuses, fl.status_cap * sizeof(*fl.statuses));
	fl.statuses = NULL;
	fl.nstatus = fl.status_cap = 0;
	queue_unmap(fl.stacks, fl.stacks_cap);
	fl.stacks = NULL;
	queue_unmap(fl.stacks_spare, fl.spare_cap);
	fl.stacks_spare = NULL;
	fl.spare_cap = 0;
	fl.stacks_len = fl.stacks_cap = fl.nstacks = 0;
	fl.ngpu = fl.gpu_sent = 0;
	fl.exec_counted = 0; /* the parent's: its records and rings are not the child's to drop */
	fl.gemms = 0;
	/* a private-table FIFO is not in the child's table, and a shared one's number may be the target's
	 * by now: close only what is provably our FIFO */
	if (!fl.fifo.private_fds && cprof_fifo_is_ours(&fl.fifo, fl.fifo.fd))
		close(fl.fifo.fd);
	fl.fifo.fd = -1;
	fl.fifo.private_fds = 0;
	/* the parent's ring is shared memory: the child's copy of the mapping goes (its memfd is in the parent's
	 * flusher's own table, not in the child's); the child's flusher makes its own */
	if (fl.ring_map != NULL)
		munmap(fl.ring_map, fl.ring_map_len);
	fl.ring_map = NULL;
	fl.ring.hdr = NULL;
	fl.ring_fd = -1;
	fl.ring_announced = fl.ring_on = 0;
	fl.ring_dirty = 0;
	fl.ring_since_kick = 0;
	fl.running = 0;
	fl.hello_sent = 0;
	fl.seq = 0;
	fl.sent = fl.lost_reported = 0;
	atomic_store(&fl.lost_extra, 0);
	atomic_store(&fl.lost_cupti, 0);
	atomic_store(&fl.lost_pipe, 0);
	fl.last_cost_ms = 0;
	fl.app_run_ns = fl.app_wait_ns = 0; /* the child's rings are new; its threads' schedstat is its own */
	memset(fl.counted_sent, 0, sizeof(fl.counted_sent));
	for (i = 0; i < CPROF_COUNTED__N; i++)
		atomic_store(&cprof_counted_ringless[i], 0); /* the child counts its own */
	atomic_store(&cprof_ring_lost_nested, 0);
	atomic_store(&fl.alive, 0);
	atomic_store(&fl.stop, 0);
	atomic_store(&fl.final_done, 0);
	atomic_store(&fl.paused, 0);
	atomic_store(&fl.dead, 0);
	atomic_store(&fl.req_seq, 0);
	atomic_store(&fl.done_seq, 0);
	atomic_store(&cprof_wake_pending, 0);
	atomic_store(&cprof_warn_pending, 0);
	/* a crash the parent survived (its program's handler went on) is not the child's */
	atomic_store(&cr.req, 0);
	atomic_store(&cr.done, 0);
	atomic_store(&cr.takeover, 0);
	atomic_store(&cr.writing, 0);
	cprof_crash_reset_after_fork();
}

void cprof_flusher_strings_lock(int lock)
{
	if (lock) {
		pthread_mutex_lock(&fl.strings_lock);
		pthread_mutex_lock(&fl.status_lock);
	} else {
		pthread_mutex_unlock(&fl.status_lock);
		pthread_mutex_unlock(&fl.strings_lock);
	}
}

/* ---- the crashing thread (signal context: async-signal-safe calls only from here on) ---- */

static void crash_sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* The flusher did not answer: this thread writes its own ring, then CRASH, on a descriptor of its own. */
static void crash_by_handler(uint64_t deadline)
{
	struct cprof_ring *r = cprof_tls.ring;
	struct cprof_wire_hdr *hdr = (void *)cr.frame;
	struct cprof_wire_api *out = (void *)(hdr + 1);
	sigset_t pipe_set, old;
	uint64_t sent = 0;
	int fd, opened = 0, i;

	atomic_store(&cr.takeover, 1);
	/* a write of the flusher's already under way ends (the FIFO is non-blocking) before ours start; one
	 * that does not end in 50 ms is stuck (the flusher was descheduled for good): we go on regardless */
	for (i = 0; i < 50 && atomic_load(&cr.writing); i++)
		crash_sleep_ms(1);
	if (!fl.fifo.private_fds && cprof_fifo_is_ours(&fl.fifo, fl.fifo.fd))
		fd = fl.fifo.fd;
	else {
		fd = cprof_fifo_open(&fl.fifo);
		if (fd < 0)
			return;
		opened = 1;
	}
	/* no SIGPIPE for the program if the collector is gone: blocked here, consumed below */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	if (!fl.hello_sent) {
		size_t len = cprof_wire_build_hello(cr.frame, 0, &fl.hello.fixed, fl.hello.exe, fl.hello.host,
						    (const char *const *)fl.hello.argv, fl.hello.argc);

		if (cprof_fifo_write(fd, cr.frame, len, deadline) < 0)
			goto out;
		fl.seq = 1;
		fl.hello_sent = 1;
	}
	if (r != NULL && cprof_tls.generation == atomic_load(&cprof_generation)) {
		uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
		uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);

		if (fl.exec_counted && r->exec_mark > t && r->exec_mark <= h)
			t = r->exec_mark; /* a failed exec's BYE counted those lost */

		while (t < h) {
			uint64_t n = h - t, k;

			if (n > CPROF_WIRE_API_PER_FRAME)
				n = CPROF_WIRE_API_PER_FRAME;
			for (k = 0; k < n; k++) {
				out[k] = r->ev[(t + k) & (CPROF_RING_EVENTS - 1)];
				out[k].start_ns = cprof_tick_ns_any(out[k].start_ns);
				out[k].end_ns = cprof_tick_ns_any(out[k].end_ns);
				/* naming a kernel takes locks: left unnamed (the GPU record still has its name) */
				if (out[k].flags & CPROF_API_F_KERNEL_KEY) {
					out[k].flags &= ~CPROF_API_F_KERNEL_KEY;
					out[k].name = 0;
				}
			}
			cprof_wire_hdr_init(hdr, CPROF_MSG_API, fl.hello.fixed.pid, fl.seq, n,
					    sizeof(*hdr) + n * sizeof(*out));
			if (cprof_fifo_write(fd, cr.frame, hdr->len, deadline) < 0)
				goto out;
			fl.seq++;
			sent += n;
			t += n;
			atomic_store_explicit(&r->tail, t, memory_order_release);
		}
	}
	{
		uint64_t sum[CPROF_COUNTED__N];
		size_t len = counts_build(cr.frame, fl.seq, sum);

		if (len && cprof_fifo_write(fd, cr.frame, len, deadline) == 0)
			fl.seq++;
	}
	cr.info.flags |= CPROF_CRASH_F_BY_HANDLER;
	cr.info.drained = sent;
	if (cprof_fifo_write(fd, cr.frame, crash_build(cr.frame, fl.seq), deadline) == 0)
		fl.seq++;
out:
	cprof_fifo_consume_sigpipe();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (opened)
		close(fd);
}

int cprof_flusher_crash(const struct cprof_wire_crash *info, int timeout_ms)
{
	uint64_t deadline = mono_ms() + (uint64_t)(timeout_ms >= 0 ? timeout_ms : fl.exit_timeout_ms);

	/* not the process that started the flusher (a fork child before its first call), or nothing to say */
	if (!fl.running || getpid() != fl.pid || atomic_load(&fl.dead) || atomic_load(&fl.paused))
		return -1;
	cr.info = *info;
	/* a timeout of 0 asks nothing of the flusher: had it been asked, a crashing thread descheduled right
	 * after the wake-up could find it done, and the fallback would go untested (t-rel-crash-keep) */
	if (timeout_ms != 0 && atomic_load(&fl.alive) && !atomic_load(&fl.stop)) {
		atomic_store(&cr.req, 1);
		atomic_fetch_add(&fl.wake_word, 1);
		futex_wake(&fl.wake_word);
		for (;;) {
			uint32_t d = atomic_load(&cr.done);
			uint64_t now = mono_ms();

			if (d != 0 || now >= deadline || !atomic_load(&fl.alive))
				break;
			futex_wait(&cr.done, 0, (int)(deadline - now));
		}
		if (atomic_load(&cr.done) == 1)
			return 0;
	}
	crash_by_handler(deadline + 200);
	return 1;
}
