/* The GPU lane: a CUPTI Activity API session inside the target, its buffers, and sharing it when the target uses CUPTI itself. */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cupti.h>

#define PR_FMT "cprof: cupti"
#include "common/log.h"
#include "preload/cprof.h"
#include "preload/cupti-share.h"
#include "preload/fifo.h"

#define CUPTI_SONAME "libcupti.so.13"
#define BUF_SIZE (4u << 20)
#define HUGE_PAGE (2u << 20)

CPROF_HIDDEN _Atomic int cprof_cupti_on = CPROF_CUPTI_PENDING;
CPROF_HIDDEN _Atomic int cprof_queries_counted;

/* The device queries the hooks count once CUPTI makes no records of them, in enum cprof_counted_slot's order */
static const uint32_t counted_cbid[CPROF_COUNTED__QUERIES] = {
	[CPROF_COUNTED_cudaGetDevice] = CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
	[CPROF_COUNTED_cudaGetDeviceFlags] = CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceFlags_v7000,
	[CPROF_COUNTED_cudaDeviceGetAttribute] = CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
	[CPROF_COUNTED_cudaDriverGetVersion] = CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
	[CPROF_COUNTED_cudaRuntimeGetVersion] = CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
	[CPROF_COUNTED_cudaGetLastError] = CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
	[CPROF_COUNTED_cudaPeekAtLastError] = CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
};
#define COUNTED_API_(s) CPROF_API_##s,
CPROF_HIDDEN const uint16_t cprof_counted_api[CPROF_COUNTED__N] = { CPROF_COUNTED_QUERIES(COUNTED_API_)
								    CPROF_COUNTED_SETTINGS(COUNTED_API_) };
/* The driver queries cudart makes around most calls (cuDevicePrimaryCtxGetState: ~450 a training step):
 * CUPTI's records of them are switched off, as Kineto switches them off; they are not hooked, so not counted */
static const uint32_t quiet_driver_cbid[] = {
	CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
	CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
	CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
};

/* The occupancy calculator, which cuBLAS (and cuDNN) ask before most kernels they launch, through their own
 * runtime, unhooked: one of the eager PyTorch step's three CUPTI API records, and its external id another (12% of
 * the training step's). Host-only queries, whose time is inside the library's call. CUPTI records them until the
 * flusher's periodic round finds it has sent CPROF_OCCUPANCY_GEMMS recorded GEMM calls (its first round, ~50 ms of
 * GEMMs: cuBLAS asks inside them, so the occupancy-before-launch finding has those), then cprof switches their
 * records off and says so (CPROF_STATUS queries-sampled). Not while the program's own CUPTI client shares the
 * session (Kineto keeps them); once off, they stay off for it too, as the device queries do. */
static const uint32_t occupancy_cbid[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000,
	CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050,
	CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000,
};
static _Atomic int occupancy_quiet; /* 1 once enough GEMMs were seen: their records stay off */
static int occupancy_tried;         /* the flusher's: the switch was made, or refused (not asked again) */

struct done_buf {
	struct done_buf *next;
	uint8_t *buf;
	size_t valid;
	size_t charge; /* counted in done_bytes */
	int keep; /* 0: completed while cprof was paused, with records only the program asked for */
};

static struct {
	void *lib;
	__typeof__(&cuptiActivityRegisterCallbacks) register_callbacks;
	__typeof__(&cuptiActivityEnable) enable;
	__typeof__(&cuptiActivityDisable) disable;
	__typeof__(&cuptiActivityFlushAll) flush_all;
	__typeof__(&cuptiActivityGetNextRecord) next_record;
	__typeof__(&cuptiActivityGetNumDroppedRecords) dropped;
	__typeof__(&cuptiActivityPushExternalCorrelationId) push;
	__typeof__(&cuptiActivityPopExternalCorrelationId) pop;
	__typeof__(&cuptiGetResultString) result_string;
	__typeof__(&cuptiGetCallbackName) callback_name;
	__typeof__(&cuptiGetTimestamp) timestamp;
	__typeof__(&cuptiActivityEnableRuntimeApi) enable_runtime_api; /* CUPTI 12.5 on; NULL before */
	__typeof__(&cuptiActivityEnableDriverApi) enable_driver_api;
	_Atomic int started;   /* our session exists (and may be flushed) */
	_Atomic int conflict;  /* the target used CUPTI before cprof's session could start: left to it */
	_Atomic int paused;    /* outside a capture window: cprof keeps no records (the program may) */
	_Atomic int quiet;     /* paused with every kind of cprof's off: a call now costs CUPTI nothing of cprof's */
	_Atomic int orphaned;  /* cprof stopped for good (cprof_cupti_orphan): completed buffers are dropped */
	_Atomic int shared_said; /* the sharing was announced */
	struct cprof_share_counts said; /* the counts last sent as a status */
	pthread_mutex_t lock;  /* the completed-buffer list only; never held around a CUPTI call */
	struct done_buf *done, **done_tail;
	int atexit_registered;
} cu = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *result_str(CUptiResult r)
{
	const char *s = NULL;

	if (cu.result_string == NULL || cu.result_string(r, &s) != CUPTI_SUCCESS || s == NULL)
		return "unknown CUPTI error";
	return s;
}

static void status(uint32_t code, int32_t err, const char *fmt, const char *arg)
{
	char text[PATH_MAX + 256];

	snprintf(text, sizeof(text), fmt, arg);
	text[239] = '\0'; /* the wire carries 240 bytes */
	cprof_flusher_status(code, err, text);
}

static void *try_open(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	pr_dbg("trying %s: %s", path, h ? "ok" : dlerror());
	return h;
}

/* An already loaded copy, then next to the real libcudart, then the toolkit. */
static void *load_cupti(char *where, size_t size)
{
	const char *forced = getenv("CPROF_CUPTI_PATH");
	const char *cuda_home = getenv("CUDA_HOME");
	char path[PATH_MAX];
	Dl_info info;
	void *h, *sym;

	if (forced && *forced) {
		snprintf(where, size, "%s", forced);
		return try_open(forced);
	}
	h = dlopen(CUPTI_SONAME, RTLD_NOW | RTLD_NOLOAD);
	if (h) {
		snprintf(where, size, "already loaded %s", CUPTI_SONAME);
		return h;
	}
	/* next to the CUDA library the program really uses: cudart, or the driver for driver-API programs */
	for (int i = 0; i < 2; i++) {
		static const char *const libs[][2] = { { "libcudart.so.13", "cudaGetDeviceCount" },
						       { "libcuda.so.1", "cuInit" } };
		void *lh = dlopen(libs[i][0], RTLD_LAZY | RTLD_NOLOAD);

		sym = lh ? dlsym(lh, libs[i][1]) : NULL;
		if (lh)
			dlclose(lh);
		if (sym && dladdr(sym, &info) && info.dli_fname) {
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%s", info.dli_fname);
			snprintf(path, sizeof(path), "%s/%s", dirname(dir), CUPTI_SONAME);
			if ((h = try_open(path))) {
				snprintf(where, size, "%s", path);
				return h;
			}
		}
	}
	if (cuda_home == NULL || *cuda_home == '\0')
		cuda_home = "/usr/local/cuda";
	snprintf(path, sizeof(path), "%s/lib64/%s", cuda_home, CUPTI_SONAME);
	if ((h = try_open(path))) {
		snprintf(where, size, "%s", path);
		return h;
	}
	snprintf(path, sizeof(path), "%s/extras/CUPTI/lib64/%s", cuda_home, CUPTI_SONAME);
	if ((h = try_open(path))) {
		snprintf(where, size, "%s", path);
		return h;
	}
	snprintf(where, size, "not found next to libcudart, in %s/lib64 or %s/extras/CUPTI/lib64", cuda_home,
		 cuda_home);
	return NULL;
}

