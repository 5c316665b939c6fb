/* Simulated GPU engine: configuration, virtual clocks per stream, cost model, first-use costs, allocations. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "engine_int.h"

/* ---------------------------------------------------------------- configuration */

static struct simgpu_config g_cfg;

enum knob_type { K_INT, K_U64, K_DBL };

struct knob {
	const char *env;
	enum knob_type type;
	size_t off;
	double def;
};

#define KNOB(env, type, field, def) { env, type, offsetof(struct simgpu_config, field), def }

/* The README lists the same names and defaults; the self-test checks that it does. */
static const struct knob g_knobs[] = {
	KNOB("SIMGPU_VERBOSE", K_INT, verbose, 0),
	KNOB("SIMGPU_DEVICE_COUNT", K_INT, device_count, 1),
	KNOB("SIMGPU_NO_DRIVER", K_INT, no_driver, 0),
	KNOB("SIMGPU_SM_COUNT", K_INT, sm_count, 132),
	KNOB("SIMGPU_COPY_DATA", K_INT, copy_data, 1),
	KNOB("SIMGPU_FAIL_SYNC_AFTER", K_U64, fail_sync_after, 0),
	KNOB("SIMGPU_MEM_BYTES", K_U64, mem_bytes, 150754820096.0),
	KNOB("SIMGPU_DRIVER_INIT_NS", K_U64, driver_init_ns, 20000000),
	KNOB("SIMGPU_CTX_INIT_NS", K_U64, ctx_init_ns, 50000000),
	KNOB("SIMGPU_MODULE_LOAD_NS", K_U64, module_load_ns, 1000000),
	KNOB("SIMGPU_LAUNCH_NS", K_U64, launch_ns, 4000),
	KNOB("SIMGPU_LAUNCH_LATENCY_NS", K_U64, launch_latency_ns, 3000),
	KNOB("SIMGPU_KERNEL_FLOOR_NS", K_U64, kernel_floor_ns, 1800),
	KNOB("SIMGPU_THREAD_PS", K_U64, thread_ps, 3),
	KNOB("SIMGPU_GEMM_FLOOR_NS", K_U64, gemm_floor_ns, 3500),
	KNOB("SIMGPU_PEAK_TFLOPS", K_DBL, peak_tflops, 50.0),
	KNOB("SIMGPU_TENSOR_TFLOPS", K_DBL, tensor_tflops, 400.0),
	KNOB("SIMGPU_FP64_TFLOPS", K_DBL, fp64_tflops, 40.0),
	KNOB("SIMGPU_CUBLAS_CREATE_NS", K_U64, cublas_create_ns, 5000000),
	KNOB("SIMGPU_CUBLAS_NS", K_U64, cublas_ns, 5000),
	KNOB("SIMGPU_CUBLAS_FIRST_NS", K_U64, cublas_first_ns, 3000000),
	KNOB("SIMGPU_OCCUPANCY_NS", K_U64, occupancy_ns, 1000),
	KNOB("SIMGPU_CUBLASLT_NS", K_U64, cublaslt_ns, 3000),
	KNOB("SIMGPU_CUBLASLT_HEURISTIC_NS", K_U64, cublaslt_heuristic_ns, 30000),
	KNOB("SIMGPU_COPY_GBPS", K_DBL, copy_gbps, 25.0),
	KNOB("SIMGPU_PINNED_GBPS", K_DBL, pinned_gbps, 50.0),
	KNOB("SIMGPU_D2D_GBPS", K_DBL, d2d_gbps, 2000.0),
	KNOB("SIMGPU_MEMSET_GBPS", K_DBL, memset_gbps, 3000.0),
	KNOB("SIMGPU_COPY_LATENCY_NS", K_U64, copy_latency_ns, 1500),
	KNOB("SIMGPU_MEMCPY_NS", K_U64, memcpy_ns, 3000),
	KNOB("SIMGPU_MALLOC_NS", K_U64, malloc_ns, 8000),
	KNOB("SIMGPU_FREE_NS", K_U64, free_ns, 4000),
	KNOB("SIMGPU_API_NS", K_U64, api_ns, 300),
	KNOB("SIMGPU_SYNC_NS", K_U64, sync_ns, 1000),
	KNOB("SIMGPU_CUPTI_BUFFER_NS", K_U64, cupti_buffer_ns, 20000),
	KNOB("SIMGPU_CUPTI_FLUSH_NS", K_U64, cupti_flush_ns, 10000),
};

static pthread_once_t g_cfg_once = PTHREAD_ONCE_INIT;

static void config_parse(void)
{
	for (size_t i = 0; i < sizeof(g_knobs) / sizeof(g_knobs[0]); i++) {
		const struct knob *k = &g_knobs[i];
		char *p = (char *)&g_cfg + k->off;
		double v = k->def;
		const char *s = getenv(k->env);
		if (s && *s) {
			char *end = NULL;
			double x = strtod(s, &end);
			if (end && end != s && *end == '\0' && x >= 0)
				v = x;
			else
				fprintf(stderr, "simgpu (simulated GPU): ignoring %s=%s (not a non-negative number)\n",
					k->env, s);
		}
		switch (k->type) {
		case K_INT:
			*(int *)(void *)p = (int)v;
			break;
		case K_U64:
			*(uint64_t *)(void *)p = (uint64_t)v;
			break;
		case K_DBL:
			*(double *)(void *)p = v;
			break;
		}
	}
	/* Rates of zero would divide by zero in the cost model. */
	if (g_cfg.peak_tflops <= 0)
		g_cfg.peak_tflops = 50.0;
	if (g_cfg.tensor_tflops <= 0)
		g_cfg.tensor_tflops = 400.0;
	if (g_cfg.fp64_tflops <= 0)
		g_cfg.fp64_tflops = 40.0;
	if (g_cfg.copy_gbps <= 0)
		g_cfg.copy_gbps = 25.0;
	if (g_cfg.pinned_gbps <= 0)
		g_cfg.pinned_gbps = 50.0;
	if (g_cfg.d2d_gbps <= 0)
		g_cfg.d2d_gbps = 2000.0;
	if (g_cfg.memset_gbps <= 0)
		g_cfg.memset_gbps = 3000.0;
	if (g_cfg.device_count > 8)
		g_cfg.device_count = 8;
	if (g_cfg.sm_count <= 0)
		g_cfg.sm_count = 132;
	if (g_cfg.verbose) {
		for (size_t i = 0; i < sizeof(g_knobs) / sizeof(g_knobs[0]); i++) {
			const struct knob *k = &g_knobs[i];
			const char *p = (const char *)&g_cfg + k->off;
			if (k->type == K_DBL)
				simgpu_log("%s=%g", k->env, *(const double *)(const void *)p);
			else if (k->type == K_INT)
				simgpu_log("%s=%d", k->env, *(const int *)(const void *)p);
			else
				simgpu_log("%s=%llu", k->env,
					   (unsigned long long)*(const uint64_t *)(const void *)p);
		}
	}
}

