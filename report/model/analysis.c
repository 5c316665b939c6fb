/* The verdict from a profile: union of GPU busy time, HTA-style idle breakdown, Self CPU vs Self GPU, phases. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "common/cuda-errors.h"
#include "report/model/analysis.h"
#include "report/cprof.h"
#include "report/model/model.h"

#define PHASE_MIN_KERNELS 8   /* a piece between two syncs with fewer kernels is folded into the next */
#define PHASE_MAX_PIECES 128 /* pieces analysed at most */

void cprof_thresholds_default(struct cprof_thresholds *t)
{
	memset(t, 0, sizeof(*t));
	t->compute_pct = 80;
	t->overhead_pct = 50;
	t->host_wait_share = 50;
	/* HTA's default for "kernel wait": gaps under 30 us between kernels on a stream */
	t->kernel_wait_ns = 30000;
	t->include_startup = 0;
}

/* the process filter every window below shares: proc 0 is every process */
#define IN_PROC(x) (proc == 0 || (x).proc == proc)

/* SQL compared times as signed 64-bit integers: a window's end beyond that is the end of time */
static uint64_t clamp_end(uint64_t to)
{
	return to > INT64_MAX ? INT64_MAX : to;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *d, size_t n)
{
	double med;

	if (n == 0)
		return 0;
	/* a selection: a report takes the median of every kernel and launch three times over (its pieces, the merged
	 * phase, the phases together; the run instead when it has no phases), and sorting them was 3% of it */
	if (cprof_median_doubles(d, n, &med) == 0)
		return med;
	if (cprof_radix_sort_doubles(d, n) < 0)
		qsort(d, n, sizeof(*d), cmp_double);
	return n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

struct dvec {
	double *d;
	size_t n, cap;
};

static int dvec_push(struct dvec *v, double x)
{
	if (cprof_grow(&v->d, &v->cap, v->n, sizeof(*v->d)) < 0)
		return -ENOMEM;
	v->d[v->n++] = x;
	return 0;
}

struct gap {
	uint64_t s, e;
};

/* Intervals, then the outermost CUDA calls (cut_only: the synchronising ones) that overlap them: how much
 * of the GPU's starved time the host spent inside the CUDA API (launch cost) rather than in its own code,
 * or how long it waited in syncs while work was queued. */
static uint64_t api_time_in(const struct cprof_model *m, int64_t proc, const struct gap *g, size_t n, uint64_t from,
			    uint64_t to, int cut_only)
{
	uint64_t sum = 0;
	size_t i = 0, c;

	if (n == 0)
		return 0;
	/* a call that began before the window still counts for its part inside it (the sync that waits for
	 * the whole window began before it): the calls just before are looked at too, a bounded few */
	c = cprof_model_calls_from(m, from);
	c = c > 4096 ? c - 4096 : 0;
	for (; c < m->ncalls && m->calls[c].start < to; c++) {
		uint64_t s = m->calls[c].start, e = m->calls[c].end;
		size_t j;

		if (!m->calls[c].outer || !IN_PROC(m->calls[c]) || (cut_only && !m->calls[c].cut))
			continue;
		while (i < n && g[i].e <= s)
			i++;
		for (j = i; j < n && g[j].s < e; j++) {
			uint64_t a = s > g[j].s ? s : g[j].s, b = e < g[j].e ? e : g[j].e;

			if (b > a)
				sum += b - a;
		}
	}
	return sum;
}

/* The part of [s, e) the intervals g (sorted, disjoint) cover; *i: a cursor for calls taken in start order. */
static uint64_t covered(const struct gap *g, size_t n, size_t *i, uint64_t s, uint64_t e)
{
	uint64_t sum = 0;
	size_t j;

	while (*i < n && g[*i].e <= s)
		(*i)++;
	for (j = *i; j < n && g[j].s < e; j++) {
		uint64_t a = s > g[j].s ? s : g[j].s, b = e < g[j].e ? e : g[j].e;

		if (b > a)
			sum += b - a;
	}
	return sum;
}

/* Appends [s, e) to a union of intervals built in start order. */
static int union_add(struct gap **g, size_t *n, size_t *cap, uint64_t s, uint64_t e)
{
	if (e <= s)
		return 0;
	if (*n && s <= (*g)[*n - 1].e) {
		if (e > (*g)[*n - 1].e)
			(*g)[*n - 1].e = e;
		return 0;
	}
	if (cprof_grow(g, cap, *n, sizeof(**g)) < 0)
		return -ENOMEM;
	(*g)[(*n)++] = (struct gap){ s, e };
	return 0;
}

static int cmp_u64q(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Enqueue and end times of ops taken in start order are nearly sorted (only overlapping ops swap): an
 * insertion sort is linear then; past a budget of moves it hands over to qsort. */
static void sort_nearly(uint64_t *a, size_t n)
{
	size_t i, moves = 0, budget = 16 * n + 64;

	for (i = 1; i < n; i++) {
		uint64_t x = a[i];
		size_t j = i;

		while (j > 0 && a[j - 1] > x) {
			a[j] = a[j - 1];
			j--;
			if (++moves > budget) {
				a[j] = x;
				qsort(a, n, sizeof(*a), cmp_u64q);
				return;
			}
		}
		a[j] = x;
	}
}

/* appends [s, e) to a sorted interval list, joining it to the last one when they touch */
static int gap_add(struct gap **g, size_t *n, size_t *cap, uint64_t s, uint64_t e)
{
	if (e <= s)
		return 0;
	if (*n && (*g)[*n - 1].e == s) {
		(*g)[*n - 1].e = e;
		return 0;
	}
	if (cprof_grow(g, cap, *n, sizeof(**g)) < 0)
		return -ENOMEM;
	(*g)[*n].s = s;
	(*g)[(*n)++].e = e;
	return 0;
}

/* Who waits for whom, over [ws, we): a GPU op is queued from the end of the call that launched it (CUPTI's
 * runtime or driver record; its own start when unknown) to its end, and runs from its start to its end.
 * One sweep over the three sorted event lists gives the time the GPU idled with at most one op queued
 * (starved: the host has not given it the next one), idled with more (stalled), and had a backlog; the
 * starved intervals are returned, the queued ones intersected with the host's synchronising calls. */
static int queue_times(const struct cprof_model *m, int64_t proc, uint64_t ws, uint64_t we, struct cprof_verdict *v,
		       struct gap **starved, size_t *nstarved)
{
	uint64_t *q = NULL, *st = NULL, *en = NULL, t = ws, hi = clamp_end(we);
	struct gap *queued = NULL;
	size_t n = 0, i, iq = 0, is = 0, ie = 0, nq = 0, capq = 0, caps = 0;
	int64_t depth = 0, run = 0;
	int ret = -ENOMEM;

	*starved = NULL;
	*nstarved = 0;
	for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < hi; i++)
		n += IN_PROC(m->ops[i]);
	q = malloc((n ? n : 1) * sizeof(*q));
	st = malloc((n ? n : 1) * sizeof(*st));
	en = malloc((n ? n : 1) * sizeof(*en));
	if (q == NULL || st == NULL || en == NULL)
		goto out;
	n = 0;
	for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < hi; i++) {
		const struct cprof_op *o = &m->ops[i];
		uint64_t e = o->end < we ? o->end : we, a = o->enq ? o->enq : o->launch ? o->launch : o->start;

		if (!IN_PROC(*o))
			continue;
		if (a > o->start)
			a = o->start;
		q[n] = a < ws ? ws : a;
		st[n] = o->start;
		en[n++] = e < o->start ? o->start : e;
	}
	sort_nearly(q, n);
	sort_nearly(en, n);
	while (t < we) {
		uint64_t next = we, len;

		if (iq < n && q[iq] < next)
			next = q[iq];
		if (is < n && st[is] < next)
			next = st[is];
		if (ie < n && en[ie] < next)
			next = en[ie];
		len = next - t;
		if (len) {
			if (run == 0 && depth <= 1) {
				v->starved_ns += len;
				if (gap_add(starved, nstarved, &caps, t, next) < 0)
					goto out;
			} else if (run == 0) {
				v->stalled_ns += len;
			}
			if (depth >= 2)
				v->backlog_ns += len;
			if (depth >= 1 && gap_add(&queued, &nq, &capq, t, next) < 0)
				goto out;
		}
		while (iq < n && q[iq] == next) {
			depth++;
			iq++;
		}
		while (is < n && st[is] == next) {
			run++;
			is++;
		}
		while (ie < n && en[ie] == next) {
			depth--;
			run--;
			ie++;
		}
		t = next;
	}
	v->blocked_ns = api_time_in(m, proc, queued, nq, ws, hi, 1);
	ret = 0;
out:
	free(q);
	free(st);
	free(en);
	free(queued);
	if (ret < 0) {
		free(*starved);
		*starved = NULL;
		*nstarved = 0;
	}
	return ret;
}

