/* The framed pipe protocol between libcprof.so (and cprof-run) and cprofd: fixed-width, versioned, asserted layouts. */
#ifndef CPROF_COMMON_WIRE_H
#define CPROF_COMMON_WIRE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define CPROF_WIRE_MAGIC   0x46525043u /* "CPRF" as little-endian bytes */
#define CPROF_WIRE_VERSION 2 /* 2: api events carry a stack id; STACKS frames */
/* One frame is one write(2) of at most PIPE_BUF bytes: POSIX makes such writes to a FIFO atomic,
 * so many processes and threads can share one FIFO without interleaving. */
#define CPROF_WIRE_MAX_FRAME 4096
_Static_assert(CPROF_WIRE_MAX_FRAME <= PIPE_BUF, "a frame must fit one atomic FIFO write");

enum cprof_msg_type {
	CPROF_MSG_HELLO = 1,   /* a process starts talking: who it is */
	CPROF_MSG_STRINGS = 2, /* per-process string table entries (kernel names) */
	CPROF_MSG_API = 3,     /* batch of hooked API calls */
	CPROF_MSG_LOST = 4,    /* events dropped since the previous LOST */
	CPROF_MSG_BYE = 5,     /* a process is done (exit, _exit, exec) */
	CPROF_MSG_RUN_END = 6, /* not sent any more: cprof-run ends the run with a queued SIGUSR2 to cprofd, which refuses this from the FIFO (anyone there can write it) */
	CPROF_MSG_GPU = 7,     /* batch of CUPTI activity records, converted to fixed-width records */
	CPROF_MSG_STATUS = 8,  /* something about the process's profiling changed (CUPTI started, missing, ...) */
	CPROF_MSG_STACKS = 9,  /* call stacks captured at hooked calls, each sent once per process */
	CPROF_MSG_CRASH = 10,  /* a fatal signal reached the process: what it was, each thread's last call */
	CPROF_MSG_COST = 11,   /* what profiling has cost the process so far, and its losses by cause (running totals) */
	CPROF_MSG_COUNTS = 12, /* calls counted and not recorded (device queries once CUPTI is on): running totals */
	CPROF_MSG_RING = 13,   /* FIFO only: the process's shared-memory ring (common/shmring.h), for cprofd to map */
	CPROF_MSG_KICK = 14,   /* FIFO only, no payload: frames wait in the sender's ring (the first one: from now on) */
	CPROF_MSG__MAX
};

struct cprof_wire_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len;   /* whole frame, header included */
	uint32_t pid;   /* producer */
	uint32_t seq;   /* per-producer frame counter, starts at 0 after each HELLO */
	uint32_t count; /* records in the payload */
};
_Static_assert(sizeof(struct cprof_wire_hdr) == 24, "wire header layout");
_Static_assert(offsetof(struct cprof_wire_hdr, len) == 8, "wire header layout");
_Static_assert(offsetof(struct cprof_wire_hdr, count) == 20, "wire header layout");

#define CPROF_WIRE_MAX_PAYLOAD (CPROF_WIRE_MAX_FRAME - sizeof(struct cprof_wire_hdr))

enum cprof_clock { CPROF_CLOCK_REALTIME = 0 };

/* HELLO payload: fixed part, then exe, host and argv (NUL-separated) bytes, lengths given here. */
struct cprof_wire_hello {
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns;    /* CLOCK_REALTIME when the library initialised in this process */
	uint32_t clock;       /* enum cprof_clock: which clock every timestamp uses */
	uint32_t wire_version;
	int32_t rank;         /* -1 when unset: RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID */
	int32_t local_rank;   /* LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID */
	int32_t world_size;   /* WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS */
	uint32_t argc;        /* argv entries carried (may be fewer than the process had) */
	uint16_t exe_len;
	uint16_t host_len;
	uint16_t argv_len;    /* bytes of NUL-separated argv */
	uint16_t flags;       /* CPROF_HELLO_* */
	uint8_t data[];
};
_Static_assert(sizeof(struct cprof_wire_hello) == 48, "hello layout");
_Static_assert(offsetof(struct cprof_wire_hello, exe_len) == 40, "hello layout");

