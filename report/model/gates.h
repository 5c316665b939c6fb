/* The CI gate's conditions and the ranked changes between two profiles, shared by check and diff. */
#ifndef CPROF_REPORT_GATES_H
#define CPROF_REPORT_GATES_H

#include <stddef.h>
#include <stdint.h>

#include "report/model/summary.h"

/* One kernel or hooked call in either profile. */
struct cprof_change {
	const char *name; /* the summary's; valid while both summaries are */
	int api;          /* 1: host time of a hooked call, 0: GPU time of a kernel */
	double old_ns, new_ns;
	int64_t old_n, new_n;
};

/* The rows that changed, ranked: kernels by the change in GPU time, then calls by the change in host
 * time, synchronising calls (whose host time is the GPU's, counted already) last; 0 or -ENOMEM. */
int cprof_changes_build(const struct cprof_summary *old, const struct cprof_summary *now, struct cprof_change **out,
			size_t *n);
/* The relative change in percent; NAN when the old value is 0 (the row is new). */
double cprof_change_pct(double old, double now);
/* A change that fits a column of 8: "+12.3%", "-100.0%" is "gone", "new", past +1000% "x39062" (times). */
void cprof_fmt_change(char *buf, size_t size, double old, double now);

/* One condition of the gate, with what it measured and what it allowed. */
struct cprof_gate {
	const char *id;    /* verdict, gpu_idle, kernel_time, kernel_launches, step_median, kernel */
	char what[300];    /* "total GPU kernel time", "kernel NAME time" (NAME escaped for a terminal) */
	const char *name;  /* kernel gates: the kernel's full name (raw); NULL otherwise */
	const char *unit;  /* ns, count, pct, verdict */
	double value, limit, baseline; /* baseline < 0: none; limit: the largest value that passes */
	char value_text[64], limit_text[64]; /* as a human reads them: "31.0%", "1.2 ms", "overhead-bound" */
	char detail[600];  /* the text line's detail: "90 vs baseline 50 (+80.0%, allowed +10.0%)" */
	int failed;
};

struct cprof_gate_opts {
	const char *expect; /* NULL: not checked */
	double max_idle;    /* < 0: not checked */
	double max_reg;     /* with a baseline: the regression allowed, in percent */
};

/* The gate's conditions on now (against old when not NULL); the count that failed, or -ENOMEM. */
int cprof_gates_build(const struct cprof_summary *now, const struct cprof_summary *old, const struct cprof_gate_opts *o,
		      struct cprof_gate **out, size_t *n);

#endif
