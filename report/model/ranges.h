/* NVTX ranges read back from a profile: per range path, its CPU time, the CUDA calls made inside it and the GPU time they launched. */
#ifndef CPROF_REPORT_RANGES_H
#define CPROF_REPORT_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct cprof_range_row {
	char *path;         /* "step/forward": push/pop nesting joined with '/'; "domain:" before a non-default domain */
	int startend;       /* nvtxRangeStart/End ranges: no nesting, their own rows */
	uint64_t count;     /* ranges with this path */
	double cpu_ns;      /* sum of their durations */
	double self_cpu_ns; /* minus the time of their child ranges */
	uint64_t calls;     /* hooked CUDA calls (not nested ones) on the range's thread that start inside it */
	double api_ns;      /* time inside those calls */
	double gpu_ns;      /* GPU time of the work those calls (and calls nested in them) launched */
	uint64_t gpu_ops;
	double min_ns, max_ns; /* shortest and longest range */
};

struct cprof_range_table {
	struct cprof_range_row *rows; /* by GPU time, then CPU time, descending */
	size_t n;
	uint64_t ranges, open_ranges, marks; /* open: never ended, counted up to their process's end */
	int by_name; /* rows by the range's own name (nsys's nvtx_sum, torch's key_averages), else by path */
};

/* proc 0 = every process; an empty table for a profile without NVTX_EVENTS (older profiles). Rows by path
 * (the nesting, "step N/forward"); step names' numbers are N in either form. */
int cprof_ranges_build(sqlite3 *db, int64_t proc, struct cprof_range_table *t);
/* by_name: one row per range name ("forward" x12), whatever encloses it. */
int cprof_ranges_build_by(sqlite3 *db, int64_t proc, int by_name, struct cprof_range_table *t);
void cprof_ranges_free(struct cprof_range_table *t);

#endif
