/* Simulated CUPTI state: enabled kinds, activity buffers from the client's callbacks, records, subscribers. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine_int.h"
#include "cbid_names.h"

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

/* ---------------------------------------------------------------- enabled kinds */

static atomic_int g_kind_on[CUPTI_ACTIVITY_KIND_COUNT];
static atomic_int g_latency_ts;
static atomic_int g_thread_id_type;

SG_HIDDEN int sg_act_on(int kind)
{
	if (kind <= 0 || kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return 0;
	return atomic_load_explicit(&g_kind_on[kind], memory_order_relaxed);
}

SG_HIDDEN int sg_latency_timestamps(void)
{
	return atomic_load_explicit(&g_latency_ts, memory_order_relaxed);
}

static int no_driver(void)
{
	return simgpu_cfg()->no_driver;
}

static size_t record_size(int kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	default:
		return 0;
	}
}

int simgpu_cupti_enable(int kind, int on)
{
	if (no_driver())
		return CUPTI_ERROR_UNKNOWN;
	if (kind <= 0 || kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	/* Kinds the simulator has no records for are accepted and stay silent, as on a device without them. */
	atomic_store(&g_kind_on[kind], on ? 1 : 0);
	if (simgpu_cfg()->verbose)
		simgpu_log("activity kind %d %s", kind, on ? "enabled" : "disabled");
	return CUPTI_SUCCESS;
}

int simgpu_cupti_enabled(int kind)
{
	return sg_act_on(kind);
}

/* cuptiActivityEnableRuntimeApi / EnableDriverApi: an API switched off makes no record at all (what Kineto asks
 * for cudaGetDevice since CUDA 12.5), so a profiler that asks pays nothing for it here either. Kept across
 * enabling and disabling the kind; cleared by cuptiFinalize. */
static atomic_uchar g_api_off_rt[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static atomic_uchar g_api_off_drv[CUPTI_DRIVER_TRACE_CBID_SIZE];

int simgpu_cupti_enable_api(int driver, uint32_t cbid, int on)
{
	if (no_driver())
		return CUPTI_ERROR_UNKNOWN;
	if (driver ? cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE : cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(driver ? &g_api_off_drv[cbid] : &g_api_off_rt[cbid], on ? 0 : 1);
	if (simgpu_cfg()->verbose)
		simgpu_log("%s api %u activity %s", driver ? "driver" : "runtime", cbid, on ? "enabled" : "disabled");
	return CUPTI_SUCCESS;
}

static int api_off(int driver, uint32_t cbid)
{
	if (driver)
		return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE &&
		       atomic_load_explicit(&g_api_off_drv[cbid], memory_order_relaxed);
	return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && atomic_load_explicit(&g_api_off_rt[cbid], memory_order_relaxed);
}

int simgpu_cupti_latency_timestamps(int on)
{
	atomic_store(&g_latency_ts, on ? 1 : 0);
	return CUPTI_SUCCESS;
}

int simgpu_cupti_set_thread_id_type(int type)
{
	if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&g_thread_id_type, type);
	return CUPTI_SUCCESS;
}

int simgpu_cupti_get_thread_id_type(void)
{
	return atomic_load(&g_thread_id_type);
}

/* getpid/gettid are system calls here; records need them on every API call, so they are cached (reset at fork). */
static uint32_t g_pid;
static __thread uint32_t t_tid;

static uint32_t cached_pid(void)
{
	if (!g_pid)
		g_pid = (uint32_t)getpid();
	return g_pid;
}

SG_HIDDEN uint32_t sg_thread_id(void)
{
	if (atomic_load_explicit(&g_thread_id_type, memory_order_relaxed) == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
		if (!t_tid)
			t_tid = (uint32_t)syscall(SYS_gettid);
		return t_tid;
	}
	return (uint32_t)pthread_self();
}

/* ---------------------------------------------------------------- buffers */

struct buf {
	uint8_t *p;
	size_t size;
	size_t used;
	size_t nrec;
	size_t maxrec;
	size_t resident; /* SIMGPU_BUFFER_LOG: bytes of the buffer, from its start, on pages resident when it came */
	uint64_t requested_ns;
	struct buf *next;
};

/* SIMGPU_BUFFER_LOG=FILE: a line a delivered buffer, "REQUESTED_NS USED RESIDENT ADDRESS", RESIDENT the bytes from
 * its start that lay on pages already resident (mincore) when the profiler handed it over: which buffers' pages the
 * thread writing the records had to fault in (preload/cupti.c writes its pool's pages ahead on its flusher), and
 * whether buffers came back (the same ADDRESS again). Read once; the file opened then. */
static FILE *g_buffer_log;
static pthread_once_t g_buffer_log_once = PTHREAD_ONCE_INIT;

static void buffer_log_init(void)
{
	const char *path = getenv("SIMGPU_BUFFER_LOG");

	if (path != NULL && *path != '\0')
		g_buffer_log = fopen(path, "a");
}

static int buffer_log_on(void)
{
	pthread_once(&g_buffer_log_once, buffer_log_init);
	return g_buffer_log != NULL;
}

static size_t resident_prefix(const uint8_t *p, size_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1), end = (uintptr_t)p + size;
	size_t n = (end - a + (size_t)pg - 1) / (size_t)pg, i;
	unsigned char *vec = malloc(n);

	if (vec == NULL || mincore((void *)a, end - a, vec) != 0) {
		free(vec);
		return 0;
	}
	for (i = 0; i < n && (vec[i] & 1); i++)
		;
	free(vec);
	return i == n ? size : a + i * (size_t)pg > (uintptr_t)p ? a + i * (size_t)pg - (uintptr_t)p : 0;
}

/* after the profiler has had it back (it may have freed it: only the numbers), outside the flush's overhead span */
static void buffer_log(const struct buf *b)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	if (!buffer_log_on())
		return;
	pthread_mutex_lock(&lock);
	fprintf(g_buffer_log, "%llu %zu %zu %p\n", (unsigned long long)b->requested_ns, b->used, b->resident,
		(const void *)b->p);
	fflush(g_buffer_log);
	pthread_mutex_unlock(&lock);
}

