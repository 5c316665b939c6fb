/* Frame validation and dispatch: a malformed frame costs its producer's stream, never the collector. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprofd"
#include "common/api.h"
#include "common/clock.h"
#include "common/log.h"
#include "collector/ingest.h"
#include "collector/nvtx.h"

int cprof_ingest_init(struct cprof_ingest *in, struct cprof_store *store)
{
	memset(in, 0, sizeof(*in));
	in->store = store;
	in->bufcap = 1 << 20;
	in->buf = malloc(in->bufcap);
	return in->buf ? 0 : -ENOMEM;
}

void cprof_ingest_free(struct cprof_ingest *in)
{
	size_t i;

	cprof_nvtx_free(in);
	for (i = 0; i < in->nprod; i++)
		free(in->prod[i].strkeys), free(in->prod[i].strvals);
	free(in->prod);
	free(in->pidx);
	free(in->buf);
	memset(in, 0, sizeof(*in));
}

static void diag(struct cprof_ingest *in, uint32_t pid, const char *fmt, const char *what);

/* pid -> index + 1 in in->prod, open addressing at most half full: a job that starts 160k short processes
 * cost a scan of every producer so far per frame (quadratic: 57.7 s of writer CPU) */
static size_t pid_slot(const struct cprof_ingest *in, uint32_t pid)
{
	size_t mask = in->pidcap - 1, i = (pid * 2654435761u) & mask;

	while (in->pidx[i] && in->prod[in->pidx[i] - 1].pid != pid)
		i = (i + 1) & mask;
	return i;
}

static int pid_index_grow(struct cprof_ingest *in)
{
	size_t cap = in->pidcap ? in->pidcap * 2 : 64, old = in->pidcap, i;
	uint32_t *o = in->pidx, *n = calloc(cap, sizeof(*n));

	if (n == NULL)
		return -ENOMEM;
	in->pidx = n;
	in->pidcap = cap;
	for (i = 0; i < old; i++)
		if (o[i])
			in->pidx[pid_slot(in, in->prod[o[i] - 1].pid)] = o[i];
	free(o);
	return 0;
}

static struct cprof_producer *producer(struct cprof_ingest *in, uint32_t pid, int create)
{
	size_t slot;

	if (in->pidcap) {
		slot = pid_slot(in, pid);
		if (in->pidx[slot])
			return &in->prod[in->pidx[slot] - 1];
	}
	if (!create)
		return NULL;
	if (2 * (in->nprod + 1) > in->pidcap && pid_index_grow(in) < 0)
		return NULL;
	if (in->live >= CPROF_INGEST_MAX_LIVE) {
		if (in->refused_producers++ == 0)
			diag(in, pid, "%s", "too many processes alive at once: this one's frames were dropped");
		return NULL;
	}
	if (in->nprod == in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 16;
		struct cprof_producer *p = realloc(in->prod, cap * sizeof(*p));

		if (p == NULL)
			return NULL;
		in->prod = p;
		in->cap = cap;
	}
	memset(&in->prod[in->nprod], 0, sizeof(in->prod[0]));
	in->prod[in->nprod].pid = pid;
	in->pidx[pid_slot(in, pid)] = (uint32_t)(in->nprod + 1);
	return &in->prod[in->nprod++];
}

static void diag(struct cprof_ingest *in, uint32_t pid, const char *fmt, const char *what)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, what);
	pr_warn("pid %u: %s", pid, msg);
	if (cprof_store_diag(in->store, pid, msg) < 0)
		in->store_failed = 1;
}

static int store_ok(struct cprof_ingest *in, int ret)
{
	if (ret < 0)
		in->store_failed = 1;
	return ret;
}

static void end_producer(struct cprof_ingest *in, struct cprof_producer *p, const struct cprof_wire_bye *bye)
{
	if (p->proc_id == 0)
		return;
	store_ok(in, cprof_nvtx_process_end(in, p)); /* ranges still open, while p's strings are known */
	store_ok(in, cprof_store_process_end(in->store, p->proc_id, bye, p->recorded, p->lost, p->frames,
					     p->seq_gaps));
	p->ended = 1;
	if (in->live)
		in->live--;
}