/* what completed buffers not yet converted keep resident (done_buf.charge): the flusher defers converting while
 * the machine has no spare core, up to a cap (CPROF_DEFER_MB) */
static _Atomic uint64_t done_bytes;

uint64_t cprof_cupti_pending_bytes(void)
{
	return atomic_load_explicit(&done_bytes, memory_order_relaxed);
}

/* The flusher's place in the completed buffers between two calls: a round converts at most max records, so
 * that what it holds for the pipe stays in the cache (a whole 4 MiB buffer's 40,000 records did not). */
static struct {
	struct done_buf *list; /* taken from cu.done, not yet converted; list->buf is the one in progress */
	CUpti_Activity *rec;   /* the last record read from it, NULL before its first */
	struct cprof_wire_gpu ext; /* an external id read, its API record not yet */
	int have_ext;
} collecting;

/* CUPTI's completed buffers, taken off the list buffer_completed appends to */
static struct done_buf *done_take(void)
{
	struct done_buf *d;

	pthread_mutex_lock(&cu.lock);
	d = cu.done;
	cu.done = NULL;
	cu.done_tail = &cu.done;
	pthread_mutex_unlock(&cu.lock);
	return d;
}

/* buffers behind those collect had taken: it converts them in order */
static void collecting_append(struct done_buf *d)
{
	struct done_buf **tail = &collecting.list;

	while (*tail)
		tail = &(*tail)->next;
	*tail = d;
}

/* The image's end against the orphan step (cprof_cupti_orphan): once it began, cprof calls CUPTI no more from the
 * flusher, whose libraries the exit is about to unload; an exit waits for an orphan step under way (a flush and
 * the kinds' switches) */
static pthread_mutex_t end_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int ending;

/* Buffers for CUPTI's next requests: those the flusher converted, and fresh ones it wrote ahead
 * (cprof_cupti_pool_fill). A fresh 4 MiB block page-faults on the thread CUPTI writes its records from (~1,000
 * faults a full buffer; docs/bench.md, sixth session). */
#define BUF_POOL 2
/* lock-free: CUPTI asks from whichever thread fills a buffer, a crash handler's flush may complete one */
static _Atomic(void *) pool[BUF_POOL];

/* buffers made (each a fresh block whose pages someone clears) and spares reused, for the exit's debug log */
static _Atomic uint64_t buffers_made, buffers_reused;

/* A plain malloc'd block (if another tool takes CUPTI over, it gets our buffers and free()s them). huge: aligned to a
 * huge page and marked for them: a fresh buffer costs the thread that first writes it 2 page faults instead of ~1,000
 * (docs/bench.md, thirteenth session), but each clears 2 MiB, and where memory must be compacted first that took
 * 7-55 ms on the program's thread inside a window's cudaProfilerStart, beside one `yes` (docs/bench.md,
 * twenty-ninth session): cprof_cupti_pool_fill keeps the windows' buffers off it. Otherwise on 4 KiB pages (under THP
 * "always" its first write would clear 2 MiB too), for a buffer written ahead a step at a time (stage_step). NULL when
 * there is no memory. */
static void *buffer_new(int huge)
{
	void *p;

	atomic_fetch_add_explicit(&buffers_made, 1, memory_order_relaxed);
	if (posix_memalign(&p, huge ? HUGE_PAGE : 4096, BUF_SIZE) != 0)
		return NULL;
	madvise(p, BUF_SIZE, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE); /* advice only */
	return p;
}

/* p into an empty one of n lock-free slots (the pool's, the spares'); 0 when none was */
static int slots_put(_Atomic(void *) *slots, int n, void *p)
{
	for (int i = 0; i < n; i++) {
		void *none = NULL;

		if (atomic_compare_exchange_strong(&slots[i], &none, p))
			return 1;
	}
	return 0;
}

/* a buffer out of one of n slots; NULL when all were empty */
static void *slots_take(_Atomic(void *) *slots, int n)
{
	void *p = NULL;

	for (int i = 0; i < n && p == NULL; i++)
		p = atomic_exchange(&slots[i], NULL);
	return p;
}

static int pool_put(void *p)
{
	return slots_put(pool, BUF_POOL, p);
}

/* The bytes CUPTI wrote into the buffers it completed lately, the most of them, decaying by a quarter a buffer:
 * how far the pool's fresh buffers are written ahead (a window's buffer holds ~300 KB of a training block's records;
 * a whole run's fill their 4 MiB) */
static _Atomic size_t recent_valid;
#define POOL_AHEAD_MIN (256u << 10) /* a window's records that grew past the last ones' quarter */

/* What a buffer with valid bytes of records keeps resident once written ahead: those and a quarter more, 256 KiB at
 * least, rounded up to unit (a power of two), at most the buffer. The least is rounded too: a held buffer's charge
 * (unit a huge page) was 256 KiB for a small window's records until 2026-12-07, where its first write had made a 2 MiB
 * page resident, and 24 such windows fitted under an 8 MiB cap, every one a fresh buffer (t-cupti-reuse) */
static size_t ahead_of(size_t valid, size_t unit)
{
	size_t ahead = valid + valid / 4;

	ahead = ahead < POOL_AHEAD_MIN ? POOL_AHEAD_MIN : ahead;
	ahead = (ahead + unit - 1) & ~(unit - 1);
	return ahead < BUF_SIZE ? ahead : BUF_SIZE;
}

/* How far the pool's buffers are written ahead: as far as CUPTI wrote into its recent buffers (a quarter of a buffer
 * before any completed) */
static size_t pool_ahead(void)
{
	size_t seen = atomic_load_explicit(&recent_valid, memory_order_relaxed);

	return seen ? ahead_of(seen, 65536) : BUF_SIZE / 4;
}

/* this thread clears the pages of p's first n bytes that are not resident yet; a resident page costs a store */
static void write_ahead(void *p, size_t n)
{
	for (size_t off = 0; off < n; off += 4096)
		((volatile uint8_t *)p)[off] = 0;
}

/* Converted buffers the pool had no slot for, kept with their pages for the next fresh one the pool needs. A buffer
 * freed went back to the kernel (4 MiB is over malloc's mmap threshold), and the next one cleared its pages again:
 * while deferring, each window's pause filled the pool with fresh buffers and each held one was freed once
 * converted, and the flusher spent 130-320 ms of a 3 s busy eager run (24 windows) clearing pages in write_ahead,
 * several us a step in some runs (`perf`, 2026-12-07, thirty-second session). As many as the cap can bring back at once
 * (a held buffer counts 2 MiB at least: CPROF_DEFER_MB / 2) and one for the buffer a slot CUPTI emptied is staged
 * from, 16 at most: kept for the process's life (until orphaned), the program's memory stays where deferring took it
 * instead of being cleared again for each window. Only the flusher puts one here (and frees them, orphaned). */
#define BUF_SPARE 16
static _Atomic(void *) spare[BUF_SPARE];
static int spare_max = 1; /* cprof_cupti_spares, before the flusher starts */

void cprof_cupti_spares(unsigned defer_mb)
{
	spare_max = defer_mb / 2 + 1 < BUF_SPARE ? (int)(defer_mb / 2 + 1) : BUF_SPARE;
}