static pthread_mutex_t g_buf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_buf_cond = PTHREAD_COND_INITIALIZER;  /* a buffer request finished */
static pthread_cond_t g_work_cond = PTHREAD_COND_INITIALIZER; /* the worker has buffers to deliver */
static pthread_mutex_t g_deliver_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc g_req;
static CUpti_BuffersCallbackCompleteFunc g_done;
static struct buf *g_cur;
static struct buf *g_q_head, *g_q_tail;
static int g_requesting;
static size_t g_dropped;
static int g_worker_started;
static uint32_t g_flush_period_ms;
/* A flush's own overhead record waits here, so reporting it never forces a buffer request by itself. */
static int g_pending_flush;
static CUpti_ActivityOverhead3 g_pending_flush_rec;

static void enqueue_locked(struct buf *b)
{
	b->next = NULL;
	if (g_q_tail)
		g_q_tail->next = b;
	else
		g_q_head = b;
	g_q_tail = b;
}

static struct buf *dequeue_locked(void)
{
	struct buf *b = g_q_head;
	if (b) {
		g_q_head = b->next;
		if (!g_q_head)
			g_q_tail = NULL;
	}
	return b;
}

static void fill_overhead(CUpti_ActivityOverhead3 *o, int overhead_kind, uint64_t start, uint64_t end)
{
	memset(o, 0, sizeof(*o));
	o->kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o->overheadKind = (CUpti_ActivityOverheadKind)overhead_kind;
	o->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o->objectId.pt.processId = cached_pid();
	o->objectId.pt.threadId = sg_thread_id();
	o->start = start;
	o->end = end;
	o->correlationId = 0;
	o->overheadData = NULL;
}

static int buf_fits(const struct buf *b, size_t need)
{
	return b->used + need <= b->size && (b->maxrec == 0 || b->nrec < b->maxrec);
}

static void buf_put(struct buf *b, const void *rec, size_t size)
{
	memcpy(b->p + b->used, rec, size);
	memset(b->p + b->used + size, 0, ALIGN8(size) - size);
	b->used += ALIGN8(size);
	b->nrec++;
}

static void *worker_main(void *arg);

static void wake_worker_locked(void)
{
	if (!g_worker_started) {
		pthread_t th;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &a, worker_main, NULL) == 0)
			g_worker_started = 1;
		pthread_attr_destroy(&a);
	}
	pthread_cond_signal(&g_work_cond);
}

/* cuptiActivityRegisterTimestampCallback: records carry the caller's clock (Kineto's), a linear map of
 * CLOCK_REALTIME measured when the callback was registered: c0 + (t - n0) * rate. */