static void on_hello(struct cprof_ingest *in, struct cprof_producer *p, const struct cprof_wire_hello *h)
{
	if (p->proc_id && !p->ended) {
		/* the same pid again without BYE: an exec the hooks did not see (syscall(SYS_execve)), or the pid
		 * reused after a SIGKILL. The old instance ends at its last event, not at 0, which no reader accepts. */
		struct cprof_wire_bye b = { .reason = CPROF_STORE_BYE_REPLACED, .emitted = p->recorded + p->lost,
					    .lost = p->lost, .end_ns = p->last_ns > p->start_ns ? p->last_ns : p->start_ns };

		end_producer(in, p, &b);
		in->replaced++;
	}
	free(p->strkeys);
	free(p->strvals);
	p->strkeys = NULL;
	p->strvals = NULL;
	p->strcap = p->strn = 0;
	p->strings = 0;
	p->recorded = p->lost = 0;
	p->frames = p->seq_gaps = 0;
	p->next_seq = 0;
	p->ended = 0;
	p->crashed = 0;
	p->start_ns = p->last_ns = h->start_ns;
	if (store_ok(in, cprof_store_process(in->store, h, &p->proc_id)) == 0)
		in->processes++;
	in->live++;
}

#define MAX_STRING_ID (1u << 24)

static size_t strslot(uint32_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b1u) >> 7) & (cap - 1);
}

int64_t cprof_strmap_get(const struct cprof_producer *p, uint32_t id)
{
	if (id == 0 || p->strcap == 0)
		return 0;
	for (size_t i = strslot(id, p->strcap);; i = (i + 1) & (p->strcap - 1)) {
		if (p->strkeys[i] == id)
			return p->strvals[i];
		if (p->strkeys[i] == 0)
			return 0;
	}
}

static int strmap_put(struct cprof_producer *p, uint32_t id, int64_t gid)
{
	size_t i;

	if (p->strn + 1 > p->strcap / 2) {
		size_t cap = p->strcap ? p->strcap * 2 : 256, j;
		uint32_t *k = calloc(cap, sizeof(*k));
		int64_t *v = calloc(cap, sizeof(*v));

		if (k == NULL || v == NULL) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		for (j = 0; j < p->strcap; j++) {
			if (p->strkeys[j] == 0)
				continue;
			for (i = strslot(p->strkeys[j], cap); k[i]; i = (i + 1) & (cap - 1))
				;
			k[i] = p->strkeys[j];
			v[i] = p->strvals[j];
		}
		free(p->strkeys);
		free(p->strvals);
		p->strkeys = k;
		p->strvals = v;
		p->strcap = cap;
	}
	for (i = strslot(id, p->strcap); p->strkeys[i] && p->strkeys[i] != id; i = (i + 1) & (p->strcap - 1))
		;
	p->strn += p->strkeys[i] == 0;
	p->strkeys[i] = id;
	p->strvals[i] = gid;
	return 0;
}

static int on_strings(struct cprof_ingest *in, struct cprof_producer *p, const struct cprof_wire_hdr *h)
{
	const uint8_t *payload = (const uint8_t *)(h + 1);
	size_t off = 0;
	uint32_t i;

	for (i = 0; i < h->count; i++) {
		const struct cprof_wire_string *s = (const void *)(payload + off);
		int64_t gid;

		/* ids count a process's kernel and API names from 1 (PyTorch registers ~10^5): a huge one is
		 * malformed, and would cost 8 bytes of map per id below it */
		if (s->id >= MAX_STRING_ID)
			return -EBADMSG;
		p->strings++;
		if (s->id == 0) {
			off += (sizeof(*s) + s->len + 3) & ~(size_t)3;
			continue;
		}
		if (store_ok(in, cprof_store_string(in->store, (const char *)(s + 1), s->len, &gid)) < 0)
			return -EIO;
		if (strmap_put(p, s->id, gid) < 0)
			return -ENOMEM;
		off += (sizeof(*s) + s->len + 3) & ~(size_t)3;
	}
	return 0;
}

