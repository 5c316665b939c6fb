/* One profile loaded once into time-ordered arrays (GPU ops, CUDA calls, profiler overhead, steps); the analysis runs over these. */
#ifndef CPROF_REPORT_MODEL_H
#define CPROF_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "report/analysis.h"

enum cprof_op_kind { CPROF_OP_KERNEL = 0, CPROF_OP_MEMCPY, CPROF_OP_MEMSET };

/* A GPU op (kernel, copy, memset), with the start of the call that launched it (0: not known). */
struct cprof_op {
	uint64_t start, end, launch;
	int64_t proc;
	int32_t kname; /* kernels: dense index of the name (CPROF_API nameIds may be sparse); -1 otherwise */
	uint8_t kind;  /* enum cprof_op_kind */
};

/* A hooked CUDA call. */
struct cprof_call {
	uint64_t start, end;
	int64_t proc;
	uint8_t outer;  /* nested = 0: not made inside another hooked call */
	uint8_t launch; /* class 'launch' */
	uint8_t cut;    /* synchronises with the GPU: class 'sync', or cudaMemcpy */
};

/* Time CUPTI spent on itself (buffer flush, instrumentation, resources, buffer requests). */
struct cprof_ovh {
	uint64_t start, end;
	int64_t proc;
};

struct cprof_steps_cache {
	int64_t proc;
	const char *re;
	struct cprof_step *s;
	int n;
};

struct cprof_model {
	sqlite3 *db;                 /* not owned */
	struct cprof_op *ops;        /* by start (ties: kernels, copies, memsets, each in table order) */
	size_t nops;
	struct cprof_call *calls;    /* by start */
	size_t ncalls;
	struct cprof_ovh *ovh;       /* by start */
	size_t novh;
	size_t nknames;              /* distinct kernel names */
	struct cprof_steps_cache *steps;
	size_t nsteps_cache;
};

/* The model of the profile open as db: each table read once, in one statement. 0 or a negative errno. */
int cprof_model_load(sqlite3 *db, struct cprof_model *m);
/* A model built in memory (tests): takes the arrays as given, sorts them; ops' kname must be < nknames. */
int cprof_model_from_arrays(struct cprof_model *m, struct cprof_op *ops, size_t nops, struct cprof_call *calls,
			    size_t ncalls, struct cprof_ovh *ovh, size_t novh, size_t nknames);
void cprof_model_free(struct cprof_model *m);

/* The steps of process proc (0 = all) for pattern re, read once per (proc, re) and owned by the model.
 * Returns their number (0: none) or a negative errno. */
int cprof_model_steps(struct cprof_model *m, int64_t proc, const char *re, const struct cprof_step **out);

/* Index of the first element whose start is >= t, in an array sorted by start. */
size_t cprof_model_ops_from(const struct cprof_model *m, uint64_t t);
size_t cprof_model_calls_from(const struct cprof_model *m, uint64_t t);

#endif
