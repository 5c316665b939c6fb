/* cprof stacks' writers: folded lines (flamegraph.pl, inferno, speedscope) and speedscope's JSON file format. */
#ifndef CPROF_REPORT_STACKS_OUT_H
#define CPROF_REPORT_STACKS_OUT_H

#include <stdio.h>

#include "report/model/flame.h"

struct cprof_stacks_doc {
	const char *profile;
	enum cprof_flame_weight weight;
	int simulated;
	const struct cprof_flame *flame;
};

struct cprof_stacks_fmt {
	const char *name;
	int (*write)(FILE *f, const struct cprof_stacks_doc *d); /* 0 or -errno */
};

extern const struct cprof_stacks_fmt cprof_stacks_folded, cprof_stacks_speedscope;

#endif