/* p kept as a spare; 0 when every spare slot is taken */
static int spare_put(void *p)
{
	return slots_put(spare, spare_max, p);
}

/* A buffer for the pool: a spare (its pages resident already) or a new one (huge: as buffer_new) */
static void *buffer_get(int huge)
{
	void *p = slots_take(spare, BUF_SPARE);

	if (p == NULL)
		return buffer_new(huge);
	atomic_fetch_add_explicit(&buffers_reused, 1, memory_order_relaxed);
	return p;
}

void cprof_cupti_buffer_counts(uint64_t *made, uint64_t *reused)
{
	*made = atomic_load_explicit(&buffers_made, memory_order_relaxed);
	*reused = atomic_load_explicit(&buffers_reused, memory_order_relaxed);
}

/* the spares back to malloc (the collector is gone: no buffer will be needed) */
static void spares_free(void)
{
	for (int i = 0; i < BUF_SPARE; i++)
		free(atomic_exchange(&spare[i], NULL));
}

/* ahead: the flusher's, written ahead before it goes into the pool (a converted buffer has only the pages its records
 * took, and the next window may write more); 0 from elsewhere */
static void buffer_recycle(void *p, size_t ahead)
{
	for (int i = 0; i < BUF_POOL; i++) {
		if (atomic_load(&pool[i]) != NULL)
			continue;
		write_ahead(p, ahead); /* only when a slot may take it */
		if (pool_put(p))
			return;
		break;
	}
	/* once orphaned, no buffer will be asked for: spares_free has run or is about to */
	if (atomic_load(&cu.orphaned) || !spare_put(p))
		free(p);
}

/* A completed buffer done with: its charge against CPROF_DEFER_MB off, the buffer back to the pool (ahead: as
 * buffer_recycle) */
static void done_release(struct done_buf *d, size_t ahead)
{
	atomic_fetch_sub_explicit(&done_bytes, d->charge, memory_order_relaxed);
	buffer_recycle(d->buf, ahead);
	free(d);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *p = NULL;

	*max_records = 0;
	p = slots_take(pool, BUF_POOL);
	if (p == NULL && (p = buffer_get(1)) == NULL) {
		*buffer = NULL;
		*size = 0;
		return;
	}
	*buffer = p;
	*size = BUF_SIZE;
}

/* Flusher thread, in its rounds once CUPTI has started: an empty slot of the pool gets a fresh buffer whose pages
 * this thread writes ahead (pool_ahead), so that CUPTI's next request costs the asking thread no page clearing (the
 * records past that part it still clears itself). A slot is empty while CUPTI holds the buffer it took; that one
 * comes back once the flusher has converted it, written ahead too. So the pool is filled once at CUPTI's start, and
 * then while cprof is paused between windows with buffers held unconverted (the flusher defers CUPTI's records
 * while the machine is busy): each window would get a fresh buffer otherwise. While recording only a step at a time on
 * small pages (stage_step): writing 4 MiB of huge pages can take this thread tens of ms while the rings fill (with the
 * pool filled so in every round while deferring, t-rel-defer lost 32,546 events to full rings in a CI run, 2026-12-07,
 * a build running beside it). */
static _Atomic int pool_started; /* the first filling was made for this process's session */

/* While recording with buffers held (deferring), none comes back either, and each buffer CUPTI fills asks for a fresh one
 * on the thread that filled it: a whole eager run beside one `yes` took 3-4 of its 5-6 buffers so (SIMGPU_BUFFER_LOG,
 * 2026-12-07), each 2 huge-page faults on that thread, which took 7-55 ms where memory had to be compacted first. So
 * the flusher prepares one on 4 KiB pages (no compaction, no 2 MiB cleared at once), STAGE_STEP a round: its rounds stay
 * short while the rings fill, as writing 4 MiB of huge pages in one did not (t-rel-defer's 32,546 lost events). */
#define STAGE_STEP (2u << 20)
static struct {
	void *buf;   /* being written ahead, not in the pool yet */
	size_t done; /* bytes of it written */
} stage;

static int pool_short(void)
{
	for (int i = 0; i < BUF_POOL; i++)
		if (atomic_load(&pool[i]) == NULL)
			return 1;
	return 0;
}

static void stage_step(size_t ahead)
{
	if (stage.buf == NULL) {
		if ((stage.buf = buffer_get(0)) == NULL)
			return;
		stage.done = 0;
	}
	if (stage.done < ahead) {
		size_t n = ahead - stage.done < STAGE_STEP ? ahead - stage.done : STAGE_STEP;

		write_ahead((uint8_t *)stage.buf + stage.done, n);
		stage.done += n;
		if (stage.done < ahead)
			return;
	}
	if (pool_put(stage.buf))
		stage.buf = NULL;
}

void cprof_cupti_pool_fill(void)
{
	size_t ahead;
	int state;

	/* as the image ends no buffer is needed: writing one would spend the exit's time */
	if (!atomic_load(&cu.started) || atomic_load(&cu.orphaned) || atomic_load(&ending))
		return;
	state = atomic_load(&cprof_state);
	if (atomic_exchange(&pool_started, 1) &&
	    (state != CPROF_ST_PAUSED || atomic_load_explicit(&done_bytes, memory_order_relaxed) == 0)) {
		/* While recording, a slot CUPTI emptied is filled again a step a round (a spare, when one came back, costs
		 * a store a page). A converted buffer comes back only after CUPTI has asked for the next, and a round's
		 * CUPTI flush can complete the one CUPTI just took: with only an empty pool staged for, a cap the rounds
		 * stop deferring at left the buffer after the held ones to the program's thread to clear (t-cupti-pool's
		 * whole run, 2026-12-07). Paused, the pause's fill below does it. */
		if (state == CPROF_ST_ON && pool_short())
			stage_step(pool_ahead());
		return;
	}
	ahead = pool_ahead();
	for (int i = 0; i < BUF_POOL; i++) {
		void *p;

		if (atomic_load(&pool[i]) != NULL)
			continue;
		if ((p = buffer_get(1)) == NULL)
			return;
		write_ahead(p, ahead);
		if (!pool_put(p) && !spare_put(p))
			free(p); /* buffers came back meanwhile */
	}
}

/* Runs on CUPTI's thread or the one flushing: only links the buffer into a list. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	struct done_buf *d;

	(void)ctx;
	(void)stream;
	(void)size;
	if (buffer == NULL)
		return;
	{
		size_t seen = atomic_load_explicit(&recent_valid, memory_order_relaxed);

		atomic_store_explicit(&recent_valid, valid > seen - seen / 4 ? valid : seen - seen / 4,
				      memory_order_relaxed);
	}
	/* the program's copies first: its flush must find them when cuptiActivityFlushAll returns */
	cprof_share_forward(buffer, valid);
	d = malloc(sizeof(*d));
	if (d == NULL) {
		free(buffer);
		return;
	}
	d->next = NULL;
	d->buf = buffer;
	d->valid = valid;
	/* CPROF_DEFER_MB bounds what held buffers keep resident: the huge pages their records or the part written ahead
	 * took (without transparent huge pages, less) */
	d->charge = ahead_of(valid, HUGE_PAGE);
	d->keep = !atomic_load(&cu.paused) || !cprof_share_active();
	pthread_mutex_lock(&cu.lock);
	if (atomic_load(&cu.orphaned)) { /* read under the lock the orphan step empties the list under */
		pthread_mutex_unlock(&cu.lock);
		free(d);
		buffer_recycle(buffer, 0); /* no flusher will take it */
		return;
	}
	*cu.done_tail = d;
	cu.done_tail = &d->next;
	pthread_mutex_unlock(&cu.lock);
	atomic_fetch_add_explicit(&done_bytes, d->charge, memory_order_relaxed);
	cprof_flusher_wake();
}

