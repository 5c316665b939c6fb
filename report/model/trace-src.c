/* cprof trace's model part: the call <-> CUPTI <-> GPU joins and the NVTX layout in memory, the big tables streamed in column batches. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "common/wire.h"
#include "report/cprof.h"
#include "report/model/trace-src.h"

#define NUL(st, i) (sqlite3_column_type(st, i) == SQLITE_NULL)
#define I64(st, i) sqlite3_column_int64(st, i)

/* qsort, but an empty array may have no buffer at all */
static void sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* ---- a set of int64 pairs (open addressing), with a value each ---- */
struct pairmap {
	struct cprof_tsrc_pair *k;
	int64_t *v;
	uint8_t *used;
	size_t cap, n;
};

static size_t pair_hash(int64_t a, int64_t b, size_t cap)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)b + 0x632be59bd9b4e019ULL) * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)((h ^ (h >> 31)) & (cap - 1));
}

/* the slot of (a, b), added (with value v) when new; NULL: out of memory */
static int64_t *pairmap_get(struct pairmap *p, int64_t a, int64_t b, int64_t v, int *added)
{
	size_t i;

	if (2 * (p->n + 1) > p->cap) {
		struct pairmap g = { .cap = p->cap ? p->cap * 2 : 64 };
		size_t j;

		g.k = malloc(g.cap * sizeof(*g.k));
		g.v = malloc(g.cap * sizeof(*g.v));
		g.used = calloc(g.cap, 1);
		if (g.k == NULL || g.v == NULL || g.used == NULL) {
			free(g.k);
			free(g.v);
			free(g.used);
			return NULL;
		}
		for (j = 0; j < p->cap; j++)
			if (p->used[j]) {
				for (i = pair_hash(p->k[j].a, p->k[j].b, g.cap); g.used[i]; i = (i + 1) & (g.cap - 1))
					;
				g.used[i] = 1;
				g.k[i] = p->k[j];
				g.v[i] = p->v[j];
			}
		g.n = p->n;
		free(p->k);
		free(p->v);
		free(p->used);
		*p = g;
	}
	for (i = pair_hash(a, b, p->cap); p->used[i]; i = (i + 1) & (p->cap - 1))
		if (p->k[i].a == a && p->k[i].b == b) {
			*added = 0;
			return &p->v[i];
		}
	p->used[i] = 1;
	p->k[i].a = a;
	p->k[i].b = b;
	p->v[i] = v;
	p->n++;
	*added = 1;
	return &p->v[i];
}

static void pairmap_free(struct pairmap *p)
{
	free(p->k);
	free(p->v);
	free(p->used);
	memset(p, 0, sizeof(*p));
}

