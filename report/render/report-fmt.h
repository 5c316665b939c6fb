/* cprof report's output, one file per format (report-text.c, report-json.c, report-csv.c): each prints what the model holds. */
#ifndef CPROF_REPORT_RENDER_REPORT_FMT_H
#define CPROF_REPORT_RENDER_REPORT_FMT_H

#include <stddef.h>
#include <stdio.h>

#include "report/model/ops-nvtx.h"
#include "report/model/ranges.h"
#include "report/model/report.h"
#include "report/model/stacks.h"

/* rows a table of at most top rows shows (top 0: every row) */
#define REPORT_SHOWN(t, top) ((top) && (top) < (t)->n ? (top) : (t)->n)

size_t report_shown(const struct table *t, size_t top);
void report_print_stats_table(const char *title, const struct table *t, size_t top, int with_bytes);
void report_print_torch(const struct table *calls, const struct table *kernels, const struct table *memops, size_t top);
void report_print_verdict_text(const struct cprof_verdict *v, const struct cprof_phase *ph, int nph,
			       const struct cprof_finding *f, int nf, const char *op_evidence);
void report_print_csv(const struct table *t, size_t top);
const char *report_rank_verdict(const struct proc *procs, size_t nprocs, int64_t rank);
void report_print_ranks(const struct cprof_rank_row *ranks, size_t nranks, const struct proc *procs, size_t nprocs);
void report_json_table(const struct table *t, size_t top, int kernels);
void report_json_verdict_fields(const struct cprof_verdict *v);
void report_json_ranks(const struct cprof_rank_row *ranks, size_t nranks, const struct proc *procs, size_t nprocs);
void report_print_windows(const struct cprof_recording *r);
void report_json_windows(const struct cprof_recording *r);

/* NVTX ranges, stack attribution (by op, call site, chain), ATen ops: on stdout; top 0 = every row. */
void cprof_ranges_print(const struct cprof_range_table *t, size_t top);
void cprof_ranges_json(const struct cprof_range_table *t, size_t top);
void cprof_ranges_csv(const struct cprof_range_table *t, size_t top);
void cprof_attr_print(const struct cprof_attr_table *t, enum cprof_attr_by by, size_t top);
void cprof_attr_json(const struct cprof_attr_table *t, enum cprof_attr_by by, size_t top);
void cprof_attr_csv(const struct cprof_attr_table *t, enum cprof_attr_by by, size_t top);
void cprof_ops_print(const struct cprof_op_table *t, size_t top);
void cprof_ops_json(const struct cprof_op_table *t, size_t top);
void cprof_ops_csv(const struct cprof_op_table *t, size_t top);
/* the steps section: text, or JSON keys "step_pattern" and "steps" with a leading comma */
void report_steps_text(const struct cprof_steps_view *sv);
void report_steps_json(const struct cprof_steps_view *sv);


/* One output format of cprof report (uftrace's struct uftrace_dump_ops): what it needs read, and its printer. */
struct report_fmt_ops {
	const char *name;
	int one_table;              /* prints one table: only that is read */
	int json;                   /* report_opts.json */
	void (*render)(const struct report_doc *d);
};
extern const struct report_fmt_ops report_fmt_text, report_fmt_json, report_fmt_csv;

#endif