static void at_exit_flush(void)
{
	pthread_mutex_lock(&end_lock);
	atomic_store(&ending, 1);
	pthread_mutex_unlock(&end_lock);
	/* registered after CUDA started, so it runs before cudart's own teardown */
	cprof_cupti_flush(1);
}

#define RESOLVE(field, name)                                                     \
	do {                                                                     \
		cu.field = (__typeof__(cu.field))dlsym(cu.lib, name);            \
		if (cu.field == NULL) {                                          \
			missing = name;                                          \
			goto fail;                                               \
		}                                                                \
	} while (0)

static void cprof_cupti_start(void);

/* A driver that answers: CUPTI started without one may crash (the 13.2 wheels' CUPTI overflows its stack).
 * cuDriverGetVersion needs no cuInit, so asking does not bring CUDA up early (a fork after cuInit would
 * break a child that uses CUDA). Returns 0, or -1 with the reason in why. */
static int driver_answers(char *why, size_t size, int32_t *err)
{
	static const char *const names[] = { "libcuda.so.1", "libcuda.so" };
	int (*get_version)(int *) = NULL;
	void *h = NULL;
	int v = 0, r;

	*err = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && h == NULL; i++)
		h = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
	if (h == NULL) {
		snprintf(why, size, "no CUDA driver (libcuda.so.1 cannot be loaded)");
		return -1;
	}
	get_version = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
	if (get_version == NULL) {
		snprintf(why, size, "the CUDA driver library lacks cuDriverGetVersion");
		return -1;
	}
	r = get_version(&v);
	if (r != 0 || v <= 0) {
		*err = r;
		/* 34: the toolkit's stub libcuda.so, found on a library path instead of a real driver */
		snprintf(why, size, "the CUDA driver did not answer (cuDriverGetVersion returned %d%s, version %d)", r,
			 r == 34 ? ": the toolkit's stub library" : "", v);
		return -1;
	}
	/* the handle stays open: cudart loads the same library */
	return 0;
}

void cprof_cupti_start_checked(int driver_known)
{
	int expect = CPROF_CUPTI_PENDING;
	char why[200];
	int32_t err;

	if (!atomic_compare_exchange_strong(&cprof_cupti_on, &expect, CPROF_CUPTI_STARTING))
		return; /* started, refused, or another thread is at it: this call goes unpushed */
	if (!driver_known && driver_answers(why, sizeof(why), &err) < 0) {
		pr_warn("%s; CUPTI left alone, recording API calls only", why);
		status(CPROF_STATUS_CUPTI_NO_DRIVER, err, "%s", why);
		atomic_store(&cprof_cupti_on, CPROF_CUPTI_OFF);
		return;
	}
	cprof_cupti_start();
	if (atomic_load(&cprof_cupti_on) == CPROF_CUPTI_STARTING)
		atomic_store(&cprof_cupti_on, CPROF_CUPTI_OFF);
}

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,   CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER,   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_OVERHEAD,          CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};

/* the kinds whose records are GPU work a hooked call queued */
static int gpu_kind(CUpti_ActivityKind kind)
{
	return kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_MEMCPY ||
	       kind == CUPTI_ACTIVITY_KIND_MEMSET;
}

static int cprof_kind(CUpti_ActivityKind kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i] == kind)
			return 1;
	return 0;
}

/* whether cprof's own session needs the kind enabled now */
static int cprof_wants(CUpti_ActivityKind kind)
{
	return atomic_load(&cu.started) && !atomic_load(&cu.conflict) && !atomic_load(&cu.paused) && cprof_kind(kind);
}

/* CUPTI's records of n runtime APIs on or off, each asked; whether CUPTI took every switch (cuptiActivityEnableRuntimeApi,
 * CUPTI 12.5 on: none without it) */
static int runtime_records(const uint32_t *cbid, size_t n, uint8_t on)
{
	int all = cu.enable_runtime_api != NULL;

	for (size_t i = 0; cu.enable_runtime_api && i < n; i++)
		if (cu.enable_runtime_api(cbid[i], on) != CUPTI_SUCCESS)
			all = 0;
	return all;
}

#define NCBID(a) (sizeof(a) / sizeof((a)[0]))

/* the occupancy queries' records off, unless the program's profiler shares the session (it would miss them);
 * whether CUPTI took every switch */
static int quiet_occupancy(void)
{
	return !cprof_share_active() && runtime_records(occupancy_cbid, NCBID(occupancy_cbid), 0);
}

/* The flusher's periodic round only, never an exit's, exec's or crash's drain; under end_lock, as the orphan step:
 * once the image's end began, CUPTI is not called from the flusher */
void cprof_cupti_gemms_drained(uint64_t gemms)
{
	char text[160];
	int ok;

	if (gemms < CPROF_OCCUPANCY_GEMMS || occupancy_tried || !atomic_load(&cu.started) || atomic_load(&cu.conflict) ||
	    atomic_load(&cu.orphaned) || cu.enable_runtime_api == NULL || cprof_share_active())
		return;
	pthread_mutex_lock(&end_lock);
	if (atomic_load(&ending)) {
		pthread_mutex_unlock(&end_lock);
		return;
	}
	occupancy_tried = 1;
	atomic_store(&occupancy_quiet, 1); /* before the switches: a window that resumes now applies them too */
	ok = quiet_occupancy();
	if (!ok) {
		/* a CUPTI that refused one: all stay on, and nothing says otherwise */
		atomic_store(&occupancy_quiet, 0);
		(void)runtime_records(occupancy_cbid, NCBID(occupancy_cbid), 1);
	}
	pthread_mutex_unlock(&end_lock);
	if (!ok)
		return;
	snprintf(text, sizeof(text),
		 "CUPTI's records of the occupancy queries (host-only, inside cuBLAS) switched off after %llu GEMM calls",
		 (unsigned long long)gemms);
	cprof_flusher_status(CPROF_STATUS_QUERIES_SAMPLED, (int32_t)(gemms > INT32_MAX ? INT32_MAX : gemms), text);
}

/* Switch CUPTI's records of the device queries off (the hooks count those) and of cudart's driver queries.
 * The hooks count only when every runtime query was switched off: else CUPTI records them, as before. */
static void quiet_queries(void)
{
	int all = runtime_records(counted_cbid, CPROF_COUNTED__QUERIES, 0);

	for (size_t i = 0; cu.enable_driver_api && i < NCBID(quiet_driver_cbid); i++)
		(void)cu.enable_driver_api(quiet_driver_cbid[i], 0);
	if (!all)
		(void)runtime_records(counted_cbid, CPROF_COUNTED__QUERIES, 1);
	atomic_store(&cprof_queries_counted, all);
	if (atomic_load(&occupancy_quiet))
		(void)quiet_occupancy();
}

