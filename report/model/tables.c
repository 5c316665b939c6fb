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

/* a hooked library call (cuBLAS, not the runtime itself): the runtime calls CUPTI saw inside it are its own */
static int library_call(const char *api)
{
	return api && strncmp(api, "cuda", 4) != 0 && strncmp(api, "__cuda", 6) != 0 && strncmp(api, "cu", 2) == 0;
}

struct lib_call {
	int64_t proc, corr, name;
};

static int cmp_lib_call(const void *a, const void *b)
{
	const struct lib_call *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* "inside" keys pack (library call's name id, runtime name id): string ids are row ids, well under 2^31 */
#define INSIDE_KEY(lib, rt) (INT64_MIN / 2 + ((lib) << 31) + (rt))

struct inside {
	struct trimmed t;
	const struct lib_call *libs;
	size_t nlibs;
	char buf[320];
};

static const char *inside_label(void *arg, int64_t key)
{
	struct inside *in = arg;
	int64_t k = key - INT64_MIN / 2, lib, rt;
	const char *r, *l;

	if (key >= 0)
		return trimmed_label(&in->t, key);
	lib = k >> 31;
	rt = k & ((1LL << 31) - 1);
	r = trimmed_label(&in->t, rt);
	l = cprof_model_string(in->t.g.m, lib);
	if (r == NULL || l == NULL)
		return NULL;
	snprintf(in->buf, sizeof(in->buf), "%s (inside %s)", r, l);
	return in->buf;
}

static int inside_relay(void *arg, int64_t key, const char *label, const struct cprof_stats *st)
{
	struct inside *in = arg;

	return in->t.g.fn(in->t.g.ctx, key, label, st);
}

int cprof_model_cupti_only_stats(const struct cprof_model *m, int64_t proc,
				 int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st),
				 void *ctx)
{
	struct cprof_keyed *kd = malloc((m->nrt ? m->nrt : 1) * sizeof(*kd));
	struct lib_call *libs = NULL;
	struct inside in = { { { m, fn, ctx }, "" }, NULL, 0, "" };
	size_t i, n = 0, nlibs = 0, cap = 0;
	int ret = -ENOMEM;

	if (kd == NULL)
		return -ENOMEM;
	/* the hooked library calls, by (process, our correlation id) */
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];

		if (c->corr == CPROF_NO_ID || (proc && c->proc != proc) || !library_call(cprof_model_string(m, c->name)))
			continue;
		if (cprof_grow(&libs, &cap, nlibs, sizeof(*libs)) < 0)
			goto out;
		libs[nlibs++] = (struct lib_call){ c->proc, c->corr, c->name };
	}
	if (nlibs)
		qsort(libs, nlibs, sizeof(*libs), cmp_lib_call);
	for (i = 0; i < m->nrt; i++) {
		const struct cprof_rt *r = &m->rt[i];

		if ((proc && r->proc != proc) || r->name == CPROF_NO_ID || cprof_model_string(m, r->name) == NULL)
			continue;
		if (r->ext != CPROF_NO_ID) {
			struct lib_call key = { r->proc, r->ext, 0 }, *lib;

			/* the hooked call's own record is counted once, as the hook's; a runtime call a hooked
			 * library made is shown inside it */
			lib = nlibs ? bsearch(&key, libs, nlibs, sizeof(*libs), cmp_lib_call) : NULL;
			if (lib == NULL || lib->name >= (1LL << 31) || r->name >= (1LL << 31) || lib->name < 0 || r->name < 0)
				continue;
			kd[n].key = INSIDE_KEY(lib->name, r->name);
		} else {
			kd[n].key = r->name;
		}
		kd[n++].d = (int64_t)(r->end - r->start);
	}
	ret = cprof_model_group_stats(kd, n, inside_label, inside_relay, &in);
out:
	free(kd);
	free(libs);
	return ret;
}

int cprof_model_driver_only_stats(const struct cprof_model *m, int64_t proc,
				  int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st),
				  void *ctx)
{
	struct cprof_keyed *kd;
	struct trimmed t = { { m, fn, ctx }, "" };
	size_t i, n = 0;
	int ret;

	if (!m->drv_api_loaded)
		return -EIO;
	if ((kd = malloc((m->ndrv_api ? m->ndrv_api : 1) * sizeof(*kd))) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->ndrv_api; i++) {
		const struct cprof_drv_api *r = &m->drv_api[i];

		/* the SQL joined StringIds: a call whose name is not there is not counted */
		if ((proc && r->proc != proc) || cprof_model_string(m, r->name) == NULL)
			continue;
		kd[n].key = r->name;
		kd[n++].d = r->d;
	}
	ret = cprof_model_group_stats(kd, n, trimmed_label, relay, &t.g); /* t.g is t's first member */
	free(kd);
	return ret;
}
