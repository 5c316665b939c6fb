/* How a process ended, looked up on the model's arrays: what common/ending.h's queries and model.c's end_*_sql give, without an index. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report/cprof.h"
#include "report/model/model.h"

/* The calls are by start, ties in table (id) order (cprof_sort_by_start is stable and load_calls reads in
 * rowid order): a walk back from the end is SQL's ORDER BY start DESC, id DESC. Nothing here needs an index
 * of the profile (issue 32: cprofd no longer makes api_start, ext_ext, k_corr), and a profile that has them
 * reads the same. NULL columns read as the model has them: a returnValue NULL is 0 (the queries saw no
 * success in it either way only on forged profiles). */

#define END_LAST_OUTER 1000 /* the error is looked for among the process's last 1000 outermost calls */

static int failing(const struct cprof_call *c)
{
	return c->ret != 0 && c->ret != 600; /* 600 cudaErrorNotReady: polling returns it all along */
}

/* the index of the first call whose start is > t */
static size_t calls_after(const struct cprof_model *m, uint64_t t)
{
	return t == UINT64_MAX ? m->ncalls : cprof_first_at(m->calls, m->ncalls, sizeof(*m->calls), t + 1);
}

int cprof_end_error(const struct cprof_model *m, int64_t proc, struct cprof_end_err *out)
{
	const struct cprof_call *c = m->calls;
	size_t n = m->ncalls, i, e = SIZE_MAX, f = SIZE_MAX, ok = SIZE_MAX, hi, seen = 0;
	int64_t tid;

	memset(out, 0, sizeof(*out));
	for (i = n; i-- > 0 && seen < END_LAST_OUTER;) {
		if (c[i].proc != proc || !c[i].outer)
			continue;
		seen++;
		if (failing(&c[i])) {
			e = i;
			break;
		}
	}
	if (e == SIZE_MAX)
		return 0;
	tid = c[e].tid;
	/* a successful call on its thread after it: the thread went on, the error was not its end */
	for (i = e + 1; i < n; i++)
		if (c[i].proc == proc && c[i].tid == tid && c[i].outer && c[i].ret == 0 && c[i].start > c[e].start)
			return 0;
	/* back to the thread's last success before it: the first failing call after that one names the run
	 * (a sticky error such as 700 makes every later call fail too) */
	hi = calls_after(m, c[e].start);
	for (i = hi; i-- > 0;)
		if (c[i].proc == proc && c[i].tid == tid && c[i].outer && c[i].ret == 0 && c[i].start < c[e].start) {
			ok = i;
			break;
		}
	/* after it in time, not only in the array: a failing call that started with it is not after it */
	for (i = ok == SIZE_MAX ? 0 : ok + 1; i < hi && f == SIZE_MAX; i++)
		if (c[i].proc == proc && c[i].tid == tid && c[i].outer && failing(&c[i]) &&
		    (ok == SIZE_MAX || c[i].start > c[ok].start) && cprof_model_string(m, c[i].name) != NULL)
			f = i;
	if (f == SIZE_MAX)
		return 0;
	out->tid = c[f].tid;
	out->api = cprof_model_string(m, c[f].name);
	out->ret = c[f].ret;
	out->stream = c[f].stream == CPROF_NO_ID ? 0 : (uint64_t)c[f].stream;
	out->start = c[f].start;
	/* as the query's LIKEs: ASCII case does not matter */
	out->scoped = c[f].launch || !strncasecmp(out->api, "cudaStreamSynchronize", 21) || strcasestr(out->api, "async") ||
		      !strcmp(out->api, "cudaStreamWaitEvent");
	return 1;
}

/* CUPTI stream ids of the kernels the calls with external ids w[i].x launched: the first external id row
 * (table order) with a kernel, that kernel the first of its correlation id (table order); -1: none */
struct want {
	int64_t proc, x;
	int64_t stream;
	uint32_t seq; /* of the external id row that gave stream */
	int found;
};
struct cand {
	int64_t proc, corr;
	size_t want;
	uint32_t seq, row;
	int64_t stream;
	int found;
};

