/* One profile loaded once into time-ordered arrays (GPU ops, CUDA calls, profiler overhead, steps); the analysis runs over these. */
#ifndef CPROF_REPORT_MODEL_H
#define CPROF_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "report/model/analysis.h"
#include "report/model/gallop.h"
#include "report/cprof.h"

enum cprof_op_kind { CPROF_OP_KERNEL = 0, CPROF_OP_MEMCPY, CPROF_OP_MEMSET };

/* a NULL id in the profile */
#define CPROF_NO_ID INT64_MIN
/* no call (struct cprof_model's launch_call) */
#define CPROF_NO_CALL UINT32_MAX

/* A GPU op (kernel, copy, memset), with the start of the call that launched it (0: not known). */
struct cprof_op {
	uint64_t start, end, launch;
	uint64_t enq;  /* the end of the launching call: the op is in its stream's queue from then (0: not known) */
	int64_t proc;
	int64_t bytes;  /* copies and memsets: bytes moved (0 otherwise) */
	uint8_t srckind, dstkind; /* copies: CUPTI's memory kinds of source and destination (0 otherwise) */
	uint16_t ndrv; /* via 2: how many driver records carry its correlation id (at most 65535) */
	uint32_t row;  /* its place in its table (rowid order), which the start order loses */
	int64_t name;  /* kernels: StringIds id of the name (CPROF_NO_ID: none) */
	int64_t corr;  /* CUPTI correlation id (CPROF_NO_ID: none) */
	int32_t kname; /* kernels: dense index of the name (nameIds may be sparse); -1 otherwise */
	int32_t dev;   /* deviceId (CUPTI's is 32-bit) */
	uint32_t stream; /* streamId (CUPTI's is 32-bit) */
	uint8_t kind;  /* enum cprof_op_kind */
	uint8_t via;   /* the launching record: 0 none seen, 1 runtime API, 2 driver API only */
	uint8_t hooked; /* a hooked launch call launched it (its CUPTI record carries that call's external id) */
	uint8_t copy;  /* copies: copyKind, 0 (unknown) when outside 0..10; 0 otherwise */
	uint8_t graph;  /* ran as a node of a CUDA graph (CUPTI's graphId is not 0) */
	uint32_t shape; /* kernels: a hash of grid and block (0: not known); two launches of one name with
			 * different shapes are different work, not variance */
};

/* A hooked call's class (CPROF_API.class), as the HTML timeline colours it; OTHER: none or another. */
enum cprof_call_class {
	CPROF_CALL_OTHER = 0, CPROF_CALL_LAUNCH, CPROF_CALL_GEMM, CPROF_CALL_MEMCPY, CPROF_CALL_MEMSET,
	CPROF_CALL_SYNC, CPROF_CALL_MEMORY, CPROF_CALL_MODULE, CPROF_CALL_NVTX, CPROF_CALL__N
};
/* the class's name in the profile; NULL for CPROF_CALL_OTHER */
extern const char *const cprof_call_class_name[CPROF_CALL__N];

/* A hooked CUDA call. */
struct cprof_call {
	uint64_t start, end;
	int64_t proc, tid;
	int64_t name;   /* StringIds id */
	int64_t corr;   /* our correlation id, CUPTI's external id (CPROF_NO_ID: none) */
	int64_t a0;     /* first class-specific argument (memcpy: its kind; CPROF_NO_ID: none) */
	int64_t stream; /* the stream argument, as the program passed it (CPROF_NO_ID: none) */
	int64_t bytes;  /* copies, memsets: bytes (0: none) */
	int32_t ret;    /* the return code */
	uint8_t copy;   /* class 'memcpy' */
	uint8_t outer;  /* nested = 0: not made inside another hooked call */
	uint8_t launch; /* class 'launch' */
	uint8_t cut;    /* synchronises with the GPU: class 'sync', or cudaMemcpy */
	uint8_t sync;   /* class 'sync', less cudaStreamWaitEvent (the host does not wait) */
	uint8_t gemm;   /* class 'gemm' */
	uint8_t memcpy; /* cudaMemcpy */
	uint8_t cls;    /* enum cprof_call_class */
	uint8_t rt1;    /* a runtime API call with its one CUPTI record: CUPTI's time inside it is measured */
	uint8_t nested; /* the nested column is non-zero (outer is 0 also when it is NULL) */
	uint8_t graph;  /* CPROF_GRAPH_REPLAY: cudaGraphLaunch; _CAPTURED: cudaStreamEndCapture; _INSTANTIATED */
	int64_t kname;  /* kernelNameId: StringIds id of the kernel it launched (CPROF_NO_ID: none) */
};

