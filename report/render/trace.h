/* The pieces of cprof trace: the state of one export and the functions each file gives the others. */
#ifndef CPROF_REPORT_TRACE_H
#define CPROF_REPORT_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "report/cprof.h"
#include "report/model/model.h"
#include "report/model/ranges.h"
#include "report/model/stacks.h"
#include "report/model/trace-src.h"

/* Kineto's constants (libkineto output_base.h / output_json.cpp): GPU processes sort after every real pid,
 * the CUPTI overhead lane is pid -1 and sorts after the GPUs. */
#define KINETO_EXCEED_MAX_PID 5000000
#define KINETO_OVERHEAD_SORT  0x100000

struct proc {
	int64_t id, pid;
};

struct lane {
	int64_t pid, tid;
};

struct demangled {
	int64_t name_id;
	char *text;
};

/* A lane named with NVTX: a thread (pid, tid) or a stream (device, CUPTI stream id). */
enum { NAME_THREAD, NAME_STREAM };

struct trace {
	struct cprof_trace_src src; /* the model part the trace streams from */
	FILE *f;
	int64_t base_ns;
	int64_t first_rel_ns;
	uint64_t events;
	int first_event;
	int simulated;
	struct proc *procs;
	size_t nprocs;
	struct lane *seen_threads;
	size_t nseen, capseen;
	struct demangled *dm;
	size_t ndm, capdm;
	struct pyspan *py;  /* per thread: the Python frames open as python_function spans */
	size_t npy, cappy;
	int64_t py_ids;
	int64_t rank;  /* >= 0: only this rank's processes (--per-rank) */
	int64_t world; /* world size to write with --per-rank */
};

enum gpu_kind { GPU_KERNEL = CPROF_OP_KERNEL, GPU_MEMCPY = CPROF_OP_MEMCPY, GPU_MEMSET = CPROF_OP_MEMSET };

void trace_put(struct trace *t, const char *s);
void trace_put_i(struct trace *t, int64_t v);
void trace_put_ts(struct trace *t, int64_t abs_ns);
void trace_put_str(struct trace *t, const char *s);
void trace_put_double(struct trace *t, double v);
void trace_ev_begin(struct trace *t);
void trace_put_meta(struct trace *t, const char *what, int64_t pid, int64_t tid, const char *key, const char *sval,
		     int64_t ival);
void trace_span_begin(struct trace *t, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t start,
		       int64_t end);
void trace_flow(struct trace *t, char ph, int64_t id, int64_t pid, int64_t tid, int64_t ts);
void trace_arg_i(struct trace *t, const char *key, int64_t v);
void trace_arg_s(struct trace *t, const char *key, const char *v);
void trace_arg_dim3(struct trace *t, const char *key, int64_t x, int64_t y, int64_t z);
int trace_same_api(const char *a, const char *b);
void trace_display_api_name(const char *in, char *out, size_t size);
const char *trace_kernel_name(struct trace *t, int64_t name_id, const char *mangled);
int64_t trace_proc_pid(const struct trace *t, int64_t process_id);
int64_t trace_corr_id(const struct trace *t, int64_t process_id, int64_t corr);
int64_t trace_cupti_tid(const struct trace *t, int64_t process_id, int64_t thread_id);
int trace_load_procs(struct trace *t);
/* fails the export after a row out of range or a read error (said) */
int trace_scan_failed(struct trace *t, int ret);
void trace_write_header(struct trace *t);
const char *trace_lane_name(const struct trace *t, int kind, int64_t pid, int64_t tid);
int trace_write_metadata(struct trace *t);
int trace_write_hooked(struct trace *t);
int trace_write_api_records(struct trace *t, enum cprof_tsrc_api_table table, const char *cat);
void trace_bandwidth(struct trace *t, int64_t bytes, int64_t ns);
int trace_write_gpu_ops(struct trace *t, enum gpu_kind kind);
int trace_write_overhead(struct trace *t);
int trace_write_nvtx(struct trace *t);

#endif
