/* Shared by the parts of cprof html: the page being written, what the timeline pass collects for the charts. */
#ifndef CPROF_REPORT_HTML_H
#define CPROF_REPORT_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "report/model/analysis.h"
#include "report/cprof.h"
#include "report/model/model.h"
#include "report/model/parts.h"
#include "report/model/ranges.h"
#include "report/model/stacks.h"

/* Duration histograms: log-spaced bins, HTML_HIST_PER_DECADE per decade from 1 ns. */
#define HTML_HIST_PER_DECADE 5
#define HTML_HIST_BINS       (11 * HTML_HIST_PER_DECADE) /* 1 ns .. 100 s */

/* The kernels with the most GPU time get their own colours, the same in the timeline and the charts. */
#define HTML_TOP_COLOURS         10
#define HTML_OTHER_KERNEL_COLOUR "#8d9db6"
extern const char *const html_kernel_palette[HTML_TOP_COLOURS];

struct html_row {
	char *name;  /* full (demangled) name */
	int cupti;   /* an API call only CUPTI saw */
	struct cprof_stats st;
	double bytes;
	double launched; /* torch view: GPU time of the work this call queued */
};

struct html_table {
	struct html_row *rows;
	size_t n, cap;
	double total;
};

struct html_proc {
	int64_t id, pid, ppid, rank;
	char *argv;
	struct cprof_verdict v;
};

struct html {
	FILE *f;
	struct cprof_model model; /* the profile, loaded once (cprof_model_open: model.x holds stacks and ranges) */
	const char *profile;
	int simulated;
	struct cprof_verdict v;
	struct cprof_phase *ph;
	int nph;
	struct cprof_finding *fd;
	int nf;
	struct html_proc *procs;
	size_t nprocs, nprocs_cap;
	uint64_t t0, t1;          /* the page's time 0 and end: first to last CUDA activity, CUPTI's included */
	uint64_t n_kernel_total;
	struct html_table kernels, memops, apis, torch;
	const struct cprof_step *steps; /* the model's */
	int nsteps;
	/* filled by the timeline pass */
	uint64_t hist_launch[HTML_HIST_BINS], hist_kernel[HTML_HIST_BINS];
	uint64_t n_launch, n_kernel;
};

/* Text for an HTML element or attribute; bytes that are not UTF-8 become U+FFFD. */
void html_text(FILE *f, const char *s);
/* A JavaScript string literal that is safe inside <script> (no "</script>" can close it). */
void html_js_str(FILE *f, const char *s);
int html_hist_bin(double ns);

/* What the page shows besides the model (verdict, findings, processes, tables), then the page into h->f. */
int html_write_page(struct html *h, const struct cprof_thresholds *th);
int html_tables_load(struct html *h);
void html_tables_write(struct html *h);
void html_tables_free(struct html *h);
int html_timeline(struct html *h);
void html_charts(struct html *h);

#endif