void cprof_cupti_pause(int pause)
{
	int shared = cprof_share_active();

	if (!atomic_load(&cu.started) || atomic_load(&cu.conflict))
		return;
	/* with the program's profiler on, records keep coming while paused: every buffer completed on either
	 * side of the switch is marked for the side it belongs to */
	if (!pause)
		atomic_store(&cu.quiet, 0); /* before the first kind goes on */
	if (pause || shared)
		cu.flush_all(shared ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	atomic_store(&cu.paused, pause);
	/* the GPU kinds on last and off first: a call that reaches CUDA between two of these switches may get
	 * its runtime record and external id without its GPU record, never a GPU record with no record of its call */
	for (int gpu = pause; gpu == 0 || gpu == 1; gpu += pause ? -1 : 1)
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (gpu_kind(kinds[i]) != gpu)
				continue;
			else if (!pause)
				cu.enable(kinds[i]);
			else if (!cprof_share_kind_on(kinds[i]))
				cu.disable(kinds[i]);
	if (!pause)
		quiet_queries();
	else
		atomic_store(&cu.quiet, 1); /* after the last kind went off */
}

int cprof_cupti_unrecorded(void)
{
	return atomic_load(&cu.started) && !atomic_load(&cu.conflict) && atomic_load(&cu.quiet) && !cprof_share_active();
}

static void cprof_cupti_start(void)
{
	char where[PATH_MAX + 64];
	const char *missing = NULL;
	CUptiResult r;
	size_t i;

	if (atomic_load(&cu.started))
		return;
	if (atomic_load(&cu.conflict)) {
		status(CPROF_STATUS_CUPTI_CONFLICT, 0, "%s", "the program uses CUPTI itself; GPU records not collected");
		return;
	}
	cu.done = NULL;
	cu.done_tail = &cu.done;
	cu.lib = load_cupti(where, sizeof(where));
	if (cu.lib == NULL) {
		pr_warn("CUPTI (%s) %s; recording API calls only", CUPTI_SONAME, where);
		status(CPROF_STATUS_CUPTI_MISSING, 0, "CUPTI %s", where);
		return;
	}
	RESOLVE(register_callbacks, "cuptiActivityRegisterCallbacks");
	RESOLVE(enable, "cuptiActivityEnable");
	RESOLVE(disable, "cuptiActivityDisable");
	RESOLVE(flush_all, "cuptiActivityFlushAll");
	RESOLVE(next_record, "cuptiActivityGetNextRecord");
	RESOLVE(dropped, "cuptiActivityGetNumDroppedRecords");
	RESOLVE(push, "cuptiActivityPushExternalCorrelationId");
	RESOLVE(pop, "cuptiActivityPopExternalCorrelationId");
	RESOLVE(result_string, "cuptiGetResultString");
	RESOLVE(callback_name, "cuptiGetCallbackName");
	cu.timestamp = (__typeof__(cu.timestamp))dlsym(cu.lib, "cuptiGetTimestamp"); /* for the program's clock only */
	cu.enable_runtime_api = (__typeof__(cu.enable_runtime_api))dlsym(cu.lib, "cuptiActivityEnableRuntimeApi");
	cu.enable_driver_api = (__typeof__(cu.enable_driver_api))dlsym(cu.lib, "cuptiActivityEnableDriverApi");
	cprof_share_init(cu.next_record, cu.timestamp);

	r = cu.register_callbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		missing = NULL;
		goto refused;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		r = cu.enable(kinds[i]);
		/* without kernels there is no GPU lane; the other kinds are extras */
		if (r != CUPTI_SUCCESS && kinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			goto refused;
		if (r != CUPTI_SUCCESS)
			pr_dbg("activity kind %d not enabled: %s", kinds[i], result_str(r));
	}
	quiet_queries();
	atomic_store(&cu.started, 1);
	atomic_store(&cprof_cupti_on, CPROF_CUPTI_ON);
	/* the collector went while CUPTI came up (the orphan step found it not started), or the program's own CUPTI
	 * use started it (sharing) while cprof is paused outside its windows: cprof's kinds go off until a window
	 * opens (they were on, and a --capture-range run whose range never opened stored torch.profiler's kernels,
	 * 2026-12-06). Before cprof itself has started (UNINIT, INITING) they stay: its start pauses them if it starts
	 * paused (cprof_init_slow) */
	if (atomic_load(&cu.orphaned))
		cprof_cupti_pause(1);
	else
		cprof_capture_settle_kinds();
	if (!cu.atexit_registered) {
		cu.atexit_registered = 1;
		atexit(at_exit_flush);
	}
	status(CPROF_STATUS_CUPTI_STARTED, 0, "CUPTI from %s", where);
	pr_dbg("CUPTI started from %s", where);
	return;
refused:
	pr_warn("CUPTI refused to start (error %d: %s); recording API calls only", (int)r, result_str(r));
	{
		char text[200];

		snprintf(text, sizeof(text), "CUPTI error %d: %s", (int)r, result_str(r));
		status(CPROF_STATUS_CUPTI_FAILED, (int32_t)r, "%s", text);
	}
	return;
fail:
	pr_warn("%s lacks %s; recording API calls only", where, missing);
	status(CPROF_STATUS_CUPTI_FAILED, 0, "CUPTI without %s", missing);
}

void cprof_cupti_push(uint64_t corr)
{
	cu.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, corr);
}