static int cmp_pair(const void *x, const void *y)
{
	const struct cprof_tsrc_pair *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* the keys, sorted; the map is emptied */
static int pairmap_sorted(struct pairmap *p, struct cprof_tsrc_pair **out, size_t *n)
{
	size_t i, k = 0;

	*out = malloc((p->n ? p->n : 1) * sizeof(**out));
	if (*out == NULL)
		return -ENOMEM;
	for (i = 0; i < p->cap; i++)
		if (p->used[i])
			(*out)[k++] = p->k[i];
	*n = k;
	sort_n(*out, k, sizeof(**out), cmp_pair);
	pairmap_free(p);
	return 0;
}

/* ---- the rows kept: every one, or the rank's processes' (--per-rank) ---- */
static int kept(const struct cprof_trace_src *s, int64_t proc)
{
	size_t lo = 0, hi = s->m.nprocs;

	if (s->rank < 0)
		return 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->m.procs[mid].id < proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->m.nprocs && s->m.procs[lo].id == proc;
}

static size_t proc_index(const struct cprof_trace_src *s, int64_t proc)
{
	size_t lo = 0, hi = s->m.nprocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->m.procs[mid].id < proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->m.nprocs && s->m.procs[lo].id == proc ? lo : SIZE_MAX;
}

/* as SQL's min(start) over every table: numbers only, a NULL is no start */
static void note_start(struct cprof_trace_src *s, sqlite3_stmt *st, int i, int *have, int64_t *min)
{
	int type = sqlite3_column_type(st, i);
	int64_t v;

	if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
		return;
	v = I64(st, i);
	if (!*have || v < *min)
		*min = v;
	*have = 1;
	(void)s;
}

/* ---- the lookups ---- */
static size_t lower_pair(const void *arr, size_t n, size_t elem, int64_t a, int64_t b)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const int64_t *k = (const int64_t *)((const char *)arr + mid * elem);

		if (k[0] < a || (k[0] == a && k[1] < b))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

_Static_assert(offsetof(struct cprof_tsrc_api, corr) == 8 && offsetof(struct cprof_tsrc_hook, ext) == 8 &&
		       offsetof(struct cprof_tsrc_gop, corr) == 8 && offsetof(struct cprof_ext, corr) == 8,
	       "lower_pair reads (proc, key) at the front");

const struct cprof_tsrc_api *cprof_tsrc_api_find(const struct cprof_trace_src *s, int64_t proc, int64_t corr)
{
	size_t i = lower_pair(s->api, s->napi, sizeof(*s->api), proc, corr);

	return i < s->napi && s->api[i].proc == proc && s->api[i].corr == corr ? &s->api[i] : NULL;
}

const struct cprof_tsrc_hook *cprof_tsrc_hook_find(const struct cprof_trace_src *s, int64_t proc, int64_t ext)
{
	size_t i = lower_pair(s->hooks, s->nhooks, sizeof(*s->hooks), proc, ext);

	return i < s->nhooks && s->hooks[i].proc == proc && s->hooks[i].ext == ext ? &s->hooks[i] : NULL;
}

/* index into m.ext of the first row with (proc, corr): the one CUPTI's join keeps */
static size_t ext_first(const struct cprof_trace_src *s, int64_t proc, int64_t corr)
{
	size_t i = lower_pair(s->m.ext, s->m.next, sizeof(*s->m.ext), proc, corr);

	return i < s->m.next && s->m.ext[i].proc == proc && s->m.ext[i].corr == corr ? i : SIZE_MAX;
}

int cprof_tsrc_ext_of(const struct cprof_trace_src *s, int64_t proc, int64_t corr, int64_t *ext)
{
	size_t i = ext_first(s, proc, corr);

	if (i == SIZE_MAX)
		return 0;
	*ext = s->m.ext[i].ext;
	return 1;
}

/* the first of the call's entries in ext_by_ext */
static size_t by_ext_first(const struct cprof_trace_src *s, int64_t proc, int64_t ext)
{
	size_t lo = 0, hi = s->next_by_ext;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cprof_ext *e = &s->m.ext[s->ext_by_ext[mid]];

		if (e->proc < proc || (e->proc == proc && e->ext < ext))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int cprof_tsrc_call_corrs(const struct cprof_trace_src *s, int64_t proc, int64_t ext, int64_t *gcorr, int64_t *anycorr,
			  int64_t *ngpu)
{
	size_t i = by_ext_first(s, proc, ext);

	*gcorr = *anycorr = CPROF_NO_ID;
	*ngpu = 0;
	for (; i < s->next_by_ext; i++) {
		uint32_t k = s->ext_by_ext[i];
		const struct cprof_ext *e = &s->m.ext[k];

		if (e->proc != proc || e->ext != ext)
			break;
		if (*anycorr == CPROF_NO_ID)
			*anycorr = e->corr;
		if (s->ext_gpu[k]) {
			if (*gcorr == CPROF_NO_ID)
				*gcorr = e->corr;
			(*ngpu)++;
		}
	}
	return *anycorr != CPROF_NO_ID;
}

void cprof_tsrc_call_gpu_corrs(const struct cprof_trace_src *s, int64_t proc, int64_t ext,
			       void (*fn)(void *ctx, int64_t corr), void *ctx)
{
	size_t i;

	for (i = by_ext_first(s, proc, ext); i < s->next_by_ext; i++) {
		const struct cprof_ext *e = &s->m.ext[s->ext_by_ext[i]];

		if (e->proc != proc || e->ext != ext)
			break;
		if (s->ext_gpu[s->ext_by_ext[i]])
			fn(ctx, e->corr);
	}
}

/* ---- ATen op ranges: the innermost ended one open at a time, by (proc, tid, start, id) with each range's
 * nearest earlier one that ends later (the only ones that can still be open once it has ended) ---- */
struct oprng {
	int64_t proc, tid, start, end, id;
	size_t up; /* SIZE_MAX: none */
};
static struct oprng *g_op; /* set while a trace source is loaded: one at a time */
static size_t g_nop;

static int cmp_oprng(const void *x, const void *y)
{
	const struct oprng *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int oprng_build(const struct cprof_trace_src *s)
{
	size_t i, n = 0, *stack = NULL, top = 0;

	free(g_op);
	g_op = NULL;
	g_nop = 0;
	for (i = 0; i < s->nev; i++)
		n += s->ev[i].torch_op && !s->ev[i].open;
	if (n == 0)
		return 0;
	g_op = malloc(n * sizeof(*g_op));
	stack = malloc(n * sizeof(*stack));
	if (g_op == NULL || stack == NULL) {
		free(stack);
		return -ENOMEM;
	}
	for (i = 0; i < s->nev; i++) {
		const struct cprof_tsrc_nvtx *e = &s->ev[i];

		if (e->torch_op && !e->open)
			g_op[g_nop++] = (struct oprng){ e->proc, e->tid, e->start, e->end, e->id, SIZE_MAX };
	}
	sort_n(g_op, g_nop, sizeof(*g_op), cmp_oprng);
	for (i = 0; i < g_nop; i++) {
		if (i == 0 || g_op[i].proc != g_op[i - 1].proc || g_op[i].tid != g_op[i - 1].tid)
			top = 0;
		while (top && g_op[stack[top - 1]].end <= g_op[i].end)
			top--;
		g_op[i].up = top ? stack[top - 1] : SIZE_MAX;
		stack[top++] = i;
	}
	free(stack);
	return 0;
}

/* the latest-starting ended op range of (proc, tid) with start <= t <= end (ties: the larger id) */
int cprof_tsrc_innermost_op(const struct cprof_trace_src *s, int64_t proc, int64_t tid, int64_t t, int64_t *op)
{
	size_t lo = 0, hi = g_nop, i;

	(void)s;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct oprng *r = &g_op[mid];

		if (r->proc < proc || (r->proc == proc && (r->tid < tid || (r->tid == tid && r->start <= t))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	for (i = lo - 1; i != SIZE_MAX && g_op[i].proc == proc && g_op[i].tid == tid; i = g_op[i].up)
		if (g_op[i].end >= t) {
			*op = g_op[i].id;
			return 1;
		}
	return 0;
}

/* ---- loading ---- */
static int prep(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		pr_err("query failed: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

static int step_done(sqlite3 *db, int rc)
{
	if (rc == SQLITE_DONE)
		return 0;
	pr_err("reading the profile failed: %s", cprof_model_errmsg(db));
	return -EIO;
}

/* the first process's rank and world size, each process's end (PROCESSES.endNs), the header's META facts */
static int load_facts(struct cprof_trace_src *s, int64_t *end_ns)
{
	sqlite3_stmt *st;
	char command[4096];
	int rc, ret, have_rank = 0, have_world = 0;

	if ((ret = prep(s->db, "SELECT id, rank, worldSize, endNs FROM PROCESSES ORDER BY id", &st)) < 0)
		return ret;
	s->first_rank = 0;
	s->first_world = 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = proc_index(s, I64(st, 0));

		if (i == SIZE_MAX)
			continue;
		if (!have_rank && !NUL(st, 1)) {
			s->first_rank = I64(st, 1);
			have_rank = 1;
		}
		if (!have_world && !NUL(st, 2)) {
			s->first_world = I64(st, 2);
			have_world = 1;
		}
		end_ns[i] = NUL(st, 3) ? 0 : I64(st, 3);
	}
	sqlite3_finalize(st);
	if ((ret = step_done(s->db, rc)) < 0)
		return ret;
	s->lost_events = cprof_meta_int(s->db, "lost_events", 0);
	s->complete = cprof_meta_int(s->db, "complete", 0) == 1;
	s->simulated = cprof_meta_int(s->db, "simulated_gpu", 0) == 1;
	s->command = strdup(cprof_meta(s->db, "command", command, sizeof(command), ""));
	return s->command ? 0 : -ENOMEM;
}

/* --per-rank: the model keeps this rank's processes only */
static void filter_rank(struct cprof_trace_src *s)
{
	size_t i, k = 0;

	if (s->rank < 0)
		return;
	for (i = 0; i < s->m.nprocs; i++) {
		struct cprof_proc *p = &s->m.procs[i];

		if (p->rank == s->rank) {
			s->m.procs[k++] = *p;
			continue;
		}
		free(p->exe);
		free(p->argv);
		free(p->host);
		free(p->bye);
		cprof_end_free(p->end);
	}
	s->m.nprocs = k;
}

static int nvtx_type(const char *t)
{
	if (t == NULL)
		return CPROF_NVTX_OTHER;
	if (!strcmp(t, "mark"))
		return CPROF_NVTX_MARK;
	if (!strcmp(t, "range"))
		return CPROF_NVTX_RANGE;
	if (!strcmp(t, "startend"))
		return CPROF_NVTX_STARTEND;
	return CPROF_NVTX_OTHER;
}

static int load_nvtx(struct cprof_trace_src *s, int64_t *nvtx_end, int *have, int64_t *min)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, ret;

	if (!cprof_has_table(s->db, "NVTX_EVENTS"))
		return 0;
	if ((ret = prep(s->db, "SELECT id, processId, tid, start, end, eventType, textId, domainId, categoryId, color,"
			       " depth, endTid FROM NVTX_EVENTS ORDER BY rowid", &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_tsrc_nvtx *e;
		size_t p;

		if (!kept(s, I64(st, 1)))
			continue;
		note_start(s, st, 3, have, min);
		if ((p = proc_index(s, I64(st, 1))) != SIZE_MAX && I64(st, NUL(st, 4) ? 3 : 4) > nvtx_end[p])
			nvtx_end[p] = I64(st, NUL(st, 4) ? 3 : 4);
		if (cprof_grow(&s->ev, &cap, s->nev, sizeof(*s->ev)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		e = &s->ev[s->nev++];
		e->id = I64(st, 0);
		e->proc = I64(st, 1);
		e->tid = I64(st, 2);
		e->start = I64(st, 3);
		e->open = NUL(st, 4);
		e->end = e->open ? 0 : I64(st, 4);
		e->type = (uint8_t)nvtx_type((const char *)sqlite3_column_text(st, 5));
		e->text = NUL(st, 6) ? CPROF_NO_ID : I64(st, 6);
		e->domain = NUL(st, 7) ? CPROF_NO_ID : I64(st, 7);
		e->category = NUL(st, 8) ? CPROF_NO_ID : I64(st, 8);
		e->color = NUL(st, 9) ? CPROF_NO_ID : I64(st, 9);
		e->depth = NUL(st, 10) ? 0 : I64(st, 10);
		e->end_tid = NUL(st, 11) ? CPROF_NO_ID : I64(st, 11);
		e->torch_op = e->type == CPROF_NVTX_RANGE && e->category == (int64_t)CPROF_NVTX_CATEGORY_TORCH_OP;
		/* the range's end as the trace shows it; an open one is stretched in cprof_tsrc_index_finish */
		if (e->type == CPROF_NVTX_RANGE || e->type == CPROF_NVTX_STARTEND)
			e->end = e->open ? e->start : e->end > e->start ? e->end : e->start;
		else
			e->end = e->start;
	}
	sqlite3_finalize(st);
	return step_done(s->db, rc);
}

/* threads that only annotated, and the names given with NVTX (a few rows: read whole) */
struct stream_key {
	int64_t proc, key;
	int64_t lane;  /* resolved: device << 32 | stream; CPROF_NO_ID not yet */
};
struct name_row {
	int64_t proc, key;
	const char *name;
	size_t seq;
	int stream;
	size_t skey; /* streams: index into the stream keys */
};

static int load_threads_table(struct cprof_trace_src *s, struct pairmap *cpu)
{
	sqlite3_stmt *st;
	int rc, ret, added;
	size_t i;

	if (cprof_has_table(s->db, "THREADS")) {
		if ((ret = prep(s->db, "SELECT processId, tid FROM THREADS ORDER BY rowid", &st)) < 0)
			return ret;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			size_t p = proc_index(s, I64(st, 0));

			if (p != SIZE_MAX && pairmap_get(cpu, s->m.procs[p].pid, I64(st, 1), 0, &added) == NULL) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
		}
		sqlite3_finalize(st);
		if ((ret = step_done(s->db, rc)) < 0)
			return ret;
	}
	for (i = 0; i < s->nev; i++) {
		size_t p = proc_index(s, s->ev[i].proc);

		if (p != SIZE_MAX && pairmap_get(cpu, s->m.procs[p].pid, s->ev[i].tid, 0, &added) == NULL)
			return -ENOMEM;
	}
	return 0;
}

static int cmp_name_row(const void *x, const void *y)
{
	const struct name_row *a = x, *b = y;

	if (a->stream != b->stream)
		return a->stream - b->stream;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_skey(const void *x, const void *y)
{
	const struct stream_key *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

struct names_work {
	struct name_row *rows;
	size_t nrows;
	struct stream_key *keys; /* distinct (proc, handle) of the stream names, sorted */
	size_t nkeys;
	/* calls on a named stream, in rowid order: (key index, our correlation id) */
	struct {
		size_t key;
		int64_t ext;
	} *cand;
	size_t ncand, capcand;
};

static int load_names(struct cprof_trace_src *s, struct names_work *w)
{
	sqlite3_stmt *st;
	size_t cap = 0, i;
	int rc, ret;

	if (!cprof_has_table(s->db, "CPROF_NAMES"))
		return 0;
	if ((ret = prep(s->db, "SELECT processId, kind, key, nameId FROM CPROF_NAMES ORDER BY rowid", &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 1);
		const char *name = cprof_model_string(&s->m, I64(st, 3));
		int stream;

		if (!kept(s, I64(st, 0)))
			continue;
		s->nvtx = 1;
		if (kind == NULL || NUL(st, 3) || name == NULL || (strcmp(kind, "thread") && strcmp(kind, "stream")))
			continue;
		stream = !strcmp(kind, "stream");
		if (!stream && proc_index(s, I64(st, 0)) == SIZE_MAX)
			continue; /* a thread's name needs its process's pid */
		if (cprof_grow(&w->rows, &cap, w->nrows, sizeof(*w->rows)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		w->rows[w->nrows] = (struct name_row){ .proc = I64(st, 0), .key = I64(st, 2), .name = name, .seq = w->nrows,
						       .stream = stream };
		w->nrows++;
	}
	sqlite3_finalize(st);
	if ((ret = step_done(s->db, rc)) < 0)
		return ret;
	sort_n(w->rows, w->nrows, sizeof(*w->rows), cmp_name_row);
	w->keys = malloc((w->nrows ? w->nrows : 1) * sizeof(*w->keys));
	if (w->keys == NULL)
		return -ENOMEM;
	for (i = 0; i < w->nrows; i++) {
		if (!w->rows[i].stream)
			continue;
		if (w->nkeys == 0 || w->keys[w->nkeys - 1].proc != w->rows[i].proc || w->keys[w->nkeys - 1].key != w->rows[i].key)
			w->keys[w->nkeys++] = (struct stream_key){ w->rows[i].proc, w->rows[i].key, CPROF_NO_ID };
		w->rows[i].skey = w->nkeys - 1;
	}
	return 0;
}

static size_t skey_find(const struct names_work *w, int64_t proc, int64_t key)
{
	struct stream_key k = { proc, key, 0 };
	const struct stream_key *f = bsearch(&k, w->keys, w->nkeys, sizeof(*w->keys), cmp_skey);

	return f ? (size_t)(f - w->keys) : SIZE_MAX;
}

struct lcalls {
	struct cprof_tsrc_lcall *v;
	size_t n, cap;
	struct cprof_tsrc_pair *threads; /* (proc, tid) of the ranges a call can fall in, sorted */
	size_t nthreads;
};

static int cmp_hook(const void *x, const void *y)
{
	const struct cprof_tsrc_hook *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->ext != b->ext)
		return a->ext < b->ext ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* CPROF_API's key columns: the hooked calls by id, the latest end of each process, what NVTX needs */
static int scan_call_keys(struct cprof_trace_src *s, int64_t *api_end, struct lcalls *lc, struct names_work *w, int *have,
			  int64_t *min)
{
	sqlite3_stmt *st;
	size_t cap = 0, i, k;
	uint32_t seq = 0;
	int rc, ret;

	/* the array at its size at once: growing it by doubling copies it and keeps a spare half */
	cap = (size_t)cprof_query_int(s->db, "SELECT count(*) FROM CPROF_API", 0);
	if (cap && (s->hooks = malloc(cap * sizeof(*s->hooks))) == NULL)
		return -ENOMEM;
	if ((ret = prep(s->db, "SELECT processId, tid, start, end, correlationId, nameId, stream FROM CPROF_API ORDER BY rowid",
			&st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = I64(st, 0), tid = I64(st, 1), start = I64(st, 2);
		size_t p;

		if (!kept(s, proc))
			continue;
		note_start(s, st, 2, have, min);
		if ((p = proc_index(s, proc)) != SIZE_MAX && !NUL(st, 3) && I64(st, 3) > api_end[p])
			api_end[p] = I64(st, 3);
		if (NUL(st, 4) || NUL(st, 0))
			continue;
		if (cprof_grow(&s->hooks, &cap, s->nhooks, sizeof(*s->hooks)) < 0)
			goto nomem;
		s->hooks[s->nhooks++] = (struct cprof_tsrc_hook){ .proc = proc, .ext = I64(st, 4), .name = I64(st, 5),
								   .tid = tid, .mintid = tid, .op = CPROF_NO_ID, .seq = seq++ };
		if (g_nop) {
			int64_t op;

			if (cprof_tsrc_innermost_op(s, proc, tid, start, &op))
				s->hooks[s->nhooks - 1].op = op;
		}
		if (lc->nthreads) {
			struct cprof_tsrc_pair key = { proc, tid };

			if (bsearch(&key, lc->threads, lc->nthreads, sizeof(key), cmp_pair)) {
				if (cprof_grow(&lc->v, &lc->cap, lc->n, sizeof(*lc->v)) < 0)
					goto nomem;
				lc->v[lc->n++] = (struct cprof_tsrc_lcall){ proc, tid, start, I64(st, 4) };
			}
		}
		if (w->nkeys && !NUL(st, 6) && (k = skey_find(w, proc, I64(st, 6))) != SIZE_MAX) {
			if (cprof_grow(&w->cand, &w->capcand, w->ncand, sizeof(*w->cand)) < 0)
				goto nomem;
			w->cand[w->ncand].key = k;
			w->cand[w->ncand++].ext = I64(st, 4);
		}
	}
	sqlite3_finalize(st);
	if ((ret = step_done(s->db, rc)) < 0)
		return ret;
	/* the first row of each id stands for it; the thread map's join sees every row's tid */
	sort_n(s->hooks, s->nhooks, sizeof(*s->hooks), cmp_hook);
	for (i = 0, k = 0; i < s->nhooks; i++) {
		if (k && s->hooks[k - 1].proc == s->hooks[i].proc && s->hooks[k - 1].ext == s->hooks[i].ext) {
			if (s->hooks[i].tid < s->hooks[k - 1].mintid)
				s->hooks[k - 1].mintid = s->hooks[i].tid;
			continue;
		}
		s->hooks[k++] = s->hooks[i];
	}
	s->nhooks = k;
	return 0;
nomem:
	sqlite3_finalize(st);
	return -ENOMEM;
}

static int cmp_api(const void *x, const void *y)
{
	const struct cprof_tsrc_api *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* CUPTI's runtime then driver records: (proc, corr) -> name and cbid, the CUPTI threads, the thread map */
static int scan_api_keys(struct cprof_trace_src *s, struct pairmap *threads, struct pairmap *tmap, int *have,
			 int64_t *min)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER" };
	size_t cap = 0, i, k;
	uint32_t seq = 0;
	int t, rc, ret, added;

	size_t nrt = 0;

	/* sized for the runtime records at once (most driver records are not kept) */
	if (cprof_has_table(s->db, tables[0])) {
		cap = (size_t)cprof_query_int(s->db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME", 0);
		if (cap && (s->api = malloc(cap * sizeof(*s->api))) == NULL)
			return -ENOMEM;
	}
	for (t = 0; t < 2; t++) {
		sqlite3_stmt *st;
		char sql[160];

		if (t == 1) {
			/* the runtime records by id: a driver record with a runtime record's id is not kept (the
			 * runtime one is joined), which saves most of the driver table's rows */
			sort_n(s->api, s->napi, sizeof(*s->api), cmp_api);
			nrt = s->napi;
		}
		if (!cprof_has_table(s->db, tables[t]))
			continue;
		snprintf(sql, sizeof(sql), "SELECT processId, correlationId, nameId, cbid, threadId, start FROM %s ORDER BY rowid",
			 tables[t]);
		if ((ret = prep(s->db, sql, &st)) < 0)
			return ret;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t proc = I64(st, 0), corr = I64(st, 1), handle = I64(st, 4);

			if (!kept(s, proc))
				continue;
			note_start(s, st, 5, have, min);
			if (pairmap_get(threads, proc, handle, 0, &added) == NULL)
				goto nomem;
			if (NUL(st, 1))
				continue;
			/* the thread map: the smallest tid of a hooked call whose CUPTI side this is */
			for (i = lower_pair(s->m.ext, s->m.next, sizeof(*s->m.ext), proc, corr);
			     i < s->m.next && s->m.ext[i].proc == proc && s->m.ext[i].corr == corr; i++) {
				const struct cprof_tsrc_hook *h = cprof_tsrc_hook_find(s, proc, s->m.ext[i].ext);
				int64_t *v;

				if (h == NULL)
					continue;
				if ((v = pairmap_get(tmap, proc, handle, h->mintid, &added)) == NULL)
					goto nomem;
				if (h->mintid < *v)
					*v = h->mintid;
			}
			if (NUL(st, 0))
				continue;
			if (t == 1) {
				size_t r = lower_pair(s->api, nrt, sizeof(*s->api), proc, corr);

				if (r < nrt && s->api[r].proc == proc && s->api[r].corr == corr)
					continue;
			}
			if (cprof_grow(&s->api, &cap, s->napi, sizeof(*s->api)) < 0)
				goto nomem;
			s->api[s->napi++] = (struct cprof_tsrc_api){ .proc = proc, .corr = corr,
								    .name = NUL(st, 2) ? CPROF_NO_ID : I64(st, 2),
								    .cbid = I64(st, 3), .seq = seq++ };
			continue;
nomem:
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		sqlite3_finalize(st);
		if ((ret = step_done(s->db, rc)) < 0)
			return ret;
	}
	sort_n(s->api, s->napi, sizeof(*s->api), cmp_api);
	for (i = 0, k = 0; i < s->napi; i++)
		if (!k || s->api[k - 1].proc != s->api[i].proc || s->api[k - 1].corr != s->api[i].corr)
			s->api[k++] = s->api[i];
	s->napi = k;
	return 0;
}

static int cmp_gop(const void *x, const void *y)
{
	const struct cprof_tsrc_gop *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* the GPU ops' key columns: which CUPTI ids reached the GPU, the lanes, and (for NVTX) each op's lane and span */
static int scan_gpu_keys(struct cprof_trace_src *s, struct pairmap *lanes, int keep_ops, int *have, int64_t *min)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					      "CUPTI_ACTIVITY_KIND_MEMSET" };
	size_t cap = 0;
	uint32_t seq = 0;
	int t, rc, ret, added;

	for (t = 0; t < 3; t++) {
		sqlite3_stmt *st;
		char sql[160];

		if (!cprof_has_table(s->db, tables[t]))
			continue;
		snprintf(sql, sizeof(sql), "SELECT processId, correlationId, deviceId, streamId, start, end FROM %s ORDER BY rowid",
			 tables[t]);
		if ((ret = prep(s->db, sql, &st)) < 0)
			return ret;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t proc = I64(st, 0), corr = I64(st, 1);

			if (!kept(s, proc))
				continue;
			note_start(s, st, 4, have, min);
			if (pairmap_get(lanes, I64(st, 2), I64(st, 3), 0, &added) == NULL)
				goto nomem;
			if (NUL(st, 0) || NUL(st, 1))
				continue;
			{
				size_t e = ext_first(s, proc, corr);
				size_t a = lower_pair(s->api, s->napi, sizeof(*s->api), proc, corr);

				if (e != SIZE_MAX)
					s->ext_gpu[e] = 1;
				if (a < s->napi && s->api[a].proc == proc && s->api[a].corr == corr)
					s->api[a].gpu = 1;
			}
			if (keep_ops) {
				if (cprof_grow(&s->gops, &cap, s->ngops, sizeof(*s->gops)) < 0)
					goto nomem;
				s->gops[s->ngops++] = (struct cprof_tsrc_gop){ proc, corr, I64(st, 2), I64(st, 3), I64(st, 4),
									      I64(st, 5), seq++ };
			}
			continue;
nomem:
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		sqlite3_finalize(st);
		if ((ret = step_done(s->db, rc)) < 0)
			return ret;
	}
	if (s->ngops)
		sort_n(s->gops, s->ngops, sizeof(*s->gops), cmp_gop);
	return 0;
}

static const struct cprof_model *g_sort_m;

static int cmp_by_ext(const void *x, const void *y)
{
	const struct cprof_ext *a = &g_sort_m->ext[*(const uint32_t *)x], *b = &g_sort_m->ext[*(const uint32_t *)y];

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->ext != b->ext)
		return a->ext < b->ext ? -1 : 1;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* CUPTI ids by the call they belong to: the first row of each CUPTI id only, as CUPTI's join keeps one */
static int index_ext(struct cprof_trace_src *s)
{
	size_t i;

	s->ext_gpu = calloc(s->m.next ? s->m.next : 1, 1);
	s->ext_by_ext = malloc((s->m.next ? s->m.next : 1) * sizeof(*s->ext_by_ext));
	if (s->ext_gpu == NULL || s->ext_by_ext == NULL)
		return -ENOMEM;
	for (i = 0; i < s->m.next; i++)
		if (i == 0 || s->m.ext[i].proc != s->m.ext[i - 1].proc || s->m.ext[i].corr != s->m.ext[i - 1].corr)
			s->ext_by_ext[s->next_by_ext++] = (uint32_t)i;
	g_sort_m = &s->m;
	sort_n(s->ext_by_ext, s->next_by_ext, sizeof(*s->ext_by_ext), cmp_by_ext);
	g_sort_m = NULL;
	return 0;
}

static int cmp_lcall(const void *x, const void *y)
{
	const struct cprof_tsrc_lcall *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int cmp_proj(const void *x, const void *y)
{
	const struct cprof_tsrc_proj *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->stream < b->stream ? -1 : a->stream > b->stream;
}

int cprof_tsrc_project(struct cprof_trace_src *s, struct cprof_tsrc_lcall *calls, size_t ncalls)
{
	size_t r, cap = 0;

	sort_n(calls, ncalls, sizeof(*calls), cmp_lcall);
	for (r = 0; r < s->nev; r++) {
		const struct cprof_tsrc_nvtx *e = &s->ev[r];
		struct cprof_tsrc_lcall key = { e->proc, e->tid, e->start, 0 };
		size_t lo = 0, hi = ncalls, first = s->nproj, c;

		if ((e->type != CPROF_NVTX_RANGE && e->type != CPROF_NVTX_STARTEND) || e->torch_op)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_lcall(&calls[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (c = lo; c < ncalls && calls[c].proc == e->proc && calls[c].tid == e->tid && calls[c].start <= e->end; c++) {
			size_t x;

			for (x = by_ext_first(s, e->proc, calls[c].ext); x < s->next_by_ext; x++) {
				const struct cprof_ext *ex = &s->m.ext[s->ext_by_ext[x]];
				size_t g;

				if (ex->proc != e->proc || ex->ext != calls[c].ext)
					break;
				for (g = lower_pair(s->gops, s->ngops, sizeof(*s->gops), ex->proc, ex->corr);
				     g < s->ngops && s->gops[g].proc == ex->proc && s->gops[g].corr == ex->corr; g++) {
					const struct cprof_tsrc_gop *o = &s->gops[g];
					size_t k;

					for (k = first; k < s->nproj; k++)
						if (s->proj[k].dev == o->dev && s->proj[k].stream == o->stream)
							break;
					if (k == s->nproj) {
						if (cprof_grow(&s->proj, &cap, s->nproj, sizeof(*s->proj)) < 0)
							return -ENOMEM;
						s->proj[s->nproj++] = (struct cprof_tsrc_proj){ e->id, o->dev, o->stream, o->start,
												o->end, e->depth, e->text };
						continue;
					}
					if (o->start < s->proj[k].start)
						s->proj[k].start = o->start;
					if (o->end > s->proj[k].end)
						s->proj[k].end = o->end;
				}
			}
		}
	}
	sort_n(s->proj, s->nproj, sizeof(*s->proj), cmp_proj);
	return 0;
}

static int cmp_ev(const void *x, const void *y)
{
	const struct cprof_tsrc_nvtx *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int cprof_tsrc_index_finish(struct cprof_trace_src *s)
{
	sort_n(s->ev, s->nev, sizeof(*s->ev), cmp_ev);
	return 0;
}

struct stream_name {
	int64_t proc, lane;
	size_t seq;
	const char *name;
};

static int cmp_stream_name(const void *x, const void *y)
{
	const struct stream_name *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* each name given to a stream: the lane of the first GPU op of the first call on that handle that reached the
 * GPU (its CUPTI ids in order; kernels, copies, memsets); threads by (process, tid), then streams by (process,
 * lane), names of one lane in table order */
static int resolve_names(struct cprof_trace_src *s, struct names_work *w)
{
	struct stream_name *sn;
	size_t i, k = 0, nsn = 0;

	for (i = 0; i < w->ncand; i++) {
		struct stream_key *key = &w->keys[w->cand[i].key];
		size_t x;

		if (key->lane != CPROF_NO_ID)
			continue;
		for (x = by_ext_first(s, key->proc, w->cand[i].ext); x < s->next_by_ext && key->lane == CPROF_NO_ID; x++) {
			const struct cprof_ext *ex = &s->m.ext[s->ext_by_ext[x]];
			size_t g;

			if (ex->proc != key->proc || ex->ext != w->cand[i].ext)
				break;
			g = lower_pair(s->gops, s->ngops, sizeof(*s->gops), ex->proc, ex->corr);
			if (g < s->ngops && s->gops[g].proc == ex->proc && s->gops[g].corr == ex->corr)
				key->lane = (int64_t)((uint64_t)s->gops[g].dev * 4294967296u + (uint64_t)s->gops[g].stream);
		}
	}
	s->names = malloc((w->nrows ? w->nrows : 1) * sizeof(*s->names));
	sn = malloc((w->nrows ? w->nrows : 1) * sizeof(*sn));
	if (s->names == NULL || sn == NULL) {
		free(sn);
		return -ENOMEM;
	}
	for (i = 0; i < w->nrows; i++) {
		const struct name_row *r = &w->rows[i];

		if (!r->stream)
			s->names[k++] = (struct cprof_tsrc_name){ 0, s->m.procs[proc_index(s, r->proc)].pid, r->key, r->name };
		else if (w->keys[r->skey].lane != CPROF_NO_ID)
			sn[nsn++] = (struct stream_name){ r->proc, w->keys[r->skey].lane, r->seq, r->name };
	}
	sort_n(sn, nsn, sizeof(*sn), cmp_stream_name);
	/* as SQL splits device * 2^32 + stream */
	for (i = 0; i < nsn; i++)
		s->names[k++] = (struct cprof_tsrc_name){ 1, sn[i].lane >> 32, sn[i].lane & 4294967295, sn[i].name };
	s->nnames = k;
	free(sn);
	return 0;
}

static void free_names_work(struct names_work *w)
{
	free(w->rows);
	free(w->keys);
	free(w->cand);
}

/* a range never ended runs to the last time its process is known alive: its exit, its last call, its last
 * annotation (a range of no known process: to its start) */
static void nvtx_stretch(struct cprof_trace_src *s, const int64_t *end_ns, const int64_t *api_end, const int64_t *nvtx_end)
{
	size_t i;

	for (i = 0; i < s->nev; i++) {
		struct cprof_tsrc_nvtx *e = &s->ev[i];
		size_t p = proc_index(s, e->proc);
		int64_t pe;

		if (!e->open || (e->type != CPROF_NVTX_RANGE && e->type != CPROF_NVTX_STARTEND) || p == SIZE_MAX)
			continue;
		pe = end_ns[p] > api_end[p] ? end_ns[p] : api_end[p];
		if (nvtx_end[p] > pe)
			pe = nvtx_end[p];
		e->end = pe > e->start ? pe : e->start;
	}
}

static int cmp_thread(const void *x, const void *y)
{
	const struct cprof_thread *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->handle < b->handle ? -1 : a->handle > b->handle;
}

int cprof_trace_src_load(sqlite3 *db, int64_t rank, struct cprof_trace_src *s)
{
	struct pairmap cpu = { 0 }, cupti = { 0 }, lanes = { 0 }, tmap = { 0 };
	struct names_work w = { 0 };
	struct lcalls lc = { 0 };
	int64_t *end_ns = NULL, *api_end = NULL, *nvtx_end = NULL, min = 0;
	int have = 0, ret;
	size_t i;

	memset(s, 0, sizeof(*s));
	s->db = db;
	s->rank = rank;
	s->first_start = -1;
	if ((ret = cprof_model_load(db, CPROF_MODEL_TRACE, &s->m)) < 0) {
		pr_err("reading the profile failed: %s", cprof_model_errmsg(db));
		goto out;
	}
	filter_rank(s);
	end_ns = calloc(s->m.nprocs + 1, sizeof(*end_ns));
	api_end = calloc(s->m.nprocs + 1, sizeof(*api_end));
	nvtx_end = calloc(s->m.nprocs + 1, sizeof(*nvtx_end));
	ret = -ENOMEM;
	if (end_ns == NULL || api_end == NULL || nvtx_end == NULL)
		goto out;
	if ((ret = load_facts(s, end_ns)) < 0)
		goto out;
	if ((ret = cprof_stacks_load(db, &s->stacks)) < 0) {
		pr_err("cannot read the call stacks: %s", sqlite3_errmsg(db));
		goto out;
	}
	if ((ret = load_nvtx(s, nvtx_end, &have, &min)) < 0 || (ret = load_names(s, &w)) < 0 || (ret = oprng_build(s)) < 0 ||
	    (ret = load_threads_table(s, &cpu)) < 0 || (ret = index_ext(s)) < 0)
		goto out;
	s->nvtx = s->nvtx || s->nev;
	/* the threads whose calls a range that is not an ATen op can project onto the GPU */
	{
		struct pairmap rt = { 0 };
		int added;

		for (i = 0; i < s->nev; i++)
			if ((s->ev[i].type == CPROF_NVTX_RANGE || s->ev[i].type == CPROF_NVTX_STARTEND) && !s->ev[i].torch_op &&
			    pairmap_get(&rt, s->ev[i].proc, s->ev[i].tid, 0, &added) == NULL) {
				pairmap_free(&rt);
				ret = -ENOMEM;
				goto out;
			}
		if ((ret = pairmap_sorted(&rt, &lc.threads, &lc.nthreads)) < 0)
			goto out;
	}
	if ((ret = scan_call_keys(s, api_end, &lc, &w, &have, &min)) < 0 || (ret = scan_api_keys(s, &cupti, &tmap, &have, &min)) < 0 ||
	    (ret = scan_gpu_keys(s, &lanes, lc.n > 0 || w.nkeys > 0, &have, &min)) < 0)
		goto out;
	if (cprof_has_table(db, "CUPTI_ACTIVITY_KIND_OVERHEAD")) {
		sqlite3_stmt *st;
		int rc;

		if ((ret = prep(db, "SELECT processId, start FROM CUPTI_ACTIVITY_KIND_OVERHEAD ORDER BY rowid", &st)) < 0)
			goto out;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			if (kept(s, I64(st, 0))) {
				note_start(s, st, 1, &have, &min);
				s->novh++;
			}
		sqlite3_finalize(st);
		if ((ret = step_done(db, rc)) < 0)
			goto out;
	}
	s->first_start = have ? min : -1;
	nvtx_stretch(s, end_ns, api_end, nvtx_end);
	/* the calls that reached the GPU, and the projections through them */
	{
		size_t k = 0;

		for (i = 0; i < lc.n; i++) {
			int64_t g, a, n;

			cprof_tsrc_call_corrs(s, lc.v[i].proc, lc.v[i].ext, &g, &a, &n);
			if (n > 0)
				lc.v[k++] = lc.v[i];
		}
		if ((ret = cprof_tsrc_project(s, lc.v, k)) < 0)
			goto out;
	}
	if ((ret = resolve_names(s, &w)) < 0 || (ret = cprof_tsrc_index_finish(s)) < 0)
		goto out;
	if ((ret = pairmap_sorted(&cpu, &s->cpu_threads, &s->ncpu_threads)) < 0 ||
	    (ret = pairmap_sorted(&cupti, &s->cupti_threads, &s->ncupti_threads)) < 0 ||
	    (ret = pairmap_sorted(&lanes, &s->gpu_lanes, &s->ngpu_lanes)) < 0)
		goto out;
	/* the thread map of the model */
	s->m.threads = malloc((tmap.n ? tmap.n : 1) * sizeof(*s->m.threads));
	if (s->m.threads == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < tmap.cap; i++)
		if (tmap.used[i])
			s->m.threads[s->m.nthreads++] = (struct cprof_thread){ tmap.k[i].a, tmap.k[i].b, tmap.v[i] };
	sort_n(s->m.threads, s->m.nthreads, sizeof(*s->m.threads), cmp_thread);
	ret = 0;
out:
	pairmap_free(&cpu);
	pairmap_free(&cupti);
	pairmap_free(&lanes);
	pairmap_free(&tmap);
	free_names_work(&w);
	free(lc.v);
	free(lc.threads);
	free(end_ns);
	free(api_end);
	free(nvtx_end);
	if (ret < 0)
		cprof_trace_src_free(s);
	return ret;
}

void cprof_trace_src_free(struct cprof_trace_src *s)
{
	cprof_model_free(&s->m);
	cprof_stacks_free(&s->stacks);
	free(s->command);
	free(s->ext_by_ext);
	free(s->ext_gpu);
	free(s->api);
	free(s->hooks);
	free(s->gops);
	free(s->cpu_threads);
	free(s->cupti_threads);
	free(s->gpu_lanes);
	free(s->ev);
	free(s->proj);
	free(s->names);
	free(g_op);
	g_op = NULL;
	g_nop = 0;
	memset(s, 0, sizeof(*s));
}

/* ---- the streams: one scan in rowid order, a batch of columns at a time ---- */

/* the scan's end: 0 at the table's end, -ERANGE after a row out of range (said), -EIO else */
static int scan_end(sqlite3_stmt *st, int rc, int bad)
{
	sqlite3_finalize(st);
	if (bad)
		return -ERANGE;
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int cprof_tsrc_scan_calls(struct cprof_trace_src *s, int (*fn)(void *ctx, const struct cprof_tsrc_calls *b), void *ctx)
{
	struct cprof_tsrc_calls *b = malloc(sizeof(*b));
	char sql[320];
	sqlite3_stmt *st;
	int rc, ret = 0, bad = 0;

	if (b == NULL)
		return -ENOMEM;
	/* a profile from before stacks has no stackId column */
	snprintf(sql, sizeof(sql),
		 "SELECT processId, pid, tid, start, end, correlationId, nameId, class, returnValue, nested, kernelNameId,"
		 " stream, bytes, a0, a1, a2, a3, a4, a5, a6, %s FROM CPROF_API ORDER BY rowid",
		 s->stacks.n ? "stackId" : "NULL");
	if ((ret = prep(s->db, sql, &st)) < 0) {
		free(b);
		return ret;
	}
	b->n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = b->n;
		int k;

		if (!kept(s, I64(st, 0)))
			continue;
		/* a call whose name is not in StringIds is not written (the old join dropped it) */
		if (cprof_model_string(&s->m, I64(st, 6)) == NULL || NUL(st, 6))
			continue;
		if (!cprof_row_times_ok(st, 3, 4, 0)) {
			cprof_bad_time("CPROF_API", st, 3, 4);
			bad = 1;
			break;
		}
		b->proc[i] = I64(st, 0);
		b->pid[i] = I64(st, 1);
		b->tid[i] = I64(st, 2);
		b->start[i] = I64(st, 3);
		b->end[i] = I64(st, 4);
		b->has_ext[i] = !NUL(st, 5);
		b->ext[i] = I64(st, 5);
		b->name[i] = I64(st, 6);
		b->cls[i] = cprof_call_class_of((const char *)sqlite3_column_text(st, 7));
		b->ret[i] = I64(st, 8);
		b->nested[i] = I64(st, 9) != 0;
		b->kname[i] = I64(st, 10);
		b->has_stream[i] = !NUL(st, 11);
		b->stream[i] = I64(st, 11);
		b->has_bytes[i] = !NUL(st, 12);
		b->bytes[i] = I64(st, 12);
		for (k = 0; k < 7; k++)
			b->a[k][i] = I64(st, 13 + k);
		b->has_stack[i] = !NUL(st, 20);
		b->stack[i] = I64(st, 20);
		if (++b->n == CPROF_TSRC_BATCH) {
			if ((ret = fn(ctx, b)) < 0)
				break;
			b->n = 0;
		}
	}
	if (ret == 0 && b->n && (rc == SQLITE_DONE || bad))
		ret = fn(ctx, b);
	free(b);
	if (ret < 0) {
		sqlite3_finalize(st);
		return ret;
	}
	return scan_end(st, rc, bad);
}

int cprof_tsrc_scan_apis(struct cprof_trace_src *s, enum cprof_tsrc_api_table table,
			 int (*fn)(void *ctx, const struct cprof_tsrc_apis *b), void *ctx)
{
	const char *name = table == CPROF_TSRC_RUNTIME ? "CUPTI_ACTIVITY_KIND_RUNTIME" : "CUPTI_ACTIVITY_KIND_DRIVER";
	struct cprof_tsrc_apis *b;
	char sql[200];
	sqlite3_stmt *st;
	int rc, ret = 0, bad = 0;

	if (!cprof_has_table(s->db, name))
		return 0; /* an older profile */
	if ((b = malloc(sizeof(*b))) == NULL)
		return -ENOMEM;
	snprintf(sql, sizeof(sql), "SELECT processId, start, end, correlationId, nameId, cbid, threadId FROM %s ORDER BY rowid",
		 name);
	if ((ret = prep(s->db, sql, &st)) < 0) {
		free(b);
		return ret;
	}
	b->n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = b->n;

		if (!kept(s, I64(st, 0)))
			continue;
		if (!cprof_row_times_ok(st, 1, 2, 0)) {
			cprof_bad_time(name, st, 1, 2);
			bad = 1;
			break;
		}
		b->proc[i] = I64(st, 0);
		b->start[i] = I64(st, 1);
		b->end[i] = I64(st, 2);
		b->has_corr[i] = !NUL(st, 3) && !NUL(st, 0);
		b->corr[i] = I64(st, 3);
		b->name[i] = NUL(st, 4) ? CPROF_NO_ID : I64(st, 4);
		b->cbid[i] = I64(st, 5);
		b->thread[i] = I64(st, 6);
		if (++b->n == CPROF_TSRC_BATCH) {
			if ((ret = fn(ctx, b)) < 0)
				break;
			b->n = 0;
		}
	}
	if (ret == 0 && b->n && (rc == SQLITE_DONE || bad))
		ret = fn(ctx, b);
	free(b);
	if (ret < 0) {
		sqlite3_finalize(st);
		return ret;
	}
	return scan_end(st, rc, bad);
}

int cprof_tsrc_scan_ops(struct cprof_trace_src *s, enum cprof_op_kind kind,
			int (*fn)(void *ctx, const struct cprof_tsrc_ops *b), void *ctx)
{
	static const char *const sql[] = {
		[CPROF_OP_KERNEL] = "SELECT processId, start, end, deviceId, contextId, streamId, correlationId, nameId, gridX,"
				    " gridY, gridZ, blockX, blockY, blockZ, registersPerThread,"
				    " staticSharedMemory + dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid",
		[CPROF_OP_MEMCPY] = "SELECT processId, start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind,"
				    " srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY rowid",
		[CPROF_OP_MEMSET] = "SELECT processId, start, end, deviceId, contextId, streamId, correlationId, bytes, memKind"
				    " FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY rowid",
	};
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					      "CUPTI_ACTIVITY_KIND_MEMSET" };
	struct cprof_tsrc_ops *b;
	sqlite3_stmt *st;
	int rc, ret = 0, bad = 0;

	if (!cprof_has_table(s->db, tables[kind]))
		return 0;
	if ((b = malloc(sizeof(*b))) == NULL)
		return -ENOMEM;
	if ((ret = prep(s->db, sql[kind], &st)) < 0) {
		free(b);
		return ret;
	}
	b->n = 0;
	b->kind = kind;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = b->n;
		int k;

		if (!kept(s, I64(st, 0)))
			continue;
		if (!cprof_row_times_ok(st, 1, 2, 0)) {
			cprof_bad_time("CUPTI_ACTIVITY_KIND_KERNEL/MEMCPY/MEMSET", st, 1, 2);
			bad = 1;
			break;
		}
		b->proc[i] = I64(st, 0);
		b->start[i] = I64(st, 1);
		b->end[i] = I64(st, 2);
		b->dev[i] = I64(st, 3);
		b->ctx[i] = I64(st, 4);
		b->stream[i] = I64(st, 5);
		b->has_corr[i] = !NUL(st, 6) && !NUL(st, 0);
		b->corr[i] = I64(st, 6);
		if (kind == CPROF_OP_KERNEL) {
			b->name[i] = I64(st, 7);
			for (k = 0; k < 3; k++) {
				b->grid[k][i] = I64(st, 8 + k);
				b->block[k][i] = I64(st, 11 + k);
			}
			b->regs[i] = I64(st, 14);
			b->shmem[i] = I64(st, 15);
		} else if (kind == CPROF_OP_MEMCPY) {
			b->bytes[i] = I64(st, 7);
			b->copy[i] = I64(st, 8);
			b->src[i] = I64(st, 9);
			b->dst[i] = I64(st, 10);
		} else {
			b->bytes[i] = I64(st, 7);
			b->mem[i] = I64(st, 8);
		}
		if (++b->n == CPROF_TSRC_BATCH) {
			if ((ret = fn(ctx, b)) < 0)
				break;
			b->n = 0;
		}
	}
	if (ret == 0 && b->n && (rc == SQLITE_DONE || bad))
		ret = fn(ctx, b);
	free(b);
	if (ret < 0) {
		sqlite3_finalize(st);
		return ret;
	}
	return scan_end(st, rc, bad);
}

int cprof_tsrc_scan_overhead(struct cprof_trace_src *s, int (*fn)(void *ctx, const struct cprof_tsrc_ovhs *b), void *ctx)
{
	struct cprof_tsrc_ovhs *b;
	sqlite3_stmt *st;
	int rc, ret = 0, bad = 0;

	if (!cprof_has_table(s->db, "CUPTI_ACTIVITY_KIND_OVERHEAD"))
		return 0;
	if ((b = malloc(sizeof(*b))) == NULL)
		return -ENOMEM;
	if ((ret = prep(s->db, "SELECT processId, start, end, overheadKind FROM CUPTI_ACTIVITY_KIND_OVERHEAD ORDER BY rowid",
			&st)) < 0) {
		free(b);
		return ret;
	}
	b->n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!kept(s, I64(st, 0)))
			continue;
		if (!cprof_row_times_ok(st, 1, 2, 0)) {
			cprof_bad_time("CUPTI_ACTIVITY_KIND_OVERHEAD", st, 1, 2);
			bad = 1;
			break;
		}
		b->start[b->n] = I64(st, 1);
		b->end[b->n] = I64(st, 2);
		b->kind[b->n] = I64(st, 3);
		if (++b->n == CPROF_TSRC_BATCH) {
			if ((ret = fn(ctx, b)) < 0)
				break;
			b->n = 0;
		}
	}
	if (ret == 0 && b->n && (rc == SQLITE_DONE || bad))
		ret = fn(ctx, b);
	free(b);
	if (ret < 0) {
		sqlite3_finalize(st);
		return ret;
	}
	return scan_end(st, rc, bad);
}

int cprof_trace_src_open(const char *path, int64_t rank, struct cprof_trace_src *s)
{
	sqlite3 *db = cprof_profile_open(path);
	int ret;

	memset(s, 0, sizeof(*s));
	if (db == NULL)
		return -EINVAL; /* cprof_profile_open said why */
	if ((ret = cprof_trace_src_load(db, rank, s)) < 0) {
		sqlite3_close(db);
		return ret;
	}
	return 0;
}

void cprof_trace_src_close(struct cprof_trace_src *s)
{
	sqlite3 *db = s->db;

	cprof_trace_src_free(s);
	sqlite3_close(db);
}

int cprof_trace_src_ranks(const char *path, int64_t **ranks, size_t *n, int64_t *world)
{
	sqlite3 *db = cprof_profile_open(path);
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, ret = -EIO;

	*ranks = NULL;
	*n = 0;
	*world = 0;
	if (db == NULL)
		return -EINVAL;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT rank FROM PROCESSES WHERE rank IS NOT NULL ORDER BY rank", -1, &st,
			       NULL) != SQLITE_OK) {
		pr_err("%s: cannot read its processes: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	/* every rank: it stopped at 4096 without a word (issue 21, item 11) */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cprof_grow(ranks, &cap, *n, sizeof(**ranks)) < 0) {
			pr_err("out of memory");
			ret = -ENOMEM;
			goto out;
		}
		(*ranks)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE) {
		pr_err("%s: cannot read its processes: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	/* the world is what the launcher said */
	if (sqlite3_prepare_v2(db, "SELECT max(worldSize) FROM PROCESSES", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		*world = sqlite3_column_int64(st, 0);
	ret = 0;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ret;
}