#define CPROF_HELLO_ARGV_TRUNCATED 0x1
#define CPROF_HELLO_FORKED         0x2 /* started in a fork child without exec */
#define CPROF_HELLO_SIMGPU         0x4 /* the CUDA libraries are the simulated GPU (tests/simgpu) */

/* STRINGS payload: count records, each this header then len bytes (no NUL), padded to 4. */
struct cprof_wire_string {
	uint32_t id;
	uint16_t len;
	uint16_t kind; /* enum cprof_string_kind */
};
_Static_assert(sizeof(struct cprof_wire_string) == 8, "string layout");
enum cprof_string_kind {
	CPROF_STR_KERNEL = 1, CPROF_STR_API = 2,
	CPROF_STR_MODULE = 3,  /* path of a loaded ELF module (native stack frames) */
	CPROF_STR_PYFILE = 4,  /* co_filename of a Python code object */
	CPROF_STR_PYFUNC = 5,  /* co_name (co_qualname where there is one) */
	CPROF_STR_NVTX = 6,    /* NVTX message, domain, category, or a thread/stream name */
};
#define CPROF_WIRE_MAX_STRING (CPROF_WIRE_MAX_PAYLOAD - sizeof(struct cprof_wire_string))

/* One hooked call. The meaning of arg[] depends on the API class (see below). */
struct cprof_wire_api {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t corr;   /* cprof correlation id, unique in the process; pushed to CUPTI as external id */
	uint64_t stream; /* cudaStream_t value (0 = legacy default stream) */
	uint64_t bytes;  /* memcpy/memset/malloc size */
	uint64_t ptr;    /* host stub of a kernel, device pointer of malloc/free, ... */
	uint32_t tid;
	uint16_t api;    /* enum cprof_api */
	uint16_t flags;  /* CPROF_API_F_* */
	int32_t ret;     /* the value the real function returned, unchanged */
	uint32_t name;   /* per-process string id (kernel name), 0 = none */
	uint32_t arg[8];
	uint32_t stack;  /* per-process stack id (STACKS), 0 = none captured */
	uint32_t pad;
};
_Static_assert(sizeof(struct cprof_wire_api) == 104, "api event layout");
_Static_assert(offsetof(struct cprof_wire_api, tid) == 48, "api event layout");
_Static_assert(offsetof(struct cprof_wire_api, arg) == 64, "api event layout");

#define CPROF_API_F_NESTED 0x1 /* called from inside another hooked call (cuBLAS -> cuBLASLt) */
#define CPROF_API_F_REAL_MISSING 0x2 /* the real symbol could not be found; nothing was called */
/* stack is the one last captured at the same call site (sampled mode), not this call's own */
#define CPROF_API_F_STACK_INHERITED 0x4
/* ptr is a kernel's host stub or cudaKernel_t whose name the flusher looks up (off the application thread) */
#define CPROF_API_F_KERNEL_KEY 0x8

/* arg[] by class. launch: grid x,y,z, block x,y,z, dynamic shared memory, -.
 * memcpy: kind (cudaMemcpyKind), -. memset: value. gemm: m, n, k, batch, atype, ctype, transa, transb.
 * sync: - (stream in .stream, event in .ptr). */
enum {
	CPROF_ARG_GRID_X = 0, CPROF_ARG_GRID_Y, CPROF_ARG_GRID_Z,
	CPROF_ARG_BLOCK_X, CPROF_ARG_BLOCK_Y, CPROF_ARG_BLOCK_Z, CPROF_ARG_SHMEM,
};
enum { CPROF_ARG_M = 0, CPROF_ARG_N, CPROF_ARG_K, CPROF_ARG_BATCH, CPROF_ARG_ATYPE, CPROF_ARG_CTYPE,
       CPROF_ARG_TRANSA, CPROF_ARG_TRANSB };
enum { CPROF_ARG_KIND = 0, CPROF_ARG_VALUE = 0 };

#define CPROF_WIRE_API_PER_FRAME (CPROF_WIRE_MAX_PAYLOAD / sizeof(struct cprof_wire_api))

struct cprof_wire_lost {
	uint64_t lost;    /* dropped since the previous LOST frame */
	uint64_t emitted; /* events this process has produced so far (recorded + lost) */
};
_Static_assert(sizeof(struct cprof_wire_lost) == 16, "lost layout");

