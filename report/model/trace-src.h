/* The model part cprof trace streams from: the joins it needs indexed in memory, the big tables read back in column batches. */
#ifndef CPROF_REPORT_TRACE_SRC_H
#define CPROF_REPORT_TRACE_SRC_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "report/model/model.h"
#include "report/model/stacks.h"

/* Each big table (hooked calls, CUPTI's API records, external correlations, GPU ops) is read by one scan in
 * rowid order with no sort for the few key columns the joins need, which keeps each block of a few thousand
 * rows' key range per process (tens of bytes a block); the trace then reads the tables in batches of
 * CPROF_TSRC_BATCH rows, one array per column, that it writes out and forgets, and each lookup reads back by
 * rowid range the blocks whose key range holds its key, keeping a few loaded: the memory does not grow with
 * the profile. What needs an order SQLite would have to sort (NVTX, the lanes) is small and sorted here. */
#define CPROF_TSRC_BATCH 512

/* a CUPTI runtime or driver record by (proc, corr): the first of the two tables that has it */
struct cprof_tsrc_api {
	int64_t proc, corr, name, cbid;
	uint32_t seq;
};

/* a hooked call by (proc, our correlation id = CUPTI's external id): the first row with it */
struct cprof_tsrc_hook {
	int64_t proc, ext, name, tid;
	int64_t mintid; /* the smallest tid of every row with this id (the CUPTI thread map's join) */
	int64_t op;     /* the innermost ended ATen op range open at the call's start (NVTX id); CPROF_NO_ID none */
	uint32_t seq;
};

/* a GPU op's lane and span by (proc, corr), kept only when NVTX needs them */
struct cprof_tsrc_gop {
	int64_t proc, corr, dev, stream, start, end;
	uint32_t seq; /* kernels, then copies, then memsets, each in rowid order */
};

struct cprof_tsrc_pair {
	int64_t a, b;
};

enum { CPROF_NVTX_MARK = 0, CPROF_NVTX_RANGE, CPROF_NVTX_STARTEND, CPROF_NVTX_OTHER };

/* an NVTX event; end is the range's end as the trace shows it (an open range: the process's last known time) */
struct cprof_tsrc_nvtx {
	int64_t id, proc, pid, tid, start, end, depth;
	int64_t text, domain, category, color, end_tid; /* CPROF_NO_ID: NULL */
	uint8_t type;  /* CPROF_NVTX_* */
	uint8_t open;  /* end IS NULL */
	uint8_t torch_op; /* an ATen op range (category torch op, type range) */
};

/* a range's projection onto a GPU lane (Kineto's gpu_user_annotation) */
struct cprof_tsrc_proj {
	int64_t id, dev, stream, start, end, depth, text;
};

/* a thread or stream lane named with NVTX */
struct cprof_tsrc_name {
	int stream; /* 0: thread (pid, tid); 1: stream (device, CUPTI stream id) */
	int64_t a, b;
	const char *name; /* the model's string */
};

struct cprof_tsrc_join;