SG_HIDDEN void sg_config_load(void)
{
	pthread_once(&g_cfg_once, config_parse);
}

const struct simgpu_config *simgpu_cfg(void)
{
	sg_config_load();
	return &g_cfg;
}

void simgpu_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "simgpu (simulated GPU): %s\n", line);
}

/* ---------------------------------------------------------------- time */

uint64_t simgpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void simgpu_wait_until(uint64_t t)
{
	/* Sleep through most of a long wait so a blocked host does not burn a core, then spin for accuracy. */
	for (;;) {
		uint64_t now = simgpu_now();
		if (now >= t)
			return;
		if (t - now > 200000) {
			uint64_t wake = t - 100000;
			struct timespec ts = { .tv_sec = (time_t)(wake / 1000000000ull),
					       .tv_nsec = (long)(wake % 1000000000ull) };
			clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
		} else {
			__builtin_ia32_pause();
		}
	}
}

void simgpu_spin(uint64_t ns)
{
	if (ns)
		simgpu_wait_until(simgpu_now() + ns);
}

/* ---------------------------------------------------------------- driver and context */

static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_driver_state; /* 0 not yet, 2 done */
static int g_driver_err;
static __thread int t_in_driver_init;
static atomic_int g_ctx_created;

static void load_injection(void)
{
	/* What libcuda's cuInit does: load CUDA_INJECTION64_PATH and call its InitializeInjection. */
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (!path || !*path)
		return;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		if (g_cfg.verbose)
			simgpu_log("cannot load CUDA_INJECTION64_PATH %s: %s", path, dlerror());
		return;
	}
	int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!init) {
		if (g_cfg.verbose)
			simgpu_log("%s has no InitializeInjection", path);
		return;
	}
	int rc = init();
	if (g_cfg.verbose)
		simgpu_log("InitializeInjection of %s returned %d", path, rc);
}

int simgpu_driver_init(void)
{
	sg_config_load();
	if (atomic_load_explicit(&g_driver_state, memory_order_acquire) == 2)
		return g_driver_err;
	/* InitializeInjection may call back into CUDA on this thread: let it through. */
	if (t_in_driver_init)
		return 0;
	pthread_mutex_lock(&g_init_lock);
	if (atomic_load(&g_driver_state) != 2) {
		t_in_driver_init = 1;
		if (g_cfg.no_driver) {
			g_driver_err = cudaErrorInsufficientDriver;
		} else {
			simgpu_spin(g_cfg.driver_init_ns);
			if (g_cfg.verbose)
				simgpu_log("driver initialised (%d device%s)", g_cfg.device_count,
					   g_cfg.device_count == 1 ? "" : "s");
			load_injection();
		}
		t_in_driver_init = 0;
		atomic_store_explicit(&g_driver_state, 2, memory_order_release);
	}
	pthread_mutex_unlock(&g_init_lock);
	return g_driver_err;
}

/* SIMGPU_FAIL_SYNC_AFTER: the N-th synchronisation of the process fails with an illegal address, and
 * the context is lost from then on (every call that needs it fails the same way), as on a device */
static atomic_int g_sticky_err;
static atomic_uint_fast64_t g_syncs;

static int sync_result(void)
{
	if (g_cfg.fail_sync_after && atomic_fetch_add(&g_syncs, 1) + 1 == g_cfg.fail_sync_after)
		atomic_store(&g_sticky_err, cudaErrorIllegalAddress);
	return atomic_load(&g_sticky_err);
}

int simgpu_ctx_ensure(void)
{
	int err = simgpu_driver_init();
	if (err)
		return err;
	if (g_cfg.device_count < 1)
		return cudaErrorNoDevice;
	if (atomic_load_explicit(&g_sticky_err, memory_order_relaxed))
		return atomic_load(&g_sticky_err);
	if (atomic_load_explicit(&g_ctx_created, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&g_init_lock);
	if (!atomic_load(&g_ctx_created)) {
		simgpu_spin(g_cfg.ctx_init_ns);
		atomic_store_explicit(&g_ctx_created, 1, memory_order_release);
		if (g_cfg.verbose)
			simgpu_log("primary context created");
	}
	pthread_mutex_unlock(&g_init_lock);
	return 0;
}

int simgpu_driver_ready(void)
{
	return atomic_load_explicit(&g_driver_state, memory_order_acquire) == 2 && !g_driver_err;
}

int simgpu_ctx_created(void)
{
	return atomic_load(&g_ctx_created);
}

/* ---------------------------------------------------------------- name interning, lazy module load */

struct name_ent {
	char *name;
	atomic_int loaded;
	struct name_ent *next;
};

#define NAME_BUCKETS 1024
static struct name_ent *g_names[NAME_BUCKETS];
static pthread_mutex_t g_names_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct name_ent *name_find(const char *name)
{
	uint32_t b = hash_str(name) % NAME_BUCKETS;
	pthread_mutex_lock(&g_names_lock);
	struct name_ent *e = g_names[b];
	while (e && strcmp(e->name, name) != 0)
		e = e->next;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (e)
			e->name = strdup(name);
		if (e && e->name) {
			e->next = g_names[b];
			g_names[b] = e;
		} else {
			free(e);
			e = NULL;
		}
	}
	pthread_mutex_unlock(&g_names_lock);
	return e;
}

const char *simgpu_intern(const char *name)
{
	/* Kernel names in CUPTI records must outlive the buffers: interned strings are never freed. */
	struct name_ent *e = name_find(name ? name : "(null)");
	return e ? e->name : "(out of memory)";
}

void simgpu_module_load(const char *name)
{
	struct name_ent *e = name_find(name);
	if (!e || atomic_exchange(&e->loaded, 1))
		return;
	uint64_t t0 = simgpu_now();
	simgpu_spin(g_cfg.module_load_ns);
	sg_emit_overhead(CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING, t0, simgpu_now());
	if (g_cfg.verbose)
		simgpu_log("lazy module load for %s", name);
}

