/* cprofd's spool: the intake hands the FIFO's frames to a writer thread in memory, or through a file beside the profile when it lags. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PR_FMT "cprofd"
#include "common/clock.h"
#include "common/log.h"
#include "common/procfs.h"
#include "common/shmring.h"
#include "common/wire.h"
#include "collector/spool.h"
#include "collector/store.h"

#define IN_CAP      (1u << 20)        /* one read of the FIFO at most (the pipe holds 1 MiB) */
#define RESET_BYTES (64u << 10)       /* a caught-up writer lets the intake empty a file this big */
#define PUNCH_BYTES (1u << 20)        /* a lagging writer gives back the disk space of what it stored */
#define IDLE_MS     50                /* an idle writer still commits (the store's 200 ms bound) */
/* While the writer keeps up, batches go to it in memory: the file's write and read back were a third of the
 * intake's CPU and a sixth of the writer's during a PyTorch run (issue 26). A writer further behind than this
 * many batches (an idle-priority one on a busy machine, CPROF_SPOOL_HOLD) gets the rest through the file. */
#define MEM_BATCHES 4
#define MEM_FREE    2                 /* batch buffers kept for reuse (a fresh 1 MiB one page-faults as it fills) */
#define HAND_MS     20                /* the longest the intake keeps frames it has read before the writer gets them */
#define LOW_ROOM    (64u << 10)       /* the intake's batch is handed on once it has less room than this */
#define BATCH_CAP   (IN_CAP + CPROF_WIRE_MAX_FRAME)

/* A process's shared-memory ring (common/shmring.h), mapped when its RING came: its frames join the stream
 * at its KICKs, and before any later frame of its on the FIFO */
struct ring_src {
	uint32_t pid;
	int switched;             /* its first KICK was walked: what the ring holds follows it */
	int dead;                 /* unreadable (a corrupt header): left alone */
	int replaceable;          /* a HELLO of its pid was walked since (a new image): a RING may take its place */
	uint64_t checked_ns;      /* when splice_all last asked whether its process is still there */
	void *map;
	size_t map_len;
	struct cprof_shmring r;
};

/* One read's frames or more, in memory: the intake's own (cur), queued for the writer, or being stored */
struct mem_batch {
	struct mem_batch *next;
	uint64_t arrival_ns; /* when its first bytes were read */
	size_t len;          /* whole frames (and garbage between them) walked: what is handed on */
	size_t ilen;         /* bytes read, the last frame's start among them when it is not whole yet */
	uint64_t frames, records;
	uint8_t buf[];       /* BATCH_CAP */
};

struct cprof_spool {
	int fd;
	struct cprof_ingest *in;
	pthread_t writer;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* under lock: the spool holds [rd, end); the writer is between taking a range and storing it */
	uint64_t rd, end, punched;
	int reading, writing, waiting, intake_done;
	/* under lock: batches in memory, older than anything in the file, and buffers to reuse; in_file once a
	 * batch went to the file, until the writer has emptied it (the order of batches is the order of frames) */
	struct mem_batch *mq_head, **mq_tail, *mfree;
	size_t mq_n, nfree;
	uint64_t mq_bytes;
	int in_file;
	atomic_int intake_done_flag; /* intake_done, read without the lock between an idle writer's slices */
	uint64_t deadline_ns;
	atomic_int failed;
	/* the writer's progress, kept here so that the intake thread can carry on where an idle-priority writer
	 * thread stopped (see writer_main) */
	struct {
		uint8_t *buf;
		const uint8_t *data;     /* the batch being stored: buf (read from the file) or node's */
		struct mem_batch *node;
		int counting, first_rows, hold, idle, lowered;
		uint64_t catchup_from;
		uint64_t cpu_ns;         /* CPU of the writer thread before the hand-over */
		uint64_t from, len, off; /* the batch being stored: spool offset, bytes of frames, bytes done */
	} w;
	/* intake's own: the batch being read into */
	struct mem_batch *cur;
	int run_ended;
	int warned_full;
	uint32_t live_pids[SPOOL_LIVE_MAX]; /* said HELLO and no BYE yet (a process left running keeps writing) */
	size_t nlive;
	uint64_t cpu0;           /* the intake thread's CPU before its first read (the store's set-up is not intake) */
	uint64_t max_bytes;      /* CPROF_SPOOL_MAX_MB: the disk the spool may take; 0 = what the disk has */
	pid_t run_pid;           /* cprof-run: HELLOs are checked against it (0: not checked) */
	struct ring_src *rings;  /* the intake's: processes' shared-memory rings */
	size_t nrings, rings_cap;
	uint8_t *hold;           /* the intake's: FIFO bytes not walked yet, set aside while a ring's frames go in */
	int warned_ring;
	int refuse_rings;        /* CPROF_SPOOL_NO_RINGS */
	struct cprof_spool_stats st;
};

/* PPid and real uid from /proc/PID/status; -1 when the process is gone */
static int proc_status(uint32_t pid, pid_t *ppid, uid_t *uid)
{
	char path[64], buf[2048], *l;
	int got = 0;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (cprof_read_proc(path, buf, sizeof(buf)) < 0)
		return -1;
	if ((l = strstr(buf, "\nPPid:")) != NULL) {
		*ppid = (pid_t)strtol(l + 6, NULL, 10);
		got++;
	}
	if ((l = strstr(buf, "\nUid:")) != NULL) {
		*uid = (uid_t)strtoul(l + 5, NULL, 10);
		got++;
	}
	return got == 2 ? 0 : -1;
}