struct cprof_trace_src {
	sqlite3 *db;                /* open while the trace streams */
	struct cprof_model m;       /* processes (this rank's only), windows, strings, thread map */
	int64_t rank;               /* >= 0: only this rank's processes */
	struct cprof_stacks stacks;
	/* header */
	int64_t first_rank, first_world; /* the first process's rank and world size (-1/1: none) */
	int64_t lost_events;
	int lost_lower_bound; /* lost_events is at least that many: a process was killed, or nothing was counted */
	int complete, simulated;
	char *command;
	int64_t first_start;        /* the earliest start of any event (-1: none) */
	/* joins: the blocks of each joined table (trace-src.c) */
	struct cprof_tsrc_join *join;
	struct cprof_tsrc_gop *gops;   /* by (proc, corr, seq); only when NVTX needs them */
	size_t ngops;
	/* metadata */
	struct cprof_tsrc_pair *cpu_threads; /* (pid, tid) from THREADS and NVTX, distinct, sorted */
	size_t ncpu_threads;
	struct cprof_tsrc_pair *cupti_threads; /* (proc, CUPTI thread handle) of the API records, distinct, sorted */
	size_t ncupti_threads;
	struct cprof_tsrc_pair *gpu_lanes; /* (device, stream) of the GPU ops, distinct, sorted */
	size_t ngpu_lanes;
	size_t novh;                /* overhead records */
	/* NVTX */
	int nvtx;                   /* the profile has NVTX events or lane names */
	struct cprof_tsrc_nvtx *ev; /* by (start, depth, id), as the trace writes them */
	size_t nev;
	struct cprof_tsrc_proj *proj; /* by (start, end descending, depth, id) */
	size_t nproj;
	struct cprof_tsrc_name *names; /* threads by (proc, key), then streams by (proc, lane) */
	size_t nnames;
};

/* Loads what the trace needs from db (rank >= 0: that rank's processes only). 0 or -errno (said). */
int cprof_trace_src_load(sqlite3 *db, int64_t rank, struct cprof_trace_src *s);
void cprof_trace_src_free(struct cprof_trace_src *s);
/* The profile at path opened and loaded (-EINVAL: not a profile, said); close frees and closes it. */
int cprof_trace_src_open(const char *path, int64_t rank, struct cprof_trace_src *s);
void cprof_trace_src_close(struct cprof_trace_src *s);
/* The ranks the profile's processes carry, ascending, and the largest world size the launcher gave (0: none). */
int cprof_trace_src_ranks(const char *path, int64_t **ranks, size_t *n, int64_t *world);

/* Lookups. A record found stays valid until the batch after the one it was looked up in (a lookup outside a
 * scan: until the source is freed); a block that cannot be read makes the scan fail (-EIO, said). */
const struct cprof_tsrc_api *cprof_tsrc_api_find(const struct cprof_trace_src *s, int64_t proc, int64_t corr);
const struct cprof_tsrc_hook *cprof_tsrc_hook_find(const struct cprof_trace_src *s, int64_t proc, int64_t ext);
/* The CUPTI ids of one hooked call: the first that reached the GPU (*gcorr, CPROF_NO_ID none), the first of
 * all (*anycorr), how many reached; returns 0 when CUPTI has none. */
int cprof_tsrc_call_corrs(const struct cprof_trace_src *s, int64_t proc, int64_t ext, int64_t *gcorr, int64_t *anycorr,
			  int64_t *ngpu);
/* fn per CUPTI id of the call that reached the GPU, ascending */
void cprof_tsrc_call_gpu_corrs(const struct cprof_trace_src *s, int64_t proc, int64_t ext,
			       void (*fn)(void *ctx, int64_t corr), void *ctx);
/* 1: a GPU op carries CUPTI's (proc, corr) */
int cprof_tsrc_corr_gpu(const struct cprof_trace_src *s, int64_t proc, int64_t corr);
/* the external id of CUPTI's (proc, corr): 1 and *ext, or 0 */
int cprof_tsrc_ext_of(const struct cprof_trace_src *s, int64_t proc, int64_t corr, int64_t *ext);

/* batches, in rowid order */
struct cprof_tsrc_calls {
	size_t n;
	int64_t proc[CPROF_TSRC_BATCH], pid[CPROF_TSRC_BATCH], tid[CPROF_TSRC_BATCH], start[CPROF_TSRC_BATCH];
	int64_t end[CPROF_TSRC_BATCH], ext[CPROF_TSRC_BATCH], name[CPROF_TSRC_BATCH], ret[CPROF_TSRC_BATCH];
	int64_t kname[CPROF_TSRC_BATCH], stream[CPROF_TSRC_BATCH], bytes[CPROF_TSRC_BATCH], stack[CPROF_TSRC_BATCH];
	int64_t a[7][CPROF_TSRC_BATCH];
	uint8_t cls[CPROF_TSRC_BATCH], nested[CPROF_TSRC_BATCH];
	uint8_t has_ext[CPROF_TSRC_BATCH], has_stream[CPROF_TSRC_BATCH], has_bytes[CPROF_TSRC_BATCH];
	uint8_t has_stack[CPROF_TSRC_BATCH];
};

