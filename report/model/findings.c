/* The findings of the torch.profiler guide, each a rule over the profile with the evidence it rests on. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PR_FMT "cprof"
#include "common/api.h"
#include "common/cuda-errors.h"
#include "common/log.h"
#include "report/model/analysis.h"
#include "report/cprof.h"
#include "report/model/model.h"

struct flist {
	struct cprof_finding *f;
	size_t n, cap;
};

static void add(struct flist *l, const char *id, const char *sev, const char *evidence, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void add(struct flist *l, const char *id, const char *sev, const char *evidence, const char *fmt, ...)
{
	va_list ap;

	if (cprof_grow(&l->f, &l->cap, l->n, sizeof(*l->f)) < 0)
		return;
	memset(&l->f[l->n], 0, sizeof(l->f[0]));
	snprintf(l->f[l->n].id, sizeof(l->f[0].id), "%s", id);
	snprintf(l->f[l->n].severity, sizeof(l->f[0].severity), "%s", sev);
	snprintf(l->f[l->n].evidence, sizeof(l->f[0].evidence), "%s", evidence);
	va_start(ap, fmt);
	vsnprintf(l->f[l->n].message, sizeof(l->f[0].message), fmt, ap);
	va_end(ap);
	l->n++;
}

/* A rule whose input could not be read says so, rather than staying silent as if it had looked. */
static void not_evaluated(struct flist *l, const char *id, const char *why)
{
	char ev[400];

	snprintf(ev, sizeof(ev), "not evaluated: %s", why);
	add(l, id, "info", ev, "%s: not evaluated (its input could not be read)", id);
}

/* Appends one piece of evidence, "; "-separated; what does not fit is left out whole. */
static void ev_add(char *ev, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ev_add(char *ev, size_t size, const char *fmt, ...)
{
	char part[256];
	va_list ap;
	size_t n = strlen(ev);

	va_start(ap, fmt);
	vsnprintf(part, sizeof(part), fmt, ap);
	va_end(ap);
	if (n + strlen(part) + 3 < size)
		snprintf(ev + n, size - n, "%s%s", n ? "; " : "", part);
}

static void short_kernel(const char *mangled, char *out, size_t size)
{
	char *d = cprof_demangle(mangled);

	cprof_shorten(d, out, size);
	free(d);
}

/* one outermost call: its name, process, place in time order and duration */
struct named {
	int64_t name, proc;
	size_t seq;
	int64_t d;
};

/* each call name whose first instance (per process) was far slower than the later ones */
static int slow_first_calls(const struct cprof_model *m, int64_t proc, char *ev, size_t size)
{
	struct named *c = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*c));
	int64_t *later = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*later));
	size_t i, j, n = 0;
	char a[32], b[32];

	if (c == NULL || later == NULL) {
		free(c);
		free(later);
		return -ENOMEM;
	}
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *x = &m->calls[i];

		if (!x->outer || (proc && x->proc != proc) || cprof_model_string(m, x->name) == NULL)
			continue;
		c[n++] = (struct named){ x->name, x->proc, i, (int64_t)(x->end - x->start) };
	}
	/* by (name, process, place in time): c is in time order, two stable sorts put it in that order */
	if (cprof_radix_sort_at(c, n, sizeof(*c), offsetof(struct named, proc)) < 0 ||
	    cprof_radix_sort_at(c, n, sizeof(*c), offsetof(struct named, name)) < 0)
		goto oom;
	for (i = 0; i < n; i = j) {
		size_t nl = 0, k;
		int64_t first = 0;
		int have = 0;

		for (j = i; j < n && c[j].name == c[i].name; j++)
			;
		/* within the name: the first call of each process, and the later ones */
		for (k = i; k < j; k++) {
			if (k == i || c[k].proc != c[k - 1].proc) {
				if (k + 1 < j && c[k + 1].proc == c[k].proc && (!have || c[k].d > first)) {
					first = c[k].d;
					have = 1;
				}
				continue;
			}
			later[nl++] = c[k].d;
		}
		if (nl < 4)
			continue;
		if (cprof_radix_sort_at(later, nl, sizeof(*later), 0) < 0)
			goto oom;
		{
			double med = (double)later[nl / 2], f = (double)first;

			if (f >= 100000 && f >= 10 * (med > 0 ? med : 1)) {
				cprof_fmt_dur(a, sizeof(a), f);
				cprof_fmt_dur(b, sizeof(b), med);
				ev_add(ev, size, "first %s %s vs median %s", cprof_model_string(m, c[i].name), a, b);
			}
		}
	}
	free(c);
	free(later);
	return 0;
oom:
	free(c);
	free(later);
	return -ENOMEM;
}

/* calls that never need a context: device and version queries, error queries, registration */
static int needs_no_context(const char *api)
{
	static const char *const q[] = { "cudaGetDeviceCount", "cudaGetDevice", "cudaGetDeviceProperties",
					 "cudaDeviceGetAttribute", "cudaDriverGetVersion", "cudaRuntimeGetVersion",
					 "cudaGetErrorString", "cudaGetErrorName", "cudaGetLastError",
					 "cudaPeekAtLastError", "cudaChooseDevice", "__cuda", "cuInit", "cuDeviceGet",
					 "cuDriverGetVersion", "cuGetErrorString", "cuGetErrorName", "nvtx", "cublasGetVersion" };
	size_t i;

	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		if (!strncmp(api, q[i], strlen(q[i])))
			return 1;
	return 0;
}

/* a start-up cost worth naming: real drivers take 20-300 ms, a module load from 1 ms */
#define STARTUP_COST_NS 1000000

/* Issue 18 item 4: start-up costs on the calls that paid them. The first CUDA call of a process loads
 * the driver; the first call that needs a context creates it (cudaSetDevice, cudaMalloc, cudaFree(0),
 * a launch); the first launch of a kernel loads its module (lazy loading). Each that took over 1 ms is
 * named with what it paid. Calls only CUPTI saw count too (a driver-API program has no hooked call). */
static void startup_costs(const struct cprof_model *m, int64_t proc, char *ev, size_t size)
{
	int64_t cur = INT64_MIN;
	int seen_first = 0, seen_ctx = 0, launches = 0, first_launch_done = 0;
	size_t i, j = 0;
	char d[32];

	for (i = 0; i < m->ncalls; i++)
		launches += m->calls[i].launch && m->calls[i].outer && (!proc || m->calls[i].proc == proc);
	/* calls and CUPTI-only records merged by start; one process at a time is enough for the evidence:
	 * the first process's costs (proc 0: each process restarts the walk) */
	for (i = 0; (i < m->ncalls || j < m->nrt) && !(seen_first && seen_ctx && first_launch_done);) {
		const char *api;
		uint64_t s, e;
		int64_t p;
		int launch = 0, sync = 0;

		if (j >= m->nrt || (i < m->ncalls && m->calls[i].start <= m->rt[j].start)) {
			const struct cprof_call *c = &m->calls[i++];

			if (!c->outer || (proc && c->proc != proc))
				continue;
			api = cprof_model_string(m, c->name);
			s = c->start;
			e = c->end;
			p = c->proc;
			launch = c->launch;
			sync = c->cut;
		} else {
			const struct cprof_rt *r = &m->rt[j++];

			if ((proc && r->proc != proc) || r->name == CPROF_NO_ID ||
			    r->ext != CPROF_NO_ID)
				continue;
			api = cprof_model_string(m, r->name);
			s = r->start;
			e = r->end;
			p = r->proc;
			launch = api && strstr(api, "Launch") != NULL;
		}
		if (api == NULL)
			continue;
		if (p != cur) {
			if (cur != INT64_MIN)
				break; /* the first process is the evidence */
			cur = p;
		}
		/* formatted only for the evidence: a call each would be a tenth of the report */
		if (e - s >= STARTUP_COST_NS)
			cprof_fmt_dur(d, sizeof(d), (double)(e - s));
		if (!seen_first) {
			seen_first = 1;
			if (!needs_no_context(api)) {
				seen_ctx = 1;
				if (e - s >= STARTUP_COST_NS)
					ev_add(ev, size, "%s took %s: driver initialisation and context creation (the first "
					       "CUDA call, and the first needing a context)", api, d);
			} else if (e - s >= STARTUP_COST_NS) {
				ev_add(ev, size, "%s took %s: driver initialisation (the first CUDA call)", api, d);
			}
			if (launch)
				first_launch_done = 1;
			continue;
		}
		if (!seen_ctx && !needs_no_context(api)) {
			seen_ctx = 1;
			/* a synchronising call's time is its wait for the GPU, whatever else it paid */
			if (e - s >= STARTUP_COST_NS && !sync && strstr(api, "Synchronize") == NULL)
				ev_add(ev, size, "%s took %s: context creation (the first call needing a context)", api, d);
			if (launch)
				first_launch_done = 1;
			continue;
		}
		/* a launch carrying its module's load: with a few launches the slow-first rule has no median */
		if (launch && !first_launch_done) {
			first_launch_done = 1;
			if (launches < 5 && e - s >= STARTUP_COST_NS)
				ev_add(ev, size, "the first launch (%s) took %s: lazy module loading", api, d);
		}
	}
}

/* cold start: a call's first instance far slower than the rest (lazy loading, heuristics, workspace),
 * and the time before the first GPU op (context creation, library loading). */