struct tsmap {
	uint64_t n0, c0;
	_Atomic uint64_t rate_bits; /* a double; refined against (n0, c0) as time goes on */
	_Atomic uint64_t refined;   /* when, in our clock */
	CUpti_TimestampCallbackFunc func;
};
/* replaced whole at each registration (the old one leaks: a reader may still hold it), read lock-free */
static _Atomic(struct tsmap *) g_tsmap;

static double rate_of(struct tsmap *m)
{
	uint64_t bits = atomic_load_explicit(&m->rate_bits, memory_order_relaxed);
	double r;
	memcpy(&r, &bits, sizeof(r));
	return r;
}

int simgpu_cupti_timestamp_map(uint64_t n0, uint64_t c0, double rate, CUpti_TimestampCallbackFunc func)
{
	struct tsmap *m = calloc(1, sizeof(*m));
	uint64_t bits;
	if (!m)
		return -1;
	m->n0 = n0;
	m->c0 = c0;
	memcpy(&bits, &rate, sizeof(bits));
	atomic_store(&m->rate_bits, bits);
	atomic_store(&m->refined, n0);
	m->func = func;
	atomic_store(&g_tsmap, m);
	return 0;
}

/* the caller's clock is read again every millisecond or so (as CUPTI reads it for its host records), so a
 * record's error stays that of one pair of reads however long the session */
static void refine(struct tsmap *m)
{
	uint64_t now = simgpu_now(), last = atomic_load_explicit(&m->refined, memory_order_relaxed);
	if (now < last + 1000000 || !atomic_compare_exchange_strong(&m->refined, &last, now))
		return;
	uint64_t a = simgpu_now(), c = m->func(), b = simgpu_now(), n = a + (b - a) / 2;
	if (n > m->n0 + 1000000 && c > m->c0) {
		double r = (double)(c - m->c0) / (double)(n - m->n0);
		uint64_t bits;
		memcpy(&bits, &r, sizeof(bits));
		atomic_store(&m->rate_bits, bits);
	}
}

static uint64_t map_time(struct tsmap *m, uint64_t t)
{
	if (!m || !t)
		return t;
	return m->c0 + (uint64_t)(int64_t)((double)(int64_t)(t - m->n0) * rate_of(m));
}

uint64_t simgpu_cupti_time(uint64_t t)
{
	return map_time(atomic_load(&g_tsmap), t);
}