enum cprof_hello_evidence cprof_hello_evidence(uint32_t pid, pid_t run_pid, uid_t uid)
{
	pid_t cur = (pid_t)pid, ppid;
	uid_t who;
	int depth;

	if (pid == 0 || proc_status(pid, &ppid, &who) < 0)
		return CPROF_HELLO_GONE;
	if (who != uid)
		return CPROF_HELLO_SUSPECT;
	/* up the parents: a process of the run has cprof-run above it */
	for (depth = 0; depth < 256; depth++) {
		if (cur == run_pid)
			return CPROF_HELLO_OK;
		if (cur <= 1 || proc_status((uint32_t)cur, &ppid, &who) < 0)
			break;
		cur = ppid;
	}
	return CPROF_HELLO_SUSPECT;
}

void cprof_spool_check_hellos(struct cprof_spool *sp, pid_t run_pid)
{
	sp->run_pid = run_pid;
}

/* pid's place among the processes that said HELLO and no BYE; sp->nlive when it is not one */
static size_t live_find(const struct cprof_spool *sp, uint32_t pid)
{
	size_t i;

	for (i = 0; i < sp->nlive && sp->live_pids[i] != pid; i++)
		;
	return i;
}

static void live_update(struct cprof_spool *sp, uint16_t type, uint32_t pid)
{
	size_t i;

	if (type == CPROF_MSG_HELLO && sp->run_pid && cprof_hello_evidence(pid, sp->run_pid, getuid()) == CPROF_HELLO_SUSPECT) {
		if (sp->st.suspect_hellos < sizeof(sp->st.suspect_pids) / sizeof(sp->st.suspect_pids[0]))
			sp->st.suspect_pids[sp->st.suspect_hellos] = pid;
		sp->st.suspect_hellos++;
		/* not waited for at the end: a HELLO naming init would hold the run for the whole grace period */
		return;
	}

	i = live_find(sp, pid);
	if (type == CPROF_MSG_HELLO && i == sp->nlive && sp->nlive < SPOOL_LIVE_MAX)
		sp->live_pids[sp->nlive++] = pid;
	else if (type == CPROF_MSG_BYE && i < sp->nlive)
		sp->live_pids[i] = sp->live_pids[--sp->nlive];
}

/* The spool is a sequence of batches, each one read of the FIFO's whole frames behind this header. */
struct batch_hdr {
	uint32_t magic;
	uint32_t len;        /* bytes of frames that follow */
	uint64_t arrival_ns; /* when they were read: LOST records say when the drops were reported */
};
#define BATCH_MAGIC 0x4c4f5053u /* "SPOL" */

struct walk {
	uint64_t frames, records;
	int run_end;
	struct cprof_spool *live; /* the intake's walk: keeps the set of processes that said HELLO, not BYE */
	int from_ring;            /* the intake's walk of a ring's frames: no RING or KICK among them */
	int no_splice_first;      /* the first frame was stopped at already: its ring has been taken */
	struct ring_src *splice;  /* set where the walk stopped: this ring's frames go in before the next frame */
	int ring_done;            /* a ring's walk met its process's last BYE */
};

static struct ring_src *ring_of(struct cprof_spool *sp, uint32_t pid)
{
	size_t i;

	for (i = 0; i < sp->nrings; i++)
		if (sp->rings[i].pid == pid)
			return &sp->rings[i];
	return NULL;
}

/* The producer is told (attached = 2) and goes back to the FIFO should it write again. */
static void ring_close(struct cprof_spool *sp, struct ring_src *rs)
{
	atomic_store_explicit(&rs->r.hdr->attached, 2, memory_order_release);
	munmap(rs->map, rs->map_len);
	*rs = sp->rings[--sp->nrings];
}

static void ring_warn(struct cprof_spool *sp, uint32_t pid, const char *what, int err)
{
	if (!sp->warned_ring++)
		pr_warn("process %u's shared-memory ring %s (%s): its frames come through the FIFO", pid, what,
			strerror(err));
}

/* A RING from pid: its memfd, opened through /proc as a path with no side effects first (O_PATH), taken only
 * when it is a regular file of ours sealed against shrinking (so that a mapping of it can never fault), mapped,
 * and marked attached: the process sends its frames there from its next KICK. Any failure leaves it on the
 * FIFO, which it never left. */