const char *const cprof_idle_cause_key[CPROF_IDLE__N] = {
	"copy_calls", "cuda_calls", "collectives", "dataloader", "aten_ops", "dynamo", "other_host",
};
const char *const cprof_idle_cause_text[CPROF_IDLE__N] = {
	"copies between host and device", "launch cost inside the CUDA API", "waiting on other processes (collectives)",
	"waiting for input data (DataLoader)", "host time in ATen ops", "Python and Dynamo (torch.compile)",
	"host work between launches",
};

/* which cause a range's time is (PyTorch's op ranges, as --torch-ops records them, or the program's own
 * NVTX ranges of those names); -1: none */
static int range_cause(const char *s)
{
	if (s == NULL)
		return -1;
	if (strstr(s, "gloo:") || strstr(s, "nccl:") || strstr(s, "c10d::") || strstr(s, "record_param_comms") ||
	    strstr(s, "all_reduce") || strstr(s, "allreduce") || strstr(s, "all_gather") || strstr(s, "reduce_scatter") ||
	    strstr(s, "barrier"))
		return CPROF_IDLE_COLL;
	if (strstr(s, "DataLoader"))
		return CPROF_IDLE_DATA;
	if (!strncmp(s, "aten::", 6) || !strncmp(s, "prims::", 7))
		return CPROF_IDLE_ATEN;
	if (strstr(s, "Torch-Compiled Region") || strstr(s, "TorchDynamo") || strstr(s, "CompiledFunction") ||
	    strstr(s, "PythonDispatchMode") || strstr(s, "CompiledFxGraph"))
		return CPROF_IDLE_DYNAMO;
	return -1;
}

/* Intervals [s, e) of one source, clamped to the window; sorted by start and merged into disjoint ones
 * (ivl_norm) they are sets that union, difference and intersection walk in one linear pass each. */
struct ivls {
	struct gap *v;
	size_t n, cap;
};
#define IEV_OVH (CPROF_IDLE__N)
#define IEV_STARVED (CPROF_IDLE__N + 1)
#define IEV_SRC 4 /* sources a cause's intervals come from: calls, runtime records, driver launches, NVTX */

static int ivl_add(struct ivls *l, uint64_t s, uint64_t t, uint64_t ws, uint64_t we)
{
	if (s < ws)
		s = ws;
	if (t > we)
		t = we;
	if (t <= s)
		return 0;
	if (cprof_grow(&l->v, &l->cap, l->n, sizeof(*l->v)) < 0)
		return -ENOMEM;
	l->v[l->n++] = (struct gap){ s, t };
	return 0;
}

/* sorted by start (most sources are already: then no sort) and overlapping ones merged */
static int ivl_norm(struct ivls *l)
{
	size_t i, k = 0;

	for (i = 1; i < l->n && l->v[i - 1].s <= l->v[i].s; i++)
		;
	if (i < l->n && cprof_radix_sort(l->v, l->n, sizeof(*l->v)) < 0)
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		if (k && l->v[i].s <= l->v[k - 1].e) {
			if (l->v[i].e > l->v[k - 1].e)
				l->v[k - 1].e = l->v[i].e;
			continue;
		}
		l->v[k++] = l->v[i];
	}
	l->n = k;
	return 0;
}

/* a | b into *out (all disjoint and sorted); a and b are freed */
static int ivl_union(struct ivls *a, struct ivls *b, struct ivls *out)
{
	size_t i = 0, j = 0;
	struct ivls r = { NULL, 0, 0 };
	int ret = 0;

	while (i < a->n || j < b->n) {
		struct gap x = j >= b->n || (i < a->n && a->v[i].s <= b->v[j].s) ? a->v[i++] : b->v[j++];

		if (r.n && x.s <= r.v[r.n - 1].e) {
			if (x.e > r.v[r.n - 1].e)
				r.v[r.n - 1].e = x.e;
			continue;
		}
		if ((ret = cprof_grow(&r.v, &r.cap, r.n, sizeof(*r.v))) < 0)
			break;
		r.v[r.n++] = x;
	}
	free(a->v);
	free(b->v);
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	if (ret < 0) {
		free(r.v);
		return ret;
	}
	*out = r;
	return 0;
}

/* a \ b in place (both disjoint and sorted), and how much of a was in b */
static uint64_t ivl_subtract(struct ivls *a, const struct ivls *b)
{
	size_t i, j = 0, k = 0;
	uint64_t in = 0;
	struct gap *o = a->v;
	size_t n = a->n;
	struct gap *res;

	/* a piece of a can split in two around a piece of b: at most n + nb pieces */
	if ((res = malloc((n + b->n + 1) * sizeof(*res))) == NULL)
		return UINT64_MAX;
	for (i = 0; i < n; i++) {
		uint64_t s = o[i].s, e = o[i].e;

		while (j < b->n && b->v[j].e <= s)
			j++;
		for (size_t q = j; q < b->n && b->v[q].s < e; q++) {
			uint64_t bs = b->v[q].s > s ? b->v[q].s : s, be = b->v[q].e < e ? b->v[q].e : e;

			if (bs > s)
				res[k++] = (struct gap){ s, bs };
			in += be - bs;
			s = be;
			if (s >= e)
				break;
		}
		if (s < e)
			res[k++] = (struct gap){ s, e };
	}
	free(a->v);
	a->v = res;
	a->n = k;
	a->cap = n + b->n + 1;
	return in;
}

static int idle_causes(const struct cprof_model *m, int64_t proc, uint64_t ws, uint64_t we, const struct gap *g,
		       size_t ng, struct cprof_verdict *v)
{
	/* by cause and source; the starved time and CUPTI's overhead in source 0 of theirs */
	struct ivls l[CPROF_IDLE__N + 2][IEV_SRC], u = { NULL, 0, 0 };
	size_t i;
	int k, src;
	uint64_t hi = clamp_end(we);
	int ret = -ENOMEM;

	memset(v->idle_by, 0, sizeof(v->idle_by));
	if (ng == 0)
		return 0;
	memset(l, 0, sizeof(l));
	for (i = 0; i < ng; i++)
		if (ivl_add(&l[IEV_STARVED][0], g[i].s, g[i].e, ws, we) < 0)
			goto out;
	i = cprof_model_calls_from(m, ws);
	i = i > 4096 ? i - 4096 : 0; /* a call that began before the window counts for its part inside it */
	for (; i < m->ncalls && m->calls[i].start < hi; i++) {
		const struct cprof_call *c = &m->calls[i];

		if (!c->outer || !IN_PROC(*c))
			continue;
		if (ivl_add(&l[c->copy || c->memcpy ? CPROF_IDLE_COPY : CPROF_IDLE_API][0], c->start, c->end, ws, we) < 0)
			goto out;
	}
	/* calls no hook saw are CUDA calls too: CUPTI's runtime records, and the driver records of launches
	 * (Triton, cuda-python) */
	{
		size_t lo = 0, up = m->nrt;

		while (lo < up) { /* the first record starting at ws or later; a few before it may reach in */
			size_t mid = lo + (up - lo) / 2;

			if (m->rt[mid].start < ws)
				lo = mid + 1;
			else
				up = mid;
		}
		i = lo > 4096 ? lo - 4096 : 0;
	}
	for (; i < m->nrt && m->rt[i].start < hi; i++)
		if (IN_PROC(m->rt[i]) && m->rt[i].end > ws &&
		    ivl_add(&l[CPROF_IDLE_API][1], m->rt[i].start, m->rt[i].end, ws, we) < 0)
			goto out;
	for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < hi; i++) {
		const struct cprof_op *o = &m->ops[i];

		if (IN_PROC(*o) && o->via == 2 && !o->hooked && o->enq > o->launch &&
		    ivl_add(&l[CPROF_IDLE_API][2], o->launch, o->enq, ws, we) < 0)
			goto out;
	}
	for (i = 0; i < m->nnvtx && m->nvtx[i].start < hi; i++) {
		const struct cprof_nvtx_range *r = &m->nvtx[i];
		int k;

		const char *name;
		uint64_t end;

		if (!IN_PROC(*r) || r->open || (k = range_cause(name = cprof_model_string(m, r->text))) < 0)
			continue;
		end = r->end;
		/* Dynamo's frame evaluation runs from its cache lookup to the end of the compiled region it
		 * dispatches to: the guards between them are Dynamo's too */
		if (!strcmp(name, "TorchDynamo Cache Lookup")) {
			size_t j;

			for (j = i + 1; j < m->nnvtx && j < i + 64 && m->nvtx[j].start < r->end + 1000000; j++) {
				const char *o = cprof_model_string(m, m->nvtx[j].text);

				if (m->nvtx[j].proc != r->proc || m->nvtx[j].tid != r->tid || o == NULL)
					continue;
				if (!strcmp(o, "TorchDynamo Cache Lookup"))
					break;
				if (!strncmp(o, "Torch-Compiled Region", 21) && !m->nvtx[j].open) {
					end = m->nvtx[j].end > end ? m->nvtx[j].end : end;
					break;
				}
			}
		}
		if (end <= ws)
			continue;
		if (ivl_add(&l[k][3], r->start, end, ws, we) < 0)
			goto out;
	}
	for (i = 0; i < m->novh && m->ovh[i].start < hi; i++)
		if (IN_PROC(m->ovh[i]) && ivl_add(&l[IEV_OVH][0], m->ovh[i].start, m->ovh[i].end, ws, we) < 0)
			goto out;
	/* each moment of the starved time outside CUPTI's overhead goes to the first cause (in enum order)
	 * whose intervals cover it, the rest to the host: set differences in one pass each, no sort */
	for (k = 0; k < CPROF_IDLE__N + 2; k++)
		for (src = 0; src < IEV_SRC; src++)
			if (ivl_norm(&l[k][src]) < 0)
				goto out;
	u = l[IEV_STARVED][0];
	memset(&l[IEV_STARVED][0], 0, sizeof(l[IEV_STARVED][0]));
	if (ivl_subtract(&u, &l[IEV_OVH][0]) == UINT64_MAX)
		goto out;
	for (k = 0; k < CPROF_IDLE_HOST; k++) {
		uint64_t in;

		for (src = 1; src < IEV_SRC; src++)
			if (ivl_union(&l[k][0], &l[k][src], &l[k][0]) < 0)
				goto out;
		if ((in = ivl_subtract(&u, &l[k][0])) == UINT64_MAX)
			goto out;
		v->idle_by[k] += in;
	}
	for (i = 0; i < u.n; i++)
		v->idle_by[CPROF_IDLE_HOST] += u.v[i].e - u.v[i].s;
	ret = 0;