static void cold_start(const struct cprof_model *m, int64_t proc, const struct cprof_verdict *v,
		       const struct cprof_step *steps, int n, struct flist *l)
{
	char ev[400] = "", a[32], b[32];

	if (slow_first_calls(m, proc, ev, sizeof(ev)) < 0) {
		not_evaluated(l, "cold-start", "out of memory");
		return;
	}
	startup_costs(m, proc, ev, sizeof(ev));
	/* steps the program marked: the first one against the others */
	if (n > 2 && cprof_steps_cold(steps, n)) {
		cprof_fmt_dur(a, sizeof(a), (double)(steps[0].end - steps[0].start));
		cprof_fmt_dur(b, sizeof(b), (double)cprof_steps_median(steps, n, 1));
		ev_add(ev, sizeof(ev), "first step (NVTX range \"%.40s\") took %s vs median %s of the other %d steps%s",
		       steps[0].name, a, b, n - 1, v->cold_step ? ": excluded from the verdict" : "");
	}
	if (ev[0])
		add(l, "cold-start", "info", ev,
		    "cold start: first calls pay context creation, lazy module loading and library set-up; they are "
		    "excluded from the verdict (profile more steps, or warm up before measuring)");
}

static const struct cprof_model *thread_model; /* qsort has no context argument */

/* runtime records of one thread together, in time order */
static int cmp_rt_thread(const void *a, const void *b)
{
	const struct cprof_rt *x = &thread_model->rt[*(const uint32_t *)a], *y = &thread_model->rt[*(const uint32_t *)b];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : *(const uint32_t *)a > *(const uint32_t *)b;
}

struct occ {
	const struct cprof_model *m;
	int64_t n;
	char names[301]; /* the evidence shows the first 300 bytes */
	size_t len;
	int full;
};

/* counts the launch, and lists its kernel's name once (in the order first seen) */
static int occ_kernel(void *arg, const struct cprof_op *o)
{
	struct occ *c = arg;
	const char *s = o->name == CPROF_NO_ID ? NULL : cprof_model_string(c->m, o->name);
	const char *p;
	size_t n;

	c->n++;
	if (s == NULL || c->full)
		return 0;
	n = strlen(s);
	for (p = c->names; (p = strstr(p, s)) != NULL; p += n)
		if ((p == c->names || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 0;
	if (c->len + n + 2 > sizeof(c->names)) {
		c->full = 1;
		n = sizeof(c->names) - c->len - 1 - (c->len > 0);
	}
	c->len += (size_t)snprintf(c->names + c->len, sizeof(c->names) - c->len, "%s%.*s", c->len ? "," : "", (int)n, s);
	return 0;
}

/* whether CUPTI recorded proc's occupancy queries (any process's, for proc 0) only at first */
static int occupancy_sampled(const struct cprof_model *m, int64_t proc)
{
	size_t i;

	if (proc == 0)
		return m->queries_sampled > 0;
	i = cprof_model_proc_index(m, proc);
	return i < m->nprocs && m->procs[i].queries_sampled;
}

/* an occupancy query right before a launch: the sign of a heavy, adaptive kernel (GEMM, conv) */
static void occupancy(struct cprof_model *m, int64_t proc, struct flist *l)
{
	uint32_t *r = malloc((m->nrt ? m->nrt : 1) * sizeof(*r));
	size_t n = 0, i;
	struct occ c = { m, 0, "", 0, 0 };
	char ev[400];

	if (r == NULL) {
		not_evaluated(l, "occupancy-before-launch", "out of memory");
		return;
	}
	/* each runtime record next to the one before it on its thread */
	for (i = 0; i < m->nrt; i++)
		if ((!proc || m->rt[i].proc == proc) && m->rt[i].name != CPROF_NO_ID && cprof_model_string(m, m->rt[i].name))
			r[n++] = (uint32_t)i;
	if (cprof_radix_sort_ix_by(r, n, m->rt, sizeof(*m->rt), cprof_key_rt_proc, cprof_key_rt_tid, m) < 0) {
		thread_model = m;
		cprof_sort(r, n, sizeof(*r), cmp_rt_thread);
		thread_model = NULL;
	}
	for (i = 1; i < n; i++) {
		const struct cprof_rt *x = &m->rt[r[i]], *p = &m->rt[r[i - 1]];

		if (x->proc != p->proc || x->tid != p->tid || (int64_t)(x->start - p->end) >= 50000 ||
		    strncasecmp(cprof_model_string(m, p->name), "cudaOccupancy", 13) != 0 ||
		    strncasecmp(cprof_model_string(m, x->name), "cudaLaunch", 10) != 0)
			continue;
		if (cprof_model_kernels_of(m, x->proc, x->corr, occ_kernel, &c) < 0)
			break;
	}
	free(r);
	if (c.n > 0) {
		/* queries-sampled: CUPTI recorded the first ones only; the count is of those */
		snprintf(ev, sizeof(ev), "%lld occupancy queries%s each followed within 50 us by a launch of: %.280s",
			 (long long)c.n, occupancy_sampled(m, proc) ? " (recorded at first only)" : "", c.names);
		add(l, "occupancy-before-launch", "info", ev,
		    "an occupancy query precedes launches: a library picks its kernel at run time (GEMM/conv); "
		    "their time is in the library call, not in your code");
	}
}

static int like_contains(const char *s, const char *needle);

static const struct cprof_model *stream_model; /* qsort has no context argument */

static int cmp_gemm_api(const void *a, const void *b)
{
	const struct cprof_gemm *x = *(const struct cprof_gemm *const *)a, *y = *(const struct cprof_gemm *const *)b;
	int c = strcmp(cprof_model_string(stream_model, x->name), cprof_model_string(stream_model, y->name));

	if (c)
		return c;
	return x < y ? -1 : x > y; /* table order within a name */
}

/* GEMMs with a batch over 1 or a batched API, per API name: the most called one (a tie: the last name in
 * byte order, as SQLite's ORDER BY count(*) DESC LIMIT 1 gave it), with its largest batch and the shape of
 * the first call that had it (all batches NULL: the last call's) */
static void batched_gemm(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	const struct cprof_gemm **g = malloc((m->ngemms ? m->ngemms : 1) * sizeof(*g)), *best_at = NULL;
	long long best_n = 0, best_batch = 0;
	const char *best_api = NULL;
	size_t n = 0, i, j;
	char ev[400], shape[80];

	if (g == NULL) {
		not_evaluated(l, "batched-gemm", "out of memory");
		return;
	}
	for (i = 0; i < m->ngemms; i++) {
		const struct cprof_gemm *x = &m->gemms[i];
		const char *api = cprof_model_string(m, x->name);

		if ((proc && x->proc != proc) || api == NULL ||
		    !((x->batch != CPROF_NO_ID && x->batch > 1) || like_contains(api, "Batched")))
			continue;
		g[n++] = x;
	}
	stream_model = m;
	if (n)
		qsort(g, n, sizeof(*g), cmp_gemm_api);
	stream_model = NULL;
	for (i = 0; i < n; i = j) {
		const char *api = cprof_model_string(m, g[i]->name);
		const struct cprof_gemm *at = NULL;
		long long batch = 0;
		int have = 0;

		for (j = i; j < n && !strcmp(cprof_model_string(m, g[j]->name), api); j++) {
			if (g[j]->batch == CPROF_NO_ID) {
				if (!have)
					at = g[j];
			} else if (!have || g[j]->batch > batch) {
				batch = g[j]->batch;
				at = g[j];
				have = 1;
			}
		}
		if ((long long)(j - i) >= best_n) {
			best_n = (long long)(j - i);
			best_api = api;
			best_batch = have ? batch : 0;
			best_at = at;
		}
	}
	if (best_api) {
		if (best_at->m == CPROF_NO_ID || best_at->n == CPROF_NO_ID || best_at->k == CPROF_NO_ID)
			snprintf(shape, sizeof(shape), "?");
		else
			snprintf(shape, sizeof(shape), "%lldx%lldx%lld", (long long)best_at->m, (long long)best_at->n,
				 (long long)best_at->k);
		snprintf(ev, sizeof(ev), "%lld calls of %s, batch %lld, m x n x k %s", best_n, best_api, best_batch, shape);
		add(l, "batched-gemm", "info", ev,
		    "batched GEMM (the aten::bmm case): one launch does many small matrix products; good for launch "
		    "overhead, check its kernel's efficiency in the kernel table");
	}
	free(g);
}

/* SQL's LIKE '%needle%': ASCII letters match either case */
static int like_contains(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (; *s; s++)
		if (!strncasecmp(s, needle, n))
			return 1;
	return 0;
}

static int gemm_kernel_name(const char *s)
{
	return s && (like_contains(s, "gemm") || like_contains(s, "xmma") || like_contains(s, "nvjet") ||
		     like_contains(s, "cutlass"));
}

/* GPU ops of one stream together, in time order */
static int cmp_op_stream(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct cprof_op *x = &stream_model->ops[i], *y = &stream_model->ops[j];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* a device-to-device copy then a GEMM on the same stream: the compiled addmm bias epilogue. A kernel follows
 * the copy when no op of the stream starts between the copy's end and it: it starts first at or after the
 * copy's end (ties: each such kernel counts, with the copy's bytes). */
static void dtod_before_gemm(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	uint32_t *ix = malloc((m->nops ? m->nops : 1) * sizeof(*ix));
	long long n = 0, bytes = 0;
	size_t i, k;
	char ev[400];

	if (ix == NULL) {
		not_evaluated(l, "dtod-before-gemm", "out of memory");
		return;
	}
	for (i = 0; i < m->nops; i++)
		ix[i] = (uint32_t)i;
	stream_model = m;
	if (m->nops && cprof_radix_sort_ix_by(ix, m->nops, m->ops, sizeof(*m->ops), cprof_key_op_proc,
					      cprof_key_op_stream, m) < 0)
		cprof_sort(ix, m->nops, sizeof(*ix), cmp_op_stream);
	stream_model = NULL;
	for (i = 0; i < m->nops; i++) {
		const struct cprof_op *c = &m->ops[ix[i]];
		size_t lo = 0, hi = m->nops;

		if (c->kind != CPROF_OP_MEMCPY || c->copy != 8 || (proc && c->proc != proc))
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct cprof_op *x = &m->ops[ix[mid]];

			if (x->proc < c->proc || (x->proc == c->proc && (x->stream < c->stream ||
									 (x->stream == c->stream && x->start < c->end))))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k < m->nops; k++) {
			const struct cprof_op *o = &m->ops[ix[k]];

			if (o->proc != c->proc || o->stream != c->stream || o->start != m->ops[ix[lo]].start)
				break;
			/* a copy outside any graph before a GEMM replayed from one refills the graph's static input
			 * (torch.cuda.make_graphed_callables, torch.cuda.graph): not the bias epilogue */
			if (o->kind == CPROF_OP_KERNEL && o->name != CPROF_NO_ID && !(o->graph && !c->graph) &&
			    gemm_kernel_name(cprof_model_string(m, o->name))) {
				n++;
				bytes += c->bytes;
			}
		}
	}
	free(ix);
	if (n > 0) {
		snprintf(ev, sizeof(ev), "%lld device-to-device copies (%lld bytes) each directly before a GEMM kernel on the same stream",
			 n, bytes);
		add(l, "dtod-before-gemm", "warn", ev,
		    "a device-to-device copy feeds each GEMM (the compiled addmm bias epilogue): the bias is copied "
		    "into the output first; fuse the bias into the GEMM epilogue (cuBLASLt) to save the copy");
	}
}

/* The run from its first GPU op on: host set-up before it (context creation, reading data, building
 * inputs) says nothing about how far the CPU ran ahead or what the profiler cost the GPU work. */
static uint64_t active_window(const struct cprof_verdict *v)
{
	uint64_t from = v->gpu_span_start > v->run_start ? v->gpu_span_start : v->run_start;

	return v->run_end > from ? v->run_end - from : 0;
}

/* the last synchronisation waited long: the GPU was behind and work drained at the end */
static void final_sync(const struct cprof_model *m, int64_t proc, const struct cprof_verdict *v, struct flist *l)
{
	const struct cprof_call *last = NULL;
	uint64_t win;
	char ev[400], d[32];
	size_t i;

	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];

		if (c->sync && c->outer && (!proc || c->proc == proc) && (last == NULL || c->end > last->end) &&
		    cprof_model_string(m, c->name))
			last = c;
	}
	if (last) {
		uint64_t dur = last->end - last->start;

		win = active_window(v);

		if (dur >= 1000000 && win && dur * 10 >= win) {
			cprof_fmt_dur(d, sizeof(d), (double)dur);
			snprintf(ev, sizeof(ev), "the last %s waited %s (%.0f%% of the run from its first GPU op)",
				 cprof_model_string(m, last->name), d,
				 100.0 * dur / win);
			add(l, "long-final-sync", "info", ev,
			    "queued GPU work drained at the end: the CPU ran ahead of the GPU (fine when compute-bound; "
			    "step times measured on the CPU without a sync are misleading)");
		}
	}
}