static void ring_open(struct cprof_spool *sp, uint32_t pid, const struct cprof_wire_ring *m)
{
	char path[96];
	struct stat st;
	struct statfs fs;
	struct ring_src rs = { .pid = pid };
	size_t len = CPROF_SHMRING_DATA + (size_t)m->size;
	int o = -1, fd = -1, seals;

	if (sp->refuse_rings) {
		ring_warn(sp, pid, "is refused", EPERM);
		return;
	}
	/* a process that did not say HELLO (or whose HELLO was suspect) has nothing to send */
	if (live_find(sp, pid) == sp->nlive || m->fd < 0 || m->size < CPROF_SHMRING_MIN || m->size > CPROF_SHMRING_MAX ||
	    (m->size & (m->size - 1)))
		return;
	/* where ring_splice sets the FIFO's unwalked bytes aside while a ring's frames go in before them: had to be
	 * had first, or a ring's frames could follow the FIFO frame they precede (until 2026-12-06 it was allocated
	 * at the first splice, and a failed malloc there let the FIFO frame go first) */
	if (sp->hold == NULL && (sp->hold = malloc(BATCH_CAP)) == NULL) {
		ring_warn(sp, pid, "is not taken", ENOMEM);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%u/task/%u/fd/%d", pid, m->tid, m->fd);
	o = open(path, O_PATH | O_CLOEXEC);
	if (o < 0) {
		/* gone already (a short process, ended before its RING was read): nothing to say */
		if (errno != ENOENT)
			ring_warn(sp, pid, "cannot be opened", errno);
		return;
	}
	/* a memfd lives in shmem: a file on another file system (a FUSE or NFS mount, whose open may hang) is
	 * never opened */
	if (fstat(o, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (size_t)st.st_size != len ||
	    fstatfs(o, &fs) < 0 || fs.f_type != TMPFS_MAGIC) {
		ring_warn(sp, pid, "is not a ring", EINVAL);
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", o);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ring_warn(sp, pid, "cannot be opened", errno);
		goto out;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) < 0 || (size_t)st.st_size != len) {
		ring_warn(sp, pid, "is not sealed", EINVAL);
		goto out;
	}
	rs.map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (rs.map == MAP_FAILED) {
		ring_warn(sp, pid, "cannot be mapped", errno);
		goto out;
	}
	rs.map_len = len;
	rs.checked_ns = cprof_now_ns();
	if (cprof_shmring_attach(&rs.r, rs.map, m->size) < 0) {
		munmap(rs.map, len);
		ring_warn(sp, pid, "has a wrong header", EINVAL);
		goto out;
	}
	if (sp->nrings == sp->rings_cap) {
		size_t cap = sp->rings_cap ? 2 * sp->rings_cap : 8;
		struct ring_src *n = realloc(sp->rings, cap * sizeof(*n));

		if (n == NULL) {
			munmap(rs.map, len);
			goto out;
		}
		sp->rings = n;
		sp->rings_cap = cap;
	}
	sp->rings[sp->nrings++] = rs;
	atomic_store_explicit(&rs.r.hdr->attached, 1, memory_order_release);
	sp->st.rings++;
out:
	if (fd >= 0)
		close(fd);
	close(o);
}

static int hdr_ok(const struct cprof_wire_hdr *h)
{
	return h->magic == CPROF_WIRE_MAGIC && h->version == CPROF_WIRE_VERSION && h->type != 0 &&
	       h->type < CPROF_MSG__MAX && h->len >= sizeof(*h) && h->len <= CPROF_WIRE_MAX_FRAME;
}

/* The bytes at the start of buf that are whole frames (and garbage between them, which the writer's
 * ingest resynchronises on as it always did): the spool only ever gets or drops whole frames. Only the
 * header is looked at here; the writer validates the payloads. */
static size_t walk(const uint8_t *buf, size_t len, struct walk *w)
{
	size_t off = 0;

	while (len - off >= sizeof(struct cprof_wire_hdr)) {
		struct cprof_wire_hdr h;

		memcpy(&h, buf + off, sizeof(h));
		if (!hdr_ok(&h)) {
			const uint8_t *next = cprof_wire_find_magic(buf + off + 1, len - off - 1);

			/* no magic: keep the last 3 bytes, they may start one */
			off = next ? (size_t)(next - buf) : len - 3;
			if (!next)
				break;
			continue;
		}
		if (!w->from_ring) {
			/* a frame cut short goes to the writer as it is: its ingest counts it and resynchronises (a ring
			 * has only whole frames: its producer publishes nothing else) */
			size_t cut = cprof_wire_torn(buf + off, len - off);

			if (cut) {
				off += cut;
				continue;
			}
		}
		if (len - off < h.len)
			break;
		if (w->live && !w->from_ring) {
			struct ring_src *rs = ring_of(w->live, h.pid);

			/* what the process put in its ring before it wrote this frame goes first */
			if (rs && rs->switched && !rs->dead && !w->no_splice_first &&
			    cprof_shmring_avail(&rs->r) != 0) {
				w->splice = rs;
				break;
			}
			w->no_splice_first = 0;
			if (h.type == CPROF_MSG_KICK && rs && !rs->switched)
				rs->switched = 1;
			else if (h.type == CPROF_MSG_HELLO && rs)
				rs->replaceable = 1;
			else if (h.type == CPROF_MSG_RING && h.count == 1 && h.len == sizeof(h) + sizeof(struct cprof_wire_ring) &&
				 (rs == NULL || rs->replaceable)) {
				struct cprof_wire_ring m;

				/* a new image after exec, or a pid used again (its HELLO came first): the old ring was taken
				 * above. A RING for a pid whose ring is in use is forged: ignored */
				if (rs)
					ring_close(w->live, rs);
				memcpy(&m, buf + off + sizeof(h), sizeof(m));
				ring_open(w->live, h.pid, &m);
			}
		} else if (w->from_ring && h.type == CPROF_MSG_BYE && h.len >= sizeof(h) + sizeof(struct cprof_wire_bye)) {
			struct cprof_wire_bye b;

			memcpy(&b, buf + off + sizeof(h), sizeof(b));
			/* a process done for good (not an exec, which may fail and go on here) writes no more */
			if (b.reason != CPROF_BYE_EXEC)
				w->ring_done = 1;
		}
		if (h.type == CPROF_MSG_API || h.type == CPROF_MSG_GPU)
			w->records += h.count;
		else if (h.type == CPROF_MSG_RUN_END)
			w->run_end = 1;
		else if (w->live && (h.type == CPROF_MSG_HELLO || h.type == CPROF_MSG_BYE))
			live_update(w->live, h.type, h.pid);
		w->frames++;
		off += h.len;
	}
	return off;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int pread_all(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += n;
	}
	return 0;
}

static struct mem_batch *batch_alloc(void)
{
	struct mem_batch *b = malloc(sizeof(*b) + BATCH_CAP);

	if (b)
		memset(b, 0, sizeof(*b));
	return b;
}

/* A buffer for the intake's next batch: one the writer gave back, or a new one (NULL: out of memory) */
static struct mem_batch *batch_get(struct cprof_spool *sp)
{
	struct mem_batch *b;

	pthread_mutex_lock(&sp->lock);
	if ((b = sp->mfree) != NULL) {
		sp->mfree = b->next;
		sp->nfree--;
	}
	pthread_mutex_unlock(&sp->lock);
	if (b == NULL)
		return batch_alloc();
	memset(b, 0, sizeof(*b));
	return b;
}

/* Under the lock: keeps a stored batch's buffer for reuse, or returns it for the caller to free */
static struct mem_batch *batch_put_locked(struct cprof_spool *sp, struct mem_batch *b)
{
	if (sp->nfree >= MEM_FREE)
		return b;
	b->next = sp->mfree;
	sp->mfree = b;
	sp->nfree++;
	return NULL;
}

/* ---- writer thread ---- */

/* While the run goes on, the writer competes with the program for the CPU; it must never win (issue 26):
 * SCHED_IDLE, or nice 19 where that is refused. An unprivileged thread cannot get its priority back, so at
 * the end of the intake the writer stops between two slices and the intake thread, at normal priority,
 * stores the rest (cprof_spool_finish). CPROF_WRITER_PRIORITY=normal keeps the writer at normal priority. */
#define SLICE_BYTES (64u << 10) /* an idle writer's unit of work: what it may hold when the hand-over comes */

static const char *writer_lower_priority(void)
{
	const char *want = getenv("CPROF_WRITER_PRIORITY");
	struct sched_param sp = { 0 };

	if (want && strcmp(want, "normal") == 0)
		return "normal";
	if (sched_setscheduler(0, SCHED_IDLE, &sp) == 0) /* 0: this thread */
		return "idle";
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19) == 0)
		return "nice 19";
	return "normal";
}