enum { CPROF_GRAPH_NONE = 0, CPROF_GRAPH_REPLAY = 1, CPROF_GRAPH_CAPTURED = 2, CPROF_GRAPH_INSTANTIATED = 3 };

/* PyTorch's own ranges around a torch.compile'd call (cprof-run --torch-ops): Dynamo's cache lookup before it and
 * the compiled region ("Torch-Compiled Region: F/C") around it; ended ranges only, by start. */
struct cprof_torch_range {
	uint64_t start, end;
	int64_t proc, tid;
	int64_t text;   /* StringIds id */
	uint8_t lookup; /* TorchDynamo Cache Lookup; else a compiled region */
};

/* A hooked GEMM call (CPROF_API class 'gemm', GEMMS' m, n, k, batch), in table order. */
struct cprof_gemm {
	int64_t proc;
	int64_t name;           /* StringIds id */
	int64_t m, n, k, batch; /* CPROF_NO_ID: NULL */
};

/* A CUDA runtime API call as CUPTI recorded it (hooked or not). */
struct cprof_rt {
	uint64_t start, end;
	int64_t proc, tid;
	int64_t name; /* StringIds id (CPROF_NO_ID: none) */
	int64_t corr; /* CPROF_NO_ID: none */
	int64_t ext;  /* the external id (a hooked call's) its correlation carries, found once as it loads; CPROF_NO_ID:
		       * none (a call only CUPTI saw) */
	int32_t ret;  /* the return code */
};

/* A driver API record as CUPTI wrote it, in table order, while the model loads (NULL start/end read 0). */
struct cprof_drv_rec {
	uint64_t start, end;
	int64_t proc, tid;
	int64_t name; /* StringIds id (CPROF_NO_ID: none) */
	int64_t corr; /* CPROF_NO_ID: none */
	uint8_t null_proc, null_tid, null_start, null_end;
};

/* A driver call the API table counts: no runtime record has its correlation id and no hooked call of its
 * thread encloses it (PyTorch's cuDevicePrimaryCtxGetState and friends). d: end - start (0 when NULL). */
struct cprof_drv_api {
	int64_t proc; /* CPROF_NO_ID: NULL */
	int64_t name; /* StringIds id (CPROF_NO_ID: none) */
	int64_t d;
};

/* CUPTI's external correlation of kind 5 (ours): CUPTI id -> our call's correlation id */
struct cprof_ext {
	int64_t proc, corr, ext;
	uint32_t seq; /* table order: of rows with one (proc, corr), the first is the one joined */
};

struct cprof_string {
	int64_t id;
	char *value;
};

/* An NVTX range (push/pop or start/end), in start order. */
struct cprof_nvtx_range {
	uint64_t start, end; /* end: 0 when the range never ended (open) */
	int64_t proc, tid;
	int64_t text;        /* StringIds id of its text (0: none) */
	int32_t depth;       /* 0: outermost */
	uint8_t open;        /* never ended */
};

/* A name as the profile's tables first give it, in table (rowid) order, which the time-ordered arrays lose:
 * the HTML timeline numbers its names in that order. */
struct cprof_first_name {
	int64_t name; /* StringIds id (0 for a NULL one) */
	uint8_t cls;  /* calls: enum cprof_call_class */
};

/* Time CUPTI spent on itself (buffer flush, instrumentation, resources, buffer requests). */
struct cprof_ovh {
	uint64_t start, end;
	int64_t proc;
	int64_t tid;        /* CUPTI's thread id when the record is a thread's (objectKind THREAD), else 0 */
	uint8_t background; /* on a thread of the process that made no runtime call (cprof's flusher, CUPTI's own) */
};

/* How a process that did not end normally ended (a fatal signal, a kill, a CUDA error, no goodbye):
 * what the crash finding shows. Strings are owned by the model. */
struct cprof_end_call {     /* the last CUDA call of a thread */
	int64_t tid;
	char *api;
	char *kernel;           /* mangled; NULL when the call launched none */
	int64_t ret;
};
struct cprof_end_kernel {   /* one of the last launches on a stream, latest first */
	int64_t stream;         /* CUPTI stream id; -1 when CUPTI did not deliver the kernel */
	uint64_t handle;        /* the stream the program passed */
	char *name;             /* mangled kernel name, or the launching API's name */
};
struct cprof_end {
	char *ending;           /* PROCESSES.ending */
	int signal;             /* the fatal signal the process took (CPROF_CRASH), 0 none */
	int killed;             /* killed from outside (SIGKILL, OOM killer) or no goodbye: counts are a lower bound */
	int64_t err;            /* the CUDA error it ended after (common/ending.h), 0 none */
	char *err_api;          /* the call that returned it */
	int64_t err_tid;
	int err_device;         /* the call acts on the whole device (cudaDeviceSynchronize): every stream's kernels */
	struct cprof_end_call *calls; /* by tid */
	size_t ncalls;
	struct cprof_end_kernel *kernels; /* per stream handle, latest first within each */
	size_t nkernels;
	struct cprof_end_kernel *err_kernels; /* the last launches on the failing stream before the error */
	size_t nerr_kernels;
};