/* RING payload: where cprofd finds the ring (a sealed memfd in the flusher thread's descriptor table). */
struct cprof_wire_ring {
	uint32_t tid;  /* the flusher thread: /proc/<pid>/task/<tid>/fd/<fd> */
	int32_t fd;
	uint32_t size; /* bytes of data behind the header page */
	uint32_t pad;
};
_Static_assert(sizeof(struct cprof_wire_ring) == 16, "ring layout");

/* Running totals since the process started, sent about ten times a second and before BYE: a lost frame costs
 * nothing but resolution. The hooks' time is measured on one call in CPROF_COST_SAMPLE (two more clock reads)
 * and scaled to all calls; stack captures are each timed. app_* are the program's threads' own schedstat
 * (threads that recorded a call), read by the flusher. */
#define CPROF_COST_SAMPLE 64
struct cprof_wire_cost {
	uint64_t time_ns;         /* when the totals were read */
	uint64_t hook_calls;      /* hooked calls recorded (or lost: the ring was full) */
	uint64_t hook_ns;         /* the hooks' own time on the program's threads, stacks left out (scaled) */
	uint64_t sampled_calls;   /* calls hook_ns was measured on */
	uint64_t stack_calls;     /* stacks captured (unwound, Python frames read) */
	uint64_t stack_ns;        /* their time on the program's threads */
	uint64_t flusher_cpu_ns;  /* cprof's thread in the process */
	uint64_t app_run_ns;      /* the program's threads: on a CPU */
	uint64_t app_wait_ns;     /* the program's threads: runnable, waiting for a CPU */
	uint64_t lost_ring_full;  /* events dropped: the thread's ring was full */
	uint64_t lost_cupti;      /* GPU records CUPTI dropped, cprof could not hold for a stalled collector, or not sent by
				   * an exit's or a crash's deadline */
	uint64_t lost_pipe;       /* events that could not be sent: the collector was gone */
	uint64_t lost_nested;     /* events dropped: a signal handler's hooked call interrupted a record */
	uint64_t counted_calls;   /* calls counted, not recorded (the device queries, cuBLAS's settings) */
	uint64_t counted_ns;      /* their hooks' own time, the real call left out (one in CPROF_COST_SAMPLE timed, scaled) */
	uint64_t pass_calls;      /* kernel launches passed through while a window was closed and timed (about 1 in 64) */
	uint64_t pass_ns;         /* their real calls' time (each under CPROF_PASS_MAX_NS): CUPTI's in-call cost's baseline */
	uint64_t pass_sq;         /* the sum of their squares (ns^2): the baseline's spread */
	uint64_t pass_launches;   /* every kernel launch passed through while a window was closed: the pace outside them */
};
_Static_assert(sizeof(struct cprof_wire_cost) == 152, "cost layout");
/* a launch longer than this lost its core or waited for something: no sample of what a launch costs, on either side
 * of the comparison (preload's passed-through launches, the report's recorded ones) */
#define CPROF_PASS_MAX_NS 50000
/* the same bound on a hook's or a counted call's timed sample: one this long lost its core (a competing process's time
 * slice, ms), whose wait the program's schedstat counts already (with one `yes` beside the eager PyTorch step such
 * samples put the hooks at 270 ns a call against 171 quiet, 2026-12-06) */
#define CPROF_COST_SAMPLE_MAX_NS CPROF_PASS_MAX_NS

/* COUNTS payload: one record per API, the process's running totals since it started, sent with COST when they
 * grew. The device queries PyTorch makes before most calls (cudaGetDevice: ~1,350 a training step) are
 * counted in the hook once CUPTI is on, and CUPTI makes no record of them (cuptiActivityEnableRuntimeApi, as
 * Kineto asks since CUDA 12.5): their count is what a reader can act on, their nanoseconds are not. */
struct cprof_wire_count {
	uint32_t api;   /* enum cprof_api_id */
	uint32_t pad;
	uint64_t calls;
};
_Static_assert(sizeof(struct cprof_wire_count) == 16, "count layout");
#define CPROF_WIRE_COUNTS_PER_FRAME 64 /* more than the APIs counted */

