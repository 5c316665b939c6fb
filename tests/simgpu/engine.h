/* Interface of libsimgpu_engine.so, the shared state behind the simulated cudart, cuBLAS, cuBLASLt and CUPTI. */
#ifndef SIMGPU_ENGINE_H
#define SIMGPU_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

/* Every tunable of the simulator; filled once from SIMGPU_* environment variables. */
struct simgpu_config {
	int verbose;
	int device_count;
	int no_driver;
	int sm_count;
	int copy_data;
	uint64_t fail_sync_after; /* the N-th synchronisation returns 700, sticky (0: never) */
	uint64_t mem_bytes;
	uint64_t driver_init_ns;
	uint64_t ctx_init_ns;
	uint64_t module_load_ns;
	uint64_t launch_ns;
	uint64_t launch_latency_ns;
	uint64_t kernel_floor_ns;
	uint64_t thread_ps;
	uint64_t gemm_floor_ns;
	double peak_tflops;
	double tensor_tflops;
	double fp64_tflops;
	uint64_t cublas_create_ns;
	uint64_t cublas_ns;
	uint64_t cublas_first_ns;
	uint64_t occupancy_ns;
	uint64_t cublaslt_ns;
	uint64_t cublaslt_heuristic_ns;
	double copy_gbps;
	double pinned_gbps;
	double d2d_gbps;
	double memset_gbps;
	uint64_t copy_latency_ns;
	uint64_t memcpy_ns;
	uint64_t malloc_ns;
	uint64_t free_ns;
	uint64_t api_ns;
	uint64_t sync_ns;
	uint64_t cupti_buffer_ns;
	uint64_t cupti_flush_ns;
};

/* Memory kinds the engine tracks, so copies know pinned from pageable and H2D from D2H. */
enum simgpu_mem_kind {
	SIMGPU_MEM_PAGEABLE = 0,
	SIMGPU_MEM_PINNED = 1,
	SIMGPU_MEM_DEVICE = 2,
};

/* Flags of simgpu_api_enter: which first-use costs the call may trigger. */
enum {
	SIMGPU_ENTER_DRIVER = 1u << 0, /* cuInit: loads CUDA_INJECTION64_PATH */
	SIMGPU_ENTER_CTX = 1u << 1,    /* primary context creation */
	SIMGPU_ENTER_INTERNAL = 1u << 2, /* a library-internal call (cuBLAS's static cudart) */
	SIMGPU_ENTER_DRIVER_API = 1u << 3, /* a driver API call: DRIVER records and callback domain */
};

struct simgpu_stream;
struct simgpu_event;

/* One API call in flight: the records it produces are emitted when it returns, API record first. */
struct simgpu_call {
	uint64_t t0;
	uint32_t cbid;
	uint32_t corr;
	uint32_t flags;
	const char *symbol; /* kernel name for launch callbacks */
	uint64_t cb_data;   /* correlationData slot for the callback API */
	int gpu_kind;       /* 0 or the CUpti_ActivityKind of gpu */
	int has_sync;
	union {
		CUpti_ActivityKernel10 kernel;
		CUpti_ActivityMemcpy6 memcpy;
		CUpti_ActivityMemset4 memset;
	} gpu;
	CUpti_ActivitySynchronization2 sync;
};

/* A kernel launch as the cost model and the CUPTI record need it. */
struct simgpu_launch {
	const char *name; /* interned, lives until exit */
	unsigned grid[3];
	unsigned block[3];
	unsigned cluster[3];
	uint32_t dyn_smem;
	uint32_t static_smem;
	uint16_t regs;
	uint64_t duration_ns;
};

const struct simgpu_config *simgpu_cfg(void);
uint64_t simgpu_now(void);
void simgpu_spin(uint64_t ns);
void simgpu_wait_until(uint64_t t);
void simgpu_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* cuInit / context state; each returns 0 or a positive cudaError_t. */
int simgpu_driver_init(void);
int simgpu_ctx_ensure(void);
void simgpu_ctx_reset(void);
int simgpu_ctx_created(void);
/* The driver was initialised (by cuInit or by the runtime's first call) and has a device. */
int simgpu_driver_ready(void);
/* cuGetProcAddress: the driver function a name (and CUDA version) stands for; 1 if found. */
int simgpu_driver_symbol(const char *symbol, int version, void **pfn);
/* cudaGetDriverEntryPoint: the same through the driver's cuGetProcAddress_v2, as the real runtime asks it. */
int simgpu_driver_entry(const char *symbol, int version, void **pfn);

/* Graphs: built by stream capture or node by node; a launch replays the kernel nodes in order. */
struct simgpu_graph;
int simgpu_graph_create(struct simgpu_graph **out);
int simgpu_graph_valid(const struct simgpu_graph *g, int exec);
int simgpu_graph_add_kernel(struct simgpu_graph *g, const struct simgpu_launch *l, uint64_t *node_id);
size_t simgpu_graph_nodes(const struct simgpu_graph *g);
uint32_t simgpu_graph_id(const struct simgpu_graph *g);
int simgpu_graph_instantiate(const struct simgpu_graph *g, struct simgpu_graph **out);
void simgpu_graph_destroy(struct simgpu_graph *g);
void simgpu_graph_launch(struct simgpu_call *c, struct simgpu_stream *s, const struct simgpu_graph *e);
int simgpu_capture_begin(struct simgpu_stream *s);
int simgpu_capture_end(struct simgpu_stream *s, struct simgpu_graph **out);
int simgpu_capture_status(struct simgpu_stream *s, uint64_t *id, struct simgpu_graph **g);

