/* The CI gate's conditions (expected verdict, GPU idle, regressions against a baseline) and the ranked changes. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/cprof.h"
#include "report/model/gates.h"

/* kernels below this share of the baseline's GPU time are too small to gate on one by one */
#define KERNEL_GATE_SHARE 0.01

double cprof_change_pct(double old, double now)
{
	return old > 0 ? 100 * (now / old - 1) : NAN;
}

void cprof_fmt_change(char *buf, size_t size, double old, double now)
{
	if (old <= 0)
		snprintf(buf, size, "%s", now > 0 ? "new" : "-");
	else if (now <= 0)
		snprintf(buf, size, "gone");
	else if (now / old > 11)
		/* past +1000% a percentage says less than a factor, and overflows its column */
		snprintf(buf, size, now / old < 100 ? "x%.1f" : "x%.0f", now / old);
	else
		snprintf(buf, size, "%+.1f%%", 100 * (now / old - 1));
}

/* synchronising calls wait for the GPU: their host time is GPU time seen from the host */
static int waits(const struct cprof_change *c)
{
	return c->api && (strstr(c->name, "Synchronize") != NULL || strstr(c->name, "Query") != NULL);
}

static int rank(const struct cprof_change *c)
{
	return !c->api ? 0 : waits(c) ? 2 : 1;
}

static int by_rank(const void *a, const void *b)
{
	const struct cprof_change *x = a, *y = b;
	double dx = fabs(x->new_ns - x->old_ns), dy = fabs(y->new_ns - y->old_ns);

	if (rank(x) != rank(y))
		return rank(x) - rank(y);
	return dx < dy ? 1 : dx > dy ? -1 : strcmp(x->name, y->name);
}

int cprof_changes_build(const struct cprof_summary *old, const struct cprof_summary *now, struct cprof_change **out,
			size_t *n)
{
	struct cprof_change *c = calloc(old->n + now->n + 1, sizeof(*c));
	size_t i, k = 0;

	*out = NULL;
	*n = 0;
	if (c == NULL)
		return -ENOMEM;
	for (i = 0; i < old->n; i++) {
		const struct cprof_kstat *o = &old->names[i], *m = cprof_summary_find(now, o->name, o->api);

		c[k] = (struct cprof_change){ o->name, o->api, o->total_ns, m ? m->total_ns : 0, o->count, m ? m->count : 0 };
		if (c[k].old_ns != c[k].new_ns || c[k].old_n != c[k].new_n)
			k++;
	}
	for (i = 0; i < now->n; i++)
		if (cprof_summary_find(old, now->names[i].name, now->names[i].api) == NULL)
			c[k++] = (struct cprof_change){ now->names[i].name, now->names[i].api, 0, now->names[i].total_ns, 0,
							now->names[i].count };
	qsort(c, k, sizeof(*c), by_rank);
	*out = c;
	*n = k;
	return 0;
}

static void fmt_value(char *buf, size_t size, double v, const char *unit)
{
	if (!strcmp(unit, "ns"))
		cprof_fmt_dur(buf, size, v);
	else if (!strcmp(unit, "pct"))
		snprintf(buf, size, "%.1f%%", v);
	else
		snprintf(buf, size, "%.0f", v);
}

static struct cprof_gate *add(struct cprof_gate **g, size_t *n, size_t *cap, const char *id, const char *unit)
{
	struct cprof_gate *x;

	if (cprof_grow(g, cap, *n, sizeof(**g)) < 0)
		return NULL;
	x = &(*g)[(*n)++];
	memset(x, 0, sizeof(*x));
	x->id = id;
	x->unit = unit;
	x->baseline = -1;
	return x;
}

