/* The GPU memory operations table (copies by kind, memsets), one loader for cprof report and cprof html. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/cprof.h"
#include "report/model/model.h"

struct memop_group {
	char *name;
	struct cprof_stats st;
	double bytes;
};

struct memop_groups {
	struct memop_group *g;
	size_t n, cap;
};

static int add_group(void *arg, int64_t key, const char *label, const struct cprof_stats *st)
{
	struct memop_groups *gs = arg;
	struct memop_group *g;

	(void)key;
	if (cprof_grow(&gs->g, &gs->cap, gs->n, sizeof(*gs->g)) < 0)
		return -ENOMEM;
	g = &gs->g[gs->n];
	memset(g, 0, sizeof(*g));
	g->name = strdup(label);
	if (g->name == NULL)
		return -ENOMEM;
	g->st = *st;
	gs->n++;
	return 0;
}

static const char *kind_label(void *ctx, int64_t key)
{
	(void)ctx;
	return key < 0 ? "[CUDA memset]" : cprof_copy_kind_name((int)key);
}

/* Copies grouped by their kind (in kind order), then the memsets; each group's durations and bytes. */
int cprof_model_memop_stats(const struct cprof_model *m, int64_t proc,
			    int (*fn)(void *ctx, const char *name, const struct cprof_stats *st, double bytes), void *ctx)
{
	struct memop_groups gs = { 0 };
	struct cprof_keyed *kd = NULL;
	int64_t bytes[12] = { 0 }; /* by copy kind 0..10, [11] the memsets */
	size_t i, n = 0;
	int ret = 0;

	if ((kd = malloc((m->nops ? m->nops : 1) * sizeof(*kd))) == NULL)
		return -ENOMEM;
	for (int pass = 0; pass < 2 && ret >= 0; pass++) {
		n = 0;
		for (i = 0; i < m->nops; i++) {
			const struct cprof_op *o = &m->ops[i];

			if (o->kind != (pass ? CPROF_OP_MEMSET : CPROF_OP_MEMCPY) || (proc && o->proc != proc))
				continue;
			kd[n].key = pass ? -1 : o->copy;
			kd[n++].d = (int64_t)(o->end - o->start);
			bytes[pass ? 11 : o->copy] += o->bytes;
		}
		ret = cprof_model_group_stats(kd, n, kind_label, add_group, &gs);
	}
	for (i = 0; i < gs.n && ret >= 0; i++) {
		size_t k;

		for (k = 0; k < 12; k++)
			if (!strcmp(gs.g[i].name, k == 11 ? "[CUDA memset]" : cprof_copy_kind_name((int)k)))
				gs.g[i].bytes = (double)bytes[k];
		ret = fn(ctx, gs.g[i].name, &gs.g[i].st, gs.g[i].bytes);
	}
	for (i = 0; i < gs.n; i++)
		free(gs.g[i].name);
	free(gs.g);
	free(kd);
	return ret < 0 ? ret : 0;
}