/* whether CUPTI's name of a call is one a hook records (not a counted query): remembered by string id, a run's
 * runtime records having a few dozen names in any order */
static int name_recorded(const struct cprof_model *m, int64_t name, int64_t *memo_id, unsigned char *memo)
{
	size_t k = (size_t)((uint64_t)name * 0x9e3779b97f4a7c15ull >> 58); /* 64 slots */
	const char *api;
	unsigned id;

	if (memo_id[k] == name)
		return memo[k];
	api = name == CPROF_NO_ID ? NULL : cprof_model_string(m, name);
	id = api && !strncmp(api, "cuda", 4) ? cprof_api_by_name(api) : CPROF_API_NONE;
	memo_id[k] = name;
	memo[k] = id != CPROF_API_NONE && !cprof_api_counted(id);
	return memo[k];
}

/* CUPTI saw a process's runtime calls and cprof's hooks none of them: the runtime is linked into the program
 * (nvcc's default, -cudart static; or a library that carries its own, as cuda-python does), so the GPU work and
 * the calls' times are CUPTI's, but no call has a call site, a stack or the hooks' timing (a review of cuda-samples
 * built with nvcc's defaults, 2026-12-06: nothing said why). Process by process: one hooked process does not
 * vouch for another (a launcher and its statically linked worker). Not a process cprof came into by injection
 * alone (--inject-only: no hook by the user's choice), nor calls no hook records (cudaEventQuery, a counted query):
 * a window may hold only those. */
static void runtime_not_hooked(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	int64_t memo_id[64];
	unsigned char memo[64], *quiet;
	long long n = 0, pid = 0;
	size_t i, k;
	char ev[400], first[160] = "", who[48] = "";

	/* quiet[k]: m->procs[k] had a hooked call, or no hooks by design */
	quiet = calloc(m->nprocs ? m->nprocs : 1, 1);
	if (quiet == NULL)
		return;
	for (i = 0; i < m->nprocs; i++)
		quiet[i] = (unsigned char)m->procs[i].hooks_absent;
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];

		if (!c->outer || (proc && c->proc != proc) || c->cls == CPROF_CALL_NVTX)
			continue;
		k = cprof_model_proc_index(m, c->proc);
		/* a call of a process the profile does not list: none can be told apart, so none is blamed */
		if (k == m->nprocs)
			goto out;
		quiet[k] = 1;
	}
	for (i = 0; i < 64; i++)
		memo_id[i] = CPROF_NO_ID;
	for (i = 0; i < m->nrt; i++) {
		const struct cprof_rt *r = &m->rt[i];

		if (proc && r->proc != proc)
			continue;
		k = cprof_model_proc_index(m, r->proc);
		if ((k < m->nprocs && quiet[k]) || !name_recorded(m, r->name, memo_id, memo))
			continue;
		if (n++ == 0) {
			snprintf(first, sizeof(first), "%s", cprof_model_string(m, r->name));
			pid = k < m->nprocs ? m->procs[k].pid : 0;
		}
	}
	if (n == 0)
		goto out;
	if (pid && m->nprocs > 1)
		snprintf(who, sizeof(who), " in pid %lld", pid);
	snprintf(ev, sizeof(ev), "%lld CUDA runtime calls seen by CUPTI (the first: %.100s%s), none by cprof's hooks",
		 n, first, who);
	add(l, "runtime-not-hooked", "info", ev,
	    "the CUDA runtime is linked into the program (nvcc's default, -cudart static, or a library carrying its "
	    "own): its GPU work and call times come from CUPTI, but no call has a call site, a stack or the hooks' "
	    "timing; build with nvcc -cudart shared to get them");
out:
	free(quiet);
}

static void cupti_overhead(const struct cprof_model *m, int64_t proc, const struct cprof_verdict *v, struct flist *l)
{
	uint64_t win = active_window(v), tot = 0;
	long long n = 0;
	char ev[400], d[32];
	size_t i;

	if (m->no_ovh_table) {
		not_evaluated(l, "cupti-overhead", "no such table: CUPTI_ACTIVITY_KIND_OVERHEAD");
		return;
	}
	for (i = 0; i < m->novh; i++)
		if (!proc || m->ovh[i].proc == proc) {
			tot += m->ovh[i].end - m->ovh[i].start;
			n++;
		}
	if (win && tot * 100 >= 15 * win) { /* 15% of the run: real flush times vary with load */
		cprof_fmt_dur(d, sizeof(d), (double)tot);
		snprintf(ev, sizeof(ev), "%lld CUPTI overhead records (buffer requests/flushes), %s, %.1f%% of the run from its first GPU op",
			 n, d, win ? 100.0 * tot / win : 0.0);
		add(l, "cupti-overhead", "info", ev,
		    "the profiler's own activity-buffer work left gaps; they are excluded from idle time");
	}
}

/* the keys of kernels' order by (name, launch shape), then time */
static int64_t op_kname(const void *ctx, uint32_t i)
{
	return ((const struct cprof_op *)ctx)[i].kname;
}

static int64_t op_shape(const void *ctx, uint32_t i)
{
	return ((const struct cprof_op *)ctx)[i].shape;
}

/* The same kernel with very different run times between repetitions of the same work: contention, or
 * inputs that change what it does. Launches of one name with different grids or blocks (a sweep over
 * sizes, by design) are different work: repetitions are grouped by name and launch shape. */