#define MAP(x) ((x) = map_time(tm, x))
static void shift_times(void *rec, struct tsmap *tm)
{
	CUpti_Activity *r = rec;
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		CUpti_ActivityAPI *a = rec;
		MAP(a->start), MAP(a->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		CUpti_ActivityKernel10 *k = rec;
		MAP(k->start), MAP(k->end), MAP(k->completed);
		if (k->queued)
			MAP(k->queued), MAP(k->submitted);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		CUpti_ActivityMemcpy6 *m = rec;
		MAP(m->start), MAP(m->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		CUpti_ActivityMemset4 *m = rec;
		MAP(m->start), MAP(m->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		CUpti_ActivitySynchronization2 *y = rec;
		MAP(y->start), MAP(y->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		CUpti_ActivityOverhead3 *o = rec;
		MAP(o->start), MAP(o->end);
		break;
	}
	default: break;
	}
}
#undef MAP

SG_HIDDEN void sg_emit(const void *rec, size_t size)
{
	union {
		CUpti_ActivityKernel10 k;
		CUpti_ActivityMemcpy6 m;
		CUpti_ActivityMemset4 s;
		CUpti_ActivityAPI a;
		CUpti_ActivitySynchronization2 y;
		CUpti_ActivityOverhead3 o;
		char bytes[512];
	} copy;
	struct tsmap *m = atomic_load_explicit(&g_tsmap, memory_order_acquire);
	if (m && size <= sizeof(copy)) {
		refine(m);
		memcpy(&copy, rec, size);
		shift_times(&copy, m);
		rec = &copy;
	}
	size_t need = ALIGN8(size);
	pthread_mutex_lock(&g_buf_lock);
	for (;;) {
		if (g_cur && buf_fits(g_cur, need + (g_pending_flush ? ALIGN8(sizeof(g_pending_flush_rec)) : 0))) {
			if (g_pending_flush) {
				buf_put(g_cur, &g_pending_flush_rec, sizeof(g_pending_flush_rec));
				g_pending_flush = 0;
			}
			buf_put(g_cur, rec, size);
			break;
		}
		if (g_cur && g_cur->nrec > 0) {
			/* Full: hand it to the worker, as real CUPTI completes buffers from its own thread. */
			enqueue_locked(g_cur);
			g_cur = NULL;
			wake_worker_locked();
		}
		if (g_requesting) {
			pthread_cond_wait(&g_buf_cond, &g_buf_lock);
			continue;
		}
		CUpti_BuffersCallbackRequestFunc req = g_req;
		if (!req || (g_cur && g_cur->nrec == 0)) {
			/* No callbacks, or a fresh buffer too small for one record: the record is lost. */
			g_dropped++;
			break;
		}
		g_requesting = 1;
		pthread_mutex_unlock(&g_buf_lock);
		uint8_t *p = NULL;
		size_t bsize = 0, maxrec = 0;
		uint64_t t0 = simgpu_now();
		simgpu_spin(simgpu_cfg()->cupti_buffer_ns);
		req(&p, &bsize, &maxrec);
		uint64_t t1 = simgpu_now();
		struct buf *b = p ? calloc(1, sizeof(*b)) : NULL;
		pthread_mutex_lock(&g_buf_lock);
		g_requesting = 0;
		pthread_cond_broadcast(&g_buf_cond);
		if (!b) {
			g_dropped++;
			break;
		}
		b->p = p;
		b->size = bsize;
		b->maxrec = maxrec;
		b->requested_ns = t1;
		if (buffer_log_on())
			b->resident = resident_prefix(p, bsize);
		if (g_cur) {
			/* An empty too-small buffer from an earlier request: give it back untouched. */
			enqueue_locked(g_cur);
			wake_worker_locked();
		}
		g_cur = b;
		if (sg_act_on(CUPTI_ACTIVITY_KIND_OVERHEAD) &&
		    buf_fits(b, ALIGN8(sizeof(CUpti_ActivityOverhead3)) + need)) {
			CUpti_ActivityOverhead3 o;
			fill_overhead(&o, CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST, t0, t1);
			buf_put(b, &o, sizeof(o));
		}
	}
	pthread_mutex_unlock(&g_buf_lock);
}

/* Delivers every queued buffer, in order; the caller holds g_deliver_lock. */
static void deliver_queued(void)
{
	for (;;) {
		pthread_mutex_lock(&g_buf_lock);
		struct buf *b = dequeue_locked();
		CUpti_BuffersCallbackCompleteFunc done = g_done;
		pthread_mutex_unlock(&g_buf_lock);
		if (!b)
			return;
		uint64_t t0 = simgpu_now();
		simgpu_spin(simgpu_cfg()->cupti_flush_ns);
		if (done)
			done(NULL, 0, b->p, b->size, b->used);
		uint64_t t1 = simgpu_now();
		buffer_log(b);
		free(b);
		if (sg_act_on(CUPTI_ACTIVITY_KIND_OVERHEAD)) {
			pthread_mutex_lock(&g_buf_lock);
			fill_overhead(&g_pending_flush_rec, CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, t0, t1);
			g_pending_flush = 1;
			pthread_mutex_unlock(&g_buf_lock);
		}
	}
}

static void flush_current(void)
{
	pthread_mutex_lock(&g_deliver_lock);
	pthread_mutex_lock(&g_buf_lock);
	if (g_cur && g_cur->nrec > 0) {
		enqueue_locked(g_cur);
		g_cur = NULL;
	}
	pthread_mutex_unlock(&g_buf_lock);
	deliver_queued();
	pthread_mutex_unlock(&g_deliver_lock);
}

static void *worker_main(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&g_buf_lock);
		int timed_out = 0;
		while (!g_q_head && !timed_out) {
			if (g_flush_period_ms) {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)g_flush_period_ms * 1000000ull;
				ts.tv_sec += (time_t)(ns / 1000000000ull);
				ts.tv_nsec = (long)(ns % 1000000000ull);
				timed_out = pthread_cond_timedwait(&g_work_cond, &g_buf_lock, &ts) != 0;
			} else {
				pthread_cond_wait(&g_work_cond, &g_buf_lock);
			}
		}
		pthread_mutex_unlock(&g_buf_lock);
		if (timed_out) {
			flush_current();
		} else {
			pthread_mutex_lock(&g_deliver_lock);
			deliver_queued();
			pthread_mutex_unlock(&g_deliver_lock);
		}
	}
	return NULL;
}