/* A process under cprof (PROCESSES); text fields are "" when not recorded. */
struct cprof_proc {
	int64_t id, pid, ppid;
	int64_t rank;               /* -1: none */
	char *exe, *argv, *host;
	char *bye;                  /* how it ended ("" when it never said goodbye: killed) */
	int64_t recorded, lost;     /* events recorded, events lost */
	uint64_t ncalls;            /* its calls in the model (load_calls): a window's share of its hook cost */
	int hooks_absent;           /* cprof came in by CUDA's injection alone: no hooked calls, by design */
	int queries_sampled;        /* CUPTI recorded its occupancy queries only at first (CPROF_STATUS queries-sampled) */
	struct cprof_end *end;      /* NULL: ended normally (or the profile does not say) */
};

/* CUPTI names threads by pthread handle, the hooks by kernel tid: the tid of each handle that made a
 * hooked call (the smallest, should a handle have been reused) */
struct cprof_thread {
	int64_t proc, handle, tid;
};

/* A recording window (CPROF_WINDOWS): only inside these was anything recorded; none: the whole run was. */
struct cprof_window {
	int64_t proc, pid;          /* 0: every process (the run's own window, cut by --max-size) */
	int number;                 /* as the run numbered them (cprof capture's first is 1) */
	uint64_t start, end;        /* what it recorded (capture-on, capture-off where the preload stamped them) */
	uint64_t ostart, oend;      /* its outer bounds (capture-start, capture-stop), which hold CUPTI's switches
				     * (since 2026-12-07); 0 where not known: start, end */
	char *why, *end_why;        /* what opened and what closed it; never NULL */
	uint64_t cost_ns;           /* what cprof cost the program inside it (cprof_model_window_costs) */
	int cost_measured;          /* the profile has CPROF_COST rows: else cost_ns is CUPTI's part only */
};

/* What the profile says about its recording: the windows and --max-size (issue 31). */
struct cprof_recording {
	struct cprof_window *w;     /* by start */
	size_t n;
	uint64_t base_ns;           /* the first process's start: times are shown from it */
	int64_t max_size;           /* bytes; 0: no limit */
	uint64_t max_size_cut_ns;   /* 0: not reached */
	int64_t unrecorded;         /* events and GPU records that came after the cut */
};

/* what to load: the processes always; the rest as the command needs */
enum cprof_model_part {
	CPROF_MODEL_TIMELINE = 1, /* GPU ops, calls, runtime records, overhead, strings, correlation */
	CPROF_MODEL_THREADS = 2,  /* the CUPTI thread -> tid map */
	CPROF_MODEL_ALL = 3,
	CPROF_MODEL_GPU = 4,      /* GPU ops and strings only, launches not attributed (a kernel table) */
	CPROF_MODEL_HOST = 8,     /* with TIMELINE: driver calls no runtime record covers, NVTX ranges (a timeline) */
	CPROF_MODEL_TRACE = 16,   /* the strings (report/model/trace-src.c reads the trace's joins by block) */
};

/* One CPROF_COST row: a process's running totals of what profiling cost it (see common/wire.h). */
struct cprof_cost_row {
	int64_t proc;
	size_t seq; /* table order: the tie-break between rows of one time */
	uint64_t time, hook_calls, hook_ns, sampled_calls, stack_calls, stack_ns, flusher_cpu_ns, app_run_ns,
		app_wait_ns, lost_ring_full, lost_cupti, lost_pipe, lost_nested;
	uint64_t counted_calls, counted_ns; /* the counted calls' hooks (0 in a profile from before them) */
	uint64_t pass_calls, pass_ns, pass_sq; /* launches passed through while paused, timed (0 before them) */
	uint64_t pass_launches; /* every launch passed through while paused (0 before 2026-12-07) */
};

/* Calls counted and not recorded (CPROF_API_COUNTS: the device queries once CUPTI was on), a process's total
 * for one name: the largest of its running totals. */
struct cprof_counted {
	int64_t proc, name;
	uint64_t calls;
};

struct cprof_steps_cache {
	int64_t proc;
	const char *re;
	struct cprof_step *s;
	int n;
};

/* An NVTX range a step may be (TIMELINE): eventType 'range', its text in StringIds and its process in
 * PROCESSES (what the steps' join kept); end as the steps take it: its own, else its process's end, else
 * its start. In table order. */
