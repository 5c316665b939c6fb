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

/* proc 0 = every process; an empty table when the profile has no op ranges. */
int cprof_ops_build(sqlite3 *db, int64_t proc, struct cprof_op_table *t);
void cprof_ops_free(struct cprof_op_table *t);
/* The verdict's evidence: the ops with the most Self CPU among those that began in [from, to]; "" when none. */
int cprof_ops_evidence(sqlite3 *db, int64_t proc, uint64_t from, uint64_t to, char *out, size_t size);

#endif
