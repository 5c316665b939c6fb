/* The tables of cprof report (kernels, copies, API calls, torch's view, processes), filled from the model. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "report/model/report.h"

static int add_row(void *arg, int64_t key, const char *label, const struct cprof_stats *st)
{
	struct ctx *c = arg;
	struct table *t = c->t;

	(void)key;
	if (cprof_grow(&t->rows, &t->cap, t->n, sizeof(*t->rows)) < 0)
		return -1;
	memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
	t->rows[t->n].name = c->demangle ? cprof_demangle(label) : strdup(label);
	t->rows[t->n].tag = c->tag;
	t->rows[t->n].st = *st;
	t->total += st->total;
	t->n++;
	return 0;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->st.total != y->st.total)
		return x->st.total < y->st.total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void table_sort(struct table *t)
{
	if (t->n)
		qsort(t->rows, t->n, sizeof(t->rows[0]), by_total_desc);
}

void report_table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->rows[i].name);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* API calls: what the hooks saw, plus what only CUPTI saw (calls made inside libraries, APIs without
 * a hook). A CUPTI record carrying our external id is a hooked call: counted once, as the hook's. */
int report_load_apis(struct cprof_model *m, int64_t proc, struct table *t)
{
	struct ctx c = { t, 0, 0 };

	struct ctx cupti = { t, '*', 0 };

	if (cprof_model_call_stats(m, proc, 0, add_row, &c) < 0 || cprof_model_cupti_only_stats(m, proc, add_row, &cupti) < 0 ||
	    (!m->windowed && cprof_model_driver_only_stats(m, proc, add_row, &cupti) < 0))
		return -1;
	table_sort(t);
	return 0;
}

void report_call_counts_row(struct call_counts *c, const char *name, int cupti_only, int64_t n)
{
	c->total += n;
	if (!cupti_only)
		c->program += n; /* the hooked calls, until report_call_counts_split takes the nested ones out */
	else if (strstr(name, " (inside "))
		c->in_libs += n;
	else
		c->cupti_only += n;
}

void report_call_counts_split(const struct cprof_model *m, int64_t proc, struct call_counts *c)
{
	int64_t nested = 0;
	size_t i;

	/* as the table: calls whose name is in the profile */
	for (i = 0; i < m->ncalls; i++)
		if (m->calls[i].nested && (!proc || m->calls[i].proc == proc) && cprof_model_string(m, m->calls[i].name))
			nested++;
	if (nested > c->program)
		nested = c->program;
	c->in_libs += nested;
	c->program -= nested;
}

void report_call_counts(const struct cprof_model *m, int64_t proc, const struct table *apis, struct call_counts *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < apis->n; i++)
		report_call_counts_row(c, apis->rows[i].name, apis->rows[i].tag == '*', (int64_t)apis->rows[i].st.n);
	report_call_counts_split(m, proc, c);
}

void report_call_counts_text(const struct call_counts *c, char *buf, size_t size)
{
	snprintf(buf, size, "%lld by the program, %lld inside libraries, %lld seen only by CUPTI", (long long)c->program,
		 (long long)c->in_libs, (long long)c->cupti_only);
}

struct win {
	const struct cprof_verdict *v;
	const struct cprof_phase *ph;
	int nph;
};

static int in_window(const struct win *w, uint64_t t)
{
	int i;

	if (w->nph <= 1)
		return t >= w->v->start && t < w->v->end;
	for (i = 0; i < w->nph; i++)
		if (t >= w->ph[i].v.start && t < w->ph[i].v.end)
			return 1;
	return 0;
}