struct cprof_step_range {
	int64_t proc, tid, start, end, text;
};

/* what the API table's occupancy rows hold when cprof_model.queries_sampled (the terminal, the page, JSON's
 * queries_sampled_note) */
#define CPROF_QUERIES_SAMPLED_NOTE                                                                                  \
	"occupancy queries (cudaOccupancy*) recorded only at first: cprof switches CUPTI's records of them off after "  \
	"a process's first GEMM calls (host-only queries inside cuBLAS; their time is in the GEMM call)"

struct cprof_model {
	int64_t exit_status;         /* the command's exit status, as cprof-run saw it (-1: not known) */
	int windowed;                /* a window's copy (cprof report --window verdict): tables from the arrays only */
	struct cprof_proc *procs;    /* by id */
	size_t nprocs;
	struct cprof_thread *threads; /* by (proc, handle) */
	size_t nthreads;
	struct cprof_op *ops;        /* by start (ties: kernels, copies, memsets, each in table order) */
	size_t nops;
	struct cprof_call *calls;    /* by start */
	size_t ncalls;
	int64_t calls_proc;          /* the process of every call when they share one (load_calls), else 0 */
	struct cprof_ovh *ovh;       /* by start */
	/* CUPTI's time inside a runtime API call on the program's thread (cost.c): where the run had launches passed
	 * through with CUPTI off (in_call.passed of them timed), the recorded kernel launches' mean duration
	 * less theirs; else the mean, over the calls with rt1, of the hook's duration less CUPTI's own record's
	 * (the estimate: cudart's own work outside the record counts, CUPTI's inside it does not) */
	struct cprof_in_call in_call;
	struct cprof_pace pace; /* cost.c: wall time per launch in the windows and between them */
	struct cprof_pace_proc *pace_proc; /* by process: those it was measured on */
	size_t npace_proc;
	size_t novh;
	int no_ovh_table;            /* the profile has no CUPTI_ACTIVITY_KIND_OVERHEAD (the overhead rule says so) */
	/* why a run may have no GPU op (the verdict's no-gpu-activity explains it with these) */
	int ended_killed;            /* a process was killed or never said goodbye (PROCESSES.ending) */
	int cupti_recording;         /* CUPTI started and met no other CUPTI user (CPROF_STATUS) */
	int queries_sampled;         /* procs[] whose queries_sampled is set (load_proc_statuses) */
	char *gpu_note;              /* META gpu_records_note ("" when none; NULL in a model built in memory) */
	char *recording_opt;         /* META recording: cprof-run's option to open the windows ("" or NULL: the whole run) */
	struct cprof_gemm *gemms;    /* in table order */
	size_t ngemms;
	size_t nknames;              /* distinct kernel names */
	struct cprof_string *strings; /* by id */
	size_t nstrings;
	/* strings[] by id directly, where the ids are dense (StringIds numbers them from 1): a look-up per record
	 * was a search, 6% of a 1M-record report. NULL: search strings[] (a forged sparse table, a model by hand) */
	const char **string_at;
	size_t nstring_at;
	struct cprof_rt *rt;         /* by start */
	size_t nrt;
	struct cprof_ext *ext;       /* by (proc, corr) */
	size_t next;
	struct cprof_rt *drv;        /* driver API calls with neither a runtime record nor our external id, by start */
	size_t ndrv;
	struct cprof_drv_api *drv_api; /* in table order */
	size_t ndrv_api;
	int drv_api_loaded;          /* the driver table was read (the API table cannot be made without it) */
	struct cprof_nvtx_range *nvtx; /* by start, as ORDER BY start gives them */
	size_t nnvtx;
	struct cprof_torch_range *torch; /* TIMELINE: torch.compile's ranges, by start */
	size_t ntorch;
	/* first appearance of each name in table order: hooked calls not nested, runtime calls only CUPTI saw
	 * (no external id of ours), and the driver calls above */
	struct cprof_first_name *first_calls, *first_rt, *first_drv;
	size_t nfirst_calls, nfirst_rt, nfirst_drv;
	uint32_t *calls_by_corr;     /* call indices by (proc, corr), built on first use */
	uint32_t *launch_call;       /* per op, the call that launched it (CPROF_NO_CALL: none), built on first use */
	uint32_t *kernels_by_corr;   /* kernel op indices by (proc, corr), built on first use */
	size_t nkernels_by_corr;
	struct cprof_steps_cache *steps;
	size_t nsteps_cache;
	struct cprof_step_range *step_ranges; /* shared with a window's copy */
	size_t nstep_ranges;
	struct cprof_recording rec;  /* always loaded (a handful of rows) */
	struct cprof_cost_row *cost;  /* CPROF_COST, table order */
	size_t ncost;
	/* each process's recorded time (its windows and the run's own, merged), by (proc, start), with the recorded time
	 * before each (cost.c: what only grows while cprof records is spread over it, not over the clock) */
	struct cprof_rec_span {
		int64_t proc;
		uint64_t start, end, before;
		uint64_t ostart, oend, obefore; /* its windows' outer bounds (struct cprof_window): the gaps' ends for the
						 * pace; and the time inside them before it */
	} *rspan;
	size_t nrspan;
	/* each process's run-queue wait per ns its threads ran, outside its recording windows (between them): what the
	 * machine's other load makes it wait anyway (cost.c); none for a process without two windows */
	struct cprof_wait_base {
		int64_t proc;
		double per_run;
	} *wait_base;
	size_t nwait_base;
	struct cprof_counted *counted; /* by (proc, name) */
	size_t ncounted;
	int counted_table;            /* the profile has CPROF_API_COUNTS (its cprof counted the device queries) */
	uint64_t collector_run_cpu_ns; /* cprofd's CPU while the program ran that competed with it (META) */
	int collector_writer_idle;     /* its writer ran at idle priority */
	struct cprof_model_extra *x;   /* cprof_model_open's parts (report/model/parts.h); NULL otherwise */
};

