/* cprof diff's result, and one writer per output format (text, json, markdown). */
#ifndef CPROF_REPORT_DIFF_H
#define CPROF_REPORT_DIFF_H

#include <stdio.h>

#include "report/model/gates.h"
#include "report/model/summary.h"

struct cprof_diff_result {
	const char *old_path, *new_path;
	const struct cprof_summary *a, *b; /* old, new */
	int simulated;                     /* either was recorded on the simulated GPU */
	const struct cprof_change *changes; /* ranked (cprof_changes_build) */
	size_t nchanges, top;              /* top 0: all */
	double max_reg;                    /* < 0: no --max-regression */
	const struct cprof_gate *gates;    /* the regressions checked with --max-regression */
	size_t ngates;
	int failed;
};

struct cprof_diff_fmt {
	const char *name;
	void (*write)(FILE *f, const struct cprof_diff_result *r);
};

extern const struct cprof_diff_fmt cprof_diff_text, cprof_diff_json, cprof_diff_markdown;

/* how many changes a writer shows */
static inline size_t cprof_diff_shown(const struct cprof_diff_result *r)
{
	return r->top && r->top < r->nchanges ? r->top : r->nchanges;
}

#endif