/* Times beyond 2^62 ns (year 2116) are no clock's: stored as SQLite integers they would turn negative
 * or make readers' arithmetic overflow. */
#define TIME_MAX (1ull << 62)
#define BYTES_MAX (1ull << 50) /* no copy moves a petabyte */
#define COUNT_MAX (1ull << 50) /* events of a run: lost, emitted */

static int api_valid(const struct cprof_wire_api *ev)
{
	/* end before start is no forgery but the wall clock stepping back during the call (NTP, a VM resumed):
	 * clamped where it is stored, as CUPTI's records and NVTX ranges are */
	return ev->api > 0 && ev->api < CPROF_API__COUNT && ev->start_ns < TIME_MAX && ev->end_ns < TIME_MAX;
}

/* The share of --max-size the events may fill: the rest is for what the end of the run adds (the threads
 * table, the endings, symbols, the indexes the report reads by). */
#define MAX_SIZE_EVENTS_SHARE 0.8
#define MAX_SIZE_CHECK_EVERY 1024

/* 1 when --max-size stopped the storing (count records not stored: the caller skips them). The size is
 * looked at every MAX_SIZE_CHECK_EVERY records: SQLite's page count, what is batched included. */
static int over_max_size(struct cprof_ingest *in, uint32_t records)
{
	int64_t bytes;

	if (in->max_bytes == 0)
		return 0;
	if (in->cut_ns == 0) {
		in->since_check += records;
		if (in->since_check < MAX_SIZE_CHECK_EVERY)
			return 0;
		in->since_check = 0;
		bytes = cprof_store_bytes(in->store);
		if (bytes < 0 || (double)bytes < (double)in->max_bytes * MAX_SIZE_EVENTS_SHARE)
			return 0;
		for (size_t i = 0; i < in->nprod; i++)
			if (in->prod[i].last_ns > in->cut_ns)
				in->cut_ns = in->prod[i].last_ns;
		if (in->cut_ns == 0)
			in->cut_ns = cprof_now_ns();
		pr_warn("the profile reached %lld bytes of --max-size %llu: recording stopped, later events are counted, not stored",
			(long long)bytes, (unsigned long long)in->max_bytes);
	}
	in->unrecorded += records;
	return 1;
}

static int on_api(struct cprof_ingest *in, struct cprof_producer *p, const struct cprof_wire_hdr *h)
{
	const struct cprof_wire_api *ev = (const void *)(h + 1);
	uint32_t i;

	for (i = 0; i < h->count; i++)
		if (!api_valid(&ev[i]))
			return -EBADMSG;
	if (over_max_size(in, h->count))
		return 0;
	for (i = 0; i < h->count; i++) {
		int64_t kname = 0;

		if (cprof_api_class(ev[i].api) == CPROF_CLASS_NVTX) {
			int ret = cprof_nvtx_event(in, p, &ev[i]);

			if (ret == -EBADMSG)
				return ret;
			if (store_ok(in, ret) < 0)
				return -EIO;
			in->nvtx_events++;
			continue;
		}
		struct cprof_wire_api e = ev[i];

		if (e.end_ns < e.start_ns) {
			e.end_ns = e.start_ns;
			in->clock_steps++;
		}
		if (e.name)
			kname = cprof_strmap_get(p, e.name);
		if (store_ok(in, cprof_store_api(in->store, p->proc_id, p->pid, &e, kname)) < 0)
			return -EIO;
	}
	for (i = 0; i < h->count; i++)
		if (ev[i].end_ns > p->last_ns)
			p->last_ns = ev[i].end_ns;
	p->recorded += h->count;
	in->events += h->count;
	return 0;
}