/* The end of the whole frames in buf[off, len) that fit in about SLICE_BYTES (at least one frame). */
static size_t slice_end(const uint8_t *buf, size_t off, size_t len)
{
	size_t end = off;

	while (len - end >= sizeof(struct cprof_wire_hdr)) {
		struct cprof_wire_hdr h;

		memcpy(&h, buf + end, sizeof(h));
		/* garbage goes whole to the ingest, which resynchronises on it as before */
		if (!hdr_ok(&h) || len - end < h.len)
			return len;
		if (end > off && end + h.len - off > SLICE_BYTES)
			break;
		end += h.len;
	}
	return end > off ? end : len;
}

static void store_slice(struct cprof_spool *sp, const uint8_t *buf, size_t len)
{
	struct cprof_store *store = sp->in->store;

	if (sp->w.counting) {
		struct walk w = { 0 };

		walk(buf, len, &w);
		sp->st.lost_unstored_records += w.records;
		return;
	}
	if (cprof_ingest_feed(sp->in, buf, len) < 0) {
		/* the store failed (disk full): what is left is counted, not stored */
		atomic_store(&sp->failed, 1);
		sp->in->store_failed = 1;
		sp->w.counting = 1;
	}
	/* the run's first rows are committed at once, at normal priority: a collector killed early still leaves
	 * some; only then does the writer step back (an idle writer on a busy machine would commit nothing) */
	if (!sp->w.first_rows && cprof_store_rows(store) > 0) {
		sp->w.first_rows = 1;
		if (cprof_store_commit(store, 1) < 0 && !atomic_exchange(&sp->failed, 1)) {
			sp->in->store_failed = 1;
			sp->w.counting = 1;
		}
		if (sp->w.idle && !sp->w.lowered) {
			sp->st.writer_priority = writer_lower_priority();
			sp->w.lowered = 1;
		}
	}
}

/* Stores the spool until it is empty and the intake is done (returns 0), or, for the idle-priority thread,
 * until the intake is done (returns 1: the caller hands over). */