/* cost.c: CPROF_COST, CPROF_API_COUNTS and cprofd's CPU (META) into the model. */
/* cost.c: marks the calls CUPTI's time inside is measured on (rt1) and sets in_call; marks the overhead
 * records of threads that made no runtime call (background) */
int cprof_model_cupti_in_calls(struct cprof_model *m);
/* cost.c: each recording window's cost (cprof_cost_window over it, its process's), after cprof_model_cupti_in_calls */
void cprof_model_window_costs(struct cprof_model *m);
/* cost.c: CUPTI's overhead records starting in [ws, hi), each cut at hi; program_only: those on the program's own
 * threads (the ones not marked background) */
uint64_t cprof_cost_overhead(const struct cprof_model *m, int64_t proc, uint64_t ws, uint64_t hi, int program_only);
/* [*ws, *we] widened to the outer bounds of the recording windows of proc (every process's for 0) that it starts or
 * ends with (a bound on their own): CUPTI's switches at their edges are cprof's cost to the program, though nothing
 * was recorded there. A bound inside a window (a phase's) stays. */
void cprof_cost_outer(const struct cprof_model *m, int64_t proc, uint64_t *ws, uint64_t *we);
int cprof_model_load_cost(sqlite3 *db, struct cprof_model *m);
/* cost.c: m->rspan from m->rec and m->procs (cprof_model_load_cost builds it): each process's recorded time, merged
 * from its windows and the run's own, with the recorded time before each span; none without windows (recorded whole) */
int cprof_model_rec_spans(struct cprof_model *m);
/* cost.c: m->pace from m->rspan, the calls and CPROF_COST's passLaunches (after the calls are loaded) */
int cprof_model_pace(struct cprof_model *m);
/* cost.c: m->wait_base from m->rspan and CPROF_COST (after cprof_model_rec_spans) */
int cprof_model_wait_base(struct cprof_model *m);
/* cost.c: the counted calls of proc (0: all processes) by name, summed into out, most calls first; returns how
 * many names, or a negative errno. *out is malloc'd (free it), NULL when none. */
int cprof_model_counted_calls(const struct cprof_model *m, int64_t proc, struct cprof_counted **out);

/* The model of the profile open as db: the parts asked for (enum cprof_model_part), each table read once,
 * in one statement. 0 or a negative errno. */
int cprof_model_load(sqlite3 *db, unsigned parts, struct cprof_model *m);
/* Whether columns si, ei of a row hold times a reader may subtract and sum: integers in [0, 2^62) with
 * end >= start, as cprofd writes them (end NULL allowed when null_end). Profiles up to 16 MiB are checked
 * whole when opened; bigger ones row by row here, as they are read (issue 21, item 7). */
int cprof_row_times_ok(sqlite3_stmt *st, int si, int ei, int null_end);
/* Says (once) that TABLE holds a time out of range; returns -ERANGE. */
int cprof_bad_time(const char *table, sqlite3_stmt *st, int si, int ei);
/* Why a load failed: the out-of-range time, else SQLite's message. */
const char *cprof_model_errmsg(sqlite3 *db);
/* The tid of CUPTI's thread handle: 1 when known (*tid set), 0 when not (each renderer has its fallback). */
int cprof_model_tid(const struct cprof_model *m, int64_t proc, int64_t handle, int64_t *tid);
/* A model built in memory (tests): takes the arrays as given, sorts them; ops' kname must be < nknames. */
int cprof_model_from_arrays(struct cprof_model *m, struct cprof_op *ops, size_t nops, struct cprof_call *calls,
			    size_t ncalls, struct cprof_ovh *ovh, size_t novh, size_t nknames);
