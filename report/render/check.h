/* cprof check's result, and one writer per output format (text, json, junit, markdown). */
#ifndef CPROF_REPORT_CHECK_H
#define CPROF_REPORT_CHECK_H

#include <stdio.h>

#include "report/model/gates.h"
#include "report/model/summary.h"

struct cprof_check_result {
	const char *profile, *baseline;         /* baseline NULL: none */
	const struct cprof_summary *now, *old;  /* old NULL: no baseline */
	int simulated;                          /* the profile was recorded on the simulated GPU */
	int incomplete;                         /* --require-complete and the profile is not: nothing was gated */
	const struct cprof_gate *gates;
	size_t ngates;
	int failed;                             /* gates that failed */
	const struct cprof_change *changes;     /* against the baseline, ranked */
	size_t nchanges, top;                   /* top: how many changes the summary shows */
	int exit_status;
};

struct cprof_check_fmt {
	const char *name;
	void (*write)(FILE *f, const struct cprof_check_result *r);
};

extern const struct cprof_check_fmt cprof_check_text, cprof_check_json, cprof_check_junit, cprof_check_markdown;

/* Markdown table cell text: escapes what Markdown and the HTML inside it would read (| ` * _ < > & [ ] \ ...),
 * and terminal controls as cprof_tx does. */
void cprof_md_fput(FILE *f, const char *s);
/* s as a whole Markdown code span, backticks included: controls escaped as on a terminal, nothing else (a code span
 * shows backslashes and entities as they are) */
void cprof_md_code_fput(FILE *f, const char *s);
/* XML 1.0 text or attribute value: & < > " ' escaped, characters XML cannot hold (C0 controls, bytes that are
 * not UTF-8) as visible \xNN escapes. */
void cprof_xml_fput(FILE *f, const char *s);

#endif