enum cprof_bye_reason { CPROF_BYE_EXIT = 1, CPROF_BYE__EXIT = 2, CPROF_BYE_EXEC = 3 };
struct cprof_wire_bye {
	uint64_t end_ns;
	uint64_t emitted; /* all events produced, recorded or not */
	uint64_t lost;    /* all events dropped in the process */
	uint32_t reason;  /* enum cprof_bye_reason */
	uint32_t pad;
};
_Static_assert(sizeof(struct cprof_wire_bye) == 32, "bye layout");

struct cprof_wire_run_end {
	uint64_t end_ns;
	int32_t exit_status; /* as cprof-run exits: status, or 128+signal */
	int32_t term_signal; /* 0 unless the target was killed by a signal */
};
_Static_assert(sizeof(struct cprof_wire_run_end) == 16, "run_end layout");

/* One CUPTI activity record. Which fields mean what depends on kind (see the CPROF_GPU_* comments). */
enum cprof_gpu_kind {
	CPROF_GPU_KERNEL = 1,   /* u32: grid x,y,z, block x,y,z, registers, static smem, dynamic smem, graphId; u64: graphNodeId, gridId */
	CPROF_GPU_MEMCPY = 2,   /* u32: copyKind, srcKind, dstKind, graphId; u64: bytes */
	CPROF_GPU_MEMSET = 3,   /* u32: value, memoryKind, graphId; u64: bytes */
	/* u32: cbid, processId, threadId, returnValue, then the externalKind of cprof's external id CUPTI gave this
	 * record (0: none) with u64[0] its externalId: the EXTCORR record folded in (a third of a launch's bytes) */
	CPROF_GPU_RUNTIME = 4,  /* name = the call's name */
	CPROF_GPU_DRIVER = 5,   /* as RUNTIME */
	CPROF_GPU_SYNC = 6,     /* u32: type, cudaEventId, returnValue */
	CPROF_GPU_OVERHEAD = 7, /* u32: overheadKind, objectKind, objectId[0], objectId[1], objectId[2] */
	CPROF_GPU_EXTCORR = 8,  /* u32: externalKind; u64: externalId; corr = CUPTI correlation id */
	CPROF_GPU__MAX
};
struct cprof_wire_gpu {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t u64[2];
	uint32_t kind;    /* enum cprof_gpu_kind */
	uint32_t corr;    /* CUPTI correlation id */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t name;    /* per-process string id: kernel name, or API name */
	uint32_t u32[10];
};
_Static_assert(sizeof(struct cprof_wire_gpu) == 96, "gpu record layout");
_Static_assert(offsetof(struct cprof_wire_gpu, u32) == 56, "gpu record layout");
#define CPROF_WIRE_GPU_PER_FRAME (CPROF_WIRE_MAX_PAYLOAD / sizeof(struct cprof_wire_gpu))

/* STACKS payload: count records, each a cprof_wire_stack then nnative + npy cprof_wire_frame, innermost
 * first. A native frame is a return address as (module string id, offset from the module's load bias);
 * a Python frame is (file string id, function string id, line). */
struct cprof_wire_stack {
	uint32_t id;      /* per-process, from 1 */
	uint16_t nnative;
	uint16_t npy;
};
_Static_assert(sizeof(struct cprof_wire_stack) == 8, "stack layout");
struct cprof_wire_frame {
	uint64_t off;     /* native: address - load bias; python: line */
	uint32_t module;  /* native: module string id; python: file string id */
	uint32_t func;    /* python: function string id; native: 0 */
};
_Static_assert(sizeof(struct cprof_wire_frame) == 16, "frame layout");
#define CPROF_STACK_MAX_NATIVE 64
#define CPROF_STACK_MAX_PY     48

/* NVTX (class nvtx api events; see common/api.h): start_ns = end_ns = the moment of the call,
 * name = message string id, arg[] as below, ptr = range id of start/end ranges, stream = the named
 * stream (nvtxNameCudaStream), bytes = payload. ret of a push/pop: the nesting level NVTX returned
 * (-1: a pop without a push, -2: not tracked), which keeps the collector's pairing in step after losses. */
