/* Flame graph data: the recorded call stacks, each with the CUDA call (and GPU op) at its tip, weighted by time. */
#ifndef CPROF_REPORT_FLAME_H
#define CPROF_REPORT_FLAME_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

enum cprof_flame_weight { CPROF_FLAME_CPU, CPROF_FLAME_GPU };

/* One distinct path, outermost frame first, frames separated by ';' (no frame holds one). */
struct cprof_flame_line {
	char *path;
	uint64_t weight; /* ns */
};

struct cprof_flame {
	struct cprof_flame_line *v; /* sorted by path, each path once */
	size_t n;
	uint64_t total;        /* the sum of the weights */
	uint64_t unattributed; /* of which: calls recorded without a stack (or GPU work with no hooked call) */
};

/* cpu: the host time of every hooked CUDA call (nested calls inside their outer one), tip = the call;
 * gpu: the GPU time of every kernel, copy and memset, tip = call;kernel. Calls without a recorded stack
 * are one frame "[no stack recorded]", so the weights sum to the profile's totals. 0 or -errno. */
int cprof_flame_build(sqlite3 *db, enum cprof_flame_weight w, struct cprof_flame *out);
void cprof_flame_free(struct cprof_flame *f);

#endif