static void names_unload_all(void)
{
	pthread_mutex_lock(&g_names_lock);
	for (int b = 0; b < NAME_BUCKETS; b++)
		for (struct name_ent *e = g_names[b]; e; e = e->next)
			atomic_store(&e->loaded, 0);
	pthread_mutex_unlock(&g_names_lock);
}

/* ---------------------------------------------------------------- streams and events */

#define STREAM_MAGIC 0x5354524du
#define EVENT_MAGIC 0x45564e54u
#define LEGACY_STREAM_ID 7u

struct simgpu_stream {
	uint32_t magic;
	uint32_t id;
	unsigned flags;
	int priority;
	int legacy;
	int device;     /* the device current when it was created (device_set) */
	int device_set; /* 0: the legacy and per-thread streams, whose ops go to the caller's current device */
	uint64_t tail; /* virtual end of the last op queued on it */
	struct simgpu_graph *capture; /* the graph kernels go to while the stream is captured */
	uint64_t capture_id;
	struct simgpu_stream *next;
};

/* SIMGPU_DEVICE_COUNT > 1: cudaSetDevice picks the thread's device; a stream belongs to the device current
 * when it was made, and its ops' records carry that device (one context and one set of clocks serve all) */
static __thread int t_device;

void simgpu_set_device(int device)
{
	t_device = device;
}

int simgpu_get_device(void)
{
	return t_device;
}

static uint32_t device_of(const struct simgpu_stream *s)
{
	return s->device_set ? (uint32_t)s->device : (uint32_t)t_device;
}

struct simgpu_event {
	uint32_t magic;
	uint32_t id;
	unsigned flags;
	int recorded;
	uint64_t t;
	uint64_t sync_id;
	struct simgpu_event *next;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* streams, events, clocks */
static struct simgpu_stream g_legacy = { .magic = STREAM_MAGIC, .id = LEGACY_STREAM_ID, .legacy = 1 };
static struct simgpu_stream *g_streams = &g_legacy;
static struct simgpu_event *g_events;
static uint32_t g_next_stream_id = 13;
static uint32_t g_next_event_id = 1;
static uint64_t g_next_event_sync_id = 1;
static uint64_t g_serial_end; /* CUPTI_ACTIVITY_KIND_KERNEL serialises kernels */
static int64_t g_grid_id;
static __thread struct simgpu_stream *t_ptds;

static int stream_known_locked(const struct simgpu_stream *s)
{
	for (const struct simgpu_stream *x = g_streams; x; x = x->next)
		if (x == s)
			return 1;
	return 0;
}

static struct simgpu_stream *ptds_get(void)
{
	if (t_ptds)
		return t_ptds;
	struct simgpu_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return &g_legacy;
	s->magic = STREAM_MAGIC;
	pthread_mutex_lock(&g_lock);
	s->id = g_next_stream_id++;
	s->next = g_streams;
	g_streams = s;
	pthread_mutex_unlock(&g_lock);
	t_ptds = s;
	return s;
}

int simgpu_stream_resolve(const void *handle, int per_thread, struct simgpu_stream **out)
{
	if (handle == NULL) {
		*out = per_thread ? ptds_get() : &g_legacy;
		return 0;
	}
	if (handle == (const void *)cudaStreamLegacy) {
		*out = &g_legacy;
		return 0;
	}
	if (handle == (const void *)cudaStreamPerThread) {
		*out = ptds_get();
		return 0;
	}
	pthread_mutex_lock(&g_lock);
	int ok = stream_known_locked(handle);
	pthread_mutex_unlock(&g_lock);
	if (!ok)
		return cudaErrorInvalidResourceHandle;
	*out = (struct simgpu_stream *)(uintptr_t)handle;
	return 0;
}

int simgpu_stream_create(unsigned flags, int priority, void **handle)
{
	struct simgpu_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return cudaErrorMemoryAllocation;
	s->magic = STREAM_MAGIC;
	s->flags = flags;
	s->priority = priority;
	s->device = t_device;
	s->device_set = 1;
	pthread_mutex_lock(&g_lock);
	s->id = g_next_stream_id++;
	s->next = g_streams;
	g_streams = s;
	pthread_mutex_unlock(&g_lock);
	*handle = s;
	return 0;
}

int simgpu_stream_destroy(const void *handle)
{
	if (handle == NULL || handle == (const void *)cudaStreamLegacy || handle == (const void *)cudaStreamPerThread)
		return cudaErrorInvalidResourceHandle;
	pthread_mutex_lock(&g_lock);
	struct simgpu_stream **pp = &g_streams;
	while (*pp && *pp != handle)
		pp = &(*pp)->next;
	struct simgpu_stream *s = *pp;
	if (s)
		*pp = s->next;
	pthread_mutex_unlock(&g_lock);
	if (!s)
		return cudaErrorInvalidResourceHandle;
	/* Work already queued still completes, as on a real device; the clocks need nothing more. */
	s->magic = 0;
	free(s);
	return 0;
}

uint32_t simgpu_stream_id(const struct simgpu_stream *s)
{
	return s->id;
}

uint64_t simgpu_stream_tail(struct simgpu_stream *s)
{
	pthread_mutex_lock(&g_lock);
	uint64_t t = s->tail;
	pthread_mutex_unlock(&g_lock);
	return t;
}

/* Earliest start on s given the legacy default stream's implicit synchronisation. */
static uint64_t stream_ready_locked(const struct simgpu_stream *s, uint64_t t)
{
	if (s->tail > t)
		t = s->tail;
	if (s->legacy) {
		for (const struct simgpu_stream *x = g_streams; x; x = x->next)
			if (!(x->flags & cudaStreamNonBlocking) && x->tail > t)
				t = x->tail;
	} else if (!(s->flags & cudaStreamNonBlocking) && g_legacy.tail > t) {
		t = g_legacy.tail;
	}
	return t;
}

static void queue_op(struct simgpu_stream *s, uint64_t ready, uint64_t dur, int kernel, uint64_t *start,
		     uint64_t *end, int64_t *grid_id)
{
	pthread_mutex_lock(&g_lock);
	uint64_t st = stream_ready_locked(s, ready);
	if (kernel && sg_act_on(CUPTI_ACTIVITY_KIND_KERNEL) && !sg_act_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) &&
	    g_serial_end > st)
		st = g_serial_end;
	s->tail = st + dur;
	if (kernel) {
		if (s->tail > g_serial_end)
			g_serial_end = s->tail;
		if (grid_id)
			*grid_id = ++g_grid_id;
	}
	pthread_mutex_unlock(&g_lock);
	*start = st;
	*end = st + dur;
}