out:
	for (k = 0; k < CPROF_IDLE__N + 2; k++)
		for (src = 0; src < IEV_SRC; src++)
			free(l[k][src].v);
	free(u.v);
	return ret;
}

/* copies between host and device (CUPTI kinds HtoD, DtoH, HtoA, AtoH, HtoH): what pinned memory and
 * asynchronous copies can speed up */
static int host_copy(const struct cprof_op *o)
{
	return o->kind == CPROF_OP_MEMCPY && (o->copy == 1 || o->copy == 2 || o->copy == 3 ||
					      o->copy == 4 || o->copy == 9);
}

/* The cause is the largest measured share of the GPU's starved time (docs/verdict.md); a GPU whose own
 * time is mostly host<->device copies is limited by them whatever the host did. */
static int pick_cause(const struct cprof_verdict *v)
{
	uint64_t share[CPROF_IDLE__N];
	int k, best = CPROF_IDLE_HOST;

	if (v->copy_ns && v->copy_ns * 2 >= v->busy_ns)
		return CPROF_IDLE_COPY;
	memcpy(share, v->idle_by, sizeof(share));
	/* a program running torch.compile'd code: the host time outside any op between its compiled calls is
	 * the Python that calls them (the loop, torch.compile's wrapper, guards outside the lookup's range) */
	if (share[CPROF_IDLE_DYNAMO]) {
		share[CPROF_IDLE_DYNAMO] += share[CPROF_IDLE_HOST];
		share[CPROF_IDLE_HOST] = 0;
	}
	for (k = 0; k < CPROF_IDLE__N; k++)
		if (share[k] > share[best] || (share[k] == share[best] && k < best))
			best = k;
	return best;
}

/* The host's time between launches, but its threads were off the CPU most of the window: neither running nor
 * waiting for a core (their schedstat run and wait, CPROF_COST) for over half of it: it slept or blocked (a timer,
 * I/O, a lock), it did not work. A helper's defect hunt (2026-12-06): a loop sleeping 200 us between launches got
 * "the host is busy", its threads running 7% of the window, where a busy loop's ran 79%. One process's threads only:
 * the run's figure over several processes adds up theirs. */
static void set_cause(const struct cprof_model *m, int64_t proc, struct cprof_verdict *v, int cause)
{
	uint64_t window = v->end > v->start ? v->end - v->start : 0, on = v->cost.app_run_ns + v->cost.app_wait_ns;

	v->host_off_cpu = cause == CPROF_IDLE_HOST && (proc != 0 || m->nprocs <= 1) && v->cost.measured && window > 0 &&
			  v->cost.app_run_ns > 0 && on * 2 < window;
	if (v->host_off_cpu)
		snprintf(v->cause, sizeof(v->cause), "the host off the CPU between launches (its threads ran %.0f%% of the window)",
			 100.0 * (double)v->cost.app_run_ns / (double)window);
	else
		snprintf(v->cause, sizeof(v->cause), "%s", cprof_idle_cause_text[cause]);
}

/* launch-bound, yet it already replays CUDA graphs: the advice is what is left around them */
static void graph_advice(struct cprof_verdict *v)
{
	snprintf(v->advice, sizeof(v->advice),
		 "it already replays CUDA graphs (%llu replays): what is left is the work around them, the launches "
		 "outside the graphs and the host's time per replay; capture more of each step, or give each replay "
		 "more work", (unsigned long long)(v->graph_replays ? v->graph_replays : v->graph_launches));
}

/* The advice for a cause, less what the program already does (its copies already pinned, asynchronous or
 * on their own streams; CUDA graphs already replayed). */
static void advise(struct cprof_verdict *v, int cause)
{
	char *a = v->advice;
	size_t z = sizeof(v->advice), o = 0;

	switch (cause) {
	case CPROF_IDLE_COPY: {
		const char *parts[3];
		int np = 0, i;

		if (v->copies_pageable)
			parts[np++] = "pinned host memory (cudaMallocHost, cudaHostRegister)";
		if (v->copies_sync_calls)
			parts[np++] = "asynchronous copies (cudaMemcpyAsync)";
		if (v->copies_on_kernel_streams || v->copies_sync_calls)
			parts[np++] = "copies on their own streams, overlapped with compute";
		if (np == 0) {
			snprintf(a, z, "copies dominate, and they are already pinned, asynchronous and on their own streams: "
				 "move fewer bytes (keep data on the GPU, batch small copies, lower precision)");
			break;
		}
		o = (size_t)snprintf(a, z, "copies dominate: use");
		for (i = 0; i < np && o < z; i++)
			o += (size_t)snprintf(a + o, z - o, "%s%s", i == 0 ? " " : i == np - 1 ? " and " : ", ", parts[i]);
		break;
	}
	case CPROF_IDLE_API:
		if (v->graph_replays || v->graph_launches)
			graph_advice(v);
		else
			snprintf(a, z, "batch more work per launch, fuse ops, or capture a CUDA graph");
		break;
	case CPROF_IDLE_COLL:
		snprintf(a, z, "the host waits in collectives for the other processes: overlap communication with compute "
			 "(asynchronous collectives, DDP's buckets, NCCL on the GPU), and look at the slowest rank");
		break;
	case CPROF_IDLE_DATA:
		snprintf(a, z, "the loop waits for its next batch: load data in parallel (DataLoader num_workers, "
			 "persistent_workers, prefetch_factor) and pin it (pin_memory) so that copies overlap");
		break;
	case CPROF_IDLE_ATEN:
		snprintf(a, z, "host time in ATen ops (dispatch, small ops): fewer and larger ops, torch.compile, or "
			 "CUDA graphs");
		break;
	case CPROF_IDLE_DYNAMO:
		snprintf(a, z, "host time in torch.compile's Python wrappers and guards: avoid recompiles "
			 "(torch._dynamo.explain, mark_dynamic), or mode=\"reduce-overhead\" to replay CUDA graphs");
		break;
	default:
		if (v->host_off_cpu)
			snprintf(a, z, "the launching thread sleeps or blocks between launches (a timer, I/O, a lock): have the "
				 "work ready before the GPU needs it, or overlap that wait with queued GPU work");
		else
			snprintf(a, z, "the host is busy outside CUDA between launches: move that work off the launching thread or overlap it");
	}
}


/* The rule of docs/verdict.md: who waits for whom. */
static void decide(struct cprof_verdict *v, const struct cprof_thresholds *t)
{
	uint64_t win = v->end > v->start ? v->end - v->start : 0;

	if (v->kernels + v->memcpys + v->memsets == 0) {
		snprintf(v->verdict, sizeof(v->verdict), "no-gpu-activity");
		snprintf(v->advice, sizeof(v->advice), "no GPU work was recorded");
		return;
	}
	if (v->busy_pct >= t->compute_pct ||
	    (v->blocked_ns > v->starved_ns && v->blocked_ns * 100 >= (uint64_t)((100 - t->compute_pct) * win))) {
		/* the GPU is saturated, or the host spends more time waiting for it than it waits for the host */
		snprintf(v->verdict, sizeof(v->verdict), "compute-bound");
		/* copy advice only when the GPU's own time is mostly copies: the host's time in copy calls is
		 * not what limits a saturated GPU */
		if (v->copy_ns && v->copy_ns * 2 >= v->busy_ns)
			advise(v, CPROF_IDLE_COPY);
		else
			snprintf(v->advice, sizeof(v->advice),
				 "the GPU is the bottleneck: speed up the top kernels (precision, tensor cores, fusion), not the launches");
	} else if (v->starved_ns >= v->stalled_ns && v->starved_ns >= v->blocked_ns) {
		/* the GPU's queue runs dry: the host cannot issue work as fast as the GPU does it, whatever the
		 * utilisation and whichever HTA bucket the short gaps fall into */
		snprintf(v->verdict, sizeof(v->verdict), "overhead-bound");
		advise(v, pick_cause(v));
	} else {
		snprintf(v->verdict, sizeof(v->verdict), "mixed");
		snprintf(v->advice, sizeof(v->advice),
			 "the GPU idles with work queued (dependencies between streams, events): see the phases and the idle breakdown");
	}
}