/* now against old, allowed pct more */
static void regress(struct cprof_gate *g, double old, double now, double pct)
{
	char a[32], b[32], c[32];

	g->value = now;
	g->baseline = old;
	g->limit = old * (1 + pct / 100);
	fmt_value(g->value_text, sizeof(g->value_text), now, g->unit);
	fmt_value(g->limit_text, sizeof(g->limit_text), g->limit, g->unit);
	fmt_value(a, sizeof(a), now, g->unit);
	fmt_value(b, sizeof(b), old, g->unit);
	if (old <= 0) {
		snprintf(g->detail, sizeof(g->detail), "%s, none in the baseline", a);
		return;
	}
	g->failed = now > g->limit;
	cprof_fmt_change(c, sizeof(c), old, now);
	snprintf(g->detail, sizeof(g->detail), "%s vs baseline %s (%s, allowed +%.1f%%)", a, b, c, pct);
}

int cprof_gates_build(const struct cprof_summary *now, const struct cprof_summary *old, const struct cprof_gate_opts *o,
		      struct cprof_gate **out, size_t *n)
{
	struct cprof_gate *g = NULL, *x;
	size_t cap = 0, i;
	int failed = 0;

	*n = 0;
	if (o->expect) {
		if ((x = add(&g, n, &cap, "verdict", "verdict")) == NULL)
			goto nomem;
		snprintf(x->what, sizeof(x->what), "verdict");
		snprintf(x->value_text, sizeof(x->value_text), "%s", now->v.verdict);
		snprintf(x->limit_text, sizeof(x->limit_text), "%s", o->expect);
		x->value = now->v.busy_pct;
		x->failed = strcmp(o->expect, now->v.verdict) != 0;
		snprintf(x->detail, sizeof(x->detail), "%s (GPU busy %.1f%%), expected %s", now->v.verdict, now->v.busy_pct,
			 o->expect);
	}
	if (o->max_idle >= 0) {
		if ((x = add(&g, n, &cap, "gpu_idle", "pct")) == NULL)
			goto nomem;
		snprintf(x->what, sizeof(x->what), "GPU idle");
		x->value = 100 - now->v.busy_pct;
		x->limit = o->max_idle;
		fmt_value(x->value_text, sizeof(x->value_text), x->value, "pct");
		fmt_value(x->limit_text, sizeof(x->limit_text), x->limit, "pct");
		x->failed = x->value > x->limit;
		snprintf(x->detail, sizeof(x->detail), "%.1f%% of the window, allowed %.1f%%", x->value, x->limit);
	}
	if (old) {
		if ((x = add(&g, n, &cap, "kernel_time", "ns")) == NULL)
			goto nomem;
		snprintf(x->what, sizeof(x->what), "total GPU kernel time");
		regress(x, old->kernel_ns, now->kernel_ns, o->max_reg);
		if ((x = add(&g, n, &cap, "kernel_launches", "count")) == NULL)
			goto nomem;
		snprintf(x->what, sizeof(x->what), "kernel launches");
		regress(x, (double)old->kernel_count, (double)now->kernel_count, o->max_reg);
		/* the program's own steps (NVTX), when both runs mark them: the time a user waits for */
		if (old->steps && now->steps) {
			if ((x = add(&g, n, &cap, "step_median", "ns")) == NULL)
				goto nomem;
			snprintf(x->what, sizeof(x->what), "median step time");
			regress(x, old->step_median_ns, now->step_median_ns, o->max_reg);
		}
		for (i = 0; i < old->n; i++) {
			const struct cprof_kstat *k = &old->names[i], *m;

			if (k->api || k->total_ns < KERNEL_GATE_SHARE * old->kernel_ns)
				continue;
			m = cprof_summary_find(now, k->name, 0);
			if (m == NULL)
				continue;
			if ((x = add(&g, n, &cap, "kernel", "ns")) == NULL)
				goto nomem;
			x->name = k->name;
			snprintf(x->what, sizeof(x->what), "kernel %.200s time", cprof_tx(k->name));
			regress(x, k->total_ns, m->total_ns, o->max_reg);
		}
	}
	for (i = 0; i < *n; i++)
		failed += g[i].failed;
	*out = g;
	return failed;
nomem:
	free(g);
	*out = NULL;
	*n = 0;
	return -ENOMEM;
}
