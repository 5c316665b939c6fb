/* A profile reduced to what the gate and diff compare. */
#ifndef CPROF_REPORT_SUMMARY_H
#define CPROF_REPORT_SUMMARY_H

#include <stdint.h>

#include <sqlite3.h>

#include "report/model/analysis.h"
#include "report/model/model.h"

struct cprof_kstat {
	char *name; /* demangled */
	int api;    /* 1: a hooked API call, 0: a GPU kernel */
	int64_t count;
	double total_ns;
};

struct cprof_summary {
	struct cprof_model model;
	int simulated;         /* META simulated_gpu */
	struct cprof_verdict v;
	int complete;
	char reason[256];
	struct cprof_kstat *names; /* sorted by name */
	size_t n;
	int64_t kernel_count;
	double kernel_ns;
	int steps;             /* NVTX steps (0: none) */
	double step_median_ns; /* the steps' median time, a cold first step left out */
	struct cprof_compile_cost compile; /* torch.compile's host cost per call (calls 0: none, or no --torch-ops) */
};

/* Opens and reduces a profile, and closes it; on failure prints one line and returns -1. */
int cprof_summary_load(const char *path, const struct cprof_thresholds *t, struct cprof_summary *s);
const struct cprof_kstat *cprof_summary_find(const struct cprof_summary *s, const char *name, int api);
void cprof_summary_free(struct cprof_summary *s);

#endif