/* kernels, copies, memsets and their times, of the ops that start in [from, to) */
static void gpu_counts(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to, struct cprof_verdict *v)
{
	size_t i;

	v->kernels = v->memcpys = v->memsets = v->self_gpu_ns = v->kernel_ns = v->copy_ns = 0;
	for (i = cprof_model_ops_from(m, from); i < m->nops && m->ops[i].start < to; i++) {
		const struct cprof_op *o = &m->ops[i];

		if (!IN_PROC(*o))
			continue;
		v->self_gpu_ns += o->end - o->start;
		if (o->kind == CPROF_OP_KERNEL) {
			v->kernels++;
			v->kernel_ns += o->end - o->start;
		} else if (o->kind == CPROF_OP_MEMCPY) {
			v->memcpys++;
			if (host_copy(o))
				v->copy_ns += o->end - o->start;
		} else {
			v->memsets++;
		}
	}
}

/* warm-up: the first instance of each repeating kernel pays lazy module loading, library heuristics,
 * workspace allocation. Steady state starts once every kernel name seen at least 3 times ran once:
 * returns that time (the latest first end), 0 when no name repeats. */
static int warm_end(const struct cprof_model *m, int64_t proc, uint64_t ws, uint64_t we, uint64_t *warm)
{
	uint64_t *first = NULL, *count = NULL;
	size_t i;
	int have = 0;

	*warm = 0;
	if (m->nknames == 0)
		return 0;
	first = malloc(m->nknames * sizeof(*first));
	count = calloc(m->nknames, sizeof(*count));
	if (first == NULL || count == NULL) {
		free(first);
		free(count);
		return -ENOMEM;
	}
	for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < we; i++) {
		const struct cprof_op *o = &m->ops[i];

		if (o->kind != CPROF_OP_KERNEL || !IN_PROC(*o) || o->kname < 0 || (size_t)o->kname >= m->nknames)
			continue;
		if (count[o->kname]++ == 0 || o->end < first[o->kname])
			first[o->kname] = o->end;
	}
	for (i = 0; i < m->nknames; i++)
		if (count[i] >= 3 && (!have || first[i] > *warm)) {
			*warm = first[i];
			have = 1;
		}
	free(first);
	free(count);
	return have;
}

/* Version queries answer without a driver (cudaDriverGetVersion gives 0): their success says nothing. */
static int answers_without_driver(const char *api)
{
	return !strcmp(api, "cudaDriverGetVersion") || !strcmp(api, "cudaRuntimeGetVersion");
}

/* the calls of one (name, return code): SQL's GROUP BY name, returnValue (a NULL code is 0's twin: both
 * count as calls that worked) */
struct api_code {
	const char *api;
	int64_t name; /* the string's id: calls are grouped by it first, integers, then the few groups by text */
	int32_t code;
	uint64_t first, n;
};

static int cmp_id_code(const void *a, const void *b)
{
	const struct api_code *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* g[0..n) sorted by cmp: runs of equal (same) merged into their first (the earliest call), counts added */
static size_t merge_runs(struct api_code *g, size_t n, int (*same)(const struct api_code *, const struct api_code *))
{
	size_t u = 0;

	for (size_t i = 0; i < n; i++)
		if (u > 0 && same(&g[u - 1], &g[i]))
			g[u - 1].n += g[i].n;
		else
			g[u++] = g[i];
	return u;
}

static int same_id_code(const struct api_code *x, const struct api_code *y)
{
	return x->name == y->name && x->code == y->code;
}

static int same_api_code(const struct api_code *x, const struct api_code *y)
{
	return x->code == y->code && !strcmp(x->api, y->api);
}

static int cmp_api_code(const void *a, const void *b)
{
	const struct api_code *x = a, *y = b;
	int c = strcmp(x->api, y->api);

	if (c)
		return c;
	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* by first call, ties in (name, code) order, as ORDER BY min(start) after the GROUP BY */
static int cmp_first_call(const void *a, const void *b)
{
	const struct api_code *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return cmp_api_code(a, b);
}

/* No GPU op in the window: say why. CUDA that never came up (every call failed) is cuda-unavailable, with
 * the calls and their codes; otherwise the reason GPU records are missing, or that there was no GPU work. */
static void explain_no_gpu(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to, struct cprof_verdict *v)
{
	char first[160] = "", list[sizeof(v->advice)] = "";
	const char *note;
	uint64_t ok = 0, failed = 0, calls = 0, hi = clamp_end(to);
	struct api_code *g = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*g));
	size_t used = 0, n = 0, u = 0, i;

	for (i = cprof_model_calls_from(m, from); g && i < m->ncalls && m->calls[i].start < hi; i++) {
		const struct cprof_call *c = &m->calls[i];
		const char *api = cprof_model_string(m, c->name);

		if (!IN_PROC(*c) || c->cls == CPROF_CALL_NVTX || api == NULL)
			continue;
		g[n++] = (struct api_code){ api, c->name, c->ret, c->start, 1 };
	}
	if (n) {
		/* by id first (strcmp over 800k calls was 0.4 s of a 3 s report), then by text: a name may have two ids */
		qsort(g, n, sizeof(*g), cmp_id_code);
		u = merge_runs(g, n, same_id_code);
		qsort(g, u, sizeof(*g), cmp_api_code);
		u = merge_runs(g, u, same_api_code);
		qsort(g, u, sizeof(*g), cmp_first_call);
	}
	for (i = 0; i < u; i++) {
		const char *api = g[i].api;
		int code = g[i].code;
		uint64_t cn = g[i].n;
		char nc[96];

		calls += cn;
		if (code == 0) {
			if (!answers_without_driver(api))
				ok += cn;
			continue;
		}
		failed += cn;
		cprof_name_code(nc, sizeof(nc), api, code);
		if (first[0] == '\0')
			snprintf(first, sizeof(first), "%s returned %s", api, nc);
		if (used < sizeof(list) - 1)
			used += snprintf(list + used, sizeof(list) - used, "%s%s %d x%llu", used ? ", " : "", api, code,
					 (unsigned long long)cn);
	}
	free(g);
	if (used >= sizeof(list) - 1)
		snprintf(list + sizeof(list) - 5, 5, "...");
	if (ok == 0 && failed > 0) {
		snprintf(v->verdict, sizeof(v->verdict), "cuda-unavailable");
		snprintf(v->cause, sizeof(v->cause), "%s", first);
		snprintf(v->advice, sizeof(v->advice), "%llu CUDA call(s), none brought CUDA up; failed: %s",
			 (unsigned long long)calls, list);
		return;
	}
	if (calls == 0 && m->recording_opt && m->recording_opt[0] && m->rec.n == 0) {
		/* recorded in windows, and none opened: that is what there is to say, not that the program made no call */
		const char *o = m->recording_opt;

		snprintf(v->cause, sizeof(v->cause), "no recording window opened (%.100s)", o);
		if (!strncmp(o, "--on-demand", 11))
			snprintf(v->advice, sizeof(v->advice), "nothing was recorded: no 'cprof capture' asked for a window "
				 "while it ran (--on-demand)");
		else if (!strncmp(o, "--delay", 7) || !strncmp(o, "--duration", 10))
			snprintf(v->advice, sizeof(v->advice), "nothing was recorded: the run ended before its window (%.150s) "
				 "began", o);
		else if (!strncmp(o, "--steps", 7))
			snprintf(v->advice, sizeof(v->advice), "nothing was recorded: the program did not reach the steps of "
				 "%.150s (NVTX step ranges, as the report finds steps)", o);
		else if (!strcmp(o, "--capture-range cudaProfilerApi"))
			snprintf(v->advice, sizeof(v->advice), "nothing was recorded: the program never called "
				 "cudaProfilerStart or cuProfilerStart (--capture-range cudaProfilerApi)");
		else
			snprintf(v->advice, sizeof(v->advice), "nothing was recorded: the program never pushed the NVTX range "
				 "of %.150s", o);
		return;
	}
	if (calls == 0) {
		snprintf(v->advice, sizeof(v->advice), "the program made no CUDA call that cprof saw");
		return;
	}
	/* a kill leaves no chance to send what was still in the rings: nothing recorded is not nothing queued */
	if (m->ended_killed) {
		snprintf(v->advice, sizeof(v->advice), "no GPU work was recorded: a process was killed before it could send "
			 "what it had (lost uncounted)");
		return;
	}
	if (m->cupti_recording) {
		snprintf(v->advice, sizeof(v->advice), "the program queued no GPU work (CUPTI was recording)");
		return;
	}
	note = m->gpu_note ? m->gpu_note : "";
	snprintf(v->advice, sizeof(v->advice), "no GPU records: %s", note[0] ? note : "CUPTI did not report any");
}