static void fill_sync(struct simgpu_call *c, int type, uint32_t stream_id, uint32_t event_id, uint64_t sync_id,
		      uint64_t start, uint64_t end)
{
	CUpti_ActivitySynchronization2 *r = &c->sync;
	memset(r, 0, sizeof(*r));
	r->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	r->type = (CUpti_ActivitySynchronizationType)type;
	r->start = start;
	r->end = end;
	r->correlationId = c->corr;
	r->contextId = SG_CONTEXT_ID;
	r->streamId = stream_id;
	r->cudaEventId = event_id;
	r->cudaEventSyncId = sync_id;
	r->returnValue = 0;
	c->has_sync = 1;
}

/* SIMGPU_FAULT_KERNEL=NAME: the first kernel whose name contains NAME faults (700, illegal address) when it
 * ends; the next synchronising call that waits past that end returns 700, and so does every call needing
 * the context after it (the error is sticky, as on a real device). */
static atomic_int g_fault;          /* 700 once the faulting kernel is queued */
static atomic_int g_fault_seen;     /* 1 once a call has reported it */
static _Atomic uint64_t g_fault_at; /* when the faulting kernel ends */

static void fault_check_launch(const char *name, uint64_t end)
{
	const char *want = getenv("SIMGPU_FAULT_KERNEL");

	if (want && *want && name && strstr(name, want) && atomic_load(&g_fault) == 0) {
		atomic_store(&g_fault_at, end);
		atomic_store(&g_fault, cudaErrorIllegalAddress);
	}
}

/* after a wait: the fault surfaces once the virtual clock has passed the faulting kernel */
static int fault_surfaces(void)
{
	if (atomic_load(&g_fault) == 0 || simgpu_now() < atomic_load(&g_fault_at))
		return 0;
	atomic_store(&g_fault_seen, 1);
	return atomic_load(&g_fault);
}

int simgpu_stream_sync(struct simgpu_call *c, struct simgpu_stream *s)
{
	uint64_t t0 = simgpu_now();
	simgpu_wait_until(simgpu_stream_tail(s));
	simgpu_spin(g_cfg.sync_ns);
	fill_sync(c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, s->id, CUPTI_SYNCHRONIZATION_INVALID_VALUE,
		  (uint64_t)-1, t0, simgpu_now());
	{
		int e = sync_result();

		return e ? e : fault_surfaces();
	}
}

int simgpu_stream_query(struct simgpu_stream *s)
{
	return simgpu_now() >= simgpu_stream_tail(s) ? 0 : cudaErrorNotReady;
}

int simgpu_device_sync(struct simgpu_call *c)
{
	uint64_t t0 = simgpu_now();
	uint64_t target = 0;
	pthread_mutex_lock(&g_lock);
	for (const struct simgpu_stream *x = g_streams; x; x = x->next)
		if (x->tail > target)
			target = x->tail;
	pthread_mutex_unlock(&g_lock);
	simgpu_wait_until(target);
	simgpu_spin(g_cfg.sync_ns);
	if (c)
		fill_sync(c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, CUPTI_SYNCHRONIZATION_INVALID_VALUE,
			  CUPTI_SYNCHRONIZATION_INVALID_VALUE, (uint64_t)-1, t0, simgpu_now());
	if (!c)
		return 0;
	{
		int e = sync_result();

		return e ? e : fault_surfaces();
	}
}

static struct simgpu_event *event_find_locked(const void *handle)
{
	for (struct simgpu_event *e = g_events; e; e = e->next)
		if (e == handle)
			return e;
	return NULL;
}

int simgpu_event_create(unsigned flags, void **handle)
{
	struct simgpu_event *e = calloc(1, sizeof(*e));
	if (!e)
		return cudaErrorMemoryAllocation;
	e->magic = EVENT_MAGIC;
	e->flags = flags;
	pthread_mutex_lock(&g_lock);
	e->id = g_next_event_id++;
	e->next = g_events;
	g_events = e;
	pthread_mutex_unlock(&g_lock);
	*handle = e;
	return 0;
}

int simgpu_event_destroy(const void *handle)
{
	pthread_mutex_lock(&g_lock);
	struct simgpu_event **pp = &g_events;
	while (*pp && *pp != handle)
		pp = &(*pp)->next;
	struct simgpu_event *e = *pp;
	if (e)
		*pp = e->next;
	pthread_mutex_unlock(&g_lock);
	if (!e)
		return cudaErrorInvalidResourceHandle;
	e->magic = 0;
	free(e);
	return 0;
}

int simgpu_event_record(const void *handle, struct simgpu_stream *s)
{
	uint64_t now = simgpu_now();
	pthread_mutex_lock(&g_lock);
	struct simgpu_event *e = event_find_locked(handle);
	if (e) {
		e->t = stream_ready_locked(s, now);
		e->recorded = 1;
		e->sync_id = g_next_event_sync_id++;
	}
	pthread_mutex_unlock(&g_lock);
	return e ? 0 : cudaErrorInvalidResourceHandle;
}

static int event_time(const void *handle, uint64_t *t, uint32_t *id, uint64_t *sync_id)
{
	pthread_mutex_lock(&g_lock);
	struct simgpu_event *e = event_find_locked(handle);
	int err = 0;
	if (!e) {
		err = cudaErrorInvalidResourceHandle;
	} else {
		*t = e->recorded ? e->t : 0; /* never recorded: complete at once, as CUDA says */
		*id = e->id;
		*sync_id = e->sync_id;
	}
	pthread_mutex_unlock(&g_lock);
	return err;
}

int simgpu_event_sync(struct simgpu_call *c, const void *handle)
{
	uint64_t t, sync_id;
	uint32_t id;
	int err = event_time(handle, &t, &id, &sync_id);
	if (err)
		return err;
	uint64_t t0 = simgpu_now();
	simgpu_wait_until(t);
	simgpu_spin(g_cfg.sync_ns);
	fill_sync(c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, CUPTI_SYNCHRONIZATION_INVALID_VALUE, id,
		  sync_id, t0, simgpu_now());
	return sync_result();
}

int simgpu_event_query(const void *handle)
{
	uint64_t t, sync_id;
	uint32_t id;
	int err = event_time(handle, &t, &id, &sync_id);
	if (err)
		return err;
	return simgpu_now() >= t ? 0 : cudaErrorNotReady;
}