static int on_gpu(struct cprof_ingest *in, struct cprof_producer *p, const struct cprof_wire_hdr *h)
{
	const struct cprof_wire_gpu *g = (const void *)(h + 1);
	uint32_t i;

	for (i = 0; i < h->count; i++)
		if (g[i].kind == 0 || g[i].kind >= CPROF_GPU__MAX || g[i].start_ns >= TIME_MAX || g[i].end_ns >= TIME_MAX ||
		    ((g[i].kind == CPROF_GPU_MEMCPY || g[i].kind == CPROF_GPU_MEMSET) && g[i].u64[0] >= BYTES_MAX))
			return -EBADMSG;
	if (over_max_size(in, h->count))
		return 0;
	for (i = 0; i < h->count; i++) {
		struct cprof_wire_gpu r = g[i];
		int64_t name = 0;

		if (r.end_ns < r.start_ns) {
			r.end_ns = r.start_ns;
			in->clock_steps++;
		}
		if (r.name)
			name = cprof_strmap_get(p, r.name);
		if (store_ok(in, cprof_store_gpu(in->store, p->proc_id, &r, name)) < 0)
			return -EIO;
		if (g[i].end_ns > p->last_ns)
			p->last_ns = g[i].end_ns;
	}
	p->recorded += h->count;
	in->gpu_records += h->count;
	return 0;
}

static int on_stacks(struct cprof_ingest *in, struct cprof_producer *p, const struct cprof_wire_hdr *h)
{
	const uint8_t *payload = (const uint8_t *)(h + 1);
	size_t off = 0;
	uint32_t i;

	for (i = 0; i < h->count; i++) {
		const struct cprof_wire_stack *st = (const void *)(payload + off);
		const struct cprof_wire_frame *f = (const void *)(st + 1);
		int k;

		for (k = 0; k < st->nnative + st->npy; k++) {
			/* string ids name modules (native) or file and function (Python); map them to the profile's */
			int64_t a = cprof_strmap_get(p, f[k].module);
			int64_t b = cprof_strmap_get(p, f[k].func);

			if (store_ok(in, cprof_store_frame(in->store, p->proc_id, st->id, k < st->nnative ? k : k - st->nnative,
							   k < st->nnative, f[k].off, a, b)) < 0)
				return -EIO;
		}
		off += sizeof(*st) + ((size_t)st->nnative + st->npy) * sizeof(*f);
	}
	in->stacks += h->count;
	return 0;
}

static int on_crash(struct cprof_ingest *in, struct cprof_producer *p, const struct cprof_wire_hdr *h)
{
	const struct cprof_wire_crash *c = (const void *)(h + 1);
	const struct cprof_wire_crash_thread *t = (const void *)(c + 1);
	uint32_t i;

	if (c->time_ns >= TIME_MAX)
		return -EBADMSG;
	if (store_ok(in, cprof_store_crash(in->store, p->proc_id, p->pid, c)) < 0)
		return -EIO;
	p->crashed = 1;
	in->crashed++;
	for (i = 0; i < h->count; i++) {
		int64_t kname = cprof_strmap_get(p, t[i].name);

		if (t[i].end_ns >= TIME_MAX)
			return -EBADMSG;
		if (store_ok(in, cprof_store_crash_call(in->store, p->proc_id, &t[i], kname)) < 0)
			return -EIO;
	}
	return 0;
}

