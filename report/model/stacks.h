/* Call stacks read back from a profile, and what the report derives from them (ops, call sites). */
#ifndef CPROF_REPORT_STACKS_H
#define CPROF_REPORT_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct cprof_stack {
	int64_t proc, id;
	char *ops;      /* "aten::linear → aten::addmm", outermost first; NULL when no ATen op is on it */
	char *callsite; /* "train.py:42 step" (innermost frame outside libraries), or a native caller */
	int python;     /* callsite is a Python frame */
	char **py;      /* the Python frames as Kineto names them, "file.py(42): func", innermost first */
	size_t npy;
};

struct cprof_stacks {
	struct cprof_stack *v; /* sorted by (proc, id) */
	size_t n;
};

/* Empty (0) for a profile without stacks. */
int cprof_stacks_load(sqlite3 *db, struct cprof_stacks *out);
const struct cprof_stack *cprof_stacks_find(const struct cprof_stacks *s, int64_t proc, int64_t id);
void cprof_stacks_free(struct cprof_stacks *s);
/* "at::_ops::mm::call(...)" (demangled) -> "aten::mm"; 0 when the frame is not an ATen op entry. */
int cprof_aten_op(const char *demangled, char *out, size_t size);

enum cprof_attr_by { CPROF_BY_OP, CPROF_BY_CALLSITE, CPROF_BY_CHAIN };

struct cprof_attr_row {
	char *label;   /* op, call site, or kernel (CHAIN) */
	char *detail;  /* CHAIN: "aten::matmul → aten::mm → cudaLaunchKernel" */
	uint64_t calls;  /* hooked calls (not nested ones) */
	uint64_t gpu_ops;
	double cpu_ns;   /* Self: time inside the CUDA calls made there */
	double gpu_ns;   /* Self: GPU time of the work those calls launched */
	double cpu_total_ns, gpu_total_ns; /* OP: including the ops it called */
};

struct cprof_attr_table {
	struct cprof_attr_row *rows; /* by Self GPU time, descending */
	size_t n;
	uint64_t calls_with_stack, inherited;
};

/* proc 0 = every process. */
int cprof_attr_build(sqlite3 *db, const struct cprof_stacks *stacks, enum cprof_attr_by by, int64_t proc,
		     struct cprof_attr_table *t);
/* The same for n tables at once (by[i] into t[i], n <= 8), from one pass over the calls. */
int cprof_attr_build_n(sqlite3 *db, const struct cprof_stacks *stacks, int64_t proc, const enum cprof_attr_by *by,
		       struct cprof_attr_table *t, int n);
/* By op, by call site and by chain at once; the caller frees the three tables, also on failure. */
int cprof_attr_build3(sqlite3 *db, const struct cprof_stacks *stacks, int64_t proc, struct cprof_attr_table *ops,
		      struct cprof_attr_table *sites, struct cprof_attr_table *chains);
void cprof_attr_free(struct cprof_attr_table *t);

#endif