/* the elements of a start-sorted array that start in the window, copied */
static int filter(const void *arr, size_t n, size_t elem, const struct win *w, void **out, size_t *nout)
{
	const char *a = arr;
	char *o = malloc((n ? n : 1) * elem);
	size_t i, k = 0;

	if (o == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (in_window(w, *(const uint64_t *)(a + i * elem))) /* start is the first field of each */
			memcpy(o + k++ * elem, a + i * elem, elem);
	*out = o;
	*nout = k;
	return 0;
}

int report_model_window(const struct cprof_model *m, const struct cprof_verdict *v, const struct cprof_phase *ph,
			int nph, struct cprof_model *w)
{
	struct win win = { v, ph, nph };
	void *ops = NULL, *calls = NULL, *rt = NULL;

	*w = *m;
	w->calls_by_corr = NULL;
	w->launch_call = NULL;
	w->kernels_by_corr = NULL;
	w->nkernels_by_corr = 0;
	w->steps = NULL;
	w->nsteps_cache = 0;
	w->ops = NULL;
	w->calls = NULL;
	w->rt = NULL;
	if (filter(m->ops, m->nops, sizeof(*m->ops), &win, &ops, &w->nops) < 0 ||
	    filter(m->calls, m->ncalls, sizeof(*m->calls), &win, &calls, &w->ncalls) < 0 ||
	    filter(m->rt, m->nrt, sizeof(*m->rt), &win, &rt, &w->nrt) < 0) {
		free(ops);
		free(calls);
		free(rt);
		return -ENOMEM;
	}
	w->ops = ops;
	w->calls = calls;
	w->rt = rt;
	w->windowed = 1;
	return 0;
}

void report_model_window_free(struct cprof_model *w)
{
	free(w->ops);
	free(w->calls);
	free(w->rt);
	cprof_model_free_indexes(w);
	memset(w, 0, sizeof(*w));
}

void report_window_note(const struct cprof_verdict *v, int verdict_window, char *buf, size_t size)
{
	char d[32];

	cprof_fmt_dur(d, sizeof(d), (double)(v->end - v->start));
	if (verdict_window)
		snprintf(buf, size, "the verdict's window, %s: start-up and warm-up excluded", d);
	else
		snprintf(buf, size, "whole run, start-up and warm-up included; --window verdict: the verdict's %s", d);
}

int report_load_kernels(struct cprof_model *m, int64_t proc, struct table *t)
{
	struct ctx c = { t, 0, 1 };

	if (cprof_model_kernel_stats(m, proc, add_row, &c) < 0)
		return -1;
	table_sort(t);
	return 0;
}

static int add_memop(void *arg, const char *name, const struct cprof_stats *st, double bytes)
{
	struct ctx *c = arg;

	if (add_row(c, 0, name, st) < 0)
		return -ENOMEM;
	c->t->rows[c->t->n - 1].bytes = bytes;
	return 0;
}

/* copies by kind and memsets, as nsys's cuda_gpu_mem_time_sum, with bytes and bandwidth (a window's model: its
 * own GPU ops) */
int report_load_memops(struct cprof_model *m, int64_t proc, struct table *t)
{
	struct ctx c = { t, 0, 0 };

	if (cprof_model_memop_stats(m, proc, add_memop, &c) < 0)
		return -1;
	table_sort(t);
	return 0;
}

/* torch.profiler's view: each hooked call name with its Self CPU and the CUDA time it launched, and
 * each kernel with its Self CUDA */
static int set_launched(void *arg, const char *api, double ns)
{
	struct table *t = arg;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].name, api))
			t->rows[i].extra = ns;
	return 0;
}

int report_load_torch(struct cprof_model *m, int64_t proc, struct table *t)
{
	struct ctx c = { t, 0, 0 };

	if (cprof_model_call_stats(m, proc, 1, add_row, &c) < 0 || cprof_model_launched_time(m, proc, set_launched, t) < 0)
		return -1;
	table_sort(t);
	return 0;
}

/* the model's processes, each with room for its own API table and verdict */
int report_load_procs(const struct cprof_model *m, struct proc **out, size_t *n)
{
	struct proc *p = calloc(m->nprocs ? m->nprocs : 1, sizeof(*p));
	size_t i;

	if (p == NULL)
		return -1;
	for (i = 0; i < m->nprocs; i++) {
		const struct cprof_proc *q = &m->procs[i];

		p[i].id = q->id;
		p[i].pid = q->pid;
		p[i].ppid = q->ppid;
		p[i].rank = q->rank;
		p[i].exe = q->exe;
		p[i].argv = q->argv;
		p[i].host = q->host;
		p[i].bye = q->bye;
		p[i].recorded = q->recorded;
		p[i].lost = q->lost;
	}
	*out = p;
	*n = m->nprocs;
	return 0;
}