/* One validated frame. Returns -EBADMSG when its content is wrong (the producer gets banned). */
static int dispatch(struct cprof_ingest *in, const struct cprof_wire_hdr *h)
{
	struct cprof_producer *p;

	/* the intake's business (collector/spool.c): where a process's frames wait, not what it recorded */
	if (h->type == CPROF_MSG_RING || h->type == CPROF_MSG_KICK)
		return 0;
	if (h->type == CPROF_MSG_RUN_END) {
		if (in->run_end_by_signal) {
			/* anyone who can write the FIFO can write this: a process of the job, not cprof-run */
			if (in->forged_run_ends++ == 0)
				diag(in, h->pid, "%s", "a RUN_END frame came through the FIFO, not from cprof-run: ignored (forged)");
			return 0;
		}
		memcpy(&in->run_end, h + 1, sizeof(in->run_end));
		in->run_end_pid = h->pid;
		in->run_ended = 1;
		return 0;
	}
	p = producer(in, h->pid, h->type == CPROF_MSG_HELLO);
	if (p == NULL) {
		if (in->dropped_frames++ == 0)
			diag(in, h->pid, "%s", "frames from a process that never said HELLO were dropped");
		return 0;
	}
	/* a banned process's frames are dropped, all but its BYE's counts: emitted - recorded - lost then
	 * shows what the collector dropped from it */
	if (p->banned && !(h->type == CPROF_MSG_BYE && p->proc_id && !p->ended)) {
		in->dropped_frames++;
		return 0;
	}
	if (h->type == CPROF_MSG_HELLO) {
		if (((const struct cprof_wire_hello *)(h + 1))->start_ns >= TIME_MAX)
			return -EBADMSG;
		on_hello(in, p, (const void *)(h + 1));
	} else if (p->proc_id == 0) {
		in->dropped_frames++;
		return 0;
	}
	if (h->seq != p->next_seq)
		p->seq_gaps++;
	p->next_seq = h->seq + 1;
	p->frames++;
	/* META frames is the sum of the processes' frames: not the transport's (a ring's announcement, a round's
	 * kick), nor cprof-run's RUN_END, nor those dropped (counted in dropped_frames) */
	in->frames++;

	switch (h->type) {
	case CPROF_MSG_STRINGS:
		return on_strings(in, p, h);
	case CPROF_MSG_API:
		return on_api(in, p, h);
	case CPROF_MSG_GPU:
		return on_gpu(in, p, h);
	case CPROF_MSG_STACKS:
		return on_stacks(in, p, h);
	case CPROF_MSG_CRASH:
		return on_crash(in, p, h);
	case CPROF_MSG_STATUS:
		return store_ok(in, cprof_store_status(in->store, p->proc_id, p->pid, (const void *)(h + 1))) < 0 ? -EIO : 0;
	case CPROF_MSG_COST:
		return store_ok(in, cprof_store_cost(in->store, p->proc_id, p->pid, (const void *)(h + 1))) < 0 ? -EIO : 0;
	case CPROF_MSG_COUNTS: {
		const struct cprof_wire_count *c = (const void *)(h + 1);

		/* the whole frame checked first: a forged count must not overflow a reader's sums, nor put an API
		 * that makes GPU work on the line of those that make none */
		for (uint32_t i = 0; i < h->count; i++)
			if (!cprof_api_counted(c[i].api) || c[i].calls >= COUNT_MAX)
				return -EBADMSG;
		for (uint32_t i = 0; i < h->count; i++)
			if (store_ok(in, cprof_store_count(in->store, p->proc_id, p->pid, in->arrival_ns, &c[i])) < 0)
				return -EIO;
		return 0;
	}
	case CPROF_MSG_LOST: {
		const struct cprof_wire_lost *l = (const void *)(h + 1);

		/* no process makes 2^50 events: a count beyond is forged, and summed it would overflow the
		 * signed totals every reader prints */
		if (l->lost >= COUNT_MAX || l->emitted >= COUNT_MAX || p->lost + l->lost >= COUNT_MAX ||
		    in->lost + l->lost >= COUNT_MAX)
			return -EBADMSG;
		p->lost += l->lost;
		in->lost += l->lost;
		/* each one kept, so the profile shows when the drops happened (a stalled collector, a burst) */
		return store_ok(in, cprof_store_lost(in->store, p->proc_id, p->pid, l, in->arrival_ns)) < 0 ? -EIO : 0;
	}
	case CPROF_MSG_BYE: {
		const struct cprof_wire_bye *b = (const void *)(h + 1);

		if (b->end_ns >= TIME_MAX || b->lost >= COUNT_MAX || b->emitted >= COUNT_MAX ||
		    (b->lost > p->lost && in->lost + (b->lost - p->lost) >= COUNT_MAX))
			return -EBADMSG;
		/* the BYE's total is the truth: losses after the last LOST frame are in it */
		if (b->lost > p->lost) {
			in->lost += b->lost - p->lost;
			p->lost = b->lost;
		}
		if (b->end_ns < p->start_ns) {
			/* readers refuse a process that ends before it starts (the clock stepped back, or a forged
			 * BYE): the collector applies their rule, the end is its start */
			struct cprof_wire_bye e = *b;

			e.end_ns = p->last_ns > p->start_ns ? p->last_ns : p->start_ns;
			in->clock_steps++;
			end_producer(in, p, &e);
			return 0;
		}
		end_producer(in, p, b);
		return 0;
	}
	}
	return 0;
}