static int writer_loop(struct cprof_spool *sp, int idle)
{
	struct cprof_store *store = sp->in->store;
	struct batch_hdr bh;

	for (;;) {
		uint64_t from, take, punch_to = 0, punch_from = 0;
		int done = 0;

		if (sp->w.len == 0) {
			pthread_mutex_lock(&sp->lock);
			while (!sp->intake_done && ((sp->rd == sp->end && sp->mq_head == NULL) || sp->w.hold)) {
				struct timespec ts;

				sp->waiting = 1;
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += IDLE_MS * 1000000l;
				if (ts.tv_nsec >= 1000000000l) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000l;
				}
				if (pthread_cond_timedwait(&sp->wake, &sp->lock, &ts) == ETIMEDOUT && !sp->w.counting) {
					sp->waiting = 0;
					pthread_mutex_unlock(&sp->lock);
					if (cprof_store_commit(store, 0) < 0 && !atomic_exchange(&sp->failed, 1)) {
						sp->in->store_failed = 1;
						sp->w.counting = 1;
					}
					pthread_mutex_lock(&sp->lock);
				}
			}
			sp->waiting = 0;
			if (sp->intake_done && idle) {
				pthread_mutex_unlock(&sp->lock);
				return 1;
			}
			if (sp->intake_done && sp->w.catchup_from == 0)
				sp->w.catchup_from = cprof_now_ns();
			if (sp->deadline_ns && !sp->w.counting && cprof_now_ns() > sp->deadline_ns)
				sp->w.counting = 1;
			if (sp->mq_head != NULL) {
				/* memory first: every batch there is older than anything in the file */
				struct mem_batch *node = sp->mq_head;

				sp->mq_head = node->next;
				if (sp->mq_head == NULL)
					sp->mq_tail = &sp->mq_head;
				sp->mq_n--;
				pthread_mutex_unlock(&sp->lock);
				sp->w.node = node;
				sp->w.data = node->buf;
				sp->w.len = node->len;
				sp->w.off = 0;
				sp->in->arrival_ns = node->arrival_ns;
				goto store;
			}
			if (sp->rd == sp->end)
				done = 1;
			from = sp->rd;
			sp->reading = !done;
			pthread_mutex_unlock(&sp->lock);
			if (done)
				return 0;

			if (sp->w.buf == NULL || pread_all(sp->fd, (uint8_t *)&bh, sizeof(bh), from) < 0 ||
			    bh.magic != BATCH_MAGIC || bh.len > IN_CAP + CPROF_WIRE_MAX_FRAME ||
			    pread_all(sp->fd, sp->w.buf, bh.len, from + sizeof(bh)) < 0) {
				/* an unreadable spool (out of memory, an I/O error): what it holds is lost, and counted */
				pr_err("cannot read the spool: %s", sp->w.buf ? strerror(errno) : "out of memory");
				pthread_mutex_lock(&sp->lock);
				take = sp->end - from;
				pthread_mutex_unlock(&sp->lock);
				sp->st.lost_unstored_records += take / sizeof(struct cprof_wire_api); /* an estimate */
				sp->w.counting = 1;
				sp->w.from = from;
				sp->w.off = sp->w.len = 0;
				goto stored;
			}
			sp->w.from = from;
			sp->w.data = sp->w.buf;
			sp->w.len = bh.len;
			sp->w.off = 0;
			sp->in->arrival_ns = bh.arrival_ns;
		} else if (sp->deadline_ns && !sp->w.counting && cprof_now_ns() > sp->deadline_ns) {
			sp->w.counting = 1; /* a batch the idle writer had begun, taken over after the deadline */
		}
	store:
		/* the batch in slices: an idle writer starved mid-batch holds up the hand-over by one slice at most */
		while (sp->w.off < sp->w.len) {
			size_t end = idle ? slice_end(sp->w.data, sp->w.off, sp->w.len) : sp->w.len;

			store_slice(sp, sp->w.data + sp->w.off, end - sp->w.off);
			sp->w.off = end;
			if (idle && sp->w.off < sp->w.len && atomic_load_explicit(&sp->intake_done_flag, memory_order_acquire))
				return 1;
		}
		sp->in->arrival_ns = 0;
		if (sp->w.node != NULL) {
			struct mem_batch *gone;

			pthread_mutex_lock(&sp->lock);
			sp->mq_bytes -= sp->w.node->len;
			gone = batch_put_locked(sp, sp->w.node);
			pthread_mutex_unlock(&sp->lock);
			free(gone);
			sp->w.node = NULL;
			sp->w.len = sp->w.off = 0;
			continue;
		}
		take = sizeof(bh) + sp->w.len;
		sp->w.len = sp->w.off = 0;
	stored:
		from = sp->w.from;
		pthread_mutex_lock(&sp->lock);
		sp->rd = from + take;
		if (sp->rd - sp->punched >= PUNCH_BYTES) {
			punch_from = sp->punched;
			punch_to = sp->rd & ~(uint64_t)4095;
			sp->punched = punch_to;
		}
		pthread_mutex_unlock(&sp->lock);
		/* still reading: the intake does not empty the file under us */
		if (punch_to > punch_from)
			fallocate(sp->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)punch_from,
				  (off_t)(punch_to - punch_from));
		pthread_mutex_lock(&sp->lock);
		sp->reading = 0;
		/* caught up, and the intake is not writing: the file is emptied here too, so that it stays small */
		if (sp->rd == sp->end && !sp->writing && sp->end > 0 && ftruncate(sp->fd, 0) == 0) {
			sp->rd = sp->end = sp->punched = 0;
			sp->st.resets++;
		}
		pthread_mutex_unlock(&sp->lock);
	}
}

static void *writer_main(void *arg)
{
	struct cprof_spool *sp = arg;

	const char *want = getenv("CPROF_WRITER_PRIORITY");

	/* lowered after the first commit (store_slice); "normal" until then */
	sp->st.writer_priority = "normal";
	sp->w.idle = !(want && strcmp(want, "normal") == 0);
	writer_loop(sp, sp->w.idle);
	sp->w.cpu_ns = thread_cpu_ns();
	return NULL;
}