void cprof_model_free(struct cprof_model *m);
/* Frees the indexes a model builds on first use (calls_by_corr, launch_call, kernels_by_corr) and clears them: what a
 * model over arrays it does not own (cprof_model_from_arrays, a window's) owns. */
void cprof_model_free_indexes(struct cprof_model *m);
void cprof_end_free(struct cprof_end *e);
/* ending.c: the ending's look-ups on the arrays of a model loaded with CPROF_MODEL_TIMELINE (calls, ops, external
 * ids, strings), as common/ending.h's queries and the crash finding's gave them through the indexes cprofd
 * no longer makes. cprof_end_error: the CUDA error process proc ended after (1, *out filled; 0: none);
 * cprof_end_err_kernels: the last 3 launches made by t, on stream (any_stream: on any), latest first;
 * cprof_end_thread_calls: each thread's last outermost call up to its THREADS.lastNs (threads: (tid, lastNs)
 * pairs; 64 at most, by tid); cprof_end_stream_kernels: the last launches of each stream among the last
 * CPROF_END_WALK calls (of every process) up to bound, CPROF_END_PER_STREAM on each of the first
 * CPROF_END_STREAMS streams, by handle. Lists are appended to *out (strings strdup'ed); 0 or -ENOMEM. */
#define CPROF_END_STREAMS    8
#define CPROF_END_PER_STREAM 3
#define CPROF_END_WALK       20000
struct cprof_end_err {
	int64_t tid, ret;
	const char *api; /* the model's string */
	uint64_t stream; /* the handle it passed (0: none) */
	uint64_t start;
	int scoped;      /* acts on its stream alone (a launch, *Async, a stream's sync); else on the device */
};
/* model.c: the processes and their endings only, looked up by common/ending.h's queries: what the arrays
 * are held to (unit tests); a scan of the calls each on a profile without the old indexes */
int cprof_model_load_ends_by_query(sqlite3 *db, struct cprof_model *m);
int cprof_end_error(const struct cprof_model *m, int64_t proc, struct cprof_end_err *out);
int cprof_end_err_kernels(const struct cprof_model *m, int64_t proc, uint64_t t, int any_stream, uint64_t stream,
			  struct cprof_end_kernel **out, size_t *n);
int cprof_end_thread_calls(const struct cprof_model *m, int64_t proc, const int64_t (*threads)[2], size_t nthreads,
			   struct cprof_end_call **out, size_t *n);
int cprof_end_stream_kernels(const struct cprof_model *m, int64_t proc, int64_t bound, struct cprof_end_kernel **out,
			     size_t *n);
/* "kern_a(int*)" for "_Z6kern_aPi": the demangled name, shortened as the tables do, in buf. */
const char *cprof_end_kernel_name(const char *mangled, char *buf, size_t size);

/* windows.c: the recording windows and --max-size's outcome into m->rec (0 or -errno; an older profile has
 * none); the windows of process proc (0: all) merged into disjoint [start, end) spans, each end stretched to
 * the end of the GPU work started inside it (*out: caller frees; returns their number, 0: no windows, the
 * whole run was recorded). */
int cprof_model_load_windows(sqlite3 *db, struct cprof_model *m);
void cprof_model_free_windows(struct cprof_model *m);
int cprof_model_recorded_spans(const struct cprof_model *m, int64_t proc, uint64_t (**out)[2]);

/* The steps of process proc (0 = all) for pattern re, read once per (proc, re) and owned by the model.
 * Returns their number (0: none) or a negative errno. */
int cprof_model_steps(struct cprof_model *m, int64_t proc, const char *re, const struct cprof_step **out);

/* The string of a StringIds id; NULL when there is none. */
const char *cprof_model_string(const struct cprof_model *m, int64_t id);
/* rows.c: the first of n elements (elem bytes each, by the int64_t at off, ascending) whose key is >= key */
size_t cprof_lower_i64(const void *arr, size_t n, size_t elem, size_t off, int64_t key);
size_t cprof_model_proc_index(const struct cprof_model *m, int64_t proc); /* m->nprocs: none */

/* Every (call, GPU op it launched) pair, as the API_GPU view joins them; fn returns < 0 to stop. */
int cprof_model_launched(struct cprof_model *m, int64_t proc,
			 int (*fn)(void *ctx, const struct cprof_call *c, const struct cprof_op *o), void *ctx);

/* Duration statistics per group, as cprof_group_stats computes them from SQL: pairs sorted by key then
 * duration, fn called per group in key order with label(key). */
