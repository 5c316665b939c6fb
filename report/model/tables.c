/* The report's tables computed from the model: per-name statistics of calls and kernels, GPU time each call name launched. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "report/model/model.h"

struct grp {
	const struct cprof_model *m;
	int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st);
	void *ctx;
};

static const char *label_of(void *arg, int64_t key)
{
	struct grp *g = arg;

	return key == CPROF_NO_ID ? NULL : cprof_model_string(g->m, key);
}

static int relay(void *arg, int64_t key, const char *label, const struct cprof_stats *st)
{
	struct grp *g = arg;

	return g->fn(g->ctx, key == CPROF_NO_ID ? 0 : key, label, st);
}

int cprof_model_call_stats(const struct cprof_model *m, int64_t proc, int outer_only,
			   int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st), void *ctx)
{
	struct cprof_keyed *kd = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*kd));
	struct grp g = { m, fn, ctx };
	size_t i, n = 0;
	int ret;

	if (kd == NULL)
		return -ENOMEM;
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];

		/* the SQL joined StringIds: a call whose name is not there is not counted */
		if ((proc && c->proc != proc) || (outer_only && !c->outer) || cprof_model_string(m, c->name) == NULL)
			continue;
		kd[n].key = c->name;
		kd[n++].d = (int64_t)(c->end - c->start);
	}
	ret = cprof_model_group_stats(kd, n, label_of, relay, &g);
	free(kd);
	return ret;
}

int cprof_model_kernel_stats(const struct cprof_model *m, int64_t proc,
			     int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st), void *ctx)
{
	struct cprof_keyed *kd = malloc((m->nops ? m->nops : 1) * sizeof(*kd));
	struct grp g = { m, fn, ctx };
	size_t i, n = 0;
	int ret;

	if (kd == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nops; i++) {
		const struct cprof_op *o = &m->ops[i];

		if (o->kind != CPROF_OP_KERNEL || (proc && o->proc != proc))
			continue;
		kd[n].key = o->name; /* CPROF_NO_ID sorts first, as NULL does */
		kd[n++].d = (int64_t)(o->end - o->start);
	}
	ret = cprof_model_group_stats(kd, n, label_of, relay, &g);
	free(kd);
	return ret;
}

struct launched {
	int64_t *name;
	double *ns;
	size_t n, cap;
};

static int add_launched(void *arg, const struct cprof_call *c, const struct cprof_op *o)
{
	struct launched *l = arg;
	size_t i;

	/* few distinct names: a short scan, last hit first */
	for (i = l->n; i-- > 0;)
		if (l->name[i] == c->name) {
			l->ns[i] += (double)(int64_t)(o->end - o->start);
			return 0;
		}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		int64_t *nn = realloc(l->name, cap * sizeof(*nn));
		double *ns;

		if (nn == NULL)
			return -ENOMEM;
		l->name = nn;
		ns = realloc(l->ns, cap * sizeof(*ns));
		if (ns == NULL)
			return -ENOMEM;
		l->ns = ns;
		l->cap = cap;
	}
	l->name[l->n] = c->name;
	l->ns[l->n++] = (double)(int64_t)(o->end - o->start);
	return 0;
}

int cprof_model_launched_time(struct cprof_model *m, int64_t proc, int (*fn)(void *ctx, const char *api, double ns),
			      void *ctx)
{
	struct launched l = { 0 };
	size_t i;
	int ret = cprof_model_launched(m, proc, add_launched, &l);

	for (i = 0; ret >= 0 && i < l.n; i++) {
		const char *s = cprof_model_string(m, l.name[i]);

		if (s)
			ret = fn(ctx, s, l.ns[i]);
	}
	free(l.name);
	free(l.ns);
	return ret;
}

struct trimmed {
	struct grp g;
	char buf[256];
};

/* SQL's rtrim(rtrim(name, '0123456789'), '_v'): cudaLaunchKernel_v7000 -> cudaLaunchKernel */
static const char *trimmed_label(void *arg, int64_t key)
{
	struct trimmed *t = arg;
	const char *s = cprof_model_string(t->g.m, key);
	size_t n;

	if (s == NULL)
		return NULL;
	snprintf(t->buf, sizeof(t->buf), "%s", s);
	n = strlen(t->buf);
	while (n > 0 && t->buf[n - 1] >= '0' && t->buf[n - 1] <= '9')
		n--;
	while (n > 0 && (t->buf[n - 1] == '_' || t->buf[n - 1] == 'v'))
		n--;
	t->buf[n] = '\0';
	return t->buf;
}

static int trimmed_relay(void *arg, int64_t key, const char *label, const struct cprof_stats *st)
{
	struct trimmed *t = arg;

	return t->g.fn(t->g.ctx, key, label, st);
}

int cprof_model_cupti_only_stats(const struct cprof_model *m, int64_t proc,
				 int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st),
				 void *ctx)
{
	struct cprof_keyed *kd = malloc((m->nrt ? m->nrt : 1) * sizeof(*kd));
	struct trimmed t = { { m, fn, ctx }, "" };
	size_t i, n = 0;
	int ret;

	if (kd == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nrt; i++) {
		const struct cprof_rt *r = &m->rt[i];

		/* a record carrying our external id is a hooked call: counted once, as the hook's */
		if ((proc && r->proc != proc) || r->name == CPROF_NO_ID || cprof_model_string(m, r->name) == NULL ||
		    (r->corr != CPROF_NO_ID && cprof_model_has_ext(m, r->proc, r->corr)))
			continue;
		kd[n].key = r->name;
		kd[n++].d = (int64_t)(r->end - r->start);
	}
	ret = cprof_model_group_stats(kd, n, trimmed_label, trimmed_relay, &t);
	free(kd);
	return ret;
}
