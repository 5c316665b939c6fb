/* cprof report's document: the profile read once (cprof_model_open), then the verdict, findings, tables and per-process views the formats print. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "report/model/report.h"

int report_by_key(const char *name)
{
	static const char *const names[] = {
		[REPORT_BY_KERNEL] = "kernel", [REPORT_BY_API] = "api",   [REPORT_BY_STREAM] = "stream",
		[REPORT_BY_PROCESS] = "process", [REPORT_BY_OP] = "op", [REPORT_BY_CALLSITE] = "callsite",
		[REPORT_BY_RANGE] = "range",
	};
	size_t i;

	for (i = 1; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return -1;
}

static unsigned parts_of(const struct report_opts *o)
{
	if (!o->one_table)
		return CPROF_MODEL_TIMELINE | CPROF_MODEL_HOST | CPROF_MODEL_STACKS |
		       CPROF_MODEL_TORCH_OPS | CPROF_MODEL_RANGES | (o->json ? CPROF_MODEL_COUNTS : 0);
	/* one table: what it needs, nothing else */
	switch (o->by) {
	case REPORT_BY_RANGE:
		return CPROF_MODEL_NO_ARRAYS | CPROF_MODEL_RANGES;
	case REPORT_BY_OP: /* op rows from PyTorch's own ranges (--torch-ops), else from the stacks */
		return CPROF_MODEL_NO_ARRAYS | CPROF_MODEL_TORCH_OPS | CPROF_MODEL_STACKS;
	case REPORT_BY_CALLSITE:
		return CPROF_MODEL_NO_ARRAYS | CPROF_MODEL_STACKS;
	case REPORT_BY_KERNEL:
		return CPROF_MODEL_GPU;
	default:
		return CPROF_MODEL_TIMELINE;
	}
}

static int one_table(const struct report_opts *o, struct report_doc *d)
{
	if (o->by == REPORT_BY_KERNEL) {
		if (report_load_kernels(&d->model, 0, &d->kernels) < 0)
			return -EIO;
		report_table_sort(&d->kernels, o->sort);
	} else if (o->by != REPORT_BY_RANGE && o->by != REPORT_BY_OP && o->by != REPORT_BY_CALLSITE) {
		if (report_load_apis(&d->model, 0, &d->apis) < 0)
			return -EIO;
		report_table_sort(&d->apis, o->sort);
	}
	return 0;
}

static void sort_tables(struct report_doc *d, int sort)
{
	report_table_sort(&d->apis, sort);
	report_table_sort(&d->kernels, sort);
	report_table_sort(&d->memops, sort);
}

static int load_tables(struct cprof_model *m, struct report_doc *d)
{
	return report_load_apis(m, 0, &d->apis) < 0 || report_load_kernels(m, 0, &d->kernels) < 0 ||
	       report_load_memops(m, 0, &d->memops) < 0 || report_load_torch(m, 0, &d->torch) < 0 ? -EIO : 0;
}

static void free_tables(struct report_doc *d)
{
	report_table_free(&d->apis);
	report_table_free(&d->kernels);
	report_table_free(&d->memops);
	report_table_free(&d->torch);
}

/* --window verdict: the tables over the verdict's window, as torch.profiler's table covers its block; the
 * headline's counts stay the run's */
static int window_tables(struct report_doc *d)
{
	struct cprof_model wm;
	int ret;

	free_tables(d);
	ret = report_model_window(&d->model, &d->v, d->ph, d->nph, &wm) < 0 ? -ENOMEM : load_tables(&wm, d);
	report_model_window_free(&wm);
	return ret;
}

/* each process's CUDA API table and verdict; with one process its verdict is the run's */
static int per_process(struct report_doc *d)
{
	size_t i;

	for (i = 0; i < d->nprocs; i++) {
		struct cprof_phase *pp = NULL;

		if (report_load_apis(&d->model, d->procs[i].id, &d->procs[i].apis) < 0)
			return -EIO;
		report_table_sort(&d->procs[i].apis, d->o->sort);
		if (d->nprocs == 1) {
			d->procs[i].v = d->v;
			continue;
		}
		if (cprof_headline(&d->model, d->procs[i].id, &d->o->th, &d->procs[i].v, &pp) < 0)
			return -EIO;
		free(pp);
	}
	return 0;
}