static void variance(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	uint32_t *idx = malloc((m->nops ? m->nops : 1) * sizeof(*idx));
	char ev[400] = "", kn[100], a[32], b[32];
	size_t i, n = 0, g;
	int hits = 0;

	if (idx == NULL) {
		not_evaluated(l, "kernel-variance", "out of memory");
		return;
	}
	for (i = 0; i < m->nops; i++)
		if (m->ops[i].kind == CPROF_OP_KERNEL && m->ops[i].kname >= 0 && !(proc && m->ops[i].proc != proc))
			idx[n++] = (uint32_t)i;
	/* idx is in time order: stable by shape, then by name */
	if (cprof_radix_sort_ix(idx, n, op_shape, m->ops) < 0 || cprof_radix_sort_ix(idx, n, op_kname, m->ops) < 0) {
		free(idx);
		not_evaluated(l, "kernel-variance", "out of memory");
		return;
	}
	/* dense name indices follow nameId order, as SQL's GROUP BY did */
	for (g = 0; g < n;) {
		const struct cprof_op *f = &m->ops[idx[g]];
		const char *s = f->name == CPROF_NO_ID ? NULL : cprof_model_string(m, f->name);
		__int128 sum = 0, sq = 0;
		int64_t min = 0, max = 0;
		size_t j, k;
		double mean, var, sd;

		for (j = g; j < n && m->ops[idx[j]].kname == f->kname && m->ops[idx[j]].shape == f->shape; j++) {
			int64_t d = (int64_t)(m->ops[idx[j]].end - m->ops[idx[j]].start);

			if (j == g || d < min)
				min = d;
			if (j == g || d > max)
				max = d;
			sum += d;
			sq += (__int128)d * d;
		}
		k = j - g;
		g = j;
		if (k < 5 || s == NULL)
			continue;
		mean = (double)sum / (double)k;
		var = (double)sq / (double)k - mean * mean;
		sd = sqrt(var > 0 ? var : 0);
		if (mean > 0 && sd / mean > 0.5) {
			short_kernel(s, kn, sizeof(kn));
			cprof_fmt_dur(a, sizeof(a), (double)min);
			cprof_fmt_dur(b, sizeof(b), (double)max);
			ev_add(ev, sizeof(ev), "%s: CV %.2f over %lld runs (%s .. %s)", kn, sd / mean, (long long)k, a, b);
			hits++;
		}
	}
	free(idx);
	if (hits)
		add(l, "kernel-variance", "warn", ev,
		    "kernel run times vary a lot between repetitions of the same launch shape (coefficient of "
		    "variation > 0.5): inputs change what the kernel does, or something competes for the GPU");
}

/* step times that wander: the program's pace is not steady (data loading, allocator, Python GC, contention) */
static void step_variance(const struct cprof_step *steps, int n, struct flist *l)
{
	int i, from, slow = 0;
	double sum = 0, sq = 0, mean, sd;
	char ev[400], a[32], b[32], c[32];

	if (n < 5)
		return;
	from = cprof_steps_cold(steps, n) ? 1 : 0;
	if (n - from < 4)
		return;
	for (i = from; i < n; i++) {
		double d = (double)(steps[i].end - steps[i].start);

		sum += d;
		sq += d * d;
		if (d > (double)(steps[slow].end - steps[slow].start) || slow < from)
			slow = i;
	}
	mean = sum / (n - from);
	sd = sq / (n - from) - mean * mean > 0 ? __builtin_sqrt(sq / (n - from) - mean * mean) : 0;
	if (mean > 0 && sd / mean > 0.25) {
		cprof_fmt_dur(a, sizeof(a), (double)cprof_steps_median(steps, n, from));
		cprof_fmt_dur(b, sizeof(b), (double)(steps[slow].end - steps[slow].start));
		cprof_fmt_dur(c, sizeof(c), sd);
		snprintf(ev, sizeof(ev), "%d steps%s: median %s, std %s (CV %.2f), slowest step %d (\"%.40s\") %s", n - from,
			 from ? " after the first" : "", a, c, sd / mean, slow + 1, steps[slow].name, b);
		add(l, "step-variance", "warn", ev,
		    "step times vary (coefficient of variation > 0.25): the steady state is not steady; look at the slow "
		    "steps for data loading, host work, allocator growth or synchronisation");
	}
}

static int cmp_op_row(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct cprof_op *x = &stream_model->ops[i], *y = &stream_model->ops[j];

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int cmp_name_first(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int cmp_first(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* kernels launched through the driver API, as Triton, torch.compile and cuda-python do; hooked when the launch
 * came through cuLaunchKernel* by name or by an entry point cprof handed out (its record carries our id). Each
 * (kernel, driver record) pair counts, as the join did; the names are listed once each (StringIds values
 * are unique: once per id), in the order the kernel table first has them. */
static void driver_api(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	uint32_t *ix = malloc((m->nops ? m->nops : 1) * sizeof(*ix));
	int64_t (*nm)[2] = malloc((m->nops ? m->nops : 1) * sizeof(*nm));
	size_t i, n = 0, nn = 0, u = 0, len = 0;
	char ev[480], names[400], msg[320];
	long long count = 0, hooked = 0, triton = 0;

	if (ix == NULL || nm == NULL) {
		free(ix);
		free(nm);
		not_evaluated(l, "driver-api-kernels", "out of memory");
		return;
	}
	for (i = 0; i < m->nops; i++)
		if (m->ops[i].kind == CPROF_OP_KERNEL && m->ops[i].via == 2 && (!proc || m->ops[i].proc == proc))
			ix[n++] = (uint32_t)i;
	stream_model = m;
	if (n)
		qsort(ix, n, sizeof(*ix), cmp_op_row);
	stream_model = NULL;
	for (i = 0; i < n; i++) {
		const struct cprof_op *o = &m->ops[ix[i]];

		const char *kn = o->name != CPROF_NO_ID ? cprof_model_string(m, o->name) : NULL;

		count += o->ndrv;
		hooked += o->hooked ? o->ndrv : 0;
		triton += kn && !strncmp(kn, "triton", 6) ? o->ndrv : 0;
		if (kn) {
			nm[nn][0] = o->name;
			nm[nn++][1] = (int64_t)i;
		}
	}
	if (nn) {
		qsort(nm, nn, sizeof(*nm), cmp_name_first);
		for (i = 0; i < nn; i++)
			if (u == 0 || nm[u - 1][0] != nm[i][0])
				memcpy(nm[u++], nm[i], sizeof(nm[i]));
		qsort(nm, u, sizeof(*nm), cmp_first);
	}
	names[0] = '\0';
	for (i = 0; i < u && len < sizeof(names) - 1; i++) {
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? "," : "", cprof_model_string(m, nm[i][0]));
		if (len > sizeof(names) - 1)
			len = sizeof(names) - 1;
	}
	free(ix);
	free(nm);
	if (count > 0) {
		snprintf(ev, sizeof(ev), "%lld kernels launched with cuLaunchKernel* (%lld Triton kernels), %lld by a hooked call: %.300s",
			 count, triton, hooked, u ? names : "?");
		if (hooked == count)
			snprintf(msg, sizeof(msg), "kernels launched through the driver API (%s): their launch calls are "
				 "hooked, with host time, stream, call site and stack like runtime launches",
				 triton ? "Triton / torch.compile" : "a JIT or cuda-python");
		else
			snprintf(msg, sizeof(msg), "kernels launched through the driver API (%s): %lld of them CUPTI saw "
				 "only (a launch by an entry point cprof did not hand out), so those have no host call site",
				 triton ? "Triton / torch.compile" : "a JIT or cuda-python", count - hooked);
		add(l, "driver-api-kernels", "info", ev, "%s", msg);
	}
}

static int cmp_double(const void *a, const void *b);

/* cudaGraphLaunch calls of the process (0: all) */
static uint64_t graph_replays(const struct cprof_model *m, int64_t proc)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < m->ncalls; i++)
		n += m->calls[i].graph == CPROF_GRAPH_REPLAY && m->calls[i].ret == 0 && (!proc || m->calls[i].proc == proc);
	return n;
}

/* CUDA graphs: how many were made, how often replayed, how many kernels each replay ran, and what a replay cost
 * the host against the launches of the same kernels one by one */
/* each kernel a replay launched, by the replay's call (a replay's kernels share its call) */
struct graph_ks {
	int64_t (*k)[2]; /* proc, our correlation id of the replay */
	size_t n, cap;
};

static int graph_k_add(void *arg, const struct cprof_call *c, const struct cprof_op *o)
{
	struct graph_ks *g = arg;

	if (c->graph != CPROF_GRAPH_REPLAY || o->kind != CPROF_OP_KERNEL)
		return 0;
	if (cprof_grow(&g->k, &g->cap, g->n, sizeof(*g->k)) < 0)
		return -ENOMEM;
	g->k[g->n][0] = c->proc;
	g->k[g->n++][1] = c->corr;
	return 0;
}

static int cmp_pair(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static void cuda_graphs(struct cprof_model *m, int64_t proc, struct flist *l)
{
	char ev[480], a[32], b[32];
	long long captured = 0, made = 0, kernels, ran, replays = (long long)graph_replays(m, proc);
	struct graph_ks g = { NULL, 0, 0 };
	double *rep = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*rep)), *eag = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*eag));
	size_t i, nr = 0, ne = 0;

	if (rep == NULL || eag == NULL) {
		free(rep);
		free(eag);
		not_evaluated(l, "cuda-graphs", "out of memory");
		return;
	}
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];

		if ((proc && c->proc != proc) || c->ret != 0)
			continue;
		captured += c->graph == CPROF_GRAPH_CAPTURED;
		made += c->graph == CPROF_GRAPH_INSTANTIATED;
	}
	if (replays && cprof_model_launched(m, proc, graph_k_add, &g) < 0) {
		not_evaluated(l, "cuda-graphs", "out of memory");
		goto out;
	}
	kernels = (long long)g.n;
	ran = 0;
	if (g.n)
		qsort(g.k, g.n, sizeof(*g.k), cmp_pair);
	for (i = 0; i < g.n; i++)
		ran += i == 0 || cmp_pair(g.k[i - 1], g.k[i]) != 0;
	if (replays == 0 && captured == 0 && made == 0)
		goto out;
	/* median host time of a replay and of one eager kernel launch */
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];

		if ((proc && c->proc != proc) || !c->launch || !c->outer || c->ret != 0)
			continue;
		if (c->graph == CPROF_GRAPH_REPLAY)
			rep[nr++] = (double)(c->end - c->start);
		else
			eag[ne++] = (double)(c->end - c->start);
	}
	snprintf(ev, sizeof(ev), "%lld graphs captured, %lld instantiated, %lld replays", captured, made, replays);
	if (ran)
		ev_add(ev, sizeof(ev), "%lld kernels ran in graphs (%.4g per replay)", kernels, (double)kernels / (double)ran);
	if (nr && ne && ran) {
		qsort(rep, nr, sizeof(*rep), cmp_double);
		qsort(eag, ne, sizeof(*eag), cmp_double);
		cprof_fmt_dur(a, sizeof(a), rep[nr / 2]);
		cprof_fmt_dur(b, sizeof(b), (double)kernels / (double)ran * eag[ne / 2]);
		ev_add(ev, sizeof(ev), "a replay (median) cost the host %s against %s for launching its kernels one by one",
		       a, b);
	}
	add(l, "cuda-graphs", "info", ev,
	    "the program replays CUDA graphs: each replay is one launch call for all its kernels, which get no launch "
	    "time of their own; the capture and instantiation are set-up, kept out of the steady window");
