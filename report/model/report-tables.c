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
	    cprof_model_driver_only_stats(m, proc, add_row, &cupti) < 0)
		return -1;
	table_sort(t);
	return 0;
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

/* copies by kind and memsets, as nsys's cuda_gpu_mem_time_sum, with bytes and bandwidth */
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