/* ---- intake ---- */

static int spool_file(const char *db_path)
{
	char dir[PATH_MAX], tmpl[PATH_MAX + 16];
	const char *slash = strrchr(db_path, '/');
	int fd;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == db_path ? 1 : (int)(slash - db_path), db_path);
	/* beside the profile (its disk, its quota), and never left behind, even by a SIGKILL */
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	snprintf(tmpl, sizeof(tmpl), "%s.spool.XXXXXX", db_path);
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(tmpl);
	return fd;
}

int cprof_spool_open(struct cprof_spool **out, const char *db_path, struct cprof_ingest *in)
{
	struct cprof_spool *sp = calloc(1, sizeof(*sp));
	sigset_t all, old;
	int ret;

	if (sp == NULL)
		return -ENOMEM;
	sp->in = in;
	sp->mq_tail = &sp->mq_head;
	if (getenv("CPROF_SPOOL_MAX_MB"))
		sp->max_bytes = strtoull(getenv("CPROF_SPOOL_MAX_MB"), NULL, 10) << 20;
	sp->cur = batch_alloc();
	if (sp->cur == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	sp->fd = spool_file(db_path);
	if (sp->fd < 0) {
		ret = sp->fd;
		pr_err("cannot create the spool beside %s: %s", db_path, strerror(-ret));
		goto out;
	}
	/* a test knob: store nothing until the target is gone, as a writer far behind would */
	sp->w.hold = getenv("CPROF_SPOOL_HOLD") != NULL;
	/* another: leave every process on the FIFO, as a collector that cannot open their rings would */
	sp->refuse_rings = getenv("CPROF_SPOOL_NO_RINGS") != NULL;
	sp->w.buf = malloc(IN_CAP + CPROF_WIRE_MAX_FRAME);
	pthread_mutex_init(&sp->lock, NULL);
	pthread_cond_init(&sp->wake, NULL);
	/* signals (SIGTERM, cprof-run's SIGUSR1) stay with the intake thread, whose loop acts on them */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&sp->writer, NULL, writer_main, sp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret < 0) {
		close(sp->fd);
		free(sp->w.buf);
		goto out;
	}
	sp->cpu0 = thread_cpu_ns();
	*out = sp;
	return 0;
out:
	free(sp->cur);
	free(sp);
	return ret;
}

/* Empties the file when the writer has stored all of it: the spool then stays small while the writer keeps up. */
static int try_reset(struct cprof_spool *sp)
{
	int done = 0;

	pthread_mutex_lock(&sp->lock);
	if (sp->rd == sp->end && !sp->reading && sp->end > 0 && ftruncate(sp->fd, 0) == 0) {
		sp->rd = sp->end = sp->punched = 0;
		sp->st.resets++;
		done = 1;
	}
	pthread_mutex_unlock(&sp->lock);
	return done;
}

static int append(struct cprof_spool *sp, const uint8_t *buf, size_t len, uint64_t at)
{
	struct batch_hdr bh = { .magic = BATCH_MAGIC, .len = (uint32_t)len, .arrival_ns = cprof_now_ns() };
	size_t put = 0, total = sizeof(bh) + len;

	while (put < total) {
		struct iovec iov[2] = { { (uint8_t *)&bh + put, put < sizeof(bh) ? sizeof(bh) - put : 0 },
					{ (uint8_t *)buf + (put > sizeof(bh) ? put - sizeof(bh) : 0),
					  put > sizeof(bh) ? total - put : len } };
		ssize_t n = put < sizeof(bh) ? pwritev(sp->fd, iov, 2, (off_t)(at + put))
					     : pwrite(sp->fd, iov[1].iov_base, iov[1].iov_len, (off_t)(at + put));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : ENOSPC;

			/* a torn frame would cost its producer its stream: cut the partial write off */
			if (put && ftruncate(sp->fd, (off_t)at) < 0) {
				/* the frames before it stay valid; the torn one is a malformed frame to the writer */
			}
			return -err;
		}
		put += n;
	}
	return 0;
}

/* To the file: buf's whole frames; when there is no room for them they are dropped, and counted by cause. */
static void file_out(struct cprof_spool *sp, const uint8_t *buf, size_t len, uint64_t frames, uint64_t records)
{
	uint64_t at, lag, foot = sizeof(struct batch_hdr) + len;
	int err;

	pthread_mutex_lock(&sp->lock);
	at = sp->end;
	sp->writing = 1;
	sp->in_file = 1; /* what comes next goes after this, until the writer has emptied the file */
	pthread_mutex_unlock(&sp->lock);
	if (at >= RESET_BYTES && try_reset(sp))
		at = 0;
	err = sp->max_bytes && at + foot > sp->max_bytes ? -ENOSPC : append(sp, buf, len, at);
	if (err < 0 && at > 0 && try_reset(sp)) {
		at = 0;
		err = sp->max_bytes && foot > sp->max_bytes ? -ENOSPC : append(sp, buf, len, at);
	}
	if (err < 0) {
		pthread_mutex_lock(&sp->lock);
		sp->writing = 0;
		pthread_mutex_unlock(&sp->lock);
		if (!sp->warned_full++)
			pr_warn("cannot write the profile's spool (%s): events are dropped and counted as lost until there is room",
				strerror(-err));
		sp->st.lost_full_records += records;
		sp->st.lost_full_frames += frames;
		return;
	}
	sp->st.bytes += len;
	sp->st.frames += frames;
	sp->st.records += records;
	pthread_mutex_lock(&sp->lock);
	sp->end = at + foot;
	sp->writing = 0;
	lag = sp->end - sp->rd + sp->mq_bytes;
	if (sp->waiting)
		pthread_cond_signal(&sp->wake);
	pthread_mutex_unlock(&sp->lock);
	if (lag > sp->st.peak_lag_bytes)
		sp->st.peak_lag_bytes = lag;
}