int simgpu_event_elapsed(float *ms, const void *start, const void *end)
{
	pthread_mutex_lock(&g_lock);
	struct simgpu_event *a = event_find_locked(start), *b = event_find_locked(end);
	int err = 0;
	if (!a || !b)
		err = cudaErrorInvalidResourceHandle;
	else if ((a->flags & cudaEventDisableTiming) || (b->flags & cudaEventDisableTiming))
		err = cudaErrorInvalidResourceHandle;
	else if (!a->recorded || !b->recorded)
		err = cudaErrorInvalidResourceHandle;
	else if (simgpu_now() < a->t || simgpu_now() < b->t)
		err = cudaErrorNotReady;
	else
		*ms = (float)((double)((int64_t)(b->t - a->t)) / 1e6);
	pthread_mutex_unlock(&g_lock);
	return err;
}

int simgpu_stream_wait_event(struct simgpu_call *c, struct simgpu_stream *s, const void *handle)
{
	uint64_t t0 = simgpu_now();
	pthread_mutex_lock(&g_lock);
	struct simgpu_event *e = event_find_locked(handle);
	uint32_t id = 0;
	uint64_t sync_id = 0;
	if (e) {
		if (e->recorded && e->t > s->tail)
			s->tail = e->t;
		id = e->id;
		sync_id = e->sync_id;
	}
	pthread_mutex_unlock(&g_lock);
	if (!e)
		return cudaErrorInvalidResourceHandle;
	fill_sync(c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, s->id, id, sync_id, t0, simgpu_now());
	return 0;
}

/* ---------------------------------------------------------------- cost model and GPU ops */

uint64_t simgpu_kernel_cost(const unsigned grid[3], const unsigned block[3])
{
	double threads = (double)grid[0] * grid[1] * grid[2] * (double)block[0] * block[1] * block[2];
	return g_cfg.kernel_floor_ns + (uint64_t)(threads * (double)g_cfg.thread_ps / 1000.0);
}

uint64_t simgpu_gemm_cost(double flops, double tflops)
{
	sg_config_load();
	/* 1 TFLOP/s is 1000 FLOP per ns. */
	return g_cfg.gemm_floor_ns + (uint64_t)(flops / (tflops * 1000.0));
}