out:
	free(rep);
	free(eag);
	free(g.k);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* a kernel and when (and on which thread) the hooked call that launched it began */
struct launched_k {
	uint64_t t, gpu_ns;
	int64_t proc, tid;
};

struct launched_ks {
	struct launched_k *k;
	size_t n, cap;
};

static int launched_k_add(void *arg, const struct cprof_call *c, const struct cprof_op *o)
{
	struct launched_ks *ks = arg;

	if (o->kind != CPROF_OP_KERNEL)
		return 0;
	if (cprof_grow(&ks->k, &ks->cap, ks->n, sizeof(*ks->k)) < 0)
		return -ENOMEM;
	ks->k[ks->n++] = (struct launched_k){ c->start, o->end - o->start, c->proc, c->tid };
	return 0;
}

static int cmp_launched_k(const void *a, const void *b)
{
	const struct launched_k *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

static double median_of(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* torch.compile's host cost per call (the guide's point about tiny ops): PyTorch's own ranges (cprof-run
 * --torch-ops) mark Dynamo's cache lookup before each call and the compiled region around it; against them,
 * the CUDA calls made inside the region and the GPU time of the kernels those launched. A region named F/C
 * with C > 0 is frame F compiled again: a recompilation. */
int cprof_compile_cost(struct cprof_model *m, int64_t proc, struct cprof_compile_cost *cc)
{
	double *host = NULL, *look = NULL, *api = NULL, *gpu = NULL, *kn = NULL;
	size_t n = 0, nl = 0, cap = 0, lcap = 0, i, r;
	char (*seen)[64] = NULL, *recomp = cc->recompiled;
	size_t nseen = 0, scap = 0;
	long long calls = 0, nrecomp = 0;
	struct launched_ks ks = { NULL, 0, 0 };
	int ret = 0;

	memset(cc, 0, sizeof(*cc));
	if (m->ntorch == 0)
		return 0;
	if (cprof_model_launched(m, proc, launched_k_add, &ks) < 0)
		goto oom;
	if (ks.n)
		qsort(ks.k, ks.n, sizeof(*ks.k), cmp_launched_k);
	for (r = 0; r < m->ntorch; r++) {
		const struct cprof_torch_range *tr = &m->torch[r];
		int64_t pr = tr->proc, tid = tr->tid;
		uint64_t rs = tr->start, re = tr->end;
		const char *name = cprof_model_string(m, tr->text);
		const char *fc = name ? strstr(name, ": ") : NULL;
		double in_api = 0, g_ns = 0, g_k = 0;
		size_t lo, hi;
		int first = 1;

		if (name == NULL || (proc && pr != proc))
			continue;
		if (tr->lookup) {
			if (cprof_grow(&look, &lcap, nl, sizeof(*look)) < 0)
				goto oom;
			look[nl++] = (double)(re - rs);
			continue;
		}
		calls++;
		/* the first call of each region compiles, autotunes or records a graph: not its steady cost */
		for (i = 0; i < nseen; i++)
			if (!strncmp(seen[i], name, sizeof(seen[i]) - 1)) {
				first = 0;
				break;
			}
		if (first) {
			const char *slash = fc ? strchr(fc, '/') : NULL;

			if (cprof_grow(&seen, &scap, nseen, sizeof(*seen)) < 0)
				goto oom;
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", name);
			if (slash && strtol(slash + 1, NULL, 10) > 0) {
				nrecomp++;
				if (strlen(recomp) + strlen(fc + 2) + 3 < sizeof(cc->recompiled))
					snprintf(recomp + strlen(recomp), sizeof(cc->recompiled) - strlen(recomp), "%s%s",
						 *recomp ? ", " : "", fc + 2);
			}
			continue;
		}
		for (i = cprof_model_calls_from(m, rs); i < m->ncalls && m->calls[i].start < re; i++) {
			const struct cprof_call *cl = &m->calls[i];

			if (cl->proc == pr && cl->tid == tid && cl->outer && cl->end <= re)
				in_api += (double)(cl->end - cl->start);
		}
		for (lo = 0, hi = ks.n; lo < hi;) {
			size_t mid = lo + (hi - lo) / 2;

			if (ks.k[mid].t < rs)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (i = lo; i < ks.n && ks.k[i].t < re; i++)
			if (ks.k[i].proc == pr && ks.k[i].tid == tid)
				g_k++, g_ns += (double)ks.k[i].gpu_ns;
		if (cprof_grow(&host, &cap, n, sizeof(*host)) < 0 || !(api = realloc(api, cap * sizeof(*api))) ||
		    !(gpu = realloc(gpu, cap * sizeof(*gpu))) || !(kn = realloc(kn, cap * sizeof(*kn))))
			goto oom;
		host[n] = (double)(re - rs);
		api[n] = in_api;
		gpu[n] = g_ns;
		kn[n++] = g_k;
	}
	cc->calls = calls;
	cc->regions = nseen;
	cc->steady = n;
	cc->lookup_ns = median_of(look, nl);
	cc->region_ns = median_of(host, n);
	cc->api_ns = median_of(api, n);
	cc->gpu_ns = median_of(gpu, n);
	cc->kernels = median_of(kn, n);
	cc->recompiles = nrecomp;
	goto out;
oom:
	ret = -ENOMEM;
out:
	free(host);
	free(look);
	free(api);
	free(gpu);
	free(kn);
	free(seen);
	free(ks.k);
	return ret;
}

static void torch_compile(struct cprof_model *m, int64_t proc, struct flist *l)
{
	struct cprof_compile_cost cc;
	char ev[560], a[32], b[32], c[32], d[32], e[32];

	if (cprof_compile_cost(m, proc, &cc) < 0) {
		not_evaluated(l, "torch-compile-host-cost", "out of memory");
		return;
	}
	if (cc.steady) {
		double h = cc.region_ns, lk = cc.lookup_ns, ap = cc.api_ns, gp = cc.gpu_ns, k = cc.kernels;

		cprof_fmt_dur(a, sizeof(a), lk);
		cprof_fmt_dur(b, sizeof(b), h);
		cprof_fmt_dur(c, sizeof(c), ap);
		cprof_fmt_dur(d, sizeof(d), gp);
		cprof_fmt_dur(e, sizeof(e), lk + h);
		snprintf(ev, sizeof(ev),
			 "%lld calls of %zu compiled regions, %zu after each region's first; per call (median): Dynamo cache "
			 "lookup %s + compiled region %s = %s on the host, of which %s in CUDA calls; %.4g kernels per call, "
			 "%s on the GPU",
			 cc.calls, cc.regions, cc.steady, a, b, e, c, k, d);
		if (lk + h > gp)
			add(l, "torch-compile-host-cost", "warn", ev,
			    "torch.compile's host cost per call (the cache lookup and the compiled region's wrappers) is %.3gx "
			    "the GPU time of the kernels it runs: the compiled work is too small for what surrounds it; give "
			    "each call more work, or %s", gp > 0 ? (lk + h) / gp : 0.0,
			    graph_replays(m, proc) ? "compile more of them with mode=\"reduce-overhead\" (CUDA graphs)"
						   : "use mode=\"reduce-overhead\" (CUDA graphs)");
		else
			add(l, "torch-compile-host-cost", "info", ev,
			    "torch.compile's host cost per call (the cache lookup and the compiled region's wrappers) is "
			    "below the GPU time of the kernels it runs");
	}
	if (cc.recompiles) {
		snprintf(ev, sizeof(ev), "%lld recompilations: Torch-Compiled Region %s", cc.recompiles, cc.recompiled);
		add(l, "torch-compile-recompiles", "warn", ev,
		    "Dynamo compiled a frame again (a cache miss: a guard failed on a new shape, dtype or value); each "
		    "costs a compilation: keep the inputs' shapes fixed or mark the changing dimension dynamic "
		    "(torch._dynamo.mark_dynamic)");
	}
}

struct tiny {
	int64_t name; /* the kernel's StringIds id, CPROF_NO_ID when it has no name */
	const char *s;
	int64_t n, gpu, api, api_max;
};

struct tinies {
	const struct cprof_model *m;
	struct tiny *t;
	size_t n, cap;
};

static int tiny_add(void *arg, const struct cprof_call *c, const struct cprof_op *o)
{
	struct tinies *ts = arg;
	int64_t name = o->name, d = (int64_t)(c->end - c->start);
	struct tiny *t = NULL;
	size_t i;

	/* a graph's kernels have no launch call of their own: the replay launched them all */
	if (o->kind != CPROF_OP_KERNEL || c->graph == CPROF_GRAPH_REPLAY || cprof_model_string(ts->m, c->name) == NULL)
		return 0;
	if (name != CPROF_NO_ID && cprof_model_string(ts->m, name) == NULL)
		name = CPROF_NO_ID;
	for (i = ts->n; i-- > 0;)
		if (ts->t[i].name == name) {
			t = &ts->t[i];
			break;
		}
	if (t == NULL) {
		if (cprof_grow(&ts->t, &ts->cap, ts->n, sizeof(*ts->t)) < 0)
			return -ENOMEM;
		t = &ts->t[ts->n++];
		memset(t, 0, sizeof(*t));
		t->name = name;
		t->s = name == CPROF_NO_ID ? NULL : cprof_model_string(ts->m, name);
		t->api_max = d;
	}
	t->n++;
	t->gpu += (int64_t)(o->end - o->start);
	t->api += d;
	if (d > t->api_max)
		t->api_max = d;
	return 0;
}

/* most launches first; among equals, by name descending (no name last): the order SQLite's sorter gave
 * the earlier, SQL version of this rule, which the golden outputs keep */
static int cmp_tiny(const void *a, const void *b)
{
	const struct tiny *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (x->s == NULL || y->s == NULL)
		return (x->s == NULL) - (y->s == NULL);
	return strcmp(y->s, x->s);
}

/* kernels that end sooner than it takes to launch them */
static void tiny_kernels(struct cprof_model *m, int64_t proc, struct flist *l)
{
	struct tinies ts = { m, NULL, 0, 0 };
	char ev[400] = "", k[100], a[32], b[32];
	size_t i;
	int hits = 0;

	if (cprof_model_launched(m, proc, tiny_add, &ts) < 0) {
		free(ts.t);
		not_evaluated(l, "tiny-kernels", "out of memory");
		return;
	}
	if (ts.n)
		qsort(ts.t, ts.n, sizeof(*ts.t), cmp_tiny);
	for (i = 0; i < ts.n; i++) {
		const struct tiny *t = &ts.t[i];
		/* the launch's typical cost leaves out its slowest instance, the cold first one */
		double gpu = (double)t->gpu / (double)t->n, api = (double)(t->api - t->api_max) / (t->n - 1.0);

		if (t->n < 10 || !(gpu < api))
			continue;
		short_kernel(t->s ? t->s : "?", k, sizeof(k));
		cprof_fmt_dur(a, sizeof(a), gpu);
		cprof_fmt_dur(b, sizeof(b), api);
		ev_add(ev, sizeof(ev), "%lld x %s: %s on the GPU, %s to launch", (long long)t->n, k, a, b);
		hits++;
	}
	free(ts.t);
	if (hits) {
		size_t i;
		int graphs = 0;

		/* the advice leaves out what the program does already */
		for (i = 0; i < m->ncalls && !graphs; i++)
			graphs = (!proc || m->calls[i].proc == proc) && cprof_model_string(m, m->calls[i].name) &&
				 !strncmp(cprof_model_string(m, m->calls[i].name), "cudaGraphLaunch", 15);
		add(l, "tiny-kernels", "warn", ev,
		    "many kernels are shorter than their own launch call: the GPU idles between them; fuse them, "
		    "%s", graphs || graph_replays(m, proc) ? "or batch the work (it replays CUDA graphs already: capture more of each step in them)"
				 : "batch the work, or capture a CUDA graph");
	}
}

/* calls of one thread together, in time order */
static int cmp_thread(const void *a, const void *b)
{
	const struct cprof_call *x = &thread_model->calls[*(const uint32_t *)a], *y = &thread_model->calls[*(const uint32_t *)b];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : *(const uint32_t *)a > *(const uint32_t *)b;
}

/* synchronising calls with launches between them, again and again: a sync inside the loop */
static void sync_in_loop(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	uint32_t *sy = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*sy));
	uint32_t *la = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*la));
	struct { int64_t name; int64_t n; } *cnt = NULL;
	size_t nsy = 0, nla = 0, ncnt = 0, capcnt = 0, i, best = 0;
	char ev[400];

	if (sy == NULL || la == NULL)
		goto oom;
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];

		if (c->launch || c->gemm)
			la[nla++] = (uint32_t)i;
		/* a synchronising call, or a blocking copy to the host (device-to-host, array-to-host);
		 * cudaStreamWaitEvent orders two streams on the GPU and returns at once: the host does not wait */
		if (c->outer && (!proc || c->proc == proc) && (c->sync || (c->memcpy && (c->a0 == 2 || c->a0 == 4))) &&
		    cprof_model_string(m, c->name) && strncmp(cprof_model_string(m, c->name), "cudaStreamWaitEvent", 19))
			sy[nsy++] = (uint32_t)i;
	}
	thread_model = m;
	if (cprof_radix_sort_ix_by(sy, nsy, m->calls, sizeof(*m->calls), cprof_key_call_proc, cprof_key_call_tid, m) < 0)
		cprof_sort(sy, nsy, sizeof(*sy), cmp_thread);
	if (cprof_radix_sort_ix_by(la, nla, m->calls, sizeof(*m->calls), cprof_key_call_proc, cprof_key_call_tid, m) < 0)
		cprof_sort(la, nla, sizeof(*la), cmp_thread);
	thread_model = NULL;
	for (i = 1; i < nsy; i++) {
		const struct cprof_call *s = &m->calls[sy[i]], *p = &m->calls[sy[i - 1]];
		size_t lo = 0, hi = nla, j;

		if (p->proc != s->proc || p->tid != s->tid)
			continue;
		/* the first launch on this thread after the previous sync ended */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct cprof_call *x = &m->calls[la[mid]];

			if (x->proc < s->proc || (x->proc == s->proc && (x->tid < s->tid || (x->tid == s->tid && x->start <= p->end))))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == nla || m->calls[la[lo]].proc != s->proc || m->calls[la[lo]].tid != s->tid ||
		    m->calls[la[lo]].start >= s->start)
			continue;
		for (j = 0; j < ncnt && cnt[j].name != s->name; j++)
			;
		if (j == ncnt) {
			if (cprof_grow(&cnt, &capcnt, ncnt, sizeof(*cnt)) < 0)
				goto oom;
			cnt[ncnt].name = s->name;
			cnt[ncnt++].n = 0;
		}
		cnt[j].n++;
	}
	for (i = 1; i < ncnt; i++)
		if (cnt[i].n > cnt[best].n ||
		    (cnt[i].n == cnt[best].n && /* among equals the last name, as cmp_tiny */
		     strcmp(cprof_model_string(m, cnt[i].name), cprof_model_string(m, cnt[best].name)) > 0))
			best = i;
	if (ncnt && cnt[best].n >= 10) {
		snprintf(ev, sizeof(ev), "%s called %lld times, each after new launches since the previous one",
			 cprof_model_string(m, cnt[best].name), (long long)cnt[best].n);
		add(l, "sync-in-loop", "warn", ev,
		    "a synchronising call inside the loop makes the CPU wait for the GPU every iteration (.item(), "
		    ".cpu(), printing a tensor): move it out of the loop or make it asynchronous");
	}
	free(sy);
	free(la);
	free(cnt);
	return;
