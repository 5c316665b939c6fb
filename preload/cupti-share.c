/* Sharing CUPTI with the program's own profiler: cprof stays CUPTI's one client and copies the records of the kinds the program enabled into buffers from the program's own callbacks. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define PR_FMT "cprof: cupti"
#include "common/log.h"
#include "preload/cupti-share.h"

#define CBIDS 4096

static struct {
	/* the program's buffer and the counts; held around the program's callbacks, never around a CUPTI call */
	pthread_mutex_t lock;
	_Atomic int active;
	_Atomic int stopped; /* the image ends (exit, exec, crash): the program's profiler may be gone already */
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;
	__typeof__(&cuptiActivityGetNextRecord) next_record;
	__typeof__(&cuptiGetTimestamp) timestamp;
	_Atomic uint8_t kind_on[CUPTI_ACTIVITY_KIND_COUNT];
	_Atomic uint8_t api_off[2][CBIDS];
	uint8_t *buf;
	size_t size, used, max_records, records, kernels;
	struct cprof_share_counts n;
	/* the program's clock: p = p0 + (t - c0) * rate, t in CUPTI's own clock */
	CUpti_TimestampCallbackFunc ts;
	uint64_t c0, p0;
	double rate;
} sh = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* set while this thread runs one of the program's callbacks: a CUPTI call it makes from there must not copy */
static __thread int in_program;

void cprof_share_init(__typeof__(&cuptiActivityGetNextRecord) next_record, __typeof__(&cuptiGetTimestamp) timestamp)
{
	sh.next_record = next_record;
	sh.timestamp = timestamp;
}

int cprof_share_active(void)
{
	return atomic_load(&sh.active);
}

void cprof_share_register(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
	pthread_mutex_lock(&sh.lock);
	sh.req = req;
	sh.done = done;
	pthread_mutex_unlock(&sh.lock);
	atomic_store(&sh.active, req != NULL && done != NULL);
}

int cprof_share_kind(CUpti_ActivityKind kind, int on)
{
	if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return 0;
	return atomic_exchange(&sh.kind_on[kind], on ? 1 : 0);
}

int cprof_share_kind_on(CUpti_ActivityKind kind)
{
	return (unsigned)kind < CUPTI_ACTIVITY_KIND_COUNT && atomic_load(&sh.kind_on[kind]);
}

static int any_kind_on(void)
{
	for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		if (atomic_load_explicit(&sh.kind_on[k], memory_order_relaxed))
			return 1;
	return 0;
}

void cprof_share_api(int driver, uint32_t cbid, int enable)
{
	if (cbid < CBIDS)
		atomic_store(&sh.api_off[!!driver][cbid], enable ? 0 : 1);
}

static uint64_t cupti_now(void)
{
	uint64_t t = 0;

	if (sh.timestamp == NULL || sh.timestamp(&t) != CUPTI_SUCCESS)
		return 0;
	return t;
}

void cprof_share_timestamps(CUpti_TimestampCallbackFunc func)
{
	uint64_t c0, p0, c1, p1;
	struct timespec pause = { 0, 2000000 };

	if (func == NULL)
		return;
	/* the program's clock need not tick in nanoseconds (Kineto's counts the TSC): its rate over 2 ms, refined
	 * at each copy against the first pair */
	c0 = cupti_now();
	p0 = func();
	nanosleep(&pause, NULL);
	c1 = cupti_now();
	p1 = func();
	pthread_mutex_lock(&sh.lock);
	sh.ts = func;
	sh.c0 = c0;
	sh.p0 = p0;
	sh.rate = c1 > c0 && p1 > p0 ? (double)(p1 - p0) / (double)(c1 - c0) : 1.0;
	pthread_mutex_unlock(&sh.lock);
}

/* lock held */
static void refine_clock(void)
{
	uint64_t c, p;

	if (sh.ts == NULL)
		return;
	/* at every copy: the records copied are older than now, so their error stays that of one pair of reads */
	c = cupti_now();
	if (c < sh.c0 + 2000000ull)
		return;
	in_program = 1;
	p = sh.ts();
	in_program = 0;
	if (p > sh.p0)
		sh.rate = (double)(p - sh.p0) / (double)(c - sh.c0);
}