void cprof_cupti_pop(void)
{
	uint64_t last;

	cu.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

/* what the program's profiler got, once it changed: the report's and cprof info's line */
static void say_shared(void)
{
	struct cprof_share_counts c;
	char text[240];

	if (!atomic_load(&cu.shared_said))
		return;
	cprof_share_counts(&c);
	if (c.handed == cu.said.handed && c.missed == cu.said.missed && c.pending == cu.said.pending)
		return;
	cu.said = c;
	snprintf(text, sizeof(text), CPROF_CUPTI_SHARED_FMT, (unsigned long long)c.handed, (unsigned long long)c.kernels,
		 (unsigned long long)c.missed, (unsigned long long)c.pending);
	cprof_flusher_status(CPROF_STATUS_CUPTI_SHARED, (int32_t)(c.missed > INT32_MAX ? INT32_MAX : c.missed), text);
}

void cprof_cupti_flush(int forced)
{
	if (forced)
		atomic_store(&ending, 1); /* not under end_lock: a crash handler must not wait on the flusher */
	if (!atomic_load(&cu.started) || atomic_load(&cu.conflict))
		return;
	/* forced: only as the image ends (exit, exec, a crash), when the program's profiler may be torn down */
	if (forced)
		cprof_share_stop();
	cu.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	if (forced)
		say_shared();
	if (forced) {
		size_t dropped = 0;

		if (cu.dropped(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
			char text[64];

			cprof_flusher_add_lost(dropped); /* records CUPTI could not keep are events lost */
			snprintf(text, sizeof(text), "%zu", dropped);
			status(CPROF_STATUS_CUPTI_DROPPED, (int32_t)dropped, "CUPTI dropped %s records", text);
		}
	}
}

void cprof_cupti_exec_failed(void)
{
	/* the image goes on: the flusher's CUPTI calls and its pool with it */
	pthread_mutex_lock(&end_lock);
	atomic_store(&ending, 0);
	pthread_mutex_unlock(&end_lock);
	cprof_share_resume();
}

void cprof_cupti_reset_after_fork(int driver_up)
{
	/* CUDA does not survive fork: the child of a parent whose session started (or was starting, or was refused),
	 * or whose driver came up at all, never starts CUPTI and pushes nothing. A session still PENDING does not say
	 * the driver is down: outside a --capture-range or --delay window the hooks pass calls through and
	 * InitializeInjection starts nothing, so the parent's CUDA was up with CUPTI pending (the s21 review: the child
	 * then started CUPTI in a process whose CUDA fork had broken). Only a parent whose driver never came up leaves
	 * its child to start its own on its first such call, as a fresh process does (until 2026-12-06 every fork
	 * child was left without GPU records, multiprocessing workers that alone used CUDA too) */
	if (driver_up || atomic_load(&cprof_cupti_on) != CPROF_CUPTI_PENDING)
		atomic_store(&cprof_cupti_on, CPROF_CUPTI_OFF);
	atomic_store(&cprof_queries_counted, 0);
	atomic_store(&occupancy_quiet, 0); /* the child's own session, if it starts one, keeps its own first ones */
	occupancy_tried = 0;
	atomic_store(&cu.started, 0);
	atomic_store(&recent_valid, 0); /* a child that starts its own session has its own buffers */
	atomic_store(&pool_started, 0);
	cprof_share_reset_after_fork();
	pthread_mutex_init(&cu.lock, NULL);
	cu.done = NULL;
	cu.done_tail = &cu.done;
	atomic_store(&done_bytes, 0);
	collecting.list = NULL; /* the parent's buffers: the child converts none of them */
	collecting.rec = NULL;
	collecting.have_ext = 0;
}

/* ---- converting records (drainer thread only) ---- */

#define NAME_BITS 12
static struct {
	const char *ptr; /* CUPTI keeps kernel names alive; the pointer is a cheap first key */
	uint32_t id;
} names[1 << NAME_BITS];
static uint32_t api_names[2][1024];

static uint32_t name_id(const char *name)
{
	uintptr_t h = ((uintptr_t)name >> 4) * 0x9e3779b97f4a7c15ull;
	uint32_t i = (uint32_t)(h >> (64 - NAME_BITS)), n;

	if (name == NULL)
		return 0;
	for (n = 0; n < (1u << NAME_BITS); n++, i = (i + 1) & ((1u << NAME_BITS) - 1)) {
		if (names[i].ptr == name)
			return names[i].id;
		if (names[i].ptr == NULL) {
			/* the text's one id (strings.c), the hooks' launches of the kernel included */
			uint32_t id = cprof_intern(CPROF_STR_KERNEL, name, strlen(name));

			if (id == 0)
				return 0;
			names[i].ptr = name;
			names[i].id = id;
			return id;
		}
	}
	return cprof_intern(CPROF_STR_KERNEL, name, strlen(name)); /* pointer cache full: by text */
}

static uint32_t api_name_id(int driver, uint32_t cbid)
{
	const char *name = NULL;
	uint32_t id;

	if (cbid >= 1024)
		return 0;
	if (api_names[driver][cbid])
		return api_names[driver][cbid];
	if (cu.callback_name(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) !=
		    CUPTI_SUCCESS ||
	    name == NULL)
		return 0;
	if ((id = cprof_intern(CPROF_STR_API, name, strlen(name))) == 0)
		return 0;
	api_names[driver][cbid] = id;
	return id;
}

static int convert(const CUpti_Activity *a, struct cprof_wire_gpu *g)
{
	/* copied from a zeroed constant, not memset: gcc makes a 96-byte memset `rep stos`, whose start-up was 40%
	 * of this function's time on the flusher (perf, docs/bench.md, eleventh session) */
	static const struct cprof_wire_gpu zero;

	*g = zero;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)a;

		g->kind = CPROF_GPU_KERNEL;
		g->start_ns = k->start;
		g->end_ns = k->end;
		g->corr = k->correlationId;
		g->device = k->deviceId;
		g->context = k->contextId;
		g->stream = k->streamId;
		g->name = name_id(k->name);
		g->u32[0] = k->gridX;
		g->u32[1] = k->gridY;
		g->u32[2] = k->gridZ;
		g->u32[3] = k->blockX;
		g->u32[4] = k->blockY;
		g->u32[5] = k->blockZ;
		g->u32[6] = k->registersPerThread;
		g->u32[7] = k->staticSharedMemory;
		g->u32[8] = k->dynamicSharedMemory;
		g->u32[9] = k->graphId;
		g->u64[0] = k->graphNodeId;
		g->u64[1] = (uint64_t)k->gridId;
		return 0;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;

		g->kind = CPROF_GPU_MEMCPY;
		g->start_ns = m->start;
		g->end_ns = m->end;
		g->corr = m->correlationId;
		g->device = m->deviceId;
		g->context = m->contextId;
		g->stream = m->streamId;
		g->u32[0] = m->copyKind;
		g->u32[1] = m->srcKind;
		g->u32[2] = m->dstKind;
		g->u32[3] = m->graphId;
		g->u64[0] = m->bytes;
		return 0;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;

		g->kind = CPROF_GPU_MEMSET;
		g->start_ns = m->start;
		g->end_ns = m->end;
		g->corr = m->correlationId;
		g->device = m->deviceId;
		g->context = m->contextId;
		g->stream = m->streamId;
		g->u32[0] = m->value;
		g->u32[1] = m->memoryKind;
		g->u32[2] = m->graphId;
		g->u64[0] = m->bytes;
		return 0;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *r = (const void *)a;
		int driver = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;

		g->kind = driver ? CPROF_GPU_DRIVER : CPROF_GPU_RUNTIME;
		g->start_ns = r->start;
		g->end_ns = r->end;
		g->corr = r->correlationId;
		g->name = api_name_id(driver, r->cbid);
		g->u32[0] = r->cbid;
		g->u32[1] = r->processId;
		g->u32[2] = r->threadId;
		g->u32[3] = r->returnValue;
		return 0;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)a;

		g->kind = CPROF_GPU_SYNC;
		g->start_ns = s->start;
		g->end_ns = s->end;
		g->corr = s->correlationId;
		g->context = s->contextId;
		g->stream = s->streamId;
		g->u32[0] = s->type;
		g->u32[1] = s->cudaEventId;
		g->u32[2] = s->returnValue;
		return 0;
	}
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		const CUpti_ActivityOverhead3 *o = (const void *)a;

		g->kind = CPROF_GPU_OVERHEAD;
		g->start_ns = o->start;
		g->end_ns = o->end;
		g->corr = o->correlationId;
		g->u32[0] = o->overheadKind;
		g->u32[1] = o->objectKind;
		g->u32[2] = o->objectId.dcs.deviceId;
		g->u32[3] = o->objectId.dcs.contextId;
		g->u32[4] = o->objectId.dcs.streamId;
		return 0;
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		const CUpti_ActivityExternalCorrelation *e = (const void *)a;

		g->kind = CPROF_GPU_EXTCORR;
		g->corr = e->correlationId;
		g->u32[0] = e->externalKind;
		g->u64[0] = e->externalId;
		return 0;
	}
	default:
		return -1;
	}
}

