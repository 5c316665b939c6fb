/* Folded stacks: "outer;inner;cudaLaunchKernel 1234" per line, the weight in nanoseconds, as flamegraph.pl reads. */
#include "report/render/stacks.h"

static int write_folded(FILE *f, const struct cprof_stacks_doc *d)
{
	size_t i;

	for (i = 0; i < d->flame->n; i++)
		fprintf(f, "%s %llu\n", d->flame->v[i].path, (unsigned long long)d->flame->v[i].weight);
	return 0;
}

const struct cprof_stacks_fmt cprof_stacks_folded = { "folded", write_folded };