int report_doc_build(const struct report_opts *o, struct report_doc *d)
{
	struct cprof_model_opts mo = { .parts = parts_of(o), .ranges_by_name = !o->range_tree };
	struct cprof_model *m = &d->model;
	size_t i;
	int ret;

	memset(d, 0, sizeof(*d));
	d->o = o;
	if ((ret = cprof_model_open(o->profile, &mo, m)) < 0) {
		if (m->x && m->x->err[0])
			pr_err("%s: %s", o->profile, m->x->err);
		return ret;
	}
	if (o->one_table) {
		if ((ret = one_table(o, d)) < 0)
			pr_err("%s: cannot read the profile: %s", o->profile, cprof_model_why(m));
		return ret;
	}
	if (report_load_procs(m, &d->procs, &d->nprocs) < 0 || load_tables(m, d) < 0 ||
	    (d->nph = cprof_headline(m, 0, &o->th, &d->v, &d->ph)) < 0) {
		pr_err("%s: cannot read the profile: %s", o->profile, cprof_model_why(m));
		return -EIO;
	}
	sort_tables(d, o->sort);
	report_call_counts(m, 0, &d->apis, &d->cc);
	report_call_counts_text(&d->cc, d->calls_text, sizeof(d->calls_text));
	d->nf = cprof_findings(m, 0, &d->v, &d->fd);
	d->verdict_window = o->verdict_window && !cprof_verdict_no_gpu(&d->v);
	if (d->verdict_window) {
		if (window_tables(d) < 0) {
			pr_err("%s: cannot build the verdict window's tables", o->profile);
			return -EIO;
		}
		sort_tables(d, o->sort);
	}
	report_window_note(&d->v, d->verdict_window, d->win_note, sizeof(d->win_note));
	/* several GPUs: each its own utilisation and verdict, besides the union above */
	if ((d->ndv = cprof_device_verdicts(m, 0, &o->th, &d->dv)) < 0) {
		pr_err("%s: cannot read the profile", o->profile);
		return -EIO;
	}
	/* a process killed from outside could not count what it had not sent; a collector that could not write its
	 * final state (a file size limit, t-rel-spool) left no count at all */
	if (!m->x->meta.lost_known)
		d->lower_bound = 1;
	for (i = 0; i < m->nprocs; i++)
		if (m->procs[i].end && m->procs[i].end->killed)
			d->lower_bound = 1;
	/* an overhead-bound window names the ops whose host time it was */
	if (!strcmp(d->v.verdict, "overhead-bound") &&
	    cprof_ops_evidence(&m->x->op_ranges, d->v.start, d->v.end, d->op_evidence, sizeof(d->op_evidence)) < 0)
		d->op_evidence[0] = '\0';
	d->hta_idle_pct = cprof_hta_idle_pct(m, 0);
	if ((ret = report_load_ranks(m, &d->ranks, &d->nranks)) < 0)
		return ret;
	if ((ret = per_process(d)) < 0)
		return ret;
	if ((o->by == REPORT_BY_ALL || o->json) &&
	    cprof_steps_view(m, 0, &o->th, o->json, o->json || o->top_set ? o->top : 0, &d->sv) < 0)
		memset(&d->sv, 0, sizeof(d->sv));
	if (o->by == REPORT_BY_STREAM && (ret = report_load_streams(m, &d->streams, &d->nstreams)) < 0)
		return ret;
	return 0;
}

void report_doc_free(struct report_doc *d)
{
	size_t i;

	for (i = 0; i < d->nprocs; i++)
		report_table_free(&d->procs[i].apis);
	free(d->procs);
	free(d->ph);
	free(d->fd);
	free(d->dv);
	free_tables(d);
	free(d->streams);
	for (i = 0; i < d->nranks; i++)
		free(d->ranks[i].hosts);
	free(d->ranks);
	cprof_steps_view_free(&d->sv);
	cprof_model_close(&d->model);
	memset(d, 0, sizeof(*d));
}