struct cprof_keyed {
	int64_t key;
	int64_t d;
};
/* radix.c: by (key, d), as cmp_keyed orders them; doubles ascending (qsort for negatives or NaN) */
int cprof_radix_sort_keyed(struct cprof_keyed *kd, size_t n);
int cprof_radix_sort_doubles(double *d, size_t n);
/* radix.c: the median of n non-negative doubles, as the sorted array's middle (mean of the two middle ones when n
 * is even) gives it, without sorting (d is left as it is): 0, or -EINVAL when n is 0 or a value is negative or NaN */
int cprof_median_doubles(const double *d, size_t n, double *med);
int cprof_model_group_stats(struct cprof_keyed *kd, size_t n, const char *(*label)(void *ctx, int64_t key),
			    int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st), void *ctx);

/* Per-name statistics of the hooked calls (outer_only: those not made inside another), and of the
 * kernels, as the report's tables show them; fn is called per name in nameId order. */
int cprof_model_call_stats(const struct cprof_model *m, int64_t proc, int outer_only,
			   int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st), void *ctx);
int cprof_model_kernel_stats(const struct cprof_model *m, int64_t proc,
			     int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st), void *ctx);
/* Per-name statistics of the runtime calls only CUPTI saw: not hooked (no hook's external id), labelled
 * with the name less its version suffix (cudaLaunchKernel_v7000); or made inside a hooked library call
 * (cuBLAS's occupancy queries and launches carry its external id), labelled "NAME (inside LIBCALL)". */
int cprof_model_cupti_only_stats(const struct cprof_model *m, int64_t proc,
				 int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st),
				 void *ctx);
/* Per-name statistics of the driver calls the API table counts (struct cprof_drv_api), labelled with the
 * name less its version suffix; -EIO when the driver table was not read. */
int cprof_model_driver_only_stats(const struct cprof_model *m, int64_t proc,
				  int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st),
				  void *ctx);
/* 1 when CUPTI's record (proc, corr) carries one of our calls' external ids, *ext set to it. */
/* The first of m->ext (sorted by process, correlation id) at or after (proc, corr). */
size_t cprof_model_ext_lower(const struct cprof_model *m, int64_t proc, int64_t corr);
int cprof_model_ext_of(const struct cprof_model *m, int64_t proc, int64_t corr, int64_t *ext);
/* rows.c: the external id the runtime record's correlation carries (CPROF_NO_ID: none), searched from *hint's
 * places (records looked up in time order); every record's, set in place (the loader does it as it reads them; a
 * model built by hand calls this after setting rt and ext) */
int64_t cprof_model_rt_ext(const struct cprof_model *m, const struct cprof_rt *r, struct cprof_hint *hint);
void cprof_model_link_rt(struct cprof_model *m);
/* 1 when CUPTI's record (proc, corr) carries one of our calls' external ids. */
int cprof_model_has_ext(const struct cprof_model *m, int64_t proc, int64_t corr);
/* The kernels with CUPTI correlation id (proc, corr): fn per kernel. */
int cprof_model_kernels_of(struct cprof_model *m, int64_t proc, int64_t corr,
			   int (*fn)(void *ctx, const struct cprof_op *o), void *ctx);

/* The GPU time each call name launched (torch's "CUDA launched"): fn(api name, ns) once per name. */
int cprof_model_launched_time(struct cprof_model *m, int64_t proc, int (*fn)(void *ctx, const char *api, double ns),
			      void *ctx);

/* Index of the first element whose start is >= t, in an array sorted by start. */
size_t cprof_model_ops_from(const struct cprof_model *m, uint64_t t);
size_t cprof_model_calls_from(const struct cprof_model *m, uint64_t t);

/* GPU memory operations as nsys's cuda_gpu_mem_time_sum: copies by kind, then memsets; fn per group with
 * its name, duration statistics and bytes (report and html share it). 0 or a negative errno. */
int cprof_model_memop_stats(const struct cprof_model *m, int64_t proc,
			    int (*fn)(void *ctx, const char *name, const struct cprof_stats *st, double bytes), void *ctx);

/* loader internals shared by the model's files (host.c) */
struct cprof_first_set {
	struct cprof_first_name *v;
	size_t n, cap;
	uint8_t *map; /* by id: noted already */
	size_t mapcap;
};
/* Notes name (with its class) unless noted before; 0 or -ENOMEM. */
int cprof_first_note(struct cprof_first_set *set, int64_t name, uint8_t cls);
/* Hands the list to *out, *n and frees the rest. */
void cprof_first_done(struct cprof_first_set *set, struct cprof_first_name **out, size_t *n);
/* enum cprof_call_class of a CPROF_API.class value (NULL: none) */
uint8_t cprof_call_class_of(const char *cls);
/* rows.c: sorts an array of structs that begin with their uint64_t start, ties kept in the order given; the
 * index of the first of them whose start is >= t; the order of struct cprof_ext, (proc, corr). */