static int cmp_want(const void *a, const void *b)
{
	const struct want *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->x < y->x ? -1 : x->x > y->x;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* w sorted by (proc, x) on return; one pass over the external ids and one over the ops, whatever their number */
static int resolve_streams(const struct cprof_model *m, struct want *w, size_t nw)
{
	struct cand *c = NULL;
	size_t nc = 0, cap = 0, i, j;

	if (nw == 0)
		return 0;
	qsort(w, nw, sizeof(*w), cmp_want);
	for (i = 0; i < nw; i++) {
		w[i].stream = -1;
		w[i].found = 0;
	}
	for (i = 0; i < m->next; i++) {
		struct want key = { m->ext[i].proc, m->ext[i].ext, 0, 0, 0 };
		struct want *h = bsearch(&key, w, nw, sizeof(*w), cmp_want);

		if (h == NULL)
			continue;
		while (h > w && !cmp_want(h - 1, &key))
			h--;
		for (; h < w + nw && !cmp_want(h, &key); h++) {
			if (cprof_grow(&c, &cap, nc, sizeof(*c)) < 0) {
				free(c);
				return -ENOMEM;
			}
			c[nc++] = (struct cand){ m->ext[i].proc, m->ext[i].corr, (size_t)(h - w), m->ext[i].seq, 0, -1, 0 };
		}
	}
	if (nc == 0)
		return 0;
	qsort(c, nc, sizeof(*c), cmp_cand);
	for (i = 0; i < m->nops; i++) {
		const struct cprof_op *o = &m->ops[i];
		struct cand key = { o->proc, o->corr, 0, 0, 0, 0, 0 };
		struct cand *h;

		if (o->kind != CPROF_OP_KERNEL || o->corr == CPROF_NO_ID ||
		    (h = bsearch(&key, c, nc, sizeof(*c), cmp_cand)) == NULL)
			continue;
		while (h > c && !cmp_cand(h - 1, &key))
			h--;
		for (; h < c + nc && !cmp_cand(h, &key); h++)
			if (!h->found || o->row < h->row) {
				h->found = 1;
				h->row = o->row;
				h->stream = o->stream;
			}
	}
	for (j = 0; j < nc; j++) {
		struct want *x = &w[c[j].want];

		if (c[j].found && (!x->found || c[j].seq < x->seq)) {
			x->found = 1;
			x->seq = c[j].seq;
			x->stream = c[j].stream;
		}
	}
	free(c);
	return 0;
}

/* the stream ids of k[0..n) from the external ids x[0..n) (CPROF_NO_ID: none, -1) */
static int kernel_streams(const struct cprof_model *m, int64_t proc, struct cprof_end_kernel *k, const int64_t *x, size_t n)
{
	struct want *w = malloc((n ? n : 1) * sizeof(*w));
	size_t i, nw = 0;
	int ret;

	if (w == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		k[i].stream = -1;
		if (x[i] != CPROF_NO_ID)
			w[nw++] = (struct want){ proc, x[i], -1, 0, 0 };
	}
	if ((ret = resolve_streams(m, w, nw)) == 0)
		for (i = 0; i < n; i++) {
			struct want key = { proc, x[i], 0, 0, 0 }, *h;

			if (x[i] != CPROF_NO_ID && (h = bsearch(&key, w, nw, sizeof(*w), cmp_want)) != NULL)
				k[i].stream = h->stream;
		}
	free(w);
	return ret;
}

static int add_kernel(struct cprof_end_kernel **out, size_t *n, size_t *cap, int64_t **x, size_t *xcap, uint64_t handle,
		      const char *name, int64_t corr)
{
	if (cprof_grow(out, cap, *n, sizeof(**out)) < 0 || cprof_grow(x, xcap, *n, sizeof(**x)) < 0)
		return -ENOMEM;
	(*out)[*n].handle = handle;
	(*out)[*n].stream = -1;
	(*x)[*n] = corr;
	if (((*out)[*n].name = strdup(name)) == NULL)
		return -ENOMEM;
	(*n)++;
	return 0;
}

int cprof_end_err_kernels(const struct cprof_model *m, int64_t proc, uint64_t t, int any_stream, uint64_t stream,
			  struct cprof_end_kernel **out, size_t *n)
{
	const struct cprof_call *c = m->calls;
	size_t i, cap = 0, xcap = 0;
	int64_t *x = NULL;
	int ret = 0;

	for (i = calls_after(m, t); i-- > 0 && *n < 3 && ret == 0;) {
		const char *api, *k;

		if (c[i].proc != proc || !(c[i].launch || c[i].gemm) ||
		    (!any_stream && (c[i].stream == CPROF_NO_ID || (uint64_t)c[i].stream != stream)) ||
		    (api = cprof_model_string(m, c[i].name)) == NULL)
			continue;
		k = cprof_model_string(m, c[i].kname);
		ret = add_kernel(out, n, &cap, &x, &xcap, c[i].stream == CPROF_NO_ID ? 0 : (uint64_t)c[i].stream, k ? k : api,
				 c[i].corr);
	}
	if (ret == 0)
		ret = kernel_streams(m, proc, *out, x, *n);
	free(x);
	return ret;
}

struct thread_last {
	int64_t tid, last;
	size_t call; /* SIZE_MAX: none */
};

static int cmp_tid(const void *a, const void *b)
{
	const struct thread_last *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int cprof_end_thread_calls(const struct cprof_model *m, int64_t proc, const int64_t (*threads)[2], size_t nthreads,
			   struct cprof_end_call **out, size_t *n)
{
	struct thread_last *t = malloc((nthreads ? nthreads : 1) * sizeof(*t));
	size_t i, nt = 0, cap = 0;
	int ret = 0;

	if (t == NULL)
		return -ENOMEM;
	for (i = 0; i < nthreads; i++)
		t[nt++] = (struct thread_last){ threads[i][0], threads[i][1], SIZE_MAX };
	if (nt > 1)
		qsort(t, nt, sizeof(*t), cmp_tid);
	/* one pass: each thread's last outermost call up to its THREADS.lastNs */
	for (i = 0; i < m->ncalls && nt; i++) {
		const struct cprof_call *c = &m->calls[i];
		struct thread_last key = { c->tid, 0, 0 }, *h;

		if (c->proc == proc && c->outer && (h = bsearch(&key, t, nt, sizeof(*t), cmp_tid)) != NULL &&
		    h->last >= 0 && c->start <= (uint64_t)h->last)
			h->call = i;
	}
	for (i = 0; i < nt && *n < 64 && ret == 0; i++) {
		const struct cprof_call *c;
		struct cprof_end_call *e;
		const char *api, *k;

		if (t[i].call == SIZE_MAX || (api = cprof_model_string(m, (c = &m->calls[t[i].call])->name)) == NULL)
			continue;
		if (cprof_grow(out, &cap, *n, sizeof(**out)) < 0) {
			ret = -ENOMEM;
			break;
		}
		e = &(*out)[(*n)++];
		e->tid = c->tid;
		e->ret = c->ret;
		e->api = strdup(api);
		k = cprof_model_string(m, c->kname);
		e->kernel = k ? strdup(k) : NULL;
		if (e->api == NULL || (k && e->kernel == NULL))
			ret = -ENOMEM;
	}
	free(t);
	return ret;
}

int cprof_end_stream_kernels(const struct cprof_model *m, int64_t proc, int64_t bound, struct cprof_end_kernel **out,
			     size_t *n)
{
	uint64_t streams[CPROF_END_STREAMS];
	int per[CPROF_END_STREAMS];
	size_t i, j, hi, walked = 0, nstreams = 0, cap = 0, xcap = 0;
	int64_t *x = NULL;
	int ret = 0;

	hi = bound < 0 ? 0 : calls_after(m, (uint64_t)bound);
	/* over the last calls of every process, as the query's LIMIT counted them */
	for (i = hi; i-- > 0 && walked < CPROF_END_WALK && ret == 0; walked++) {
		const struct cprof_call *c = &m->calls[i];
		uint64_t h = c->stream == CPROF_NO_ID ? 0 : (uint64_t)c->stream;
		const char *name;

		if (c->proc != proc || !(c->launch || c->gemm))
			continue;
		for (j = 0; j < nstreams && streams[j] != h; j++)
			;
		if (j == nstreams) {
			if (nstreams == CPROF_END_STREAMS)
				continue;
			streams[nstreams] = h;
			per[nstreams++] = 0;
		}
		if (per[j] >= CPROF_END_PER_STREAM)
			continue;
		per[j]++;
		if ((name = cprof_model_string(m, c->kname)) == NULL && (name = cprof_model_string(m, c->name)) == NULL)
			name = "?";
		/* the query bound a NULL id as 0 */
		ret = add_kernel(out, n, &cap, &x, &xcap, h, name, c->corr == CPROF_NO_ID ? 0 : c->corr);
	}
	if (ret == 0)
		ret = kernel_streams(m, proc, *out, x, *n);
	free(x);
	/* by stream handle, each stream's latest first (stable: few elements) */
	for (i = 1; i < *n; i++)
		for (j = i; j > 0 && (*out)[j - 1].handle > (*out)[j].handle; j--) {
			struct cprof_end_kernel k = (*out)[j];

			(*out)[j] = (*out)[j - 1];
			(*out)[j - 1] = k;
		}
	return ret;
}