static void ban(struct cprof_ingest *in, uint32_t pid, const char *why)
{
	struct cprof_producer *p = producer(in, pid, 1);

	if (p && !p->banned) {
		p->banned = 1;
		diag(in, pid, "malformed frame (%s): this process's further events are dropped", why);
	}
}

int cprof_ingest_feed(struct cprof_ingest *in, const void *data, size_t len)
{
	size_t off = 0;

	if (in->len + len > in->bufcap) {
		size_t cap = in->bufcap;
		uint8_t *b;

		while (cap < in->len + len)
			cap *= 2;
		b = realloc(in->buf, cap);
		if (b == NULL)
			return -ENOMEM;
		in->buf = b;
		in->bufcap = cap;
	}
	memcpy(in->buf + in->len, data, len);
	in->len += len;

	while (off < in->len) {
		/* frames are packed back to back, so in buf they may be unaligned: check an aligned copy */
		uint8_t frame[CPROF_WIRE_MAX_FRAME] __attribute__((aligned(8)));
		const uint8_t *h = in->buf + off;
		size_t avail = in->len - off, flen = 0;
		int err;
		struct cprof_wire_hdr hdr;

		memcpy(frame, h, avail < sizeof(frame) ? avail : sizeof(frame));
		flen = cprof_wire_torn(frame, avail < sizeof(frame) ? avail : sizeof(frame));
		if (flen > 0) {
			/* a frame cut short: its header's pid and count are not to be trusted, the frames behind it
			 * are; counted, and nobody is banned for it */
			in->bad_frames++;
			if (in->torn_frames++ == 0)
				diag(in, 0, "a frame cut short (%s) in the stream; resynchronised on the next frame", "a torn or forged write");
			off += flen;
			continue;
		}
		err = cprof_wire_check(frame, avail < sizeof(frame) ? avail : sizeof(frame), &flen);
		if (err == CPROF_WIRE_SHORT)
			break;
		if (err == CPROF_WIRE_OK) {
			if (dispatch(in, (const void *)frame) == -EBADMSG) {
				in->bad_frames++;
				ban(in, ((struct cprof_wire_hdr *)frame)->pid, "invalid event");
			}
			off += flen;
			continue;
		}
		in->bad_frames++;
		memcpy(&hdr, h, avail < sizeof(hdr) ? avail : sizeof(hdr));
		if (err != CPROF_WIRE_BAD_MAGIC && avail >= sizeof(hdr)) {
			ban(in, hdr.pid, cprof_wire_strerror(err));
			if (err != CPROF_WIRE_BAD_LENGTH && hdr.len >= sizeof(hdr) && hdr.len <= avail) {
				off += hdr.len;
				continue;
			}
		} else if (in->bad_frames == 1 || (in->bad_frames & 1023) == 0) {
			diag(in, 0, "%s in the stream; resynchronising on the next frame", cprof_wire_strerror(err));
		}
		/* lost framing: look for the next magic after this byte */
		{
			static const uint32_t magic = CPROF_WIRE_MAGIC;
			const uint8_t *next = cprof_wire_find_magic(in->buf + off + 1, in->len - off - 1);

			if (next == NULL) {
				/* keep the last 3 bytes: they may start a magic */
				off = in->len > 3 ? in->len - 3 : in->len;
				if (off < in->len && memmem(in->buf + off, in->len - off, &magic, 1) == NULL)
					off = in->len;
				break;
			}
			off = next - in->buf;
		}
	}
	memmove(in->buf, in->buf + off, in->len - off);
	in->len -= off;
	if (in->store_failed)
		return -EIO;
	return cprof_store_commit(in->store, 0);
}