static int cmp_stream_key(const void *a, const void *b)
{
	const struct cprof_op *x = *(const struct cprof_op *const *)a, *y = *(const struct cprof_op *const *)b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* most GPU time first, ties in (device, stream) order */
static int cmp_stream_time(const void *a, const void *b)
{
	const struct report_stream *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

int report_load_streams(const struct cprof_model *m, struct report_stream **out, size_t *n)
{
	const struct cprof_op **by = malloc((m->nops ? m->nops : 1) * sizeof(*by));
	struct report_stream *s = NULL;
	size_t i, k = 0;

	*out = NULL;
	*n = 0;
	if (by == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nops; i++)
		by[i] = &m->ops[i];
	qsort(by, m->nops, sizeof(*by), cmp_stream_key);
	if ((s = calloc(m->nops ? m->nops : 1, sizeof(*s))) == NULL) {
		free(by);
		return -ENOMEM;
	}
	for (i = 0; i < m->nops; i++) {
		if (i == 0 || cmp_stream_key(&by[i - 1], &by[i]) != 0)
			s[k++] = (struct report_stream){ .dev = by[i]->dev, .stream = by[i]->stream };
		s[k - 1].ops++;
		s[k - 1].kernels += by[i]->kind == CPROF_OP_KERNEL;
		s[k - 1].ns += (int64_t)(by[i]->end - by[i]->start);
	}
	free(by);
	qsort(s, k, sizeof(*s), cmp_stream_time);
	*out = s;
	*n = k;
	return 0;
}

struct rank_acc {
	uint64_t s, e;      /* first call's start, last call's end */
	int64_t kernels, kernel_ns;
	int calls;          /* made a hooked call */
};

static int cmp_proc_rank(const void *a, const void *b)
{
	const struct cprof_proc *x = *(const struct cprof_proc *const *)a, *y = *(const struct cprof_proc *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Appends host (of by[j]) to the row's hosts unless a process before it in [i, j) that made a call has it:
 * distinct hosts in process order */
static int add_host(char **list, const struct cprof_proc *const *by, const struct rank_acc *acc,
		    const struct cprof_proc *base, size_t i, size_t j)
{
	const char *host = by[j]->host;
	size_t n = *list ? strlen(*list) : 0, h = strlen(host), k;
	char *l;

	for (k = i; k < j; k++)
		if (acc[by[k] - base].calls && !strcmp(by[k]->host, host))
			return 0;
	if ((l = realloc(*list, n + h + 2)) == NULL)
		return -ENOMEM;
	snprintf(l + n, h + 2, "%s%s", n ? "," : "", host);
	*list = l;
	return 0;
}

int report_load_ranks(const struct cprof_model *m, struct cprof_rank_row **out, size_t *nout)
{
	struct rank_acc *acc = calloc(m->nprocs ? m->nprocs : 1, sizeof(*acc));
	const struct cprof_proc **by = calloc(m->nprocs ? m->nprocs : 1, sizeof(*by));
	struct cprof_rank_row *r = calloc(m->nprocs ? m->nprocs : 1, sizeof(*r));
	size_t i, j, k, n = 0, nr = 0;
	int ret = -ENOMEM;

	*out = NULL;
	*nout = 0;
	if (acc == NULL || by == NULL || r == NULL)
		goto out;
	/* procs are by id: a process's index by binary search */
	for (i = 0; i < m->ncalls + m->nops; i++) {
		int call = i < m->ncalls;
		int64_t proc = call ? m->calls[i].proc : m->ops[i - m->ncalls].proc;
		size_t lo = cprof_model_proc_index(m, proc);

		if (lo == m->nprocs)
			continue;
		if (call) {
			const struct cprof_call *c = &m->calls[i];

			if (!acc[lo].calls || c->start < acc[lo].s)
				acc[lo].s = c->start;
			if (!acc[lo].calls || c->end > acc[lo].e)
				acc[lo].e = c->end;
			acc[lo].calls = 1;
		} else if (m->ops[i - m->ncalls].kind == CPROF_OP_KERNEL) {
			acc[lo].kernels++;
			acc[lo].kernel_ns += (int64_t)(m->ops[i - m->ncalls].end - m->ops[i - m->ncalls].start);
		}
	}
	for (i = 0; i < m->nprocs; i++)
		if (m->procs[i].rank >= 0)
			by[n++] = &m->procs[i];
	qsort(by, n, sizeof(*by), cmp_proc_rank);
	for (i = 0; i < n; i = j) {
		struct cprof_rank_row *row = &r[nr];
		uint64_t s = 0, e = 0;

		memset(row, 0, sizeof(*row));
		row->rank = by[i]->rank;
		for (j = i; j < n && by[j]->rank == by[i]->rank; j++) {
			const struct rank_acc *a = &acc[by[j] - m->procs];

			row->kernels += a->kernels;
			row->kernel_ns += a->kernel_ns;
			if (!a->calls)
				continue;
			if (row->procs == 0 || a->s < s)
				s = a->s;
			if (row->procs == 0 || a->e > e)
				e = a->e;
			row->procs++;
			if (by[j]->host[0] && add_host(&row->hosts, by, acc, m->procs, i, j) < 0)
				goto out;
		}
		/* a rank counts when one of its processes made a hooked call */
		if (row->procs == 0) {
			free(row->hosts);
			continue;
		}
		row->run_ns = (int64_t)(e - s);
		nr++;
	}
	*out = r;
	*nout = nr;
	r = NULL;
	ret = 0;
out:
	if (r)
		for (k = 0; k <= nr && k < m->nprocs; k++)
			free(r[k].hosts);
	free(r);
	free(acc);
	free(by);
	return ret;
}