enum cprof_tsrc_api_table { CPROF_TSRC_RUNTIME, CPROF_TSRC_DRIVER };
struct cprof_tsrc_apis {
	size_t n;
	int64_t proc[CPROF_TSRC_BATCH], start[CPROF_TSRC_BATCH], end[CPROF_TSRC_BATCH], corr[CPROF_TSRC_BATCH];
	int64_t name[CPROF_TSRC_BATCH], cbid[CPROF_TSRC_BATCH], thread[CPROF_TSRC_BATCH];
	uint8_t has_corr[CPROF_TSRC_BATCH];
};

struct cprof_tsrc_ops {
	size_t n;
	int kind; /* enum cprof_op_kind */
	int64_t proc[CPROF_TSRC_BATCH], start[CPROF_TSRC_BATCH], end[CPROF_TSRC_BATCH], dev[CPROF_TSRC_BATCH];
	int64_t ctx[CPROF_TSRC_BATCH], stream[CPROF_TSRC_BATCH], corr[CPROF_TSRC_BATCH];
	int64_t name[CPROF_TSRC_BATCH]; /* kernels */
	int64_t grid[3][CPROF_TSRC_BATCH], block[3][CPROF_TSRC_BATCH], regs[CPROF_TSRC_BATCH], shmem[CPROF_TSRC_BATCH];
	int64_t bytes[CPROF_TSRC_BATCH], copy[CPROF_TSRC_BATCH], src[CPROF_TSRC_BATCH], dst[CPROF_TSRC_BATCH]; /* copies */
	int64_t mem[CPROF_TSRC_BATCH]; /* memsets */
	uint8_t has_corr[CPROF_TSRC_BATCH];
};

struct cprof_tsrc_ovhs {
	size_t n;
	int64_t start[CPROF_TSRC_BATCH], end[CPROF_TSRC_BATCH], kind[CPROF_TSRC_BATCH];
};

/* Each calls fn per batch; fn returns < 0 to stop. A row whose times are out of range ends the scan with
 * -ERANGE (cprof_bad_time said which), after the rows before it. 0 or -errno. */
int cprof_tsrc_scan_calls(struct cprof_trace_src *s, int (*fn)(void *ctx, const struct cprof_tsrc_calls *b), void *ctx);
int cprof_tsrc_scan_apis(struct cprof_trace_src *s, enum cprof_tsrc_api_table table,
			 int (*fn)(void *ctx, const struct cprof_tsrc_apis *b), void *ctx);
int cprof_tsrc_scan_ops(struct cprof_trace_src *s, enum cprof_op_kind kind,
			int (*fn)(void *ctx, const struct cprof_tsrc_ops *b), void *ctx);
int cprof_tsrc_scan_overhead(struct cprof_trace_src *s, int (*fn)(void *ctx, const struct cprof_tsrc_ovhs *b), void *ctx);

/* in-memory parts, for the tests: the innermost ended op range of each hook (ranges of s->ev), and the
 * projections of the other ranges from s->gops through the calls given as (proc, tid, start, ext) */
struct cprof_tsrc_lcall {
	int64_t proc, tid, start, ext;
};
int cprof_tsrc_index_finish(struct cprof_trace_src *s);
int cprof_tsrc_innermost_op(const struct cprof_trace_src *s, int64_t proc, int64_t tid, int64_t start, int64_t *op);
int cprof_tsrc_project(struct cprof_trace_src *s, struct cprof_tsrc_lcall *calls, size_t ncalls);

#endif