int cprof_ingest_late_bye(struct cprof_ingest *in, const void *data, size_t len, uint64_t start_ns)
{
	uint8_t frame[CPROF_WIRE_MAX_FRAME] __attribute__((aligned(8)));
	const struct cprof_wire_hdr *h = (const void *)frame;
	struct cprof_producer *p;
	size_t flen = 0;

	if (len > sizeof(frame))
		return -EINVAL;
	memcpy(frame, data, len);
	if (cprof_wire_check(frame, len, &flen) != CPROF_WIRE_OK || flen != len || h->type != CPROF_MSG_BYE)
		return -EINVAL;
	/* only for the instance that wrote it (the file names its HELLO's start), still without its end */
	p = producer(in, h->pid, 0);
	if (p == NULL || p->proc_id == 0 || p->ended || p->banned || p->start_ns != start_ns)
		return -ENOENT;
	if (dispatch(in, h) == -EBADMSG)
		return -EINVAL;
	in->late_byes++;
	return store_ok(in, 0) < 0 || in->store_failed ? -EIO : cprof_store_commit(in->store, 0);
}

/* The signals cprof-run forwards (the ones that interrupt a run). */
static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	case SIGQUIT: return "SIGQUIT";
	}
	return "a signal";
}

static void add_reason(char *buf, size_t size, const char *r)
{
	size_t n = strlen(buf);

	if (n < size - 1)
		snprintf(buf + n, size - n, "%s%s", n ? "; " : "", r);
}