/* API call bracket: enter runs first-use costs and opens a correlation id, exit emits the records. */
int simgpu_api_enter(struct simgpu_call *c, uint32_t cbid, uint32_t flags, const char *symbol);
/* The same with the record's start read by the caller: real CUPTI stamps a runtime call at its entry, before the
 * work that finds what the call needs (a launch's kernel lookup, which names the kernel for the enter callback). */
int simgpu_api_enter_at(struct simgpu_call *c, uint64_t t0, uint32_t cbid, uint32_t flags, const char *symbol);
int simgpu_api_exit(struct simgpu_call *c, int ret);

/* Name interning and lazy module load at a kernel's first launch. */
const char *simgpu_intern(const char *name);
void simgpu_module_load(const char *interned_name);

/* Streams and events. Handles are the application's cudaStream_t / cudaEvent_t values. */
int simgpu_stream_resolve(const void *handle, int per_thread, struct simgpu_stream **out);
int simgpu_stream_create(unsigned flags, int priority, void **handle);
int simgpu_stream_destroy(const void *handle);
uint32_t simgpu_stream_id(const struct simgpu_stream *s);
uint64_t simgpu_stream_tail(struct simgpu_stream *s);
int simgpu_stream_wait_event(struct simgpu_call *c, struct simgpu_stream *s, const void *event);
int simgpu_stream_sync(struct simgpu_call *c, struct simgpu_stream *s);
int simgpu_stream_query(struct simgpu_stream *s);
int simgpu_device_sync(struct simgpu_call *c);
int simgpu_event_create(unsigned flags, void **handle);
int simgpu_event_destroy(const void *handle);
int simgpu_event_record(const void *handle, struct simgpu_stream *s);
int simgpu_event_sync(struct simgpu_call *c, const void *handle);
int simgpu_event_query(const void *handle);
int simgpu_event_elapsed(float *ms, const void *start, const void *end);

/* GPU work: computes start/end on the stream's virtual clock and stages the CUPTI record in c. */
uint64_t simgpu_kernel_cost(const unsigned grid[3], const unsigned block[3]);
uint64_t simgpu_gemm_cost(double flops, double tflops);
void simgpu_launch(struct simgpu_call *c, struct simgpu_stream *s, const struct simgpu_launch *l);
uint64_t simgpu_copy(struct simgpu_call *c, struct simgpu_stream *s, size_t bytes, int copy_kind, int src_kind,
		     int dst_kind, int async);
uint64_t simgpu_memset(struct simgpu_call *c, struct simgpu_stream *s, size_t bytes, int value, int async);

/* A library GEMM: internal launch (CUPTI sees it, hooks on libcudart never do), optional occupancy query. */
struct simgpu_gemm {
	const void *stream;
	const char *name; /* interned */
	unsigned tile_m, tile_n;
	unsigned block;
	uint16_t regs;
	uint32_t static_smem, dyn_smem;
	long long m, n, k, batch;
	double tflops;
	int launch_ex;       /* launched with cluster attributes through cudaLaunchKernelExC */
	int occupancy_query; /* cudaOccupancyMaxActiveBlocksPerMultiprocessor before the launch */
};
int simgpu_gemm_launch(const struct simgpu_gemm *g);

/* Allocation tracking (memory is host memory; kernels never run). */
int simgpu_mem_alloc(void **p, size_t size, enum simgpu_mem_kind kind);
int simgpu_mem_free(void *p, enum simgpu_mem_kind kind);
int simgpu_mem_register(void *p, size_t size);
int simgpu_mem_unregister(void *p);
enum simgpu_mem_kind simgpu_mem_kind_of(const void *p, size_t *avail);
uint64_t simgpu_mem_used(void);

/* CUPTI: the simulated libcupti forwards here, so records exist whether or not it is loaded. */
int simgpu_cupti_enable(int kind, int on);
int simgpu_cupti_enabled(int kind);
int simgpu_cupti_enable_api(int driver, uint32_t cbid, int on);
int simgpu_cupti_register(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done);
int simgpu_cupti_flush_all(uint32_t flag);
int simgpu_cupti_flush_period(uint32_t ms);
int simgpu_cupti_next_record(uint8_t *buffer, size_t valid, CUpti_Activity **record);
size_t simgpu_cupti_dropped(void);
int simgpu_cupti_push_external(int kind, uint64_t id);
int simgpu_cupti_pop_external(int kind, uint64_t *id);
int simgpu_cupti_set_thread_id_type(int type);
int simgpu_cupti_get_thread_id_type(void);
int simgpu_cupti_latency_timestamps(int on);
int simgpu_cupti_subscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *userdata);
int simgpu_cupti_unsubscribe(CUpti_SubscriberHandle sub);
int simgpu_cupti_enable_callback(uint32_t enable, CUpti_SubscriberHandle sub, int domain, int cbid);
int simgpu_cupti_enable_domain(uint32_t enable, CUpti_SubscriberHandle sub, int domain);
int simgpu_cupti_finalize(void);
/* cuptiActivityRegisterTimestampCallback: records carry the caller's clock, c0 + (t - n0) * rate */
int simgpu_cupti_timestamp_map(uint64_t n0, uint64_t c0, double rate, CUpti_TimestampCallbackFunc func);
uint64_t simgpu_cupti_time(uint64_t t);
int simgpu_cupti_callback_name(int domain, uint32_t cbid, const char **name);
void simgpu_cupti_internal_api(uint32_t cbid, uint64_t cpu_ns, int ret);
/* the calling thread's current device (cudaSetDevice) */
void simgpu_set_device(int device);
int simgpu_get_device(void);

#endif