int cprof_sort_by_start(void *arr, size_t n, size_t elem);
size_t cprof_first_at(const void *arr, size_t n, size_t elem, uint64_t t);
int cprof_ext_cmp(const void *a, const void *b);
/* rows.c: (process, key, value) rows of an in-memory join, sorted by (process, key): the order, the first
 * row of (proc, key), one row more (0 or -ENOMEM) */
struct cprof_pkv {
	int64_t proc, key, v;
};
int cprof_pkv_cmp(const void *a, const void *b);
size_t cprof_pkv_lower(const struct cprof_pkv *a, size_t n, int64_t proc, int64_t key);
int cprof_pkv_add(struct cprof_pkv **a, size_t *n, size_t *cap, int64_t proc, int64_t key, int64_t v);
/* radix.c: the same sort, by radix (elements of at most 256 bytes); 0 or -ENOMEM. */
int cprof_radix_sort(void *arr, size_t n, size_t elem);
/* radix.c: stable sorts by a signed 64-bit key at byte off of each element, and of indices by key(ctx, i)
 * (sort by the minor key first, then the major); 0 or -ENOMEM. cprof_sort is qsort after one pass that
 * finds the array in order already (most tables are written in time and id order): then it is left as it
 * is, which is qsort's result too whenever cmp is a total order. */
int cprof_radix_sort_at(void *arr, size_t n, size_t elem, size_t off);
int cprof_radix_sort_ix(uint32_t *ix, size_t n, int64_t (*key)(const void *ctx, uint32_t i), const void *ctx);
/* rows.c: the first of n elements (elem bytes each, beginning with int64_t proc and key, sorted by them) at or
 * after (proc, key), as a binary search finds it; searched from the hint's places (gallop.h), which it keeps:
 * the next look-up of a key that grows a little on its thread costs a probe or two */
size_t cprof_lower_pk(const void *arr, size_t n, size_t elem, int64_t proc, int64_t key, struct cprof_hint *hint);
/* rows.c: keys of the model's arrays by index (ctx: the model), for the index sorts below */
int64_t cprof_key_call_proc(const void *ctx, uint32_t i);
int64_t cprof_key_call_tid(const void *ctx, uint32_t i);
int64_t cprof_key_call_corr(const void *ctx, uint32_t i);
int64_t cprof_key_rt_proc(const void *ctx, uint32_t i);
int64_t cprof_key_rt_tid(const void *ctx, uint32_t i);
int64_t cprof_key_op_proc(const void *ctx, uint32_t i);
int64_t cprof_key_op_stream(const void *ctx, uint32_t i);
/* model.c: m->calls_by_corr, once; 0 or -ENOMEM */
int cprof_model_calls_by_corr(struct cprof_model *m);
/* model.c: the first of m->calls_by_corr at or after (proc, corr), as cprof_lower_pk finds it (from *hint) */
size_t cprof_calls_corr_lower(const struct cprof_model *m, int64_t proc, int64_t corr, struct cprof_hint *hint);
/* radix.c: indices ix, ascending, into arr (elements of elem bytes by their uint64_t start) ordered as a
 * comparator on (major, minor, start, index) orders them (minor NULL: (major, start, index)), by the stable
 * passes of cprof_radix_sort_ix: the qsorts with those comparators were a tenth of a 1M-record report.
 * -EINVAL (ix left as it was) when ix is not ascending or arr not by start: sort with the comparator then. */
int cprof_radix_sort_ix_by(uint32_t *ix, size_t n, const void *arr, size_t elem,
			   int64_t (*major)(const void *ctx, uint32_t i), int64_t (*minor)(const void *ctx, uint32_t i),
			   const void *ctx);
void cprof_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* The driver table, read once in rowid order: *out in table order, *n rows. 0 or a negative errno. */
int cprof_model_read_driver(sqlite3 *db, struct cprof_drv_rec **out, size_t *n);
/* m->drv_api from the driver records, the calls and the runtime records (in memory, O(n log n)). */
int cprof_model_driver_api(struct cprof_model *m, const struct cprof_drv_rec *d, size_t nd);
/* threads: the thread map is built from the arrays (instead of load_threads' join); d: the driver records */
int cprof_model_load_host(sqlite3 *db, struct cprof_model *m, int threads, const struct cprof_drv_rec *d, size_t nd);
void cprof_model_free_host(struct cprof_model *m);

#endif