/* append from's values to to */
static int dvec_add(struct dvec *to, const struct dvec *from)
{
	for (size_t i = 0; i < from->n; i++)
		if (dvec_push(to, from->d[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* The first half of cprof_analyse: the run's bounds, the GPU op counts and the verdict's window (v->start, v->end:
 * start-up, warm-up and a graph's set-up left out). The headline needs only this of the whole run when it has
 * phases (their verdicts are the run's), so the rest, analyse_rest, is done only where it is used. */
static int analyse_window(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to,
			  const struct cprof_thresholds *t, struct cprof_verdict *v)
{
	size_t i;
	uint64_t ws, we, hi = clamp_end(to);
	int explicit_window = from != 0, have = 0, any = 0;

	memset(v, 0, sizeof(*v));
	v->step_re = t->step_re;
	/* the run: first to last CUDA activity, calls or GPU ops */
	for (i = cprof_model_calls_from(m, from); i < m->ncalls && m->calls[i].start < hi; i++) {
		const struct cprof_call *c = &m->calls[i];

		if (!IN_PROC(*c))
			continue;
		if (!any || c->start < v->run_start)
			v->run_start = c->start;
		if (!any || c->end > v->run_end)
			v->run_end = c->end;
		any = 1;
	}
	/* calls only CUPTI saw (not hooked, or made inside a library) are part of the run too */
	/* by start: the window's first by a search, not a walk from the run's first (each phase's verdict walked them) */
	for (i = cprof_first_at(m->rt, m->nrt, sizeof(*m->rt), from); i < m->nrt && m->rt[i].start < hi; i++) {
		const struct cprof_rt *r = &m->rt[i];

		if (!IN_PROC(*r))
			continue;
		if (!any || r->start < v->run_start)
			v->run_start = r->start;
		if (!any || r->end > v->run_end)
			v->run_end = r->end;
		any = 1;
	}
	have = 0;
	for (i = cprof_model_ops_from(m, from); i < m->nops && m->ops[i].start < hi; i++) {
		const struct cprof_op *o = &m->ops[i];

		if (!IN_PROC(*o))
			continue;
		if (!have) {
			v->gpu_span_start = o->start;
			v->gpu_span_end = o->end;
		} else if (o->end > v->gpu_span_end) {
			v->gpu_span_end = o->end;
		}
		have = 1;
	}
	if (have) {
		if (!any || v->gpu_span_start < v->run_start)
			v->run_start = v->gpu_span_start;
		if (!any || v->gpu_span_end > v->run_end)
			v->run_end = v->gpu_span_end;
		gpu_counts(m, proc, from, hi, v);
	}
	have = 0;

	if (explicit_window) {
		ws = from;
		we = to;
		if (to != UINT64_MAX && v->run_end > we)
			v->run_end = we;
	} else {
		ws = v->run_start;
		we = v->run_end;
		/* cold start (context creation, library loading) is not the steady state */
		if (!t->include_startup && v->gpu_span_start > v->run_start) {
			v->startup_ns = v->gpu_span_start - v->run_start;
			ws = v->gpu_span_start;
		}
	}
	if (!t->include_startup && v->kernels >= 10) {
		uint64_t warm;
		int w = warm_end(m, proc, ws, clamp_end(we), &warm);

		if (w < 0)
			return -1;
		if (w > 0 && warm > ws && warm < we) {
			uint64_t before = 0;

			for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < clamp_end(warm); i++)
				before += m->ops[i].kind == CPROF_OP_KERNEL && IN_PROC(m->ops[i]);
			/* as long as it is early (at most a fifth of the kernels) */
			if (before * 5 <= v->kernels) {
				v->warmup_ns = warm - ws;
				ws = warm;
				/* the counts describe the steady window */
				gpu_counts(m, proc, ws, clamp_end(we), v);
			}
		}
	}
	/* a CUDA graph made early in the window (its eager warm-up, the capture, the instantiation) is set-up, not
	 * the pace of the replays that follow it: the window starts at the first replay after the last graph made */
	if (!t->include_startup && !explicit_window) {
		uint64_t made = 0, replay = 0, nrep = 0, before = 0;

		for (i = cprof_model_calls_from(m, ws); i < m->ncalls && m->calls[i].start < clamp_end(we); i++) {
			const struct cprof_call *c = &m->calls[i];

			if (!IN_PROC(*c))
				continue;
			if (c->graph == CPROF_GRAPH_CAPTURED || c->graph == CPROF_GRAPH_INSTANTIATED)
				made = c->end, replay = 0, nrep = 0;
			else if (c->graph == CPROF_GRAPH_REPLAY && made && nrep++ == 0)
				replay = c->start;
		}
		if (replay > ws && nrep >= 2) {
			for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < replay; i++)
				before += m->ops[i].kind == CPROF_OP_KERNEL && IN_PROC(m->ops[i]);
			/* as for the warm-up: only when early, at most a fifth of the kernels */
			if (before * 5 <= v->kernels) {
				v->graph_setup_ns = replay - ws;
				v->warmup_ns += replay - ws;
				ws = replay;
				gpu_counts(m, proc, ws, clamp_end(we), v);
			}
		}
	}
	v->start = ws;
	v->end = we;
	return 0;
}

/* The second half of cprof_analyse, over the window analyse_window put in v; keep_kd and keep_ld (when not NULL)
 * get the window's kernel and launch-call durations added, which its medians came from: phases added up take
 * their medians over all of them */
static int analyse_rest(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to,
			const struct cprof_thresholds *t, struct cprof_verdict *v, struct dvec *keep_kd, struct dvec *keep_ld)
{
	struct dvec kd = { 0 }, ld = { 0 };
	int ld_run = 0; /* ld holds the run's launches, the window having none */
	struct gap *gaps = NULL, *run = NULL;
	size_t ngaps = 0, nrun = 0, caprun = 0, runi = 0, i;
	uint64_t cur_s = 0, cur_e = 0, ws = v->start, we = v->end, hi = clamp_end(we);
	int have = 0, ret = -1;

	/* union of GPU ops, and what each gap before an op was waiting for */
	for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < hi; i++) {
		const struct cprof_op *o = &m->ops[i];
		uint64_t s = o->start, e = o->end, launch = o->launch;

		if (!IN_PROC(*o))
			continue;
		if (e > we)
			e = we;
		if (o->kind == CPROF_OP_KERNEL && dvec_push(&kd, (double)(e - s)) < 0)
			goto out;
		/* when the GPU runs other work than copies: a copy call waiting through it waits like a sync */
		if (o->kind != CPROF_OP_MEMCPY && union_add(&run, &nrun, &caprun, s, e) < 0)
			goto out;
		if (!have) {
			cur_s = ws;
			cur_e = ws;
			have = 1;
		}
		if (s > cur_e) {
			uint64_t gap = s - cur_e;

			/* HTA: the GPU waited for the host when the op was launched after the GPU went idle */
			if (launch == 0 || launch > cur_e)
				v->host_wait_ns += gap;
			else if (gap < t->kernel_wait_ns) {
				v->kernel_wait_ns += gap;
			} else {
				v->other_ns += gap;
			}
			v->busy_ns += cur_e - cur_s;
			cur_s = s;
			cur_e = e;
		} else if (e > cur_e) {
			cur_e = e;
		}
	}
	if (have) {
		v->busy_ns += cur_e - cur_s;
		if (we > cur_e)
			v->host_wait_ns += we - cur_e; /* nothing left queued: the GPU waits for the host */
	} else if (we > ws) {
		v->host_wait_ns = we - ws;
	}
	/* what CUPTI itself cost is shown apart, not blamed on the program */
	{
		uint64_t o = cprof_cost_overhead(m, proc, ws, hi, 0), cs = ws, ce = we;

		v->overhead_ns = o;
		/* cprof's cost with CUPTI's switches at the edges of the windows it starts and ends with (their overhead
		 * records: 5 ms of a busy training profile's, 2026-12-07) */
		cprof_cost_outer(m, proc, &cs, &ce);
		cprof_cost_window(m, proc, cs, ce, cprof_cost_overhead(m, proc, cs, clamp_end(ce), 1), &v->cost);
		if (queue_times(m, proc, ws, we, v, &gaps, &ngaps) < 0)
			goto out;
		v->host_wait_ns -= o < v->host_wait_ns ? o : v->host_wait_ns;
		v->starved_ns -= o < v->starved_ns ? o : v->starved_ns;
	}
	for (i = cprof_model_calls_from(m, ws); i < m->ncalls && m->calls[i].start < hi; i++)
		if (m->calls[i].outer && IN_PROC(m->calls[i])) {
			uint64_t d = m->calls[i].end - m->calls[i].start;

			v->self_cpu_ns += d;
			v->api_calls++;
			/* a synchronous copy that waits for queued kernels is a sync for that part, not copy time */
			if (m->calls[i].copy || m->calls[i].memcpy)
				v->copy_call_ns += d - covered(run, nrun, &runi, m->calls[i].start, m->calls[i].end);
			if (m->calls[i].launch)
				v->launch_call_ns += d;
			if (m->calls[i].graph == CPROF_GRAPH_REPLAY)
				v->graph_replays++;
			v->copies_sync_calls += m->calls[i].memcpy;
			if (cprof_model_string(m, m->calls[i].name) &&
			    !strncmp(cprof_model_string(m, m->calls[i].name), "cudaGraphLaunch", 15))
				v->graph_launches++;
		}
	/* what the window's host<->device copies already do: pinned memory, streams of their own */
	{
		uint32_t ks[16];
		size_t nks = 0, j;

		for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < hi; i++) {
			const struct cprof_op *o = &m->ops[i];

			if (!IN_PROC(*o) || o->kind != CPROF_OP_KERNEL)
				continue;
			for (j = 0; j < nks && ks[j] != o->stream; j++)
				;
			if (j == nks && nks < 16)
				ks[nks++] = o->stream;
		}
		for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < hi; i++) {
			const struct cprof_op *o = &m->ops[i];

			if (!IN_PROC(*o) || !host_copy(o))
				continue;
			v->host_copies++;
			v->copies_pageable += (o->copy == 1 ? o->srckind : o->dstkind) == 1;
			for (j = 0; j < nks && ks[j] != o->stream; j++)
				;
			v->copies_on_kernel_streams += j < nks;
		}
	}
	/* launch calls of the whole window: when the GPU is behind, they all happen before the warm-up ends */
	for (i = cprof_model_calls_from(m, v->warmup_ns ? ws - v->warmup_ns : ws); i < m->ncalls && m->calls[i].start < hi;
	     i++)
		if (m->calls[i].launch && IN_PROC(m->calls[i]) &&
		    dvec_push(&ld, (double)(m->calls[i].end - m->calls[i].start)) < 0)
			goto out;
	if (ld.n == 0) {
		ld_run = 1;
		/* all launches came before the window (queued ahead of a busy GPU): take the run's, less those
		 * that carried start-up (a first launch loading its module: 1 ms and more), which are not the
		 * cost of a launch */
		for (i = 0; i < m->ncalls && m->calls[i].start < INT64_MAX; i++)
			if (m->calls[i].launch && IN_PROC(m->calls[i]) && m->calls[i].end - m->calls[i].start < 1000000 &&
			    dvec_push(&ld, (double)(m->calls[i].end - m->calls[i].start)) < 0)
				goto out;
	}
	/* launches the hooks did not see (driver API, a library's own, or no hook at all): their time is that
	 * of CUPTI's runtime or driver record of the launch */
	for (i = cprof_model_ops_from(m, ws); i < m->nops && m->ops[i].start < hi; i++) {
		const struct cprof_op *o = &m->ops[i];

		if (o->kind != CPROF_OP_KERNEL || !IN_PROC(*o) || o->via == 0 || o->enq < o->launch || o->hooked)
			continue;
		if (dvec_push(&ld, (double)(o->enq - o->launch)) < 0)
			goto out;
		v->launch_calls_cupti++;
		v->launch_call_ns += o->enq - o->launch;
	}
	v->med_kernel_ns = median(kd.d, kd.n);
	v->med_launch_ns = median(ld.d, ld.n);
	v->api_in_host_wait_ns = api_time_in(m, proc, gaps, ngaps, ws, hi, 0);
	v->busy_pct = we > ws ? 100.0 * v->busy_ns / (double)(we - ws) : 0;
	v->start = ws;
	v->end = we;
	if (idle_causes(m, proc, ws, we, gaps, ngaps, v) < 0)
		goto out;
	set_cause(m, proc, v, pick_cause(v));
	decide(v, t);
	if (!strcmp(v->verdict, "no-gpu-activity"))
		explain_no_gpu(m, proc, from, to, v);
	ret = 0;
	/* the run's launches stood in for a window with none of its own: pooled with other windows', they would count
	 * twice */
	if ((keep_kd && dvec_add(keep_kd, &kd) < 0) || (keep_ld && !ld_run && dvec_add(keep_ld, &ld) < 0))
		ret = -1;
out:
	free(kd.d);
	free(ld.d);
	free(gaps);
	free(run);
	return ret;
}

/* cprof_analyse, with analyse_rest's keep_kd and keep_ld */
static int analyse(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to, const struct cprof_thresholds *t,
		   struct cprof_verdict *v, struct dvec *keep_kd, struct dvec *keep_ld)
{
	if (analyse_window(m, proc, from, to, t, v) < 0)
		return -1;
	return analyse_rest(m, proc, from, to, t, v, keep_kd, keep_ld);
}

int cprof_analyse(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to, const struct cprof_thresholds *t,
		  struct cprof_verdict *v)
{
	return analyse(m, proc, from, to, t, v, NULL, NULL);
}

int cprof_analyse_window(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to,
			 const struct cprof_thresholds *t, struct cprof_verdict *v)
{
	return analyse_window(m, proc, from, to, t, v);
}

void cprof_verdict_line(const struct cprof_verdict *v, char *buf, size_t size)
{
	char win[32], ml[32], mk[32];
	uint64_t idle = v->host_wait_ns + v->kernel_wait_ns + v->other_ns;
	double win_ns;

	cprof_fmt_dur(win, sizeof(win), (double)(v->end - v->start));
	if (!strcmp(v->verdict, "no-gpu-activity")) {
		snprintf(buf, size, "no-gpu-activity: %s", v->advice);
		return;
	}
	if (!strcmp(v->verdict, "cuda-unavailable")) {
		snprintf(buf, size, "cuda-unavailable: %s; %s", v->cause, v->advice);
		return;
	}
	if (v->med_launch_ns > 0)
		cprof_fmt_dur(ml, sizeof(ml), v->med_launch_ns);
	else
		snprintf(ml, sizeof(ml), "n/a (none timed)");
	cprof_fmt_dur(mk, sizeof(mk), v->med_kernel_ns);
	win_ns = v->end > v->start ? (double)(v->end - v->start) : 0;
	if (!strcmp(v->verdict, "overhead-bound"))
		snprintf(buf, size,
			 "overhead-bound: GPU busy %.0f%% of %s; it idled with no work waiting %.0f%% of the time (it waited "
			 "for the host: %s), the host waited for the GPU %.0f%%; median launch call %s vs median kernel %s -> %s",
			 v->busy_pct, win, win_ns ? 100.0 * v->starved_ns / win_ns : 0.0, v->cause,
			 win_ns ? 100.0 * v->blocked_ns / win_ns : 0.0, ml, mk, v->advice);
	else if (!strcmp(v->verdict, "compute-bound"))
		snprintf(buf, size,
			 "compute-bound: GPU busy %.0f%% of %s; the host waited for the GPU %.0f%% of the time, the GPU for "
			 "the host %.0f%%; median kernel %s vs median launch call %s -> %s",
			 v->busy_pct, win, win_ns ? 100.0 * v->blocked_ns / win_ns : 0.0,
			 win_ns ? 100.0 * v->starved_ns / win_ns : 0.0, mk, ml, v->advice);
	else
		snprintf(buf, size,
			 "mixed: GPU busy %.0f%% of %s; idle with work queued %.0f%%, with no work waiting %.0f%%; of the "
			 "idle time, HTA host wait %.0f%%, kernel wait %.0f%%, other %.0f%% -> %s",
			 v->busy_pct, win, win_ns ? 100.0 * v->stalled_ns / win_ns : 0.0,
			 win_ns ? 100.0 * v->starved_ns / win_ns : 0.0, idle ? 100.0 * v->host_wait_ns / idle : 0.0,
			 idle ? 100.0 * v->kernel_wait_ns / idle : 0.0, idle ? 100.0 * v->other_ns / idle : 0.0, v->advice);
}

static int phases_of(const struct cprof_model *m, int64_t proc, const struct cprof_thresholds *t,
		     const struct cprof_verdict *whole, const struct cprof_step *steps, int nsteps, struct cprof_phase **out,
		     double *med_kernel, double *med_launch);

int cprof_headline(struct cprof_model *m, int64_t proc, const struct cprof_thresholds *t, struct cprof_verdict *v,
		   struct cprof_phase **phases)
{
	struct cprof_verdict whole;
	const struct cprof_step *steps = NULL;
	double med_kernel = 0, med_launch = 0;
	int n, i, same = 1, nsteps;

	*phases = NULL;
	/* the whole run's window first: its phases cut it, and its verdict is the run's only when it has none (the rest
	 * of it, a third of the verdict's time on make bench's synthetic profile, was thrown away for a run with phases) */
	if (analyse_window(m, proc, 0, UINT64_MAX, t, &whole) < 0)
		return -1;
	nsteps = cprof_model_steps(m, proc, t->step_re, &steps);
	whole.steps = nsteps > 1 ? nsteps : 0;
	whole.cold_step = whole.steps && !t->include_startup && cprof_steps_cold(steps, nsteps);
	n = t->include_startup ? 0 : phases_of(m, proc, t, &whole, steps, nsteps, phases, &med_kernel, &med_launch);
	if (n <= 0) {
		if (n < 0 || analyse_rest(m, proc, 0, UINT64_MAX, t, &whole, NULL, NULL) < 0)
			return -1;
		*v = whole;
		return 0;
	}
	/* the steady state is what the phases cover; setup between them is not the program's pace, so
	 * the numbers are the phases' own, added up */
	*v = (*phases)[0].v;
	for (i = 1; i < n; i++) {
		const struct cprof_verdict *p = &(*phases)[i].v;

		v->busy_ns += p->busy_ns;
		v->host_wait_ns += p->host_wait_ns;
		v->kernel_wait_ns += p->kernel_wait_ns;
		v->other_ns += p->other_ns;
		v->overhead_ns += p->overhead_ns;
		cprof_cost_add(&v->cost, &p->cost);
		v->self_cpu_ns += p->self_cpu_ns;
		v->self_gpu_ns += p->self_gpu_ns;
		v->kernel_ns += p->kernel_ns;
		v->kernels += p->kernels;
		v->memcpys += p->memcpys;
		v->memsets += p->memsets;
		v->api_calls += p->api_calls;
		v->warmup_ns += p->warmup_ns;
		v->api_in_host_wait_ns += p->api_in_host_wait_ns;
		v->starved_ns += p->starved_ns;
		v->stalled_ns += p->stalled_ns;
		v->backlog_ns += p->backlog_ns;
		v->blocked_ns += p->blocked_ns;
		v->copy_ns += p->copy_ns;
		v->copy_call_ns += p->copy_call_ns;
		v->launch_call_ns += p->launch_call_ns;
		v->launch_calls_cupti += p->launch_calls_cupti;
		v->graph_replays += p->graph_replays;
		v->graph_setup_ns += p->graph_setup_ns;
		for (int k = 0; k < CPROF_IDLE__N; k++)
			v->idle_by[k] += p->idle_by[k];
		v->copies_pageable += p->copies_pageable;
		v->copies_sync_calls += p->copies_sync_calls;
		v->copies_on_kernel_streams += p->copies_on_kernel_streams;
		v->host_copies += p->host_copies;
		v->graph_launches += p->graph_launches;
		v->end += p->end - p->start; /* the window's length is the phases' lengths added up */
	}
	v->med_kernel_ns = med_kernel;
	v->med_launch_ns = med_launch;
	/* the cause of the phases together: the largest share of their starved time added up */
	if (n > 1) {
		set_cause(m, proc, v, pick_cause(v));
		if (!strcmp(v->verdict, "overhead-bound"))
			advise(v, pick_cause(v));
	}
	v->busy_pct = v->end > v->start ? 100.0 * v->busy_ns / (double)(v->end - v->start) : 0;
	v->run_start = whole.run_start;
	v->run_end = whole.run_end;
	v->steps = whole.steps;
	v->cold_step = whole.cold_step;
	v->startup_ns = (*phases)[0].start - whole.run_start;
	for (i = 1; i < n; i++)
		same &= !strcmp((*phases)[i].v.verdict, (*phases)[0].v.verdict);
	/* the first phase's advice speaks for all: not "capture a CUDA graph" when a later one replays graphs */
	if (same && v->graph_replays && strstr(v->advice, "capture a CUDA graph"))
		graph_advice(v);
	if (!same) {
		uint64_t ob = 0, cb = 0, tot = v->end - v->start;

		for (i = 0; i < n; i++) {
			uint64_t len = (*phases)[i].v.end - (*phases)[i].v.start;

			if (!strcmp((*phases)[i].v.verdict, "overhead-bound"))
				ob += len;
			else if (!strcmp((*phases)[i].v.verdict, "compute-bound"))
				cb += len;
		}
		snprintf(v->verdict, sizeof(v->verdict), "mixed");
		snprintf(v->advice, sizeof(v->advice),
			 "the phases differ (%.0f%% of their time compute-bound, %.0f%% overhead-bound): see each below",
			 tot ? 100.0 * cb / tot : 0.0, tot ? 100.0 * ob / tot : 0.0);
	}
	return n;
}

double cprof_hta_idle_pct(const struct cprof_model *m, int64_t proc)
{
	int64_t first = -1, last = 0, cur_s = 0, cur_e = 0, busy = 0;
	size_t i;
	int have = 0;

	for (i = 0; i < m->nops; i++) {
		/* as HTA: each op rounded inward to whole microseconds, then the union over all streams */
		int64_t s = ((int64_t)m->ops[i].start + 999) / 1000, e = (int64_t)m->ops[i].end / 1000;

		if (!IN_PROC(m->ops[i]))
			continue;
		if (first < 0 || s < first)
			first = s;
		if (e > last)
			last = e;
		if (e <= s)
			continue;
		if (!have || s > cur_e) {
			if (have)
				busy += cur_e - cur_s;
			cur_s = s;
			cur_e = e;
			have = 1;
		} else if (e > cur_e) {
			cur_e = e;
		}
	}
	if (have)
		busy += cur_e - cur_s;
	if (first < 0 || last <= first)
		return -1;
	return 100.0 * (double)(last - first - busy) / (double)(last - first);
}

struct seg {
	uint64_t s, e;
	uint64_t kernels;
};

/* Phases: the run cut at synchronising calls — or at the program's NVTX steps when it has them — short
 * pieces folded into their neighbours, neighbours with the same verdict merged. Returns the number of
 * phases (caller frees *out) or -1. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct drain {
	const struct cprof_model *m;
	uint64_t from, hi, end;
	int any;
};

static int drain_op(void *ctx, const struct cprof_call *c, const struct cprof_op *o)
{
	struct drain *d = ctx;

	/* API_GPU joined the call's name: a call without one launched nothing there */
	if (c->start >= d->from && c->start < d->hi && cprof_model_string(d->m, c->name) && (!d->any || o->end > d->end)) {
		d->end = o->end;
		d->any = 1;
	}
	return 0;
}