enum { OUT_READY, OUT_END, OUT_NOW };

/* Hands the intake's batch on once the writer waits for it, it is nearly full or HAND_MS old (a busy writer
 * gets fewer, bigger batches): in memory while the writer keeps up, else through the file. The frame not
 * whole yet starts the next batch. OUT_END: everything read goes, a torn last frame too; OUT_NOW: the whole
 * frames go now (a ring's frames need the room). */
static void spool_out(struct cprof_spool *sp, int how)
{
	struct mem_batch *c = sp->cur, *next = NULL;
	int end = how == OUT_END;
	size_t len = end ? c->ilen : c->len, tail = c->ilen - len;
	uint64_t lag;
	int mem;

	if (len == 0)
		return;
	pthread_mutex_lock(&sp->lock);
	if (how == OUT_READY && !sp->waiting && BATCH_CAP - c->ilen >= LOW_ROOM &&
	    cprof_now_ns() - c->arrival_ns < HAND_MS * 1000000ull) {
		pthread_mutex_unlock(&sp->lock);
		return;
	}
	if (sp->in_file && sp->rd == sp->end && !sp->reading && sp->mq_head == NULL)
		sp->in_file = 0;
	mem = !sp->in_file && sp->mq_n < MEM_BATCHES &&
	      (!sp->max_bytes || sp->end - sp->rd + sp->mq_bytes + len <= sp->max_bytes);
	pthread_mutex_unlock(&sp->lock);
	if (mem && !end && (next = batch_get(sp)) == NULL)
		mem = 0;
	if (!mem) {
		file_out(sp, c->buf, len, c->frames, c->records);
		memmove(c->buf, c->buf + len, tail);
		c->ilen = tail;
		c->len = 0;
		c->frames = c->records = 0;
		c->arrival_ns = tail ? cprof_now_ns() : 0;
		return;
	}
	if (next) {
		memcpy(next->buf, c->buf + len, tail);
		next->ilen = tail;
		next->arrival_ns = tail ? cprof_now_ns() : 0;
	}
	c->len = len;
	c->next = NULL;
	sp->st.bytes += len;
	sp->st.frames += c->frames;
	sp->st.records += c->records;
	pthread_mutex_lock(&sp->lock);
	*sp->mq_tail = c;
	sp->mq_tail = &c->next;
	sp->mq_n++;
	sp->mq_bytes += len;
	lag = sp->end - sp->rd + sp->mq_bytes;
	if (sp->waiting)
		pthread_cond_signal(&sp->wake);
	pthread_mutex_unlock(&sp->lock);
	sp->cur = next;
	if (lag > sp->st.peak_lag_bytes)
		sp->st.peak_lag_bytes = lag;
}

/* Ring rs's frames into the intake's batch at the end of what was walked; the FIFO's bytes not walked yet go
 * after them. */
static void ring_splice(struct cprof_spool *sp, struct ring_src *rs)
{
	struct mem_batch *c = sp->cur;
	size_t rest = c->ilen - c->len;
	/* what it holds now, not what it may go on publishing: the FIFO waits for no producer */
	uint64_t left = cprof_shmring_avail(&rs->r);
	int corrupt = 0;

	if (rest) {
		memcpy(sp->hold, c->buf + c->len, rest); /* ring_open had it before any ring was taken */
		c->ilen = c->len;
	}
	for (;;) {
		struct walk w = { .live = sp, .from_ring = 1 };
		size_t got;

		c = sp->cur;
		if (c->ilen == 0)
			c->arrival_ns = cprof_now_ns();
		got = cprof_shmring_take(&rs->r, c->buf + c->ilen, BATCH_CAP - c->ilen, left, &corrupt);
		left -= got;
		walk(c->buf + c->ilen, got, &w);
		c->ilen += got;
		c->len = c->ilen; /* whole frames, each header checked: anything odd in them is the writer's to count */
		c->frames += w.frames;
		c->records += w.records;
		sp->st.ring_bytes += got;
		if (corrupt) {
			rs->dead = 1;
			atomic_store_explicit(&rs->r.hdr->attached, 2, memory_order_release); /* back to the FIFO */
			ring_warn(sp, rs->pid, "is corrupt", EBADMSG);
			break;
		}
		if (w.ring_done && cprof_shmring_avail(&rs->r) == 0) {
			ring_close(sp, rs);
			break;
		}
		if (left == 0)
			break;
		if (got == 0 && c->len == 0)
			break; /* cannot be: a frame always fits an empty batch */
		spool_out(sp, OUT_NOW);
		if (sp->cur == NULL)
			return;
	}
	c = sp->cur;
	if (rest) {
		if (BATCH_CAP - c->ilen < rest) {
			spool_out(sp, OUT_NOW);
			c = sp->cur;
		}
		memcpy(c->buf + c->ilen, sp->hold, rest);
		if (c->ilen == 0)
			c->arrival_ns = cprof_now_ns();
		c->ilen += rest;
	}
}