void simgpu_launch(struct simgpu_call *c, struct simgpu_stream *s, const struct simgpu_launch *l)
{
	struct simgpu_graph *cap = __atomic_load_n(&s->capture, __ATOMIC_ACQUIRE);
	if (cap) {
		/* Captured launches become graph nodes: nothing runs, no GPU record. */
		simgpu_graph_add_kernel(cap, l, NULL);
		c->gpu_kind = 0;
		return;
	}
	uint64_t issue = simgpu_now();
	uint64_t start, end;
	int64_t grid_id = 0;
	queue_op(s, issue + g_cfg.launch_latency_ns, l->duration_ns, 1, &start, &end, &grid_id);
	fault_check_launch(l->name, end);

	CUpti_ActivityKernel10 *k = &c->gpu.kernel;
	memset(k, 0, sizeof(*k));
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->registersPerThread = l->regs;
	k->partitionedGlobalCacheRequested = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_UNKNOWN;
	k->partitionedGlobalCacheExecuted = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_UNKNOWN;
	k->start = start;
	k->end = end;
	k->completed = end;
	k->deviceId = device_of(s);
	k->contextId = SG_CONTEXT_ID;
	k->streamId = s->id;
	k->gridX = (int32_t)l->grid[0];
	k->gridY = (int32_t)l->grid[1];
	k->gridZ = (int32_t)l->grid[2];
	k->blockX = (int32_t)l->block[0];
	k->blockY = (int32_t)l->block[1];
	k->blockZ = (int32_t)l->block[2];
	k->staticSharedMemory = (int32_t)l->static_smem;
	k->dynamicSharedMemory = (int32_t)l->dyn_smem;
	k->correlationId = c->corr;
	k->gridId = grid_id;
	k->name = l->name;
	if (sg_latency_timestamps()) {
		k->queued = issue;
		k->submitted = issue + g_cfg.launch_latency_ns / 2;
	}
	k->launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
	k->sharedMemoryExecuted = l->static_smem + l->dyn_smem;
	k->shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
	k->channelID = 0;
	k->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
	k->clusterX = l->cluster[0];
	k->clusterY = l->cluster[1];
	k->clusterZ = l->cluster[2];
	c->gpu_kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

uint64_t simgpu_copy(struct simgpu_call *c, struct simgpu_stream *s, size_t bytes, int copy_kind, int src_kind,
		     int dst_kind, int async)
{
	double gbps = g_cfg.copy_gbps;
	if (copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD)
		gbps = g_cfg.d2d_gbps;
	else if (src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED || dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED)
		gbps = g_cfg.pinned_gbps;
	uint64_t dur = g_cfg.copy_latency_ns + (uint64_t)((double)bytes / gbps);
	uint64_t start, end;
	queue_op(s, simgpu_now() + g_cfg.launch_latency_ns, dur, 0, &start, &end, NULL);

	CUpti_ActivityMemcpy6 *m = &c->gpu.memcpy;
	memset(m, 0, sizeof(*m));
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = (uint8_t)copy_kind;
	m->srcKind = (uint8_t)src_kind;
	m->dstKind = (uint8_t)dst_kind;
	m->flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m->bytes = bytes;
	m->start = start;
	m->end = end;
	m->deviceId = device_of(s);
	m->contextId = SG_CONTEXT_ID;
	m->streamId = s->id;
	m->correlationId = c->corr;
	m->runtimeCorrelationId = c->corr;
	m->channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
	m->copyCount = 1;
	c->gpu_kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	return end;
}

uint64_t simgpu_memset(struct simgpu_call *c, struct simgpu_stream *s, size_t bytes, int value, int async)
{
	uint64_t dur = g_cfg.copy_latency_ns + (uint64_t)((double)bytes / g_cfg.memset_gbps);
	uint64_t start, end;
	queue_op(s, simgpu_now() + g_cfg.launch_latency_ns, dur, 0, &start, &end, NULL);

	CUpti_ActivityMemset4 *m = &c->gpu.memset;
	memset(m, 0, sizeof(*m));
	m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m->value = (uint32_t)value;
	m->bytes = bytes;
	m->start = start;
	m->end = end;
	m->deviceId = device_of(s);
	m->contextId = SG_CONTEXT_ID;
	m->streamId = s->id;
	m->correlationId = c->corr;
	m->flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
	m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
	c->gpu_kind = CUPTI_ACTIVITY_KIND_MEMSET;
	return end;
}

/* ---------------------------------------------------------------- API call bracket */

static atomic_uint g_corr;

int simgpu_api_enter(struct simgpu_call *c, uint32_t cbid, uint32_t flags, const char *symbol)
{
	return simgpu_api_enter_at(c, simgpu_now(), cbid, flags, symbol);
}

int simgpu_api_enter_at(struct simgpu_call *c, uint64_t t0, uint32_t cbid, uint32_t flags, const char *symbol)
{
	memset(c, 0, offsetof(struct simgpu_call, gpu));
	c->symbol = symbol;
	c->t0 = t0;
	c->cbid = cbid;
	c->flags = flags;
	c->corr = atomic_fetch_add(&g_corr, 1) + 1;
	sg_config_load();
	sg_callback_api(c, CUPTI_API_ENTER, 0);
	int err = 0;
	if ((flags & SIMGPU_ENTER_CTX) && atomic_load(&g_fault_seen))
		err = atomic_load(&g_fault);
	else if (flags & SIMGPU_ENTER_CTX)
		err = simgpu_ctx_ensure();
	else if (flags & SIMGPU_ENTER_DRIVER)
		err = simgpu_driver_init();
	return err;
}

int simgpu_api_exit(struct simgpu_call *c, int ret)
{
	if (c->has_sync)
		c->sync.returnValue = (uint32_t)ret;
	sg_emit_call(c, simgpu_now(), ret);
	sg_callback_api(c, CUPTI_API_EXIT, ret);
	return ret;
}

void simgpu_cupti_internal_api(uint32_t cbid, uint64_t cpu_ns, int ret)
{
	struct simgpu_call c;
	simgpu_api_enter(&c, cbid, SIMGPU_ENTER_INTERNAL, NULL);
	simgpu_spin(cpu_ns);
	simgpu_api_exit(&c, ret);
}

int simgpu_gemm_launch(const struct simgpu_gemm *g)
{
	struct simgpu_stream *s;
	int err = simgpu_stream_resolve(g->stream, 0, &s);
	if (err)
		return err;
	simgpu_module_load(g->name);
	if (g->occupancy_query)
		simgpu_cupti_internal_api(CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000,
					  g_cfg.occupancy_ns, 0);
	struct simgpu_call c;
	uint32_t cbid = g->launch_ex ? CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060
				     : CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	simgpu_api_enter(&c, cbid, SIMGPU_ENTER_INTERNAL, g->name);
	simgpu_spin(g_cfg.launch_ns);
	long long gm = (g->m + g->tile_m - 1) / g->tile_m, gn = (g->n + g->tile_n - 1) / g->tile_n;
	long long gz = g->batch > 65535 ? 65535 : g->batch;
	struct simgpu_launch l = {
		.name = g->name,
		.grid = { (unsigned)(gm ? gm : 1), (unsigned)(gn > 65535 ? 65535 : gn ? gn : 1), (unsigned)(gz ? gz : 1) },
		.block = { g->block, 1, 1 },
		.cluster = { g->launch_ex ? 1 : 0, g->launch_ex ? 1 : 0, g->launch_ex ? 1 : 0 },
		.dyn_smem = g->dyn_smem,
		.static_smem = g->static_smem,
		.regs = g->regs,
	};
	l.duration_ns = simgpu_gemm_cost(2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch, g->tflops);
	simgpu_launch(&c, s, &l);
	simgpu_api_exit(&c, 0);
	return 0;
}

/* ---------------------------------------------------------------- allocations */

struct alloc {
	uintptr_t base;
	size_t size;
	enum simgpu_mem_kind kind;
	int registered; /* the program's memory, pinned by cudaHostRegister: never freed here */
};

static pthread_mutex_t g_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *g_allocs;
static size_t g_nallocs, g_cap_allocs;
static uint64_t g_dev_used;

/* Index of the first allocation with base > p. */
static size_t alloc_upper_locked(uintptr_t p)
{
	size_t lo = 0, hi = g_nallocs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g_allocs[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* room for one more entry in g_allocs (g_mem_lock held): 0, or -1 when it cannot grow */
static int allocs_room_locked(void)
{
	if (g_nallocs == g_cap_allocs) {
		size_t cap = g_cap_allocs ? g_cap_allocs * 2 : 256;
		struct alloc *n = realloc(g_allocs, cap * sizeof(*n));

		if (!n)
			return -1;
		g_allocs = n;
		g_cap_allocs = cap;
	}
	return 0;
}

int simgpu_mem_alloc(void **out, size_t size, enum simgpu_mem_kind kind)
{
	int err = 0;
	void *p = NULL;
	pthread_mutex_lock(&g_mem_lock);
	if (kind == SIMGPU_MEM_DEVICE && g_dev_used + size > g_cfg.mem_bytes) {
		err = cudaErrorMemoryAllocation;
		goto out;
	}
	if (allocs_room_locked() < 0) {
		err = cudaErrorMemoryAllocation;
		goto out;
	}
	/* cudaMalloc returns 256-byte aligned memory; a zero-byte request still gets a distinct pointer. */
	if (posix_memalign(&p, 256, size ? size : 1) != 0) {
		err = cudaErrorMemoryAllocation;
		goto out;
	}
	size_t i = alloc_upper_locked((uintptr_t)p);
	memmove(&g_allocs[i + 1], &g_allocs[i], (g_nallocs - i) * sizeof(*g_allocs));
	g_allocs[i] = (struct alloc){ (uintptr_t)p, size ? size : 1, kind, 0 };
	g_nallocs++;
	if (kind == SIMGPU_MEM_DEVICE)
		g_dev_used += size;
	*out = p;
out:
	pthread_mutex_unlock(&g_mem_lock);
	return err;
}

int simgpu_mem_free(void *p, enum simgpu_mem_kind kind)
{
	int err = 0;
	if (!p)
		return 0;
	pthread_mutex_lock(&g_mem_lock);
	size_t i = alloc_upper_locked((uintptr_t)p);
	if (i == 0 || g_allocs[i - 1].base != (uintptr_t)p || g_allocs[i - 1].kind != kind || g_allocs[i - 1].registered) {
		err = cudaErrorInvalidValue;
		goto out;
	}
	i--;
	if (kind == SIMGPU_MEM_DEVICE)
		g_dev_used -= g_allocs[i].size;
	memmove(&g_allocs[i], &g_allocs[i + 1], (g_nallocs - i - 1) * sizeof(*g_allocs));
	g_nallocs--;
	free(p);
out:
	pthread_mutex_unlock(&g_mem_lock);
	return err;
}

/* cudaHostRegister: the program's range becomes pinned host memory, as the driver page-locks it (copies from
 * it are then pinned copies); a range overlapping one known already is refused, as CUDA refuses it */
int simgpu_mem_register(void *p, size_t size)
{
	uintptr_t b = (uintptr_t)p;
	int err = 0;

	pthread_mutex_lock(&g_mem_lock);
	size_t i = alloc_upper_locked(b + size - 1);
	if (i > 0 && g_allocs[i - 1].base + g_allocs[i - 1].size > b) {
		err = cudaErrorHostMemoryAlreadyRegistered;
		goto out;
	}
	if (allocs_room_locked() < 0) {
		err = cudaErrorMemoryAllocation;
		goto out;
	}
	memmove(&g_allocs[i + 1], &g_allocs[i], (g_nallocs - i) * sizeof(*g_allocs));
	g_allocs[i] = (struct alloc){ b, size, SIMGPU_MEM_PINNED, 1 };
	g_nallocs++;
out:
	pthread_mutex_unlock(&g_mem_lock);
	return err;
}

int simgpu_mem_unregister(void *p)
{
	int err = 0;

	pthread_mutex_lock(&g_mem_lock);
	size_t i = alloc_upper_locked((uintptr_t)p);
	if (i == 0 || g_allocs[i - 1].base != (uintptr_t)p || !g_allocs[i - 1].registered) {
		err = cudaErrorHostMemoryNotRegistered;
		goto out;
	}
	i--;
	memmove(&g_allocs[i], &g_allocs[i + 1], (g_nallocs - i - 1) * sizeof(*g_allocs));
	g_nallocs--;
out:
	pthread_mutex_unlock(&g_mem_lock);
	return err;
}

enum simgpu_mem_kind simgpu_mem_kind_of(const void *p, size_t *avail)
{
	enum simgpu_mem_kind k = SIMGPU_MEM_PAGEABLE;
	pthread_mutex_lock(&g_mem_lock);
	size_t i = alloc_upper_locked((uintptr_t)p);
	if (i > 0 && (uintptr_t)p < g_allocs[i - 1].base + g_allocs[i - 1].size) {
		k = g_allocs[i - 1].kind;
		if (avail)
			*avail = g_allocs[i - 1].base + g_allocs[i - 1].size - (uintptr_t)p;
	} else if (avail) {
		*avail = (size_t)-1;
	}
	pthread_mutex_unlock(&g_mem_lock);
	return k;
}

uint64_t simgpu_mem_used(void)
{
	pthread_mutex_lock(&g_mem_lock);
	uint64_t u = g_dev_used;
	pthread_mutex_unlock(&g_mem_lock);
	return u;
}

void simgpu_ctx_reset(void)
{
	/* cudaDeviceReset: device allocations die with the context, the next call creates a new one. */
	pthread_mutex_lock(&g_mem_lock);
	size_t w = 0;
	for (size_t i = 0; i < g_nallocs; i++) {
		if (g_allocs[i].kind == SIMGPU_MEM_DEVICE)
			free((void *)g_allocs[i].base);
		else
			g_allocs[w++] = g_allocs[i];
	}
	g_nallocs = w;
	g_dev_used = 0;
	pthread_mutex_unlock(&g_mem_lock);
	names_unload_all();
	atomic_store(&g_ctx_created, 0);
}

/* ---------------------------------------------------------------- fork */

/*
 * Only locks that are never held across client code are taken around fork(); the init lock is held while
 * InitializeInjection runs, which may fork itself, so the child gets a fresh one instead.
 */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&g_names_lock);
	pthread_mutex_lock(&g_lock);
	pthread_mutex_lock(&g_mem_lock);
	sg_activity_atfork_prepare();
}

static void atfork_parent(void)
{
	sg_activity_atfork_parent();
	pthread_mutex_unlock(&g_mem_lock);
	pthread_mutex_unlock(&g_lock);
	pthread_mutex_unlock(&g_names_lock);
}

static void atfork_child(void)
{
	sg_activity_atfork_child();
	pthread_mutex_unlock(&g_mem_lock);
	pthread_mutex_unlock(&g_lock);
	pthread_mutex_unlock(&g_names_lock);
	pthread_mutex_init(&g_init_lock, NULL);
	t_in_driver_init = 0;
}

__attribute__((constructor)) static void engine_ctor(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* ---------------------------------------------------------------- driver entry points by name */

#include "cbid_names.h"

/* What cuGetProcAddress and cudaGetDriverEntryPoint answer: this toolkit's version of the named function
 * (cuda.h's own #defines say which), looked up in the simulated libcuda.so.1. */
/* The runtime's door (cudaGetDriverEntryPoint): the driver's cuGetProcAddress_v2, found as the real runtime
 * finds it, so that the driver's own functions come back, not what the loader would bind. */
int simgpu_driver_entry(const char *symbol, int version, void **pfn)
{
	typedef int (*gpa_fn)(const char *, void **, int, uint64_t, int *);
	static gpa_fn gpa;
	gpa_fn g = __atomic_load_n(&gpa, __ATOMIC_ACQUIRE);
	int status = 0;

	if (!g) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (!h)
			h = dlopen("libcuda.so.1", RTLD_NOW);
		if (h)
			g = (gpa_fn)dlsym(h, "cuGetProcAddress_v2");
		if (!g)
			return simgpu_driver_symbol(symbol, version, pfn);
		__atomic_store_n(&gpa, g, __ATOMIC_RELEASE);
	}
	return g(symbol, pfn, version, 0, &status) == 0;
}

int simgpu_driver_symbol(const char *symbol, int version, void **pfn)
{
	static void *lib;
	const char *name = symbol;
	void *h, *f;

	(void)version;
	if (!symbol || !pfn)
		return 0;
	*pfn = NULL;
	h = __atomic_load_n(&lib, __ATOMIC_ACQUIRE);
	if (!h) {
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (!h)
			h = dlopen("libcuda.so.1", RTLD_NOW);
		if (!h)
			return 0;
		__atomic_store_n(&lib, h, __ATOMIC_RELEASE);
	}
	for (size_t i = 0; i < sizeof(sg_driver_versioned) / sizeof(sg_driver_versioned[0]); i++) {
		if (!strcmp(sg_driver_versioned[i][0], symbol)) {
			name = sg_driver_versioned[i][1];
			break;
		}
	}
	f = dlsym(h, name);
	if (!f && name != symbol)
		f = dlsym(h, symbol);
	*pfn = f;
	return f != NULL;
}

/* ---------------------------------------------------------------- graphs: stream capture, node by node, replay */

#define GRAPH_MAGIC 0x47525048u

struct simgpu_graph {
	uint32_t magic;
	uint32_t id;
	int exec; /* an instantiated (executable) graph */
	size_t n, cap;
	struct simgpu_launch *nodes;
	uint64_t *node_ids;
};

static uint32_t g_graph_ids;
static uint64_t g_node_ids, g_capture_ids;

int simgpu_graph_create(struct simgpu_graph **out)
{
	struct simgpu_graph *g = calloc(1, sizeof(*g));
	if (!g)
		return cudaErrorMemoryAllocation;
	g->magic = GRAPH_MAGIC;
	g->id = __atomic_add_fetch(&g_graph_ids, 1, __ATOMIC_RELAXED);
	*out = g;
	return 0;
}

int simgpu_graph_valid(const struct simgpu_graph *g, int exec)
{
	return g && g->magic == GRAPH_MAGIC && g->exec == exec;
}

int simgpu_graph_add_kernel(struct simgpu_graph *g, const struct simgpu_launch *l, uint64_t *node_id)
{
	pthread_mutex_lock(&g_lock);
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct simgpu_launch *nodes = realloc(g->nodes, cap * sizeof(*nodes));
		uint64_t *ids = nodes ? realloc(g->node_ids, cap * sizeof(*ids)) : NULL;
		if (nodes)
			g->nodes = nodes;
		if (!ids) {
			pthread_mutex_unlock(&g_lock);
			return cudaErrorMemoryAllocation;
		}
		g->node_ids = ids;
		g->cap = cap;
	}
	g->nodes[g->n] = *l;
	g->node_ids[g->n] = ++g_node_ids;
	if (node_id)
		*node_id = g->node_ids[g->n];
	g->n++;
	pthread_mutex_unlock(&g_lock);
	return 0;
}