oom:
	free(sy);
	free(la);
	free(cnt);
	not_evaluated(l, "sync-in-loop", "out of memory");
}

/* a process that failed: a CUDA error, a signal, no goodbye, or a non-zero exit status */
static int proc_failed(const struct cprof_proc *p)
{
	const char *st = strstr(p->bye, ", status ");

	return p->end != NULL || (st && atoi(st + 9) != 0);
}

/* Each rank's pace is its steady state, as the verdict's window: from its first GPU op after warm-up to
 * its last CUDA activity. The first to last CUDA call would count the rendezvous a rank that started
 * early waited through. A failed run (a rank failed, or the command did) has no pace to compare. */
static void straggler(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	struct cprof_thresholds t;
	int64_t rank[1024], last_rank;
	double run[1024], med;
	int n = 0, i, j;
	size_t k;
	char ev[400], a[32], b[32];

	if (proc || m->exit_status > 0)
		return;
	cprof_thresholds_default(&t);
	for (k = 0; k < m->nprocs; k++) {
		const struct cprof_proc *p = &m->procs[k];
		struct cprof_verdict v;
		double w;

		if (p->rank < 0)
			continue;
		if (proc_failed(p))
			return;
		/* the window's length is all this needs, not a whole verdict of every rank's run (a second one where the
		 * report makes each process's headline) */
		if (cprof_analyse_window(m, p->id, 0, UINT64_MAX, &t, &v) < 0 || v.kernels + v.memcpys + v.memsets == 0)
			continue;
		w = (double)(v.end - v.start);
		/* a rank's processes together: the longest of them */
		for (i = 0; i < n && rank[i] != p->rank; i++)
			;
		if (i < n) {
			if (w > run[i])
				run[i] = w;
		} else if (n < 1024) {
			rank[n] = p->rank;
			run[n++] = w;
		}
	}
	if (n < 2)
		return;
	/* by time, then rank, as ORDER BY run did */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && (run[j] < run[j - 1] || (run[j] == run[j - 1] && rank[j] < rank[j - 1])); j--) {
			double d = run[j];
			int64_t r = rank[j];

			run[j] = run[j - 1];
			rank[j] = rank[j - 1];
			run[j - 1] = d;
			rank[j - 1] = r;
		}
	last_rank = rank[n - 1];
	med = n % 2 ? run[n / 2] : (run[n / 2 - 1] + run[n / 2]) / 2;
	if (run[n - 1] >= 1.25 * med && run[n - 1] - med >= 1e6) {
		cprof_fmt_dur(a, sizeof(a), run[n - 1]);
		cprof_fmt_dur(b, sizeof(b), med);
		snprintf(ev, sizeof(ev), "rank %lld ran %s (its steady state: first GPU op after warm-up to last CUDA "
			 "activity) vs a median of %s over %d ranks (+%.0f%%)",
			 (long long)last_rank, a, b, n, 100 * (run[n - 1] / med - 1));
		add(l, "straggler", "warn", ev,
		    "one rank is much slower than the others: in a data-parallel job every rank waits for it at each "
		    "collective; look at that rank's host (data loading, CPU contention) and its kernels");
	}
}