static uint64_t to_program(uint64_t t)
{
	if (sh.ts == NULL || t == 0)
		return t;
	return sh.p0 + (uint64_t)(int64_t)((double)(int64_t)(t - sh.c0) * sh.rate);
}

#define MAP(x) ((x) = to_program(x))
/* the copy's times in the program's clock: the kinds whose time fields cprof knows */
static void map_times(CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		CUpti_ActivityAPI *a = (void *)r;
		MAP(a->start), MAP(a->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		CUpti_ActivityKernel10 *k = (void *)r;
		MAP(k->start), MAP(k->end), MAP(k->completed);
		if (k->queued)
			MAP(k->queued), MAP(k->submitted);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		CUpti_ActivityMemcpy6 *m = (void *)r;
		MAP(m->start), MAP(m->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		CUpti_ActivityMemset4 *m = (void *)r;
		MAP(m->start), MAP(m->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		CUpti_ActivitySynchronization2 *y = (void *)r;
		MAP(y->start), MAP(y->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		CUpti_ActivityOverhead3 *o = (void *)r;
		MAP(o->start), MAP(o->end);
		break;
	}
	default:
		break;
	}
}
#undef MAP

static int is_kernel(CUpti_ActivityKind k)
{
	return k == CUPTI_ACTIVITY_KIND_KERNEL || k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

/* the kind the program's copy carries, or 0 when the program did not ask for this record */
static CUpti_ActivityKind wanted(const CUpti_Activity *r)
{
	CUpti_ActivityKind k = r->kind;

	if (is_kernel(k)) {
		if (cprof_share_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
			return CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		return cprof_share_kind_on(CUPTI_ACTIVITY_KIND_KERNEL) ? CUPTI_ACTIVITY_KIND_KERNEL : 0;
	}
	if (!cprof_share_kind_on(k))
		return 0;
	if (k == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION &&
	    ((const CUpti_ActivityExternalCorrelation *)(const void *)r)->externalKind ==
		    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2)
		return 0; /* cprof's own ids */
	if (k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER) {
		uint32_t cbid = ((const CUpti_ActivityAPI *)(const void *)r)->cbid;

		if (cbid < CBIDS && atomic_load(&sh.api_off[k == CUPTI_ACTIVITY_KIND_DRIVER][cbid]))
			return 0;
	}
	return k;
}

/* lock held: the current buffer back to the program */
static void give_back(void)
{
	uint8_t *b = sh.buf;

	if (b == NULL)
		return;
	sh.buf = NULL;
	sh.n.handed += sh.records;
	sh.n.kernels += sh.kernels;
	sh.n.pending = 0;
	sh.n.buffers++;
	in_program = 1;
	sh.done(NULL, 0, b, sh.size, sh.used);
	in_program = 0;
}

/* lock held: a buffer from the program's own callback, as CUPTI would ask for one */
static int ask_buffer(void)
{
	uint8_t *b = NULL;
	size_t size = 0, max = 0;

	in_program = 1;
	sh.req(&b, &size, &max);
	in_program = 0;
	if (b == NULL)
		return -1;
	sh.buf = b;
	sh.size = size;
	sh.used = 0;
	sh.max_records = max;
	sh.records = 0;
	sh.kernels = 0;
	return 0;
}

static int fits(size_t n)
{
	return sh.used + n <= sh.size && (sh.max_records == 0 || sh.records < sh.max_records);
}

/* lock held: one record of n bytes (its stride in CUPTI's buffer, padding included) */
static void copy_record(const CUpti_Activity *r, size_t n, CUpti_ActivityKind kind)
{
	CUpti_Activity *c;

	if (sh.buf != NULL && !fits(n)) {
		if (sh.records == 0) {
			/* a buffer too small for one record: CUPTI drops the record; so does this */
			sh.n.missed++;
			return;
		}
		give_back();
	}
	if (sh.buf == NULL && ask_buffer() < 0) {
		sh.n.missed++;
		return;
	}
	if (!fits(n)) {
		sh.n.missed++;
		return;
	}
	c = (CUpti_Activity *)(void *)(sh.buf + sh.used);
	memcpy(c, r, n);
	c->kind = kind;
	map_times(c);
	sh.used += n;
	sh.records++;
	sh.n.pending++;
	if (is_kernel(kind))
		sh.kernels++;
}

void cprof_share_forward(uint8_t *buf, size_t valid)
{
	CUpti_Activity *rec = NULL, *prev = NULL;
	CUpti_ActivityKind kind = 0, prev_kind = 0;

	if (!atomic_load(&sh.active) || buf == NULL || valid == 0 || sh.next_record == NULL)
		return;
	if (atomic_load(&sh.stopped)) {
		/* its callbacks are not called once the image ends (Kineto's singleton is destroyed before cprof's
		 * exit handler runs): what it would have got is counted as still in its buffer */
		while (sh.next_record(buf, valid, &rec) == CUPTI_SUCCESS)
			if (wanted(rec)) {
				pthread_mutex_lock(&sh.lock);
				sh.n.pending++;
				pthread_mutex_unlock(&sh.lock);
			}
		return;
	}
	if (in_program) {
		/* the program's own callback flushed: copying now would write into the buffer it is handed */
		while (sh.next_record(buf, valid, &rec) == CUPTI_SUCCESS)
			if (wanted(rec)) {
				pthread_mutex_lock(&sh.lock);
				sh.n.missed++;
				pthread_mutex_unlock(&sh.lock);
			}
		return;
	}
	pthread_mutex_lock(&sh.lock);
	if (sh.req == NULL || sh.done == NULL)
		goto out;
	refine_clock();
	/* a record's size is the distance to the next one: the copy keeps CUPTI's own layout and padding */
	while (sh.next_record(buf, valid, &rec) == CUPTI_SUCCESS) {
		if (prev != NULL && prev_kind)
			copy_record(prev, (size_t)((uint8_t *)rec - (uint8_t *)prev), prev_kind);
		kind = wanted(rec);
		prev = rec;
		prev_kind = kind;
	}
	if (prev != NULL && prev_kind)
		copy_record(prev, (size_t)(buf + valid - (uint8_t *)prev), prev_kind);
out:
	pthread_mutex_unlock(&sh.lock);
}

void cprof_share_stop(void)
{
	atomic_store(&sh.stopped, 1);
}

void cprof_share_resume(void)
{
	atomic_store(&sh.stopped, 0);
}

void cprof_share_complete(int more)
{
	if (!atomic_load(&sh.active) || in_program || atomic_load(&sh.stopped))
		return;
	pthread_mutex_lock(&sh.lock);
	if (sh.done != NULL)
		give_back();
	/* a program (Kineto) asks CUPTI for its records only while it holds a buffer CUPTI has not given back,
	 * as it always does with CUPTI: the next one is asked for now, not at the next record */
	if (more && sh.req != NULL && sh.buf == NULL && any_kind_on())
		ask_buffer();
	pthread_mutex_unlock(&sh.lock);
}

void cprof_share_finalize(void)
{
	cprof_share_complete(0);
	pthread_mutex_lock(&sh.lock);
	sh.req = NULL;
	sh.done = NULL;
	sh.ts = NULL;
	pthread_mutex_unlock(&sh.lock);
	atomic_store(&sh.active, 0);
	for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		atomic_store(&sh.kind_on[k], 0);
	for (int d = 0; d < 2; d++)
		for (int i = 0; i < CBIDS; i++)
			atomic_store(&sh.api_off[d][i], 0);
}

void cprof_share_counts(struct cprof_share_counts *c)
{
	pthread_mutex_lock(&sh.lock);
	*c = sh.n;
	pthread_mutex_unlock(&sh.lock);
}

void cprof_share_reset_after_fork(void)
{
	/* the program's profiler does not follow CUDA into a child: nothing is copied there */
	pthread_mutex_init(&sh.lock, NULL);
	atomic_store(&sh.active, 0);
	sh.buf = NULL;
}