size_t simgpu_graph_nodes(const struct simgpu_graph *g)
{
	return g->n;
}

uint32_t simgpu_graph_id(const struct simgpu_graph *g)
{
	return g->id;
}

/* An executable graph: a copy of the nodes under its own graph id, node ids kept (CUPTI's graphNodeId). */
int simgpu_graph_instantiate(const struct simgpu_graph *g, struct simgpu_graph **out)
{
	struct simgpu_graph *e;
	int err = simgpu_graph_create(&e);
	if (err)
		return err;
	e->exec = 1;
	pthread_mutex_lock(&g_lock);
	if (g->n) {
		e->nodes = malloc(g->n * sizeof(*e->nodes));
		e->node_ids = malloc(g->n * sizeof(*e->node_ids));
		if (!e->nodes || !e->node_ids) {
			pthread_mutex_unlock(&g_lock);
			free(e->nodes), free(e->node_ids), free(e);
			return cudaErrorMemoryAllocation;
		}
		memcpy(e->nodes, g->nodes, g->n * sizeof(*e->nodes));
		memcpy(e->node_ids, g->node_ids, g->n * sizeof(*e->node_ids));
	}
	e->n = e->cap = g->n;
	pthread_mutex_unlock(&g_lock);
	*out = e;
	return 0;
}