int simgpu_cupti_register(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
	if (no_driver())
		return CUPTI_ERROR_UNKNOWN;
	if (!req || !done)
		return CUPTI_ERROR_INVALID_PARAMETER;
	/* A second registration replaces the first, as torch.profiler relies on. */
	pthread_mutex_lock(&g_buf_lock);
	g_req = req;
	g_done = done;
	pthread_mutex_unlock(&g_buf_lock);
	return CUPTI_SUCCESS;
}

int simgpu_cupti_flush_all(uint32_t flag)
{
	(void)flag; /* forced or not, every record here is complete */
	if (no_driver())
		return CUPTI_ERROR_UNKNOWN;
	flush_current();
	return CUPTI_SUCCESS;
}

int simgpu_cupti_flush_period(uint32_t ms)
{
	pthread_mutex_lock(&g_buf_lock);
	g_flush_period_ms = ms;
	if (ms)
		wake_worker_locked();
	pthread_mutex_unlock(&g_buf_lock);
	return CUPTI_SUCCESS;
}

size_t simgpu_cupti_dropped(void)
{
	pthread_mutex_lock(&g_buf_lock);
	size_t d = g_dropped;
	pthread_mutex_unlock(&g_buf_lock);
	return d;
}

int simgpu_cupti_next_record(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t off = 0;
	if (*record) {
		uint8_t *cur = (uint8_t *)*record;
		if (cur < buffer || cur >= buffer + valid)
			return CUPTI_ERROR_INVALID_PARAMETER;
		size_t sz = record_size((int)(*record)->kind);
		if (!sz)
			return CUPTI_ERROR_INVALID_KIND;
		off = (size_t)(cur - buffer) + ALIGN8(sz);
	}
	if (off + sizeof(CUpti_Activity) > valid) {
		*record = NULL;
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	CUpti_Activity *r = (CUpti_Activity *)(void *)(buffer + off);
	size_t sz = record_size((int)r->kind);
	if (!sz || off + sz > valid) {
		*record = NULL;
		return sz ? CUPTI_ERROR_MAX_LIMIT_REACHED : CUPTI_ERROR_INVALID_KIND;
	}
	*record = r;
	return CUPTI_SUCCESS;
}

SG_HIDDEN void sg_emit_overhead(int overhead_kind, uint64_t start, uint64_t end)
{
	if (!sg_act_on(CUPTI_ACTIVITY_KIND_OVERHEAD))
		return;
	CUpti_ActivityOverhead3 o;
	fill_overhead(&o, overhead_kind, start, end);
	sg_emit(&o, sizeof(o));
}

/* ---------------------------------------------------------------- external correlation */

#define EXT_DEPTH 64
static __thread uint64_t t_ext[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE][EXT_DEPTH];
static __thread int t_ext_n[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

int simgpu_cupti_push_external(int kind, uint64_t id)
{
	if (no_driver())
		return CUPTI_ERROR_UNKNOWN;
	if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (t_ext_n[kind] >= EXT_DEPTH)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	t_ext[kind][t_ext_n[kind]++] = id;
	return CUPTI_SUCCESS;
}

int simgpu_cupti_pop_external(int kind, uint64_t *id)
{
	if (no_driver())
		return CUPTI_ERROR_UNKNOWN;
	if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (t_ext_n[kind] == 0)
		return CUPTI_ERROR_QUEUE_EMPTY;
	uint64_t v = t_ext[kind][--t_ext_n[kind]];
	if (id)
		*id = v;
	return CUPTI_SUCCESS;
}

/* ---------------------------------------------------------------- records of one API call */

SG_HIDDEN void sg_emit_call(struct simgpu_call *c, uint64_t end, int ret)
{
	int drv = (c->flags & SIMGPU_ENTER_DRIVER_API) != 0;
	int api_kind = drv ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
	if (sg_act_on(api_kind) && !api_off(drv, c->cbid)) {
		/* External ids annotate API records only, one record per kind with an id pushed. */
		if (sg_act_on(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
			for (int k = 1; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
				if (!t_ext_n[k])
					continue;
				CUpti_ActivityExternalCorrelation e;
				memset(&e, 0, sizeof(e));
				e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
				e.externalKind = (CUpti_ExternalCorrelationKind)k;
				e.externalId = t_ext[k][t_ext_n[k] - 1];
				e.correlationId = c->corr;
				sg_emit(&e, sizeof(e));
			}
		}
		CUpti_ActivityAPI a;
		memset(&a, 0, sizeof(a));
		a.kind = (CUpti_ActivityKind)api_kind;
		a.cbid = c->cbid;
		a.start = c->t0;
		a.end = end;
		a.processId = cached_pid();
		a.threadId = sg_thread_id();
		a.correlationId = c->corr;
		a.returnValue = (uint32_t)ret;
		sg_emit(&a, sizeof(a));
	}
	if (c->has_sync && sg_act_on(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))
		sg_emit(&c->sync, sizeof(c->sync));
	switch (c->gpu_kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		if (sg_act_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
			c->gpu.kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			sg_emit(&c->gpu.kernel, sizeof(c->gpu.kernel));
		} else if (sg_act_on(CUPTI_ACTIVITY_KIND_KERNEL)) {
			c->gpu.kernel.kind = CUPTI_ACTIVITY_KIND_KERNEL;
			sg_emit(&c->gpu.kernel, sizeof(c->gpu.kernel));
		}
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		if (sg_act_on(CUPTI_ACTIVITY_KIND_MEMCPY))
			sg_emit(&c->gpu.memcpy, sizeof(c->gpu.memcpy));
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		if (sg_act_on(CUPTI_ACTIVITY_KIND_MEMSET))
			sg_emit(&c->gpu.memset, sizeof(c->gpu.memset));
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------- callback API (one subscriber) */

struct CUpti_Subscriber_st {
	CUpti_CallbackFunc cb;
	void *userdata;
};

static pthread_mutex_t g_sub_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUpti_Subscriber_st *g_sub;
static atomic_uchar g_cb_on_rt[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static atomic_uchar g_cb_on_drv[CUPTI_DRIVER_TRACE_CBID_SIZE];
static atomic_int g_cb_any;

int simgpu_cupti_subscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *userdata)
{
	if (no_driver())
		return CUPTI_ERROR_UNKNOWN;
	if (!sub)
		return CUPTI_ERROR_INVALID_PARAMETER;
	int err = CUPTI_SUCCESS;
	pthread_mutex_lock(&g_sub_lock);
	if (g_sub) {
		err = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
		goto out;
	}
	g_sub = calloc(1, sizeof(*g_sub));
	if (!g_sub) {
		err = CUPTI_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	g_sub->cb = cb;
	g_sub->userdata = userdata;
	*sub = g_sub;
out:
	pthread_mutex_unlock(&g_sub_lock);
	return err;
}

static void callbacks_clear(void)
{
	for (size_t i = 0; i < CUPTI_RUNTIME_TRACE_CBID_SIZE; i++)
		atomic_store(&g_cb_on_rt[i], 0);
	for (size_t i = 0; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
		atomic_store(&g_cb_on_drv[i], 0);
	atomic_store(&g_cb_any, 0);
}

int simgpu_cupti_unsubscribe(CUpti_SubscriberHandle sub)
{
	int err = CUPTI_SUCCESS;
	pthread_mutex_lock(&g_sub_lock);
	if (!sub || sub != g_sub) {
		err = CUPTI_ERROR_INVALID_PARAMETER;
		goto out;
	}
	callbacks_clear();
	/* A callback may be running on another thread: the handle is leaked rather than freed under it. */
	g_sub = NULL;
out:
	pthread_mutex_unlock(&g_sub_lock);
	return err;
}

int simgpu_cupti_enable_callback(uint32_t enable, CUpti_SubscriberHandle sub, int domain, int cbid)
{
	if (!sub || sub != g_sub)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid > 0 && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		atomic_store(&g_cb_on_rt[cbid], enable ? 1 : 0);
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid > 0 && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		atomic_store(&g_cb_on_drv[cbid], enable ? 1 : 0);
	else if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (enable)
		atomic_store(&g_cb_any, 1);
	return CUPTI_SUCCESS;
}

int simgpu_cupti_enable_domain(uint32_t enable, CUpti_SubscriberHandle sub, int domain)
{
	if (!sub || sub != g_sub)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		for (size_t i = 1; i < CUPTI_RUNTIME_TRACE_CBID_SIZE; i++)
			atomic_store(&g_cb_on_rt[i], enable ? 1 : 0);
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		for (size_t i = 1; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
			atomic_store(&g_cb_on_drv[i], enable ? 1 : 0);
	} else if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	if (enable)
		atomic_store(&g_cb_any, 1);
	return CUPTI_SUCCESS;
}

int simgpu_cupti_callback_name(int domain, uint32_t cbid, const char **name)
{
	if (!name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *n = NULL;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < sizeof(sg_runtime_cbid_names) / sizeof(char *))
		n = sg_runtime_cbid_names[cbid];
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < sizeof(sg_driver_cbid_names) / sizeof(char *))
		n = sg_driver_cbid_names[cbid];
	if (!n || cbid == 0)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*name = n;
	return CUPTI_SUCCESS;
}

/* Callback data names the function without its _vNNNN suffix, like real CUPTI. */
static const char *function_name(int domain, uint32_t cbid, char *tmp, size_t n)
{
	const char *full = NULL;
	if (simgpu_cupti_callback_name(domain, cbid, &full) != CUPTI_SUCCESS)
		return "";
	const char *v = strrchr(full, '_');
	size_t len = strlen(full);
	if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9')
		len = (size_t)(v - full);
	if (len >= n)
		len = n - 1;
	memcpy(tmp, full, len);
	tmp[len] = '\0';
	return tmp;
}

SG_HIDDEN void sg_callback_api(struct simgpu_call *c, int site, int ret)
{
	if (!atomic_load_explicit(&g_cb_any, memory_order_relaxed))
		return;
	int drv = (c->flags & SIMGPU_ENTER_DRIVER_API) != 0;
	int domain = drv ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	if (drv ? (c->cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE || !atomic_load(&g_cb_on_drv[c->cbid]))
		: (c->cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE || !atomic_load(&g_cb_on_rt[c->cbid])))
		return;
	struct CUpti_Subscriber_st *s = g_sub;
	if (!s || !s->cb)
		return;
	char fname[128];
	CUpti_CallbackData d;
	memset(&d, 0, sizeof(d));
	d.callbackSite = (CUpti_ApiCallbackSite)site;
	d.functionName = function_name(domain, c->cbid, fname, sizeof(fname));
	d.functionParams = NULL; /* not simulated: consumers must not rely on parameters here */
	d.functionReturnValue = &ret;
	d.symbolName = c->symbol;
	d.context = NULL;
	d.contextUid = SG_CONTEXT_ID;
	d.correlationData = &c->cb_data;
	d.correlationId = c->corr;
	s->cb(s->userdata, (CUpti_CallbackDomain)domain, c->cbid, &d);
}

int simgpu_cupti_finalize(void)
{
	flush_current();
	for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		atomic_store(&g_kind_on[k], 0);
	for (size_t i = 0; i < CUPTI_RUNTIME_TRACE_CBID_SIZE; i++)
		atomic_store(&g_api_off_rt[i], 0);
	for (size_t i = 0; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
		atomic_store(&g_api_off_drv[i], 0);
	pthread_mutex_lock(&g_sub_lock);
	callbacks_clear();
	g_sub = NULL;
	pthread_mutex_unlock(&g_sub_lock);
	pthread_mutex_lock(&g_buf_lock);
	g_req = NULL;
	g_done = NULL;
	pthread_mutex_unlock(&g_buf_lock);
	return CUPTI_SUCCESS;
}

/* ---------------------------------------------------------------- fork */

SG_HIDDEN void sg_activity_atfork_prepare(void)
{
	/* Not g_deliver_lock: it is held while the client's buffer-completed callback runs. */
	pthread_mutex_lock(&g_buf_lock);
	pthread_mutex_lock(&g_sub_lock);
}

SG_HIDDEN void sg_activity_atfork_parent(void)
{
	pthread_mutex_unlock(&g_sub_lock);
	pthread_mutex_unlock(&g_buf_lock);
}

SG_HIDDEN void sg_activity_atfork_child(void)
{
	/*
	 * The worker did not survive the fork; the next full buffer starts a new one. Buffers holding the
	 * parent's records are forgotten, so a child's flush never delivers the parent's records a second time.
	 */
	g_cur = NULL;
	g_q_head = g_q_tail = NULL;
	g_pending_flush = 0;
	g_worker_started = 0;
	g_requesting = 0;
	g_pid = 0;
	t_tid = 0; /* the forking thread's TLS is the child's only thread */
	pthread_mutex_unlock(&g_sub_lock);
	pthread_mutex_unlock(&g_buf_lock);
	pthread_mutex_init(&g_deliver_lock, NULL);
	pthread_cond_init(&g_buf_cond, NULL);
	pthread_cond_init(&g_work_cond, NULL);
}