/* the last step ends when the GPU work queued before its end is done, not with the teardown: the end
 * of the last GPU op launched by a call made in [from, to), plus 1 (0: none) */
static uint64_t drain_end(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to)
{
	struct drain d = { m, from, clamp_end(to), 0, 0 };

	/* the call index cprof_model_launched builds on first use is a cache: the model is not changed */
	if (cprof_model_launched((struct cprof_model *)m, proc, drain_op, &d) < 0 || !d.any)
		return 0;
	return d.end + 1;
}

/* The pieces cut to the recorded spans (cprof_model_recorded_spans): a piece across a gap becomes one per
 * window it overlaps, a piece outside every window goes. */
static int clip_to_windows(const struct cprof_model *m, int64_t proc, struct seg **fold, size_t *nfold)
{
	uint64_t(*sp)[2] = NULL;
	struct seg *out = NULL;
	size_t n = 0, cap = 0, i;
	int nsp = cprof_model_recorded_spans(m, proc, &sp), k, k0 = 0;

	if (nsp <= 0)
		return nsp;
	/* pieces and spans are both by start and apart: one walk of each, not every span for every piece */
	for (i = 0; i < *nfold; i++) {
		while (k0 < nsp && sp[k0][1] <= (*fold)[i].s)
			k0++;
		for (k = k0; k < nsp && sp[k][0] < (*fold)[i].e; k++) {
			uint64_t s = (*fold)[i].s > sp[k][0] ? (*fold)[i].s : sp[k][0];
			uint64_t e = (*fold)[i].e < sp[k][1] ? (*fold)[i].e : sp[k][1];

			if (e <= s)
				continue;
			if (cprof_grow(&out, &cap, n, sizeof(*out)) < 0) {
				free(out);
				free(sp);
				return -ENOMEM;
			}
			out[n].s = s;
			out[n].e = e;
			out[n++].kernels = (*fold)[i].kernels;
		}
	}
	free(sp);
	free(*fold);
	*fold = out;
	*nfold = n;
	return 0;
}