enum { CPROF_ARG_NVTX_DOMAIN = 0, CPROF_ARG_NVTX_CATEGORY, CPROF_ARG_NVTX_COLOR, CPROF_ARG_NVTX_KEY };
/* The category of a range PyTorch pushed for an ATen op (emit_nvtx, cprof-run --torch-ops): its text is the
 * op's name, torch's ", seq = N, op_id = M" taken off in the preload (one string per op, not per call). */
#define CPROF_NVTX_CATEGORY_TORCH_OP 0x746f7263u /* "torc" */

enum cprof_status_code {
	CPROF_STATUS_CUPTI_STARTED = 1,
	CPROF_STATUS_CUPTI_MISSING = 2,   /* libcupti.so.13 not found: API events only */
	CPROF_STATUS_CUPTI_FAILED = 3,    /* CUPTI refused (no driver: 999, another subscriber: 39, ...) */
	CPROF_STATUS_CUPTI_CONFLICT = 4,  /* the target itself uses CUPTI (torch.profiler, Kineto): we backed off */
	CPROF_STATUS_CUPTI_DROPPED = 5,   /* CUPTI dropped records (err = how many) */
	CPROF_STATUS_STACKS_NATIVE_MISSING = 6, /* libunwind.so.8 not found: stacks hold Python frames only */
	CPROF_STATUS_CUPTI_NO_DRIVER = 7, /* no CUDA driver answered: CUPTI left alone (err = CUresult) */
	CPROF_STATUS_CAPTURE_START = 8,   /* --capture-range: recording resumed (err = the window's number) */
	CPROF_STATUS_CAPTURE_STOP = 9,    /* --capture-range: recording paused */
	CPROF_STATUS_CUPTI_SHARED = 10,   /* the target uses CUPTI itself: cprof kept it and handed it copies
					   * (err = records it enabled and did not get; text: CPROF_CUPTI_SHARED_FMT) */
	/* A window's inner bounds (err = its number): capture-on is stamped after recording was switched on (the
	 * start, before it; CUPTI's kinds were on before both), capture-off before it is switched off (the stop,
	 * after; the kinds go off after both). A call cprof passed through reaches CUDA outside [on, off]: cprofd
	 * drops GPU records of no recorded call whose CUDA call started outside it. */
	CPROF_STATUS_CAPTURE_ON = 11,
	CPROF_STATUS_CAPTURE_OFF = 12,
	/* cprof was loaded after libc, not preloaded (CUDA's injection alone: cprof-run --inject-only, or LD_PRELOAD
	 * cleared on the way; or a dlopen): CUPTI's records, no hooked call; a report must not blame the program's
	 * build for the missing calls */
	CPROF_STATUS_HOOKS_ABSENT = 13,
	/* CUPTI's records of a host-only query cuBLAS and cuDNN make before most launches (the occupancy calculator)
	 * were switched off after the first err of the process: the profile holds those only (preload/cupti.c) */
	CPROF_STATUS_QUERIES_SAMPLED = 14,
};
/* The counts of a cupti-shared status after the first: records handed to the program, of them kernels, records
 * of kinds it enabled it did not get, records in its current buffer not handed back yet (the readers parse it) */
#define CPROF_CUPTI_SHARED_FMT                                                                                     \
	"CUPTI shared with the program's profiler: %llu records handed to it (%llu kernels), %llu it enabled and "  \
	"did not get, %llu in its current buffer"

struct cprof_wire_status {
	uint32_t code; /* enum cprof_status_code */
	int32_t err;   /* CUptiResult or count */
	uint64_t time_ns;
	char text[240]; /* NUL-terminated */
};
_Static_assert(sizeof(struct cprof_wire_status) == 256, "status layout");

/* CRASH payload: the fixed part, then count cprof_wire_crash_thread (the last hooked call of each
 * thread that has a ring; count may be 0). Sent once per process, by the flusher on the handler's
 * request or, when the flusher does not answer in time, by the crashing thread itself. */