int cprof_cupti_collect(int (*emit)(const struct cprof_wire_gpu *rec, void *ctx), void *ctx, int max)
{
	struct done_buf *d;
	int n = 0;

	if (collecting.list == NULL) {
		collecting.list = done_take();
		collecting.rec = NULL;
	}
	while ((d = collecting.list) != NULL) {
		while (d->keep && n < max && cu.next_record(d->buf, d->valid, &collecting.rec) == CUPTI_SUCCESS) {
			const CUpti_Activity *rec = collecting.rec;
			struct cprof_wire_gpu g;

			/* external ids other than cprof's are the program's profiler's (Kineto's CUSTOM0/1) */
			if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION &&
			    ((const CUpti_ActivityExternalCorrelation *)(const void *)rec)->externalKind !=
				    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2)
				continue;
			if (convert(rec, &g) != 0)
				continue;
			/* CUPTI writes an API record's external id just before it: folded into it (common/wire.h);
			 * one that is not followed by its record (another thread's came between) goes alone */
			if (g.kind == CPROF_GPU_EXTCORR) {
				if (collecting.have_ext && emit(&collecting.ext, ctx) == 0)
					n++;
				collecting.ext = g;
				collecting.have_ext = 1;
				continue;
			}
			if (collecting.have_ext) {
				collecting.have_ext = 0;
				if ((g.kind == CPROF_GPU_RUNTIME || g.kind == CPROF_GPU_DRIVER) && g.corr == collecting.ext.corr) {
					g.u32[4] = collecting.ext.u32[0];
					g.u64[0] = collecting.ext.u64[0];
				} else if (emit(&collecting.ext, ctx) == 0) {
					n++;
				}
			}
			if (emit(&g, ctx) == 0)
				n++;
		}
		if (n >= max)
			return n; /* the rest of this buffer in the next call */
		collecting.list = d->next;
		collecting.rec = NULL;
		/* as the image ends no window comes: writing ahead would only spend the exit's time */
		done_release(d, atomic_load(&ending) ? 0 : pool_ahead());
	}
	/* nothing more to look at: an external id still waiting goes alone */
	if (collecting.have_ext && emit(&collecting.ext, ctx) == 0)
		n++;
	collecting.have_ext = 0;
	return n;
}

/* the kinds convert() turns into wire records */
static int sent_kind(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMSET:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return 1;
	default:
		return 0;
	}
}

/* The events cprof_cupti_collect would have made of the records after rec in d, with its fold of an external id into
 * the API record after it (*ext: one pending, *ext_corr its correlation id) */
static uint64_t count_events(const struct done_buf *d, CUpti_Activity *rec, int *ext, uint32_t *ext_corr)
{
	uint64_t n = 0;

	while (d->keep && cu.next_record(d->buf, d->valid, &rec) == CUPTI_SUCCESS) {
		if (!sent_kind(rec->kind))
			continue;
		if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
			const CUpti_ActivityExternalCorrelation *e = (const void *)rec;

			if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2)
				continue;
			n += *ext; /* the one before goes alone */
			*ext = 1;
			*ext_corr = e->correlationId;
			continue;
		}
		if (*ext) {
			*ext = 0;
			if (!((rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME || rec->kind == CUPTI_ACTIVITY_KIND_DRIVER) &&
			      ((const CUpti_ActivityAPI *)(const void *)rec)->correlationId == *ext_corr))
				n++;
		}
		n++;
	}
	return n;
}

/* A drain that ran out of time as the image ends: the records CUPTI completed that cprof has not converted, counted as
 * the events they would have been, exactly until deadline_ms (CLOCK_MONOTONIC) and in one buffer at least, then
 * estimated from the bytes left at the rate counted so far (a starved flusher must not cost the process its BYE).
 * An exit or a crash drops them (drop); an exec keeps them on collect's list (what CUPTI completed since the last
 * collect put behind it, in order) until it is known whether the exec failed: then cprof_cupti_drop_taken drops
 * them, as counted. Until 2026-12-07 they went uncounted: t-rel-defer stored 10,554 of 20,010 kernels in a CI run,
 * every core busy, with lost_events 0 (the flusher had deferred CUPTI's records, and the exit's second ran out
 * converting them). Flusher thread only. */
uint64_t cprof_cupti_unconverted(uint64_t deadline_ms, int drop)
{
	struct done_buf *d;
	CUpti_Activity *rec = collecting.rec;
	uint64_t n = 0, bytes = 0, left = 0;
	uint32_t ext_corr = (uint32_t)collecting.ext.corr;
	int ext = collecting.have_ext;

	collecting_append(done_take());
	for (d = collecting.list; d; d = d->next, rec = NULL) {
		if (bytes == 0 || cprof_fifo_mono_ms() < deadline_ms) { /* one buffer at least, for the rate */
			/* the part of a buffer collect had begun that it had not read */
			size_t from = rec ? (size_t)((uint8_t *)rec - d->buf) : 0;

			n += count_events(d, rec, &ext, &ext_corr);
			bytes += d->keep && from < d->valid ? d->valid - from : 0;
		} else if (d->keep) {
			left += d->valid;
		}
	}
	n += ext;
	/* past the deadline: as many a byte as counted before it */
	if (left && bytes)
		n += (uint64_t)((double)left * n / bytes);
	if (drop)
		cprof_cupti_drop_taken();
	return n;
}

/* collect's list and its place in it forgotten, every buffer on it released (counted lost by
 * cprof_cupti_unconverted). Flusher thread only. */
void cprof_cupti_drop_taken(void)
{
	struct done_buf *d, *next;

	for (d = collecting.list; d; d = next) {
		next = d->next;
		done_release(d, 0);
	}
	collecting.list = NULL;
	collecting.rec = NULL;
	collecting.have_ext = 0;
}

/* cprof stopped for good (its collector gone; the flusher's last act): CUPTI's buffers come back to nobody and,
 * when may_switch (the flusher found it in its own rounds, not while an exit or a crash waited on it), its kinds go
 * off. Until 2026-12-06 a run recorded whole kept every kind on after its collector died: CUPTI recorded each later
 * call into buffers no flusher took, the program's memory growing ~5 MB/s at 130k calls/s. CUPTI not started yet
 * never starts for cprof now; kinds the program's own CUPTI client asked for stay on (cprof_cupti_pause), and its
 * records still reach it. On the flusher thread (the buffers it had taken, collecting, are its own to free), or on
 * the thread whose start of cprof failed (no flusher, nothing taken). */
void cprof_cupti_orphan(int may_switch)
{
	struct done_buf *d;
	int pending = CPROF_CUPTI_PENDING;

	pthread_mutex_lock(&cu.lock);
	if (atomic_exchange(&cu.orphaned, 1)) {
		pthread_mutex_unlock(&cu.lock);
		return;
	}
	d = cu.done;
	cu.done = NULL;
	cu.done_tail = &cu.done;
	pthread_mutex_unlock(&cu.lock);
	collecting_append(d);
	cprof_cupti_drop_taken();
	free(stage.buf); /* this thread's, as collecting is */
	stage.buf = NULL;
	spares_free();
	/* a session not started yet is never started for cprof (sharing() then leaves CUPTI to the program) */
	atomic_compare_exchange_strong(&cprof_cupti_on, &pending, CPROF_CUPTI_OFF);
	if (!may_switch)
		return;
	pthread_mutex_lock(&end_lock);
	if (!atomic_load(&ending))
		cprof_cupti_pause(1); /* returns at once unless started; its flush's buffers are dropped now */
	pthread_mutex_unlock(&end_lock);
}

/* ---- another CUPTI user in the process ---- */

/* The target used CUPTI before cprof's session could start (or cprof has none): CUPTI is left to it. */
static void conflict(const char *what)
{
	if (atomic_exchange(&cu.conflict, 1))
		return;
	/* what CUPTI holds for us comes back to our callback before the other tool's replaces it */
	if (atomic_load(&cu.started))
		cu.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	/* stop touching CUPTI: the other tool owns the callbacks now, and its records are its own */
	atomic_store(&cprof_cupti_on, CPROF_CUPTI_OFF);
	if (atomic_load(&cprof_state) == CPROF_ST_OFF && !atomic_load(&cu.started))
		return; /* cprof never started here (no collector, or it was gone first): nothing of its to stop */
	pr_warn("the program called %s (torch.profiler/Kineto or another CUPTI tool); cprof stops collecting GPU "
		"records and leaves CUPTI to it",
		what);
	status(CPROF_STATUS_CUPTI_CONFLICT, 0, "the program called %s: GPU records stop here", what);
}