#define RING_GONE_EVERY_NS 1000000000ull

/* Every ring's frames, at the end of what was walked: a process's KICK may be late or lost (a full pipe). An
 * empty ring whose process is gone (killed, crashed, its BYE in a file) is unmapped, once a second asked. */
static void splice_all(struct cprof_spool *sp)
{
	uint64_t now = cprof_now_ns();
	size_t i;

	for (i = 0; i < sp->nrings && sp->cur; i++) {
		struct ring_src *rs = &sp->rings[i];
		size_t n = sp->nrings;

		if (rs->switched && !rs->dead && cprof_shmring_avail(&rs->r) != 0)
			ring_splice(sp, rs);
		else if (now - rs->checked_ns >= RING_GONE_EVERY_NS) {
			rs->checked_ns = now;
			if (kill((pid_t)rs->pid, 0) < 0 && errno == ESRCH)
				ring_close(sp, rs);
		}
		if (sp->nrings < n)
			i--; /* closed: another one took its place */
	}
}

/* Walks what the intake's batch holds past its walked part, taking rings' frames in where they belong. */
static void walk_cur(struct cprof_spool *sp)
{
	int again = 0;

	while (sp->cur) {
		struct mem_batch *c = sp->cur;
		struct walk w = { .live = sp, .no_splice_first = again };
		size_t used = walk(c->buf + c->len, c->ilen - c->len, &w);

		c->len += used;
		c->frames += w.frames;
		c->records += w.records;
		if (w.run_end)
			sp->run_ended = 1;
		if (w.splice == NULL)
			break;
		ring_splice(sp, w.splice);
		again = 1;
	}
	splice_all(sp);
}

ssize_t cprof_spool_intake(struct cprof_spool *sp, int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct mem_batch *c = sp->cur;
	ssize_t n;
	int r, err;

	/* frames held back for a busy writer go on within HAND_MS, whether more come or not */
	if (c->len && (timeout_ms < 0 || timeout_ms > HAND_MS))
		timeout_ms = HAND_MS;
	r = poll(&p, 1, timeout_ms);
	if (r <= 0) {
		err = r < 0 && errno != EINTR ? -errno : 0;
		splice_all(sp);
		spool_out(sp, OUT_READY);
		return err;
	}
	n = read(fd, c->buf + c->ilen, BATCH_CAP - c->ilen);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (n > 0 && c->ilen == 0)
		c->arrival_ns = cprof_now_ns();
	c->ilen += n;
	walk_cur(sp);
	if (sp->cur)
		spool_out(sp, OUT_READY);
	return n;
}

size_t cprof_spool_live(const struct cprof_spool *sp, const uint32_t **pids)
{
	*pids = sp->live_pids;
	return sp->nlive;
}

int cprof_spool_run_ended(const struct cprof_spool *sp)
{
	return sp->run_ended;
}

int cprof_spool_failed(const struct cprof_spool *sp)
{
	return atomic_load(&((struct cprof_spool *)sp)->failed);
}

int cprof_spool_finish(struct cprof_spool *sp, uint64_t deadline_ns, struct cprof_spool_stats *st)
{
	struct mem_batch *b;
	int failed;

	/* what the rings still hold (a process killed before its KICK), then a torn frame at the end goes to the
	 * writer too: its ingest counts it as malformed, as before */
	splice_all(sp);
	if (sp->cur)
		spool_out(sp, OUT_END);
	sp->st.intake_cpu_ns = thread_cpu_ns() - sp->cpu0;
	{
		/* the writer's CPU so far was taken while the program ran (the intake ends with the run) */
		clockid_t cid;
		struct timespec ts;

		if (pthread_getcpuclockid(sp->writer, &cid) == 0 && clock_gettime(cid, &ts) == 0)
			sp->st.writer_run_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	pthread_mutex_lock(&sp->lock);
	sp->intake_done = 1;
	atomic_store_explicit(&sp->intake_done_flag, 1, memory_order_release);
	sp->deadline_ns = deadline_ns;
	pthread_cond_signal(&sp->wake);
	pthread_mutex_unlock(&sp->lock);
	pthread_join(sp->writer, NULL);
	sp->st.writer_cpu_ns = sp->w.cpu_ns;
	if (sp->w.idle) {
		/* the rest at this thread's normal priority: the program is gone, the finish is what the user waits for */
		uint64_t c0 = thread_cpu_ns();

		writer_loop(sp, 0);
		sp->st.writer_cpu_ns += thread_cpu_ns() - c0;
	}
	if (sp->w.catchup_from)
		sp->st.catchup_ns = cprof_now_ns() - sp->w.catchup_from;
	free(sp->w.buf);
	failed = atomic_load(&sp->failed);
	if (st)
		*st = sp->st;
	close(sp->fd);
	pthread_mutex_destroy(&sp->lock);
	pthread_cond_destroy(&sp->wake);
	free(sp->cur);
	while (sp->nrings)
		ring_close(sp, &sp->rings[0]);
	free(sp->rings);
	free(sp->hold);
	while ((b = sp->mfree) != NULL) {
		sp->mfree = b->next;
		free(b);
	}
	free(sp);
	return failed ? -EIO : 0;
}