struct cprof_wire_crash {
	uint64_t time_ns;  /* when the handler was entered */
	uint64_t addr;     /* si_addr: the faulting address (SIGSEGV, SIGBUS, SIGILL, SIGFPE), else 0 */
	uint32_t tid;      /* the thread that took the signal */
	int32_t signo;
	int32_t code;      /* si_code: SEGV_MAPERR, SI_TKILL (raise, abort), ... */
	uint32_t flags;    /* CPROF_CRASH_F_* */
	uint64_t drained;  /* events sent by the crash drain (all rings, or the crashing thread's ring) */
};
_Static_assert(sizeof(struct cprof_wire_crash) == 40, "crash layout");
_Static_assert(offsetof(struct cprof_wire_crash, tid) == 16, "crash layout");
#define CPROF_CRASH_F_BY_HANDLER   0x1 /* the flusher did not answer: the crashing thread wrote its own ring */
#define CPROF_CRASH_F_CUPTI_FLUSH  0x2 /* a forced CUPTI flush completed before the drain */
#define CPROF_CRASH_F_IN_CUDA      0x4 /* the signal came inside a hooked CUDA call: CUPTI was not flushed */
#define CPROF_CRASH_F_APP_HANDLER  0x8 /* the program has a handler of its own for the signal; it runs next */
struct cprof_wire_crash_thread {
	uint64_t start_ns; /* of the thread's last hooked call */
	uint64_t end_ns;
	uint32_t tid;
	uint16_t api;      /* enum cprof_api */
	uint16_t flags;    /* CPROF_API_F_* of that call */
	int32_t ret;       /* what it returned */
	uint32_t name;     /* per-process string id (kernel name), 0 = none or not yet named */
};
_Static_assert(sizeof(struct cprof_wire_crash_thread) == 32, "crash thread layout");
#define CPROF_WIRE_CRASH_MAX_THREADS \
	((CPROF_WIRE_MAX_PAYLOAD - sizeof(struct cprof_wire_crash)) / sizeof(struct cprof_wire_crash_thread))

/* Validation, used by cprofd on every frame it reads. */
enum cprof_wire_err {
	CPROF_WIRE_OK = 0,
	CPROF_WIRE_SHORT = 1,    /* need more bytes */
	CPROF_WIRE_BAD_MAGIC,
	CPROF_WIRE_BAD_VERSION,
	CPROF_WIRE_BAD_TYPE,
	CPROF_WIRE_BAD_LENGTH,
	CPROF_WIRE_BAD_PAYLOAD,
};
const char *cprof_wire_strerror(int err);

/* Check the frame at buf (avail bytes readable). Returns CPROF_WIRE_OK with *frame_len set,
 * CPROF_WIRE_SHORT when more bytes are needed, or an error. Header checks need only 24 bytes. */
int cprof_wire_check(const void *buf, size_t avail, size_t *frame_len);
/* Where, inside the bytes the frame header at buf claims, a well-formed header of the next frame starts (0:
 * nowhere). Every frame is one atomic write, so a header there means the frame was cut short (a torn or forged
 * write) and its claimed length would swallow the real frames behind it: readers resynchronise there. */
size_t cprof_wire_torn(const void *buf, size_t avail);
/* The first CPROF_WIRE_MAGIC in the n bytes at p, or NULL. Readers scan every frame for it (the torn-frame
 * check): memchr on its first byte, then the other three, is several times glibc's generic memmem, which
 * was a quarter of cprofd's intake CPU during a PyTorch run. */
const void *cprof_wire_find_magic(const void *p, size_t n);

/* Builders: fill the header; return the frame length or 0 if it would not fit. */
void cprof_wire_hdr_init(struct cprof_wire_hdr *h, uint16_t type, uint32_t pid, uint32_t seq,
			 uint32_t count, uint32_t len);
size_t cprof_wire_build_hello(void *frame, uint32_t seq, const struct cprof_wire_hello *fixed,
			      const char *exe, const char *host, const char *const *argv, int argc);
/* Appends one string to a STRINGS frame being built; returns 0, or -ENOSPC when it must go in the next frame. */
int cprof_wire_strings_add(void *frame, size_t *len, uint32_t id, uint16_t kind, const char *s);

/* Accessors for a validated HELLO. */
const char *cprof_wire_hello_exe(const struct cprof_wire_hello *h);
const char *cprof_wire_hello_host(const struct cprof_wire_hello *h);
const char *cprof_wire_hello_argv(const struct cprof_wire_hello *h);

#endif