static int phases_of(const struct cprof_model *m, int64_t proc, const struct cprof_thresholds *t,
		     const struct cprof_verdict *whole, const struct cprof_step *steps, int nsteps, struct cprof_phase **out,
		     double *med_kernel, double *med_launch)
{
	struct dvec ak = { 0 }, al = { 0 }; /* the phases' kernel and launch-call durations, for their medians */
	size_t k0 = 0, l0 = 0;              /* where the last phase's begin in them */
	struct cprof_verdict all = *whole;
	struct seg *seg = NULL, *fold = NULL;
	struct cprof_phase *ph = NULL;
	uint8_t *merged = NULL;            /* per phase: pieces merged into it, its verdict made again over them all */
	size_t nseg = 0, cap = 0, nfold = 0, nph = 0, i, k, nb = 0, capb = 0, j;
	uint64_t start, prev, *ends = NULL;
	int ret = -1;

	*out = NULL;
	if (all.kernels == 0)
		return 0;
	start = all.start;
	if (whole->steps > 1) {
		/* the program marked its steps (NVTX): they are the pieces, each up to the next one's start;
		 * the last keeps what follows it (the GPU draining its queue); a cold first step is setup */
		int n = nsteps, j;
		uint64_t drain = 0;

		if (n > 0)
			drain = drain_end(m, proc, steps[n - 1].start, steps[n - 1].end);
		for (j = whole->cold_step ? 1 : 0; j < n; j++) {
			if (cprof_grow(&fold, &cap, nfold, sizeof(*fold)) < 0)
				goto out;
			fold[nfold].s = steps[j].start;
			fold[nfold].e = j + 1 < n ? steps[j + 1].start : (drain > steps[j].end ? drain : steps[j].end);
			fold[nfold++].kernels = 1;
		}
		goto pieces;
	}
	/* cut at every synchronising call: the host waited for the GPU there, a natural step edge */
	for (i = cprof_model_calls_from(m, start); i < m->ncalls && m->calls[i].start < clamp_end(all.end); i++) {
		const struct cprof_call *c = &m->calls[i];

		if (!c->outer || !c->cut || !IN_PROC(*c))
			continue;
		if (cprof_grow(&ends, &capb, nb, sizeof(*ends)) < 0)
			goto out;
		ends[nb++] = c->end;
	}
	if (nb)
		qsort(ends, nb, sizeof(*ends), cmp_u64);
	prev = start;
	for (j = 0;; j++) {
		int more = j < nb;
		uint64_t b = more ? ends[j] : all.end + 1;

		if (b > all.end + 1)
			b = all.end + 1;
		if (b <= prev) {
			if (!more)
				break;
			continue;
		}
		if (cprof_grow(&seg, &cap, nseg, sizeof(*seg)) < 0)
			goto out;
		seg[nseg].s = prev;
		seg[nseg].e = b;
		seg[nseg++].kernels = 0;
		prev = b;
		if (!more)
			break;
	}
	/* kernels per piece, one pass over kernel start times */
	k = 0;
	for (i = cprof_model_ops_from(m, start); i < m->nops && m->ops[i].start < clamp_end(all.end + 1); i++) {
		uint64_t s = m->ops[i].start;

		if (m->ops[i].kind != CPROF_OP_KERNEL || !IN_PROC(m->ops[i]))
			continue;
		while (k < nseg && seg[k].e <= s)
			k++;
		if (k < nseg)
			seg[k].kernels++;
	}
	/* fold pieces with too few kernels into the next one (the last into the previous) */
	fold = calloc(nseg ? nseg : 1, sizeof(*fold));
	if (fold == NULL)
		goto out;
	for (i = 0; i < nseg; i++) {
		/* a piece without kernels is setup or transfer (allocation, copies, host work): no phase */
		if (seg[i].kernels == 0 && (nfold == 0 || fold[nfold - 1].kernels >= PHASE_MIN_KERNELS))
			continue;
		if (nfold == 0 || fold[nfold - 1].kernels >= PHASE_MIN_KERNELS) {
			fold[nfold++] = seg[i];
		} else {
			fold[nfold - 1].e = seg[i].e;
			fold[nfold - 1].kernels += seg[i].kernels;
		}
	}
	if (nfold > 1 && fold[nfold - 1].kernels < PHASE_MIN_KERNELS) {
		fold[nfold - 2].e = fold[nfold - 1].e;
		fold[nfold - 2].kernels += fold[nfold - 1].kernels;
		nfold--;
	}
pieces:
	/* recorded in windows: the time between them was not recorded, so it is in no piece (the GPU was not
	 * idle there as far as anyone knows) */
	if (m->rec.n && clip_to_windows(m, proc, &fold, &nfold) < 0)
		goto out;
	/* a run that syncs every step would give thousands of pieces: phases are its coarse shape, so
	 * neighbouring pieces are grouped to at most PHASE_MAX_PIECES before any is analysed */
	if (nfold > PHASE_MAX_PIECES) {
		size_t per = (nfold + PHASE_MAX_PIECES - 1) / PHASE_MAX_PIECES, n = 0;

		for (i = 0; i < nfold; i += per) {
			size_t last = i + per - 1 < nfold ? i + per - 1 : nfold - 1;

			fold[n].s = fold[i].s;
			fold[n].e = fold[last].e;
			fold[n++].kernels = 0;
		}
		nfold = n;
	}
	/* neighbours with the same verdict are one phase, analysed once as a whole */
	ph = calloc(nfold ? nfold : 1, sizeof(*ph));
	merged = calloc(nfold ? nfold : 1, 1);
	if (ph == NULL || merged == NULL)
		goto out;
	for (i = 0; i < nfold; i++) {
		struct cprof_verdict v;
		size_t kn = ak.n, ln = al.n;

		if (analyse(m, proc, fold[i].s, fold[i].e, t, &v, &ak, &al) < 0)
			goto out;
		if (nph > 0 && !strcmp(ph[nph - 1].v.verdict, v.verdict) && ph[nph - 1].end == fold[i].s) {
			ph[nph - 1].end = fold[i].e;
			/* a mark of its own, not v.kernels = 0: a piece that had no kernels was analysed a second time
			 * for the same window (23 of the 71 analyses in the report of a real profile, s24/ab.db) */
			merged[nph - 1] = 1; /* analysed again below as a whole */
			ak.n = k0; /* and its durations with it: neither part's stay */
			al.n = l0;
			continue;
		}
		k0 = kn;
		l0 = ln;
		ph[nph].start = fold[i].s;
		ph[nph].end = fold[i].e;
		ph[nph].v = v;
		nph++;
	}
	for (i = 0; i < nph; i++)
		if (merged[i] && analyse(m, proc, ph[i].start, ph[i].end, t, &ph[i].v, &ak, &al) < 0)
			goto out;
	/* the phases together: medians of all their kernels and launch calls (the first phase's were quoted for all,
	 * a torchrun job's "median launch call 1011 us" where its ranks' were 8 and 12 us: a review, 2026-12-06) */
	*med_kernel = median(ak.d, ak.n);
	/* no phase had launches of its own: the run's, as each phase took them */
	*med_launch = al.n ? median(al.d, al.n) : ph[0].v.med_launch_ns;
	*out = ph;
	ph = NULL;
	ret = (int)nph;
out:
	free(ak.d);
	free(al.d);
	free(ends);
	free(seg);
	free(fold);
	free(ph);
	free(merged);
	return ret;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

int cprof_device_verdicts(const struct cprof_model *m, int64_t proc, const struct cprof_thresholds *t,
			  struct cprof_device_verdict **out)
{
	int32_t *dev = NULL;
	struct cprof_device_verdict *dv = NULL;
	struct cprof_op *ops = NULL;
	size_t nd = 0, capd = 0, i, d;
	int ret = -ENOMEM;

	*out = NULL;
	for (i = 0; i < m->nops; i++) {
		size_t k;

		if (!IN_PROC(m->ops[i]))
			continue;
		for (k = 0; k < nd && dev[k] != m->ops[i].dev; k++)
			;
		if (k < nd)
			continue;
		if (cprof_grow(&dev, &capd, nd, sizeof(*dev)) < 0)
			goto out;
		dev[nd++] = m->ops[i].dev;
	}
	if (nd < 2) {
		ret = 0;
		goto out;
	}
	qsort(dev, nd, sizeof(*dev), cmp_i32);
	dv = calloc(nd, sizeof(*dv));
	ops = malloc(m->nops * sizeof(*ops));
	if (dv == NULL || ops == NULL)
		goto out;
	for (d = 0; d < nd; d++) {
		/* the model with only this device's ops (still in time order); calls and records are shared */
		struct cprof_model dm = *m;
		size_t n = 0;

		for (i = 0; i < m->nops; i++)
			if (m->ops[i].dev == dev[d])
				ops[n++] = m->ops[i];
		dm.ops = ops;
		dm.nops = n;
		dm.calls_by_corr = NULL;
		dm.launch_call = NULL;
		dm.kernels_by_corr = NULL;
		dm.nkernels_by_corr = 0;
		dm.steps = NULL;
		dm.nsteps_cache = 0;
		dv[d].device = dev[d];
		if (cprof_analyse(&dm, proc, 0, UINT64_MAX, t, &dv[d].v) < 0) {
			ret = -EIO;
			goto out;
		}
	}
	*out = dv;
	dv = NULL;
	ret = (int)nd;
out:
	free(dev);
	free(dv);
	free(ops);
	return ret;
}