int cprof_ingest_finish(struct cprof_ingest *in, int clean)
{
	struct cprof_store *s = in->store;
	uint64_t missing_bye = 0;
	const char *reason = NULL;
	char interrupted[96], reasons[1024] = "";
	int failed = in->store_failed;
	size_t i;

	/* after a failed write (disk full) the transaction is gone; the final state below is tried anyway,
	 * and what was committed before stays consistent whatever happens */
	if (failed)
		cprof_store_abort(s);
	in->store_failed = 0;

	for (i = 0; i < in->nprod; i++) {
		struct cprof_producer *p = &in->prod[i];

		if (p->proc_id && !p->ended) {
			missing_bye++;
			end_producer(in, p, NULL);
		}
	}
	if (in->len)
		in->bad_frames++; /* a torn frame at the end */
	if (!failed && in->stacks)
		cprof_store_symbolize(s);
	/* before the verdict below: a profile that cannot be summed up is not complete (a full disk) */
	if (!failed && cprof_store_threads(s) < 0) {
		failed = 1;
		cprof_store_abort(s);
	}
	/* each process's ending, its CUDA error from the state the store kept as the calls went in (no query) */
	if (!failed && cprof_store_endings(s, in->run_ended ? in->run_end_pid : 0, in->run_ended ? &in->run_end : NULL) < 0)
		failed = 1;
	if (!failed && cprof_store_windows(s, in->cut_ns) < 0)
		failed = 1;
	if (!failed && !in->store_failed && cprof_store_call_split(s) < 0)
		failed = 1;
	if (in->interrupt_signal > 0)
		snprintf(interrupted, sizeof(interrupted), "interrupted by %s: the run was stopped before the program finished",
			 sig_name(in->interrupt_signal));
	/* every reason that applies, the gravest first: one cause (lost events) must not hide another (a process
	 * still running) */
	if (failed)
		add_reason(reasons, sizeof(reasons), "the profile could not be written (disk full?); later events were not stored");
	if (in->lost_spool_full)
		add_reason(reasons, sizeof(reasons), "out of disk space: events that reached the collector could not be spooled");
	if (!clean && !failed)
		add_reason(reasons, sizeof(reasons), "collector stopped before the run ended");
	if (in->lost_unstored)
		add_reason(reasons, sizeof(reasons), "the collector was stopped before it stored all it had received");
	if (in->interrupt_signal > 0)
		add_reason(reasons, sizeof(reasons), interrupted);
	if (in->lost)
		add_reason(reasons, sizeof(reasons), "events were lost");
	if (in->replaced)
		add_reason(reasons, sizeof(reasons),
			   "a process was replaced by a new HELLO from its pid without saying goodbye (exec unseen by the"
			   " hooks, or pid reuse): its last events may be missing");
	if (in->forged_run_ends)
		add_reason(reasons, sizeof(reasons), "a process of the run sent a forged RUN_END frame (ignored); its other frames are suspect");
	if (in->refused_producers)
		add_reason(reasons, sizeof(reasons), "too many processes alive at once: some were not recorded");
	if (in->bad_frames || in->dropped_frames)
		add_reason(reasons, sizeof(reasons), "malformed frames were dropped");
	if (missing_bye && in->crashed >= missing_bye)
		add_reason(reasons, sizeof(reasons), "a process was ended by a fatal signal (see how each ended)");
	else if (missing_bye)
		add_reason(reasons, sizeof(reasons), "a process ended without saying goodbye (killed, or still running)");
	reason = reasons[0] ? reasons : NULL;
	/* losses by cause: in the producers (rings full), at the spool (disk full), after it (not stored) */
	cprof_store_meta_int(s, "lost_events", (int64_t)(in->lost + in->lost_spool_full + in->lost_unstored));
	cprof_store_meta_int(s, "lost_producers", (int64_t)in->lost);
	cprof_store_meta_int(s, "lost_spool_full", (int64_t)in->lost_spool_full);
	cprof_store_meta_int(s, "lost_unstored", (int64_t)in->lost_unstored);
	cprof_store_meta_int(s, "bad_frames", (int64_t)in->bad_frames);
	cprof_store_meta_int(s, "torn_frames", (int64_t)in->torn_frames);
	cprof_store_meta_int(s, "late_byes", (int64_t)in->late_byes);
	cprof_store_meta_int(s, "clock_steps_clamped", (int64_t)in->clock_steps);
	cprof_store_meta_int(s, "dropped_frames", (int64_t)in->dropped_frames);
	cprof_store_meta_int(s, "frames", (int64_t)in->frames);
	cprof_store_meta_int(s, "events", (int64_t)in->events);
	cprof_store_meta_int(s, "gpu_records", (int64_t)in->gpu_records);
	cprof_store_meta_int(s, "stacks", (int64_t)in->stacks);
	cprof_store_meta_int(s, "nvtx_events", (int64_t)in->nvtx_events);
	cprof_store_meta_int(s, "processes", (int64_t)in->processes);
	cprof_store_meta_int(s, "processes_without_bye", (int64_t)missing_bye);
	cprof_store_meta_int(s, "processes_crashed", (int64_t)in->crashed);
	cprof_store_meta_int(s, "processes_replaced", (int64_t)in->replaced);
	cprof_store_meta_int(s, "forged_run_ends", (int64_t)in->forged_run_ends);
	cprof_store_meta_int(s, "suspect_hellos", (int64_t)in->suspect_hellos);
	cprof_store_meta_int(s, "refused_producers", (int64_t)in->refused_producers);
	if (in->max_bytes) {
		cprof_store_meta_int(s, "max_size", (int64_t)in->max_bytes);
		cprof_store_meta_int(s, "max_size_cut_ns", (int64_t)in->cut_ns);
		cprof_store_meta_int(s, "max_size_unrecorded", (int64_t)in->unrecorded);
	}
	if (in->run_ended) {
		cprof_store_meta_int(s, "exit_status", in->run_end.exit_status);
		cprof_store_meta_int(s, "term_signal", in->run_end.term_signal);
		cprof_store_meta_int(s, "end_ns", (int64_t)in->run_end.end_ns);
	}
	if (in->interrupt_signal > 0)
		cprof_store_meta_int(s, "interrupted", in->interrupt_signal);
	cprof_store_meta(s, "finalised", clean ? "1" : "0");
	cprof_store_meta(s, "complete", reason ? "0" : "1");
	cprof_store_meta(s, "incomplete_reason", reason ? reason : "");
	if (in->store_failed || cprof_store_commit(s, 1) < 0) {
		cprof_store_abort(s);
		return -EIO;
	}
	return failed ? -EIO : 0;
}
