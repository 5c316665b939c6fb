/* make bench's collector figures: synthetic frames through cprofd's own ingest path vs plain SQLite inserts, and the big profile. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/api.h"
#include "common/wire.h"
#include "collector/ingest.h"
#include "collector/store.h"

#define PID        4242
#define NKERNELS   64
#define NTHREADS   2
#define CHUNK      (64 * 1024) /* what cprofd reads from the FIFO at once */
#define COMMIT_ROWS 50000      /* the store's transaction size, for the plain-SQLite baseline */

/* Per-process string ids, as the preload numbers them: kernels first, then the runtime records' API names. */
#define STR_KERNEL(k) (1 + (k))
#define STR_RT_LAUNCH (1 + NKERNELS)
#define STR_RT_SYNC   (2 + NKERNELS)

enum shape { SHAPE_API, SHAPE_LAUNCH };

/* Synthetic records of one process: launches from NTHREADS threads on two streams, each (SHAPE_LAUNCH) with
 * CUPTI's runtime record, external correlation and kernel, as a real profiled launch has; a sync per step. */
struct gen {
	enum shape shape;
	uint64_t t;              /* host clock */
	uint64_t stream_end[2];  /* GPU clock per stream */
	uint64_t launches;
	uint64_t sync_every;     /* launches per step, each step ending in a synchronize; 0: none */
	uint32_t cupti_corr;
	uint64_t corr_lo[NTHREADS];
	/* records of the current launch, handed out one by one */
	int is_api[4];
	struct cprof_wire_api api;
	struct cprof_wire_gpu gpu[3];
	int n, next;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void gen_init(struct gen *g, enum shape shape, uint64_t sync_every)
{
	struct timespec ts;

	memset(g, 0, sizeof(*g));
	g->shape = shape;
	g->sync_every = sync_every;
	clock_gettime(CLOCK_REALTIME, &ts);
	g->t = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	g->stream_end[0] = g->stream_end[1] = g->t;
}

/* The next call: a launch, or at the end of a step a cudaStreamSynchronize. */
static void gen_call(struct gen *g)
{
	static uint64_t seed = 88172645463325252ull;
	int th = (int)(g->launches % NTHREADS), k = (int)(rnd(&seed) % NKERNELS), s = th;
	int sync = g->sync_every && g->launches > 0 && g->launches % g->sync_every == 0 && g->next != -1;
	struct cprof_wire_api *a = &g->api;
	uint64_t dur = 3000 + rnd(&seed) % 2000;

	memset(a, 0, sizeof(*a));
	memset(g->gpu, 0, sizeof(g->gpu));
	a->tid = 1000 + th;
	a->start_ns = g->t;
	a->corr = ((uint64_t)a->tid << 40) | ++g->corr_lo[th];
	a->stream = 0x100 + s;
	g->cupti_corr++;
	g->n = 0;
	if (sync) {
		uint64_t end = g->stream_end[s] > g->t + dur ? g->stream_end[s] : g->t + dur;

		a->api = CPROF_API_cudaStreamSynchronize;
		a->end_ns = end;
		g->t = end + 500;
		g->is_api[g->n++] = 1;
		if (g->shape == SHAPE_LAUNCH) {
			struct cprof_wire_gpu *r = &g->gpu[0];

			r->kind = CPROF_GPU_RUNTIME;
			r->start_ns = a->start_ns;
			r->end_ns = a->end_ns;
			r->corr = g->cupti_corr;
			r->name = STR_RT_SYNC;
			r->u32[0] = 131;
			r->u32[1] = PID;
			r->u32[2] = a->tid;
			g->is_api[g->n++] = 0;
		}
		g->next = -1; /* the launch this step was due comes next */
		return;
	}
	g->next = 0;
	g->launches++;
	a->api = CPROF_API___cudaLaunchKernel;
	a->end_ns = g->t + dur;
	a->name = STR_KERNEL(k);
	a->ptr = 0x400000 + 64 * k;
	a->arg[CPROF_ARG_GRID_X] = 1 << (k % 12);
	a->arg[CPROF_ARG_GRID_Y] = a->arg[CPROF_ARG_GRID_Z] = 1;
	a->arg[CPROF_ARG_BLOCK_X] = 256;
	a->arg[CPROF_ARG_BLOCK_Y] = a->arg[CPROF_ARG_BLOCK_Z] = 1;
	g->is_api[g->n++] = 1;
	if (g->shape == SHAPE_LAUNCH) {
		struct cprof_wire_gpu *rt = &g->gpu[0], *ext = &g->gpu[1], *kr = &g->gpu[2];
		uint64_t start = a->end_ns + 3000 > g->stream_end[s] ? a->end_ns + 3000 : g->stream_end[s];

		rt->kind = CPROF_GPU_RUNTIME;
		rt->start_ns = a->start_ns;
		rt->end_ns = a->end_ns;
		rt->corr = g->cupti_corr;
		rt->name = STR_RT_LAUNCH;
		rt->u32[0] = 211;
		rt->u32[1] = PID;
		rt->u32[2] = a->tid;
		ext->kind = CPROF_GPU_EXTCORR;
		ext->corr = g->cupti_corr;
		ext->u32[0] = 5; /* CUSTOM2 */
		ext->u64[0] = a->corr;
		kr->kind = CPROF_GPU_KERNEL;
		kr->corr = g->cupti_corr;
		kr->name = STR_KERNEL(k);
		kr->start_ns = start;
		kr->end_ns = start + 1800 + (uint64_t)(k % 16) * 1500 + rnd(&seed) % 500;
		kr->device = 0;
		kr->context = 1;
		kr->stream = 7 + s;
		memcpy(kr->u32, a->arg, 6 * sizeof(uint32_t));
		kr->u32[6] = 32;
		kr->u64[1] = g->launches;
		g->stream_end[s] = kr->end_ns;
		g->is_api[g->n++] = 0;
		g->is_api[g->n++] = 0;
		g->is_api[g->n++] = 0;
	}
	g->t = a->end_ns + 200 + rnd(&seed) % 1500;
}

/* Packs records into frames as the flusher does: API events and GPU records in frames of their own. */
struct packer {
	uint8_t *out;
	size_t len, cap;
	uint32_t seq;
	struct cprof_wire_api api[CPROF_WIRE_API_PER_FRAME];
	struct cprof_wire_gpu gpu[CPROF_WIRE_GPU_PER_FRAME];
	size_t napi, ngpu;
};

static int put(struct packer *p, const void *frame, size_t len)
{
	if (p->len + len > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 1 << 20;
		uint8_t *o;

		while (cap < p->len + len)
			cap *= 2;
		o = realloc(p->out, cap);
		if (o == NULL)
			return -ENOMEM;
		p->out = o;
		p->cap = cap;
	}
	memcpy(p->out + p->len, frame, len);
	p->len += len;
	return 0;
}

static int flush_kind(struct packer *p, uint16_t type)
{
	uint8_t frame[CPROF_WIRE_MAX_FRAME] __attribute__((aligned(8)));
	struct cprof_wire_hdr *h = (void *)frame;
	size_t n = type == CPROF_MSG_API ? p->napi : p->ngpu;
	size_t rec = type == CPROF_MSG_API ? sizeof(p->api[0]) : sizeof(p->gpu[0]);

	if (n == 0)
		return 0;
	cprof_wire_hdr_init(h, type, PID, p->seq++, n, sizeof(*h) + n * rec);
	memcpy(h + 1, type == CPROF_MSG_API ? (void *)p->api : (void *)p->gpu, n * rec);
	if (type == CPROF_MSG_API)
		p->napi = 0;
	else
		p->ngpu = 0;
	return put(p, frame, h->len);
}

static int pack_start(struct packer *p)
{
	uint8_t frame[CPROF_WIRE_MAX_FRAME] __attribute__((aligned(8)));
	struct cprof_wire_hdr *h = (void *)frame;
	struct cprof_wire_hello hello = { .pid = PID, .ppid = 1, .clock = CPROF_CLOCK_REALTIME,
					  .wire_version = CPROF_WIRE_VERSION, .rank = -1, .local_rank = -1,
					  .world_size = -1, .flags = CPROF_HELLO_SIMGPU };
	const char *argv[] = { "bench-synthetic", "--launches" };
	size_t len;
	int k, ret;

	memset(p, 0, sizeof(*p));
	hello.start_ns = (uint64_t)time(NULL) * 1000000000ull;
	len = cprof_wire_build_hello(frame, p->seq++, &hello, "/bench/synthetic", "bench-host", argv, 2);
	if (len == 0 || (ret = put(p, frame, len)) < 0)
		return -EINVAL;
	len = sizeof(*h);
	cprof_wire_hdr_init(h, CPROF_MSG_STRINGS, PID, p->seq++, 0, len);
	for (k = 0; k < NKERNELS; k++) {
		char name[64];

		snprintf(name, sizeof(name), "_Z%dbench_kernel_%02dPfPKfi", 15, k);
		if (cprof_wire_strings_add(frame, &len, STR_KERNEL(k), CPROF_STR_KERNEL, name) < 0)
			return -ENOSPC;
	}
	if (cprof_wire_strings_add(frame, &len, STR_RT_LAUNCH, CPROF_STR_API, "cudaLaunchKernel_v7000") < 0 ||
	    cprof_wire_strings_add(frame, &len, STR_RT_SYNC, CPROF_STR_API, "cudaStreamSynchronize_v3020") < 0)
		return -ENOSPC;
	return put(p, frame, len);
}

static int pack_record(struct packer *p, const struct gen *g, int i)
{
	int ret = 0;

	if (g->is_api[i]) {
		p->api[p->napi++] = g->api;
		if (p->napi == CPROF_WIRE_API_PER_FRAME)
			ret = flush_kind(p, CPROF_MSG_API);
	} else {
		p->gpu[p->ngpu++] = g->gpu[i - 1];
		if (p->ngpu == CPROF_WIRE_GPU_PER_FRAME)
			ret = flush_kind(p, CPROF_MSG_GPU);
	}
	return ret;
}

static int pack_end(struct packer *p, uint64_t records, uint64_t end_ns)
{
	uint8_t frame[CPROF_WIRE_MAX_FRAME] __attribute__((aligned(8)));
	struct cprof_wire_hdr *h = (void *)frame;
	struct cprof_wire_bye bye = { .end_ns = end_ns, .emitted = records, .reason = CPROF_BYE_EXIT };
	struct cprof_wire_run_end re = { .end_ns = end_ns };

	if (flush_kind(p, CPROF_MSG_API) < 0 || flush_kind(p, CPROF_MSG_GPU) < 0)
		return -ENOMEM;
	cprof_wire_hdr_init(h, CPROF_MSG_BYE, PID, p->seq++, 1, sizeof(*h) + sizeof(bye));
	memcpy(h + 1, &bye, sizeof(bye));
	if (put(p, frame, h->len) < 0)
		return -ENOMEM;
	cprof_wire_hdr_init(h, CPROF_MSG_RUN_END, 0, 0, 1, sizeof(*h) + sizeof(re));
	memcpy(h + 1, &re, sizeof(re));
	return put(p, frame, h->len);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* This process's CPU time: on a shared machine the wall clock also counts the other users' load. */
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Feeds a frame buffer to the collector's intake in FIFO-sized chunks. */
static int feed(struct cprof_ingest *in, const uint8_t *buf, size_t len)
{
	size_t off;
	int ret;

	for (off = 0; off < len; off += CHUNK)
		if ((ret = cprof_ingest_feed(in, buf + off, len - off < CHUNK ? len - off : CHUNK)) < 0)
			return ret;
	return 0;
}

/* Builds the frames of n records (all of them in memory: the timed part is the intake alone). */
static int build_frames(struct packer *p, enum shape shape, uint64_t n)
{
	struct gen g;
	uint64_t done = 0;
	int ret = pack_start(p);

	gen_init(&g, shape, 1000);
	while (ret == 0 && done < n) {
		gen_call(&g);
		for (int i = 0; i < g.n && done < n && ret == 0; i++, done++)
			ret = pack_record(p, &g, i);
	}
	return ret ? ret : pack_end(p, done, g.t);
}

static int mode_ingest(enum shape shape, uint64_t n, const char *db)
{
	struct packer p = { 0 };
	struct cprof_store *store = NULL;
	struct cprof_ingest in;
	double t0, t1, tf, c0, cf, c1;
	int ret;

	memset(&in, 0, sizeof(in)); /* cprof_ingest_free of a zeroed intake frees nothing */
	if ((ret = build_frames(&p, shape, n)) < 0 || (ret = cprof_store_open(&store, db)) < 0 ||
	    (ret = cprof_ingest_init(&in, store)) < 0)
		goto out;
	t0 = mono();
	c0 = cpu();
	ret = feed(&in, p.out, p.len);
	tf = mono();
	cf = cpu();
	if (ret == 0)
		ret = cprof_ingest_finish(&in, 1);
	t1 = mono();
	c1 = cpu();
	if (ret == 0 && in.events + in.gpu_records != n) {
		fprintf(stderr, "store-bench: %llu records stored of %llu\n",
			(unsigned long long)(in.events + in.gpu_records), (unsigned long long)n);
		ret = -EIO;
	}
	if (ret == 0)
		printf("rows %llu seconds %.3f rows_per_s %.0f cpu_s %.3f (rows %.3f, finish %.3f) cpu_rows_per_s %.0f\n",
		       (unsigned long long)n, t1 - t0, n / (t1 - t0), c1 - c0, cf - c0, c1 - cf, n / (c1 - c0));
	(void)tf;
out:
	cprof_ingest_free(&in);
	if (cprof_store_close(store) < 0 && ret == 0)
		ret = -EIO;
	free(p.out);
	return ret;
}

/* The baseline: the same rows, bound straight into prepared INSERTs of the same schema, committed in
 * batches of the store's size. What SQLite itself manages on this machine. */
static int mode_sqlite(enum shape shape, uint64_t n, const char *db)
{
	static const char *const sql[] = {
		"INSERT INTO CPROF_API(processId, pid, tid, start, end, correlationId, nameId, class,"
		" returnValue, nested, kernelNameId, stream, bytes, ptr, a0, a1, a2, a3, a4, a5, a6, a7)"
		" VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,?,?,?,?,?,?)",
		"INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES(?,?,?,?)",
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	};
	struct cprof_store *store = NULL;
	sqlite3 *h = NULL;
	sqlite3_stmt *st[4] = { 0 };
	struct gen g;
	uint64_t done = 0, in_txn = 0;
	double t0, t1;
	int ret, i;

	/* the schema exactly as cprofd makes it, indexes included */
	if ((ret = cprof_store_open(&store, db)) < 0 || (ret = cprof_store_close(store)) < 0)
		return ret;
	ret = -EIO;
	if (sqlite3_open(db, &h) != SQLITE_OK || sqlite3_exec(h, "PRAGMA synchronous=NORMAL", 0, 0, 0) != SQLITE_OK)
		goto out;
	for (i = 0; i < 4; i++)
		if (sqlite3_prepare_v3(h, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &st[i], NULL) != SQLITE_OK)
			goto out;
	gen_init(&g, shape, 1000);
	t0 = mono();
	while (done < n) {
		gen_call(&g);
		for (i = 0; i < g.n && done < n; i++, done++) {
			sqlite3_stmt *s;
			int c = 1;

			if (in_txn == 0 && sqlite3_exec(h, "BEGIN", 0, 0, 0) != SQLITE_OK)
				goto out;
			if (g.is_api[i]) {
				const struct cprof_wire_api *a = &g.api;

				s = st[0];
				sqlite3_bind_int64(s, c++, 1);
				sqlite3_bind_int64(s, c++, PID);
				sqlite3_bind_int64(s, c++, a->tid);
				sqlite3_bind_int64(s, c++, (int64_t)a->start_ns);
				sqlite3_bind_int64(s, c++, (int64_t)a->end_ns);
				sqlite3_bind_int64(s, c++, (int64_t)a->corr);
				sqlite3_bind_int64(s, c++, a->api);
				sqlite3_bind_text(s, c++, a->api == CPROF_API___cudaLaunchKernel ? "launch" : "sync", -1,
						  SQLITE_STATIC);
				sqlite3_bind_int(s, c++, a->ret);
				sqlite3_bind_int(s, c++, 0);
				if (a->name)
					sqlite3_bind_int64(s, c++, 100 + a->name);
				else
					sqlite3_bind_null(s, c++);
				sqlite3_bind_int64(s, c++, (int64_t)a->stream);
				sqlite3_bind_int64(s, c++, (int64_t)a->bytes);
				sqlite3_bind_int64(s, c++, (int64_t)a->ptr);
				for (int k = 0; k < 8; k++)
					sqlite3_bind_int64(s, c++, a->arg[k]);
			} else {
				const struct cprof_wire_gpu *r = &g.gpu[i - 1];
				const uint32_t *u = r->u32;

				if (r->kind == CPROF_GPU_RUNTIME) {
					int64_t v[] = { 1, (int64_t)r->start_ns, (int64_t)r->end_ns, r->corr, 100 + r->name,
							u[0], u[2], (int32_t)u[3] };
					s = st[1];
					for (int k = 0; k < 8; k++)
						sqlite3_bind_int64(s, c++, v[k]);
				} else if (r->kind == CPROF_GPU_EXTCORR) {
					int64_t v[] = { 1, u[0], (int64_t)r->u64[0], r->corr };
					s = st[2];
					for (int k = 0; k < 4; k++)
						sqlite3_bind_int64(s, c++, v[k]);
				} else {
					int64_t v[] = { 1, (int64_t)r->start_ns, (int64_t)r->end_ns, r->device, r->context,
							r->stream, r->corr, 100 + r->name, u[0], u[1], u[2], u[3], u[4], u[5],
							u[6], u[7], u[8], u[9], (int64_t)r->u64[0], (int64_t)r->u64[1] };
					s = st[3];
					for (int k = 0; k < 20; k++)
						sqlite3_bind_int64(s, c++, v[k]);
				}
			}
			if (sqlite3_step(s) != SQLITE_DONE)
				goto out;
			sqlite3_reset(s);
			if (++in_txn == COMMIT_ROWS) {
				if (sqlite3_exec(h, "COMMIT", 0, 0, 0) != SQLITE_OK)
					goto out;
				in_txn = 0;
			}
		}
	}
	if (in_txn && sqlite3_exec(h, "COMMIT", 0, 0, 0) != SQLITE_OK)
		goto out;
	t1 = mono();
	printf("rows %llu seconds %.3f rows_per_s %.0f\n", (unsigned long long)n, t1 - t0, n / (t1 - t0));
	ret = 0;
out:
	if (ret < 0)
		fprintf(stderr, "store-bench: sqlite: %s\n", h ? sqlite3_errmsg(h) : "cannot open");
	for (i = 0; i < 4; i++)
		sqlite3_finalize(st[i]);
	sqlite3_close(h);
	return ret;
}

/* The big profile for the report figures: n records through the intake, built and fed a slice at a time. */
static int mode_gen(uint64_t n, uint64_t sync_every, const char *db)
{
	struct packer p = { 0 };
	struct cprof_store *store = NULL;
	struct cprof_ingest in;
	struct gen g;
	uint64_t done = 0;
	double t0 = mono();
	int ret;

	memset(&in, 0, sizeof(in));
	if ((ret = cprof_store_open(&store, db)) < 0 || (ret = cprof_ingest_init(&in, store)) < 0)
		goto out;
	cprof_store_meta(store, "command", "store-bench gen (synthetic profile for make bench)");
	gen_init(&g, SHAPE_LAUNCH, sync_every);
	ret = pack_start(&p);
	while (ret == 0 && done < n) {
		gen_call(&g);
		for (int i = 0; i < g.n && done < n && ret == 0; i++, done++)
			ret = pack_record(&p, &g, i);
		if (ret == 0 && p.len >= (8u << 20)) {
			ret = feed(&in, p.out, p.len);
			p.len = 0;
		}
	}
	if (ret == 0)
		ret = pack_end(&p, done, g.t);
	if (ret == 0)
		ret = feed(&in, p.out, p.len);
	if (ret == 0)
		ret = cprof_ingest_finish(&in, 1);
out:
	cprof_ingest_free(&in);
	if (cprof_store_close(store) < 0 && ret == 0)
		ret = -EIO;
	free(p.out);
	if (ret == 0)
		printf("rows %llu seconds %.1f\n", (unsigned long long)n, mono() - t0);
	return ret;
}

/* Writes the frames of n records to path (a FIFO) as fast as the reader takes them: the time is the pipe's. */
static int mode_frames(enum shape shape, uint64_t n, const char *path)
{
	struct packer p = { 0 };
	double t0, t1;
	size_t off = 0;
	int fd, ret;

	if ((ret = build_frames(&p, shape, n)) < 0)
		goto out;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	t0 = mono();
	while (off < p.len) {
		/* frame-sized writes, as the flusher's: each one atomic in the pipe */
		size_t len = p.len - off < 65536 ? p.len - off : 65536;
		ssize_t w = write(fd, p.out + off, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ret = -errno;
			break;
		}
		off += w;
	}
	t1 = mono();
	close(fd);
	if (ret == 0)
		printf("rows %llu bytes %zu seconds %.3f rows_per_s %.0f\n", (unsigned long long)n, p.len, t1 - t0,
		       n / (t1 - t0));
out:
	free(p.out);
	return ret;
}

/* n short processes one after another (HELLO, one call, BYE), as a job of many tiny tools makes: the cost per
 * process must not grow with the processes before it (a linear producer and thread scan made it quadratic). */
static int mode_pids(uint64_t n, const char *db)
{
	uint8_t f[CPROF_WIRE_MAX_FRAME] __attribute__((aligned(8)));
	struct cprof_wire_hdr *h = (void *)f;
	struct cprof_store *store = NULL;
	struct cprof_ingest in;
	const char *argv[] = { "tiny", NULL };
	double t0, t1;
	int ret;

	memset(&in, 0, sizeof(in));
	if ((ret = cprof_store_open(&store, db)) < 0 || (ret = cprof_ingest_init(&in, store)) < 0)
		goto out;
	t0 = mono();
	for (uint64_t i = 0; i < n && ret == 0; i++) {
		uint32_t pid = (uint32_t)(1000 + i);
		struct cprof_wire_hello hello = { .pid = pid, .ppid = 1, .start_ns = 1000 + i, .wire_version = CPROF_WIRE_VERSION,
						  .rank = -1, .local_rank = -1, .world_size = -1 };
		struct cprof_wire_api *ev = (void *)(h + 1);
		struct cprof_wire_bye bye = { .end_ns = 3000 + i, .emitted = 1, .reason = CPROF_BYE_EXIT };

		ret = cprof_ingest_feed(&in, f, cprof_wire_build_hello(f, 0, &hello, "/bin/tiny", "h", argv, 1));
		memset(ev, 0, sizeof(*ev));
		ev->api = CPROF_API_cudaMalloc;
		ev->start_ns = 2000 + i;
		ev->end_ns = 2001 + i;
		ev->tid = pid;
		cprof_wire_hdr_init(h, CPROF_MSG_API, pid, 1, 1, sizeof(*h) + sizeof(*ev));
		if (ret == 0)
			ret = cprof_ingest_feed(&in, f, h->len);
		cprof_wire_hdr_init(h, CPROF_MSG_BYE, pid, 2, 1, sizeof(*h) + sizeof(bye));
		memcpy(h + 1, &bye, sizeof(bye));
		if (ret == 0)
			ret = cprof_ingest_feed(&in, f, h->len);
	}
	if (ret == 0)
		ret = cprof_ingest_finish(&in, 1);
	t1 = mono();
	if (ret == 0 && in.processes != n)
		ret = -EIO;
	if (ret == 0)
		printf("processes %llu seconds %.3f us_per_process %.1f\n", (unsigned long long)n, t1 - t0, (t1 - t0) * 1e6 / n);
out:
	cprof_ingest_free(&in);
	if (cprof_store_close(store) < 0 && ret == 0)
		ret = -EIO;
	return ret;
}

int main(int argc, char **argv)
{
	enum shape shape = argc > 2 && !strcmp(argv[2], "api") ? SHAPE_API : SHAPE_LAUNCH;
	int ret = -EINVAL;

	if (argc == 5 && !strcmp(argv[1], "ingest"))
		ret = mode_ingest(shape, strtoull(argv[3], NULL, 10), argv[4]);
	else if (argc == 5 && !strcmp(argv[1], "sqlite"))
		ret = mode_sqlite(shape, strtoull(argv[3], NULL, 10), argv[4]);
	else if (argc == 5 && !strcmp(argv[1], "frames"))
		ret = mode_frames(shape, strtoull(argv[3], NULL, 10), argv[4]);
	else if (argc == 4 && !strcmp(argv[1], "pids"))
		ret = mode_pids(strtoull(argv[2], NULL, 10), argv[3]);
	else if (argc == 5 && !strcmp(argv[1], "gen"))
		ret = mode_gen(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10), argv[4]);
	else {
		fprintf(stderr, "usage: store-bench ingest|sqlite api|launch N DB | frames api|launch N FIFO | gen N SYNC_EVERY DB\n");
		return 2;
	}
	if (ret < 0)
		fprintf(stderr, "store-bench %s: %s\n", argv[1], strerror(-ret));
	return ret < 0;
}