/* Whether cprof's session serves the program's CUPTI calls: CUPTI has one set of buffer callbacks per process,
 * so cprof stays its client and the program gets copies (cupti-share.c). A program first to CUPTI starts it. */
static int sharing(void)
{
	/* cprof decides first whether it runs at all: not profiling (no collector), it starts no session of its own
	 * for the program (one no flusher would drain) and says nothing */
	if (atomic_load(&cprof_state) == CPROF_ST_UNINIT)
		cprof_active();
	if (atomic_load(&cprof_cupti_on) == CPROF_CUPTI_PENDING)
		cprof_cupti_start_checked(0);
	return atomic_load(&cu.started) && !atomic_load(&cu.conflict);
}

/* records CUPTI holds now were made before the program's change of kinds: they go out under the old ones */
static void flush_for_program(void)
{
	cu.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static CUpti_TimestampCallbackFunc pending_ts; /* registered while cprof's session was not decided */
static CUpti_SubscriberHandle program_sub;       /* the program's subscriber: cuptiFinalize ends it */

CPROF_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
							CUpti_BuffersCallbackCompleteFunc done)
{
	__typeof__(&cuptiActivityRegisterCallbacks) real = CPROF_REAL(cuptiActivityRegisterCallbacks, CUPTI_SONAME);

	if (real == NULL)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (req == NULL || done == NULL)
		return real(req, done);
	if (!sharing()) {
		__typeof__(&cuptiActivityRegisterTimestampCallback) ts =
			CPROF_REAL(cuptiActivityRegisterTimestampCallback, CUPTI_SONAME);

		conflict("cuptiActivityRegisterCallbacks");
		if (pending_ts && ts)
			ts(pending_ts);
		return real(req, done);
	}
	cprof_share_register(req, done);
	if (!atomic_exchange(&cu.shared_said, 1)) {
		pr_warn("the program called cuptiActivityRegisterCallbacks (torch.profiler/Kineto or another CUPTI "
			"tool); cprof keeps CUPTI and hands it copies of the records it enables (cprof info counts them)");
		status(CPROF_STATUS_CUPTI_SHARED, 0, "%s",
		       "the program called cuptiActivityRegisterCallbacks: CUPTI shared, the program gets copies of the "
		       "records it enables");
	}
	return CUPTI_SUCCESS;
}

CPROF_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	__typeof__(&cuptiActivityEnable) real = CPROF_REAL(cuptiActivityEnable, CUPTI_SONAME);
	CUptiResult r;

	if (real == NULL)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (!sharing())
		return real(kind);
	if (cprof_share_active() && !cprof_share_kind_on(kind))
		flush_for_program();
	r = real(kind);
	if (r == CUPTI_SUCCESS) {
		cprof_share_kind(kind, 1);
		cprof_share_complete(1); /* the program holds a buffer from now on, as with CUPTI */
	}
	return r;
}

CPROF_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	__typeof__(&cuptiActivityDisable) real = CPROF_REAL(cuptiActivityDisable, CUPTI_SONAME);

	if (real == NULL)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (!sharing())
		return real(kind);
	if (cprof_share_active() && cprof_share_kind_on(kind))
		flush_for_program();
	cprof_share_kind(kind, 0);
	/* cprof still records the kind: for the program it is off all the same */
	return cprof_wants(kind) ? CUPTI_SUCCESS : real(kind);
}

CPROF_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	__typeof__(&cuptiActivityFlushAll) real = CPROF_REAL(cuptiActivityFlushAll, CUPTI_SONAME);
	CUptiResult r;

	if (real == NULL)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (!cprof_share_active() || !sharing())
		return real(flag);
	r = real(flag); /* cprof's buffers come back to buffer_completed, which copies the program's records */
	cprof_share_complete(1);
	return r;
}

CPROF_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc func)
{
	__typeof__(&cuptiActivityRegisterTimestampCallback) real =
		CPROF_REAL(cuptiActivityRegisterTimestampCallback, CUPTI_SONAME);

	if (real == NULL)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (func == NULL || !sharing())
		return real(func);
	/* CUPTI keeps the clock cprof's records are in; the program's copies are put in its own */
	pending_ts = func;
	cprof_share_timestamps(func);
	return CUPTI_SUCCESS;
}

/* One API's records for the program: passed on while cprof has no session, else only its copies filtered */
static CUptiResult enable_api(CUptiResult (*real)(CUpti_CallbackId, uint8_t), int driver, CUpti_CallbackId cbid,
			      uint8_t enable)
{
	if (real == NULL)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (!sharing())
		return real(cbid, enable);
	cprof_share_api(driver, cbid, enable); /* left out of the program's copies, kept in cprof's records */
	return CUPTI_SUCCESS;
}

CPROF_EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return enable_api(CPROF_REAL(cuptiActivityEnableRuntimeApi, CUPTI_SONAME), 0, cbid, enable);
}

CPROF_EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return enable_api(CPROF_REAL(cuptiActivityEnableDriverApi, CUPTI_SONAME), 1, cbid, enable);
}

/* cprof subscribes to nothing: the program's subscriber is CUPTI's one, cprof only remembers it */
CPROF_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *user)
{
	__typeof__(&cuptiSubscribe) real = CPROF_REAL(cuptiSubscribe, CUPTI_SONAME);
	CUptiResult r = real ? real(sub, cb, user) : CUPTI_ERROR_NOT_INITIALIZED;

	if (r == CUPTI_SUCCESS && sub)
		program_sub = *sub;
	return r;
}

CPROF_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *user,
					   CUpti_SubscriberParams *params)
{
	__typeof__(&cuptiSubscribe_v2) real = CPROF_REAL(cuptiSubscribe_v2, CUPTI_SONAME);
	CUptiResult r = real ? real(sub, cb, user, params) : CUPTI_ERROR_NOT_INITIALIZED;

	if (r == CUPTI_SUCCESS && sub)
		program_sub = *sub;
	return r;
}

CPROF_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	__typeof__(&cuptiUnsubscribe) real = CPROF_REAL(cuptiUnsubscribe, CUPTI_SONAME);
	CUptiResult r = real ? real(sub) : CUPTI_ERROR_NOT_INITIALIZED;

	if (r == CUPTI_SUCCESS && sub == program_sub)
		program_sub = NULL;
	return r;
}

/* The program ends its use of CUPTI (Kineto with TEARDOWN_CUPTI=1): its part ends, cprof's session goes on. */
CPROF_EXPORT CUptiResult cuptiFinalize(void)
{
	__typeof__(&cuptiFinalize) real = CPROF_REAL(cuptiFinalize, CUPTI_SONAME);
	__typeof__(&cuptiUnsubscribe) unsub = CPROF_REAL(cuptiUnsubscribe, CUPTI_SONAME);

	if (real == NULL)
		return CUPTI_ERROR_NOT_INITIALIZED;
	if (!sharing()) {
		conflict("cuptiFinalize");
		return real();
	}
	flush_for_program();
	cprof_share_complete(0);
	for (int k = 1; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		if (cprof_share_kind(k, 0) && !cprof_wants(k))
			cu.disable(k);
	cprof_share_finalize();
	pending_ts = NULL;
	if (program_sub && unsub && unsub(program_sub) == CUPTI_SUCCESS)
		program_sub = NULL;
	return CUPTI_SUCCESS;
}