void simgpu_graph_destroy(struct simgpu_graph *g)
{
	if (!g || g->magic != GRAPH_MAGIC)
		return;
	g->magic = 0;
	free(g->nodes);
	free(g->node_ids);
	free(g);
}

/* One launch of an executable graph: its kernels run in order on the stream, each with the launch's
 * correlation id and its graph and node ids, as CUPTI reports graph kernel nodes. */
void simgpu_graph_launch(struct simgpu_call *c, struct simgpu_stream *s, const struct simgpu_graph *e)
{
	uint64_t issue = simgpu_now();
	for (size_t i = 0; i < e->n; i++) {
		const struct simgpu_launch *l = &e->nodes[i];
		uint64_t start, end;
		int64_t grid_id = 0;
		simgpu_module_load(l->name);
		queue_op(s, issue + g_cfg.launch_latency_ns, l->duration_ns, 1, &start, &end, &grid_id);
		CUpti_ActivityKernel10 k;
		memset(&k, 0, sizeof(k));
		k.registersPerThread = l->regs;
		k.partitionedGlobalCacheRequested = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_UNKNOWN;
		k.partitionedGlobalCacheExecuted = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_UNKNOWN;
		k.start = start;
		k.end = end;
		k.completed = end;
		k.deviceId = SG_DEVICE_ID;
		k.contextId = SG_CONTEXT_ID;
		k.streamId = s->id;
		k.gridX = (int32_t)l->grid[0], k.gridY = (int32_t)l->grid[1], k.gridZ = (int32_t)l->grid[2];
		k.blockX = (int32_t)l->block[0], k.blockY = (int32_t)l->block[1], k.blockZ = (int32_t)l->block[2];
		k.staticSharedMemory = (int32_t)l->static_smem;
		k.dynamicSharedMemory = (int32_t)l->dyn_smem;
		k.correlationId = c->corr;
		k.gridId = grid_id;
		k.name = l->name;
		k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
		k.sharedMemoryExecuted = l->static_smem + l->dyn_smem;
		k.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
		k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
		k.graphId = e->id;
		k.graphNodeId = e->node_ids[i];
		if (sg_act_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
			k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			sg_emit(&k, sizeof(k));
		} else if (sg_act_on(CUPTI_ACTIVITY_KIND_KERNEL)) {
			k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
			sg_emit(&k, sizeof(k));
		}
	}
}

int simgpu_capture_begin(struct simgpu_stream *s)
{
	struct simgpu_graph *g;
	if (__atomic_load_n(&s->capture, __ATOMIC_ACQUIRE))
		return cudaErrorIllegalState;
	int err = simgpu_graph_create(&g);
	if (err)
		return err;
	s->capture_id = __atomic_add_fetch(&g_capture_ids, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->capture, g, __ATOMIC_RELEASE);
	return 0;
}

int simgpu_capture_end(struct simgpu_stream *s, struct simgpu_graph **out)
{
	struct simgpu_graph *g = __atomic_exchange_n(&s->capture, NULL, __ATOMIC_ACQ_REL);
	if (!g)
		return cudaErrorIllegalState;
	*out = g;
	return 0;
}

int simgpu_capture_status(struct simgpu_stream *s, uint64_t *id, struct simgpu_graph **g)
{
	struct simgpu_graph *cap = __atomic_load_n(&s->capture, __ATOMIC_ACQUIRE);
	if (id)
		*id = cap ? s->capture_id : 0;
	if (g)
		*g = cap;
	return cap != NULL;
}