/* The run failed (the command's exit status, or a process's, is not 0) and no crash finding says so: its
 * verdict covers only what ran before the failure, which NCCL, Triton or the driver reported to the
 * program, not through a CUDA call's return code. */
static void run_failed(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	const struct cprof_call *lastfail = NULL;
	char ev[400] = "", code[96];
	size_t i;
	int failed = 0;

	for (i = 0; i < m->nprocs; i++) {
		const struct cprof_proc *p = &m->procs[i];

		if (proc && p->id != proc)
			continue;
		if (p->end)
			return; /* the crash finding names it */
		if (proc_failed(p)) {
			ev_add(ev, sizeof(ev), "pid %lld ended: %.100s", (long long)p->pid, p->bye);
			failed = 1;
		}
	}
	if (!proc && m->exit_status > 0 && !failed) {
		ev_add(ev, sizeof(ev), "the command exited with status %lld", (long long)m->exit_status);
		failed = 1;
	}
	if (!failed)
		return;
	for (i = 0; i < m->ncalls; i++)
		if (m->calls[i].ret != 0 && m->calls[i].ret != 600 && (!proc || m->calls[i].proc == proc) &&
		    cprof_model_string(m, m->calls[i].name))
			lastfail = &m->calls[i];
	if (lastfail) {
		cprof_name_code(code, sizeof(code), cprof_model_string(m, lastfail->name), lastfail->ret);
		ev_add(ev, sizeof(ev), "the last failed CUDA call: %s returned %s", cprof_model_string(m, lastfail->name),
		       code);
	} else {
		ev_add(ev, sizeof(ev), "no CUDA call failed");
	}
	add(l, "run-failed", "warn", ev,
	    "the run failed: the verdict and the tables cover only what ran before the failure; the program's own "
	    "error output says why (NCCL, Triton and driver errors reach it without a failing CUDA call)");
}

/* CUPTI's memory kinds: 1 pageable, 2 pinned */
#define MEM_PAGEABLE 1
#define MEM_PINNED 2

/* Issue 18 item 6: copies between host and device as a cause: time and bandwidth each way, from pageable
 * or pinned memory, and how many of the calls were synchronous (the host waited for each copy). */
static void copies(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	struct dir {
		uint64_t n, ns, bytes, pageable, pageable_ns;
	} h2d = { 0 }, d2h = { 0 };
	uint64_t sync_calls = 0, copy_calls = 0, sync_ns = 0, api_ns = 0, busy_ns = 0;
	char ev[400] = "", a[32], b[32];
	size_t i;
	int staged;

	for (i = 0; i < m->nops; i++) {
		const struct cprof_op *o = &m->ops[i];
		struct dir *d;

		if (proc && o->proc != proc)
			continue;
		busy_ns += o->end - o->start;
		if (o->kind != CPROF_OP_MEMCPY || (o->copy != 1 && o->copy != 2))
			continue;
		d = o->copy == 1 ? &h2d : &d2h;
		d->n++;
		d->ns += o->end - o->start;
		d->bytes += (uint64_t)(o->bytes > 0 ? o->bytes : 0);
		/* the host side: the source of a host-to-device copy, the destination of the other */
		if ((o->copy == 1 ? o->srckind : o->dstkind) == MEM_PAGEABLE) {
			d->pageable++;
			d->pageable_ns += o->end - o->start;
		}
	}
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];

		if (!c->outer || (proc && c->proc != proc))
			continue;
		api_ns += c->end - c->start;
		if (!(c->copy || c->memcpy))
			continue;
		copy_calls++;
		/* a copy call that synchronises with the GPU (cudaMemcpy), or an asynchronous one from pageable
		 * memory, which the driver stages: the host waits either way */
		if (c->cut) {
			sync_calls++;
			sync_ns += c->end - c->start;
		}
	}
	if (h2d.n + d2h.n == 0)
		return;
	/* a cause when copies take most of the GPU's op time, or most of the host's time in CUDA calls */
	if ((h2d.ns + d2h.ns) * 2 < busy_ns && (api_ns == 0 || sync_ns * 2 < api_ns))
		return;
	if (h2d.n) {
		cprof_fmt_dur(a, sizeof(a), (double)h2d.ns);
		ev_add(ev, sizeof(ev), "host-to-device: %llu copies, %s, %.1f GB/s, %llu from pageable memory",
		       (unsigned long long)h2d.n, a, h2d.ns ? (double)h2d.bytes / (double)h2d.ns : 0.0,
		       (unsigned long long)h2d.pageable);
	}
	if (d2h.n) {
		cprof_fmt_dur(a, sizeof(a), (double)d2h.ns);
		ev_add(ev, sizeof(ev), "device-to-host: %llu copies, %s, %.1f GB/s, %llu to pageable memory",
		       (unsigned long long)d2h.n, a, d2h.ns ? (double)d2h.bytes / (double)d2h.ns : 0.0,
		       (unsigned long long)d2h.pageable);
	}
	if (copy_calls) {
		cprof_fmt_dur(a, sizeof(a), (double)sync_ns);
		cprof_fmt_dur(b, sizeof(b), (double)api_ns);
		ev_add(ev, sizeof(ev), "%llu of %llu copy calls synchronous, %s of the %s in CUDA calls",
		       (unsigned long long)sync_calls, (unsigned long long)copy_calls, a, b);
	}
	/* pinning is the advice when pageable copies are a real share of the copy time: a program that pinned its
	 * buffers (simpleStreams' cudaHostRegister) and made one small pageable copy was told to pin them */
	staged = (h2d.pageable_ns + d2h.pageable_ns) * 10 >= h2d.ns + d2h.ns && h2d.pageable + d2h.pageable;
	add(l, "copies", "warn", ev, "copies between host and device dominate%s: %scopy with cudaMemcpyAsync on their own "
	    "streams, and overlap the copies with compute",
	    staged ? " and use pageable memory (staged, about half the bandwidth)" : "",
	    staged ? "allocate the host buffers pinned (cudaMallocHost, cudaHostRegister), " : "");
}

/* one failing (API, return code): how often, first when, and the call that failed first */
struct fail {
	const char *api; /* the model's string, less a CUPTI version suffix in name[] */
	char name[64];
	int code;
	uint64_t n, first;
	int64_t proc, stream; /* of the first failure; stream: the hooked call's argument (CPROF_NO_ID: none) */
	uint64_t first_end;
};

static int fail_add(struct fail **f, size_t *n, size_t *cap, const char *api, int cupti, int code, int64_t proc,
		    int64_t stream, uint64_t start, uint64_t end)
{
	char name[64];
	size_t i, len;

	snprintf(name, sizeof(name), "%s", api);
	/* CUPTI names carry the version of the entry point (cudaMalloc_v3020): one row with the hook's name
	 * (a hooked name such as cublasSgemm_v2 is the symbol's own, kept) */
	len = strlen(name);
	while (cupti && len > 0 && name[len - 1] >= '0' && name[len - 1] <= '9')
		len--;
	if (cupti && len > 2 && len < strlen(name) && name[len - 1] == 'v' && name[len - 2] == '_')
		name[len - 2] = '\0';
	for (i = 0; i < *n; i++)
		if ((*f)[i].code == code && !strcmp((*f)[i].name, name)) {
			(*f)[i].n++;
			if (start < (*f)[i].first) {
				(*f)[i].first = start;
				(*f)[i].first_end = end;
				(*f)[i].proc = proc;
				(*f)[i].stream = stream;
			}
			return 0;
		}
	if (cprof_grow(f, cap, *n, sizeof(**f)) < 0)
		return -ENOMEM;
	memset(&(*f)[*n], 0, sizeof(**f));
	snprintf((*f)[*n].name, sizeof((*f)[*n].name), "%s", name);
	(*f)[*n].code = code;
	(*f)[*n].n = 1;
	(*f)[*n].first = start;
	(*f)[*n].first_end = end;
	(*f)[*n].proc = proc;
	(*f)[*n].stream = stream;
	(*n)++;
	return 0;
}

