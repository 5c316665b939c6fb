/* ATen ops from PyTorch's own op ranges (cprof-run --torch-ops): torch.profiler's table, rows per op. */
#ifndef CPROF_REPORT_OPS_NVTX_H
#define CPROF_REPORT_OPS_NVTX_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct cprof_op_row {
	char *name;       /* "aten::mm", torch's ", seq = N, op_id = M" already taken off */
	uint64_t calls;   /* ranges */
	uint64_t gpu_ops; /* kernels, copies and memsets launched inside it, not inside a child op */
	double self_cpu_ns, cpu_total_ns;   /* host time in the op, less its child ops' / all of it */
	double self_cuda_ns, cuda_total_ns; /* GPU time of the work launched in it, not in a child op / in all */
};

struct cprof_op_table {
	struct cprof_op_row *rows; /* by CPU total, descending */
	size_t n;
	uint64_t ranges;
	double self_cpu_ns, self_cuda_ns; /* sums of the Self columns: torch.profiler's "time total" lines */
};

/* PyTorch's op ranges as read from the profile, by (process, thread, start, longest first), and the GPU work
 * each hooked call launched, at the call's start on its thread, by (process, thread, start). */
struct cprof_op_range {
	int64_t proc, tid, start, end, text;
	char *name;
};
struct cprof_op_gpu {
	int64_t proc, tid, at;
	double ns;
};
struct cprof_op_ranges {
	struct cprof_op_range *r;
	size_t n;
	struct cprof_op_gpu *g;
	size_t ng;
};
/* proc 0 = every process; none when the profile has no op ranges (then no GPU work is read either). */
int cprof_op_ranges_load(sqlite3 *db, int64_t proc, struct cprof_op_ranges *r);
void cprof_op_ranges_free(struct cprof_op_ranges *r);
/* The op table (an empty one when there are no op ranges). */
int cprof_ops_build(const struct cprof_op_ranges *r, struct cprof_op_table *t);
void cprof_ops_free(struct cprof_op_table *t);
/* The verdict's evidence: the ops with the most Self CPU among those that began in [from, to]; "" when none. */
int cprof_ops_evidence(const struct cprof_op_ranges *r, uint64_t from, uint64_t to, char *out, size_t size);

#endif
