/* cprof report's tables: what report-tables.c fills from the model and render/report-*.c print (text, CSV, JSON). */
#ifndef CPROF_REPORT_MODEL_REPORT_H
#define CPROF_REPORT_MODEL_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "report/cprof.h"
#include "report/model/analysis.h"
#include "report/model/model.h"

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

/* --sort: the order of the kernel, memory and API tables (largest first; name: A to Z) */
enum { REPORT_SORT_TOTAL, REPORT_SORT_CALLS, REPORT_SORT_AVG, REPORT_SORT_MED, REPORT_SORT_MIN, REPORT_SORT_MAX,
       REPORT_SORT_STD, REPORT_SORT_NAME, REPORT_SORT__N };
/* the key's number, -1 when there is none of that name */
int report_sort_key(const char *name);
void report_table_sort(struct table *t, int key);
/* --timeunit: enum cprof_unit of the stats tables' times, -1: the unit that suits the largest value */
extern int report_timeunit;

extern const char report_rank_sql[];
void report_table_free(struct table *t);
int report_load_apis(struct cprof_model *m, int64_t proc, struct table *t);
int report_load_kernels(struct cprof_model *m, int64_t proc, struct table *t);
int report_load_memops(struct cprof_model *m, int64_t proc, struct table *t);
int report_load_torch(struct cprof_model *m, int64_t proc, struct table *t);
int report_load_procs(const struct cprof_model *m, struct proc **out, size_t *n);
size_t report_shown(const struct table *t, size_t top);
void report_print_stats_table(const char *title, const struct table *t, size_t top, int with_bytes);
void report_print_torch(const struct table *calls, const struct table *kernels, size_t top);
void report_print_verdict_text(const struct cprof_verdict *v, const struct cprof_phase *ph, int nph,
			       const struct cprof_finding *f, int nf, const char *op_evidence);
void report_print_csv(const struct table *t, size_t top);
const char *report_rank_verdict(const struct proc *procs, size_t nprocs, int64_t rank);
void report_print_ranks(sqlite3 *db, const struct proc *procs, size_t nprocs);
void report_json_table(const struct table *t, size_t top, int kernels);
void report_json_verdict_fields(const struct cprof_verdict *v);
void report_json_ranks(sqlite3 *db, const struct proc *procs, size_t nprocs);
void report_print_windows(const struct cprof_recording *r);
void report_json_windows(const struct cprof_recording *r);

#endif