static int cmp_fail(const void *a, const void *b)
{
	const struct fail *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Errors a kernel raises surface at a later call (a sync, a copy, the next launch): illegal address,
 * launch timeout, hardware stack error, illegal instruction, misaligned or invalid address, invalid PC,
 * launch failure. Their numbers are the same in the runtime and the driver. */
static int async_error(int code)
{
	return code == 700 || code == 702 || (code >= 714 && code <= 719);
}

/* not failures: a query answering "still running", a version query without a driver */
static int benign(const char *api, int code)
{
	return (code == 600 && strstr(api, "Query") != NULL) || !strncmp(api, "nvtx", 4);
}

/* the CUPTI stream of the kernels launched with this stream argument (the hooks see the program's handle,
 * CUPTI gives its own id): the first such launch's, CPROF_NO_ID when none */
struct stream_of {
	int64_t proc, arg, id;
};

static int stream_of_fn(void *ctx, const struct cprof_call *c, const struct cprof_op *o)
{
	struct stream_of *s = ctx;

	if (c->proc == s->proc && c->stream == s->arg && o->kind == CPROF_OP_KERNEL) {
		s->id = o->stream;
		return -1; /* found: stop */
	}
	return 0;
}

/* the last kernels (up to 3, latest first) that started before t on the process's stream (any stream
 * when stream is CPROF_NO_ID: the last kernel's stream) */
static void last_kernels(const struct cprof_model *m, int64_t proc, int64_t stream, uint64_t t, char *out, size_t size,
			 int64_t *stream_out)
{
	size_t i = cprof_model_ops_from(m, t);
	int n = 0;

	out[0] = '\0';
	*stream_out = stream;
	while (i-- > 0 && n < 3) {
		const struct cprof_op *o = &m->ops[i];
		const char *s;
		char k[100];
		size_t len = strlen(out);

		if (o->kind != CPROF_OP_KERNEL || o->proc != proc)
			continue;
		if (*stream_out == CPROF_NO_ID)
			*stream_out = o->stream;
		if (o->stream != *stream_out)
			continue;
		s = o->name == CPROF_NO_ID ? NULL : cprof_model_string(m, o->name);
		short_kernel(s ? s : "?", k, sizeof(k));
		snprintf(out + len, size - len, "%s%.80s", n ? ", " : "", k);
		n++;
	}
}

/* issue 18 item 1: every failing CUDA call, per API and return code, with the code's name; an error a
 * kernel raised names the kernels that ran on its stream before the call that reported it */
static void cuda_errors(struct cprof_model *m, int64_t proc, const struct cprof_verdict *v, struct flist *l)
{
	struct fail *f = NULL;
	size_t n = 0, cap = 0, i;
	char ev[400] = "", a[32], nc[96], ks[300];
	uint64_t total = 0, t0 = v->run_start;
	int async_done = 0;

	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];
		const char *api = cprof_model_string(m, c->name);

		if (c->ret == 0 || (proc && c->proc != proc) || api == NULL || benign(api, c->ret))
			continue;
		if (fail_add(&f, &n, &cap, api, 0, c->ret, c->proc, c->stream, c->start, c->end) < 0)
			goto oom;
	}
	/* calls only CUPTI saw (a hooked call's own record carries our external id: counted once, above) */
	for (i = 0; i < m->nrt; i++) {
		const struct cprof_rt *r = &m->rt[i];
		const char *api = r->name == CPROF_NO_ID ? NULL : cprof_model_string(m, r->name);

		if (r->ret == 0 || (proc && r->proc != proc) || api == NULL || benign(api, r->ret) || r->ext != CPROF_NO_ID)
			continue;
		if (fail_add(&f, &n, &cap, api, 1, r->ret, r->proc, CPROF_NO_ID, r->start, r->end) < 0)
			goto oom;
	}
	if (n == 0) {
		free(f);
		return;
	}
	qsort(f, n, sizeof(*f), cmp_fail);
	for (i = 0; i < n; i++) {
		total += f[i].n;
		cprof_name_code(nc, sizeof(nc), f[i].name, f[i].code);
		cprof_fmt_dur(a, sizeof(a), (double)(f[i].first > t0 ? f[i].first - t0 : 0));
		/* the first asynchronous error: where it came from */
		if (async_error(f[i].code) && !async_done) {
			int64_t stream = CPROF_NO_ID, used;

			if (f[i].stream != CPROF_NO_ID && f[i].stream != 0) {
				struct stream_of so = { f[i].proc, f[i].stream, CPROF_NO_ID };

				if (cprof_model_launched(m, f[i].proc, stream_of_fn, &so) < 0 && so.id == CPROF_NO_ID)
					goto oom;
				stream = so.id;
			}
			last_kernels(m, f[i].proc, stream, f[i].first_end, ks, sizeof(ks), &used);
			async_done = 1;
			if (ks[0]) {
				ev_add(ev, sizeof(ev), "%s returned %s x%llu, first at +%s, raised by a kernel: the last on stream "
				       "%lld before it: %s", f[i].name, nc, (unsigned long long)f[i].n, a, (long long)used, ks);
				continue;
			}
		}
		ev_add(ev, sizeof(ev), "%s returned %s x%llu, first at +%s", f[i].name, nc, (unsigned long long)f[i].n, a);
	}
	add(l, "cuda-errors", "warn", ev, "%llu CUDA call(s) failed (%zu API/code pair(s))%s", (unsigned long long)total, n,
	    async_done ? "; an error a kernel raised (700, illegal address, and the like) surfaces at a later call and "
			 "every call after it fails: look at the kernels named, run compute-sanitizer on them"
		       : ": check each call's return code where it is made");
	free(f);
	return;
oom:
	free(f);
	add(l, "cuda-errors", "info", "not evaluated: out of memory", "CUDA errors: not evaluated");
}

/* a process died (a fatal signal, a kill, a CUDA error): the last CUDA call of each thread, and the last
 * kernels of each stream, or of the failing stream for a CUDA error */
static void crash(const struct cprof_model *m, int64_t proc, struct flist *l)
{
	size_t i, j;

	for (i = 0; i < m->nprocs; i++) {
		const struct cprof_proc *p = &m->procs[i];
		const struct cprof_end *e = p->end;
		char ev[400] = "", list[200], k[64];
		char code[96];
		size_t n;

		if (e == NULL || (proc && p->id != proc))
			continue;
		if (e->err) {
			cprof_name_code(code, sizeof(code), e->err_api ? e->err_api : "", (int)e->err);
			ev_add(ev, sizeof(ev), "%s returned %s on thread %lld", e->err_api ? e->err_api : "?", code,
			       (long long)e->err_tid);
			for (j = 0, n = 0, list[0] = '\0'; j < e->nerr_kernels && n < sizeof(list); j++)
				n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", j ? ", " : "",
						      cprof_end_kernel_name(e->err_kernels[j].name, k, sizeof(k)));
			if (e->nerr_kernels)
				ev_add(ev, sizeof(ev), "last kernels %s before it, latest first: %s",
				       e->err_device ? "on any stream" : "on its stream", list);
		}
		if (e->signal)
			ev_add(ev, sizeof(ev), "signal %d (SIG%s)", e->signal,
			       sigabbrev_np(e->signal) ? sigabbrev_np(e->signal) : "?");
		for (j = 0; j < e->ncalls; j++)
			ev_add(ev, sizeof(ev), "thread %lld last called %s%s%s%s, returned %lld", (long long)e->calls[j].tid,
			       e->calls[j].api, e->calls[j].kernel ? " (" : "",
			       e->calls[j].kernel ? cprof_end_kernel_name(e->calls[j].kernel, k, sizeof(k)) : "",
			       e->calls[j].kernel ? ")" : "", (long long)e->calls[j].ret);
		/* per stream, latest first; a CUDA error has named its own stream's already */
		for (j = 0; !e->err && j < e->nkernels;) {
			size_t s = j;

			for (n = 0, list[0] = '\0'; j < e->nkernels && e->kernels[j].handle == e->kernels[s].handle; j++)
				if (n < sizeof(list))
					n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", j > s ? ", " : "",
							      cprof_end_kernel_name(e->kernels[j].name, k, sizeof(k)));
			if (e->kernels[s].stream >= 0)
				ev_add(ev, sizeof(ev), "last kernels on stream %lld: %s", (long long)e->kernels[s].stream, list);
			else
				ev_add(ev, sizeof(ev), "last kernels on stream 0x%llx: %s", (unsigned long long)e->kernels[s].handle,
				       list);
		}
		add(l, "crash", "warn", ev, "pid %lld ended: %.200s. %s", (long long)p->pid, e->ending,
		    e->err ? "A kernel's fault is reported by a later call (a sync, a copy): the culprit is among the last "
			     "kernels on that stream; rerun with CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer to pin it"
		    : e->killed && !strncmp(e->ending, "no goodbye", 10)
			? "It never said goodbye (killed, or still running when the run ended): what it had not sent is "
			  "not counted, so its counts are a lower bound"
		    : e->killed ? "It was killed from outside (SIGKILL, the OOM killer): what it had not sent yet is lost "
				  "uncounted, so its counts are a lower bound"
				: "The evidence gives what each thread and stream did last");
	}
}

int cprof_findings(struct cprof_model *m, int64_t proc, const struct cprof_verdict *v, struct cprof_finding **out)
{
	struct flist l = { 0 };
	const struct cprof_step *steps = NULL;
	/* the steps the verdict found, read once per profile */
	int nsteps = v->steps > 2 ? cprof_model_steps(m, proc, v->step_re, &steps) : 0;

	if (nsteps < 0)
		nsteps = 0;
	crash(m, proc, &l);
	cuda_errors(m, proc, v, &l);
	cold_start(m, proc, v, steps, nsteps, &l);
	occupancy(m, proc, &l);
	batched_gemm(m, proc, &l);
	dtod_before_gemm(m, proc, &l);
	final_sync(m, proc, v, &l);
	copies(m, proc, &l);
	cupti_overhead(m, proc, v, &l);
	runtime_not_hooked(m, proc, &l);
	variance(m, proc, &l);
	step_variance(steps, nsteps, &l);
	driver_api(m, proc, &l);
	cuda_graphs(m, proc, &l);
	torch_compile(m, proc, &l);
	tiny_kernels(m, proc, &l);
	sync_in_loop(m, proc, &l);
	straggler(m, proc, &l);
	run_failed(m, proc, &l);
	*out = l.f;
	return (int)l.n;
}
