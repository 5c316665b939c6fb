/* cprof report's tables: what report-tables.c fills from the model and render/report-*.c print (text, CSV, JSON). */
#ifndef CPROF_REPORT_MODEL_REPORT_H
#define CPROF_REPORT_MODEL_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "report/cprof.h"
#include "report/model/analysis.h"
#include "report/model/model.h"
#include "report/model/parts.h"

struct row {
	char *name;  /* full (demangled) name */
	char tag;    /* '*' for API calls only CUPTI saw */
	struct cprof_stats st;
	double bytes;
	double extra; /* torch view: CUDA time launched by this call */
};

struct table {
	struct row *rows;
	size_t n, cap;
	double total;
};

struct proc {
	int64_t id;
	int64_t pid, ppid, rank;
	const char *exe, *argv, *host, *bye; /* the model's */
	int64_t recorded, lost;
	struct table apis;
	struct cprof_verdict v;
};

struct ctx {
	struct table *t;
	char tag;
	int demangle;
};

/* The CUDA API table's calls, named for what they count (issue 29 item 2): every output prints these. */
struct call_counts {
	int64_t total;      /* the table's rows added up */
	int64_t program;    /* hooked calls the program made (not inside another hooked call) */
	int64_t in_libs;    /* calls made inside a hooked library call: hooked ones, and those CUPTI saw */
	int64_t cupti_only; /* calls only CUPTI saw, outside any hooked call (no hook for them, driver API) */
};
void report_call_counts(const struct cprof_model *m, int64_t proc, const struct table *apis, struct call_counts *c);
/* the same over another table's rows: each row added, then the hooked calls split */
void report_call_counts_row(struct call_counts *c, const char *name, int cupti_only, int64_t n);
void report_call_counts_split(const struct cprof_model *m, int64_t proc, struct call_counts *c);
/* "129 by the program, 111 inside libraries, 55 seen only by CUPTI" (c->total calls in all) */
void report_call_counts_text(const struct call_counts *c, char *buf, size_t size);

/* A copy of the model whose GPU ops, hooked calls and CUPTI runtime records are those that start in the
 * verdict's window (the phases' windows when it has several): the tables of --window verdict. The other
 * arrays are the model's (not owned); free with report_model_window_free. */
int report_model_window(const struct cprof_model *m, const struct cprof_verdict *v, const struct cprof_phase *ph,
			int nph, struct cprof_model *w);
void report_model_window_free(struct cprof_model *w);
/* what a table covers, for its title: "whole run, start-up and warm-up included" or the verdict's window */
void report_window_note(const struct cprof_verdict *v, int verdict_window, char *buf, size_t size);
/* --sort: the order of the kernel, memory and API tables (largest first; name: A to Z) */
enum { REPORT_SORT_TOTAL, REPORT_SORT_CALLS, REPORT_SORT_AVG, REPORT_SORT_MED, REPORT_SORT_MIN, REPORT_SORT_MAX,
       REPORT_SORT_STD, REPORT_SORT_NAME, REPORT_SORT__N };
/* the key's number, -1 when there is none of that name */
int report_sort_key(const char *name);
void report_table_sort(struct table *t, int key);
/* --timeunit: enum cprof_unit of the stats tables' times, -1: the unit that suits the largest value; the unit
 * of a name (ns, nsec, nanoseconds, ...), -1 when there is none of that name */
extern int report_timeunit;
int report_timeunit_key(const char *name);

void report_table_free(struct table *t);
int report_load_apis(struct cprof_model *m, int64_t proc, struct table *t);
int report_load_kernels(struct cprof_model *m, int64_t proc, struct table *t);
int report_load_memops(struct cprof_model *m, int64_t proc, struct table *t);
int report_load_torch(struct cprof_model *m, int64_t proc, struct table *t);
int report_load_procs(const struct cprof_model *m, struct proc **out, size_t *n);

/* The GPU streams table (cprof report --by stream): ops, kernels and GPU time per (device, stream), most
 * GPU time first (ties in (device, stream) order). */
struct report_stream {
	int64_t dev, stream;
	int64_t ops, kernels, ns;
};
int report_load_streams(const struct cprof_model *m, struct report_stream **out, size_t *n);
/* A rank of a job: its processes, hosts, run (first to last hooked call of its processes that made one), kernels. */
struct cprof_rank_row {
	int64_t rank, procs, run_ns, kernels, kernel_ns;
	char *hosts;                /* distinct hosts, comma-separated; NULL: none recorded */
};
/* The ranks of a job (struct cprof_rank_row), by rank: a rank whose processes made a hooked call, its run from
 * their first call to their last, the kernels of all its processes; the model's timeline must be loaded. */
int report_load_ranks(const struct cprof_model *m, struct cprof_rank_row **out, size_t *n);

/* What cprof report shows, read and analysed once; each format prints it (render/report-fmt.h). */
enum report_by { REPORT_BY_ALL, REPORT_BY_KERNEL, REPORT_BY_API, REPORT_BY_STREAM, REPORT_BY_PROCESS, REPORT_BY_OP,
		 REPORT_BY_CALLSITE, REPORT_BY_RANGE };
/* --by NAME's table (kernel, api, stream, process, op, callsite, range); -1 when there is none of that name */
int report_by_key(const char *name);
struct report_opts {
	const char *profile;
	int by;                     /* enum report_by */
	size_t top;
	int top_set, range_tree, sort, verdict_window;
	int one_table;              /* load only the one table printed (CSV) */
	int json;                   /* the JSON document: the tables' row counts too, each step's verdict up to top */
	struct cprof_thresholds th;
};
struct report_doc {
	const struct report_opts *o;
	struct cprof_model model;   /* model.x: the parts read with it */
	struct proc *procs;
	size_t nprocs;
	struct table apis, kernels, memops, torch; /* the run's, or the verdict window's (--window verdict) */
	struct cprof_verdict v;
	struct cprof_phase *ph;
	int nph;
	struct cprof_finding *fd;
	int nf;
	struct cprof_device_verdict *dv;
	int ndv;
	struct call_counts cc;      /* every call, the hooks' and those only CUPTI saw */
	char calls_text[160], win_note[160];
	char op_evidence[512];      /* an overhead-bound window's ATen ops ("" none) */
	int verdict_window;         /* the tables cover the verdict's window */
	int lower_bound;            /* a process was killed: lost events are a lower bound */
	struct cprof_steps_view sv;
	double hta_idle_pct;        /* HTA's idle share of the run (-1: no GPU op) */
	struct cprof_rank_row *ranks; /* by rank */
	size_t nranks;
	struct report_stream *streams; /* --by stream */
	size_t nstreams;
};
/* Reads o->profile and builds what the report shows; errors said on stderr. 0 or a negative errno. */
int report_doc_build(const struct report_opts *o, struct report_doc *d);
void report_doc_free(struct report_doc *d);

#endif
