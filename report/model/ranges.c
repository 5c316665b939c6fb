/* cprof report --by range: NVTX ranges with their CPU time, the CUDA calls made inside them and the GPU time those launched. */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "report/cprof.h"
#include "report/model/analysis.h"
#include "report/model/model.h"
#include "report/model/ranges.h"

struct rng {
	int64_t id, proc, tid, start, end, parent_id, domain_id;
	int startend, open;
	int level; /* ancestors on its path */
	int parent; /* index of the enclosing range, -1 when none */
	int row;    /* its row in the table, -1 until resolved */
	int64_t self;
	/* running sums of the thread's calls when the range began, and what fell inside it */
	int64_t snap_calls, snap_api, snap_gpu, snap_ops;
	int64_t calls, api, gpu, ops;
	char *text, *domain;
};

struct by_id {
	int64_t id;
	int idx;
};

struct by_end {
	int64_t proc, tid, end;
	int idx;
};

struct sums {
	int64_t calls, api, gpu, ops;
};

/* Rows are found by path through an open-addressing hash (10^5 ranges share a handful of paths). */
struct rowmap {
	int *slot; /* row index + 1, 0 = empty */
	size_t size;
	int by_name;    /* rows by the range's own name, not its path */
	int have_re;    /* step: the default step pattern, compiled */
	regex_t step;
};

/* A step's name with its number made N ("step 3" -> "step N", "ProfilerStep#12" -> "ProfilerStep#N"), so
 * a run of 12 steps is one row; any other name as it is. */
static char *norm_text(const struct rowmap *m, const char *text)
{
	char *out;
	size_t i, o = 0;

	if (!m->have_re || regexec(&m->step, text, 0, NULL, 0) != 0)
		return strdup(text);
	out = malloc(strlen(text) + 1);
	if (out == NULL)
		return NULL;
	for (i = 0; text[i]; i++) {
		if (text[i] >= '0' && text[i] <= '9') {
			if (i == 0 || text[i - 1] < '0' || text[i - 1] > '9')
				out[o++] = 'N';
			continue;
		}
		out[o++] = text[i];
	}
	out[o] = '\0';
	return out;
}

static uint64_t hash_key(const char *s, int startend)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)startend;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int rowmap_grow(struct rowmap *m, const struct cprof_range_table *t)
{
	size_t size = m->size ? m->size * 2 : 256, i;
	int *slot = calloc(size, sizeof(*slot));

	if (slot == NULL)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		size_t h = hash_key(t->rows[i].path, t->rows[i].startend) & (size - 1);

		while (slot[h])
			h = (h + 1) & (size - 1);
		slot[h] = (int)i + 1;
	}
	free(m->slot);
	m->slot = slot;
	m->size = size;
	return 0;
}

/* The row of path, made when new; takes path (freed when it is not kept). */
static int row_get(struct cprof_range_table *t, size_t *cap, struct rowmap *m, char *path, int startend)
{
	size_t h;
	int ret;

	if (m->size == 0 && (ret = rowmap_grow(m, t)) < 0)
		goto fail;
	h = hash_key(path, startend) & (m->size - 1);
	while (m->slot[h]) {
		struct cprof_range_row *r = &t->rows[m->slot[h] - 1];

		if (r->startend == startend && !strcmp(r->path, path)) {
			free(path);
			return m->slot[h] - 1;
		}
		h = (h + 1) & (m->size - 1);
	}
	if ((ret = cprof_grow(&t->rows, cap, t->n, sizeof(t->rows[0]))) < 0)
		goto fail;
	memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
	t->rows[t->n].path = path;
	t->rows[t->n].startend = startend;
	m->slot[h] = (int)t->n + 1;
	t->n++;
	/* at most half full, so probes stay short */
	if (t->n * 2 > m->size && (ret = rowmap_grow(m, t)) < 0)
		return ret;
	return (int)t->n - 1;
fail:
	free(path);
	return ret;
}

static int cmp_by_id(const void *a, const void *b)
{
	const struct by_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_thread_start(const void *a, const void *b)
{
	const struct rng *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_by_end(const void *a, const void *b)
{
	const struct by_end *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->idx - y->idx;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct cprof_range_row *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns < y->cpu_ns ? 1 : -1;
	if (x->startend != y->startend)
		return x->startend - y->startend;
	return strcmp(x->path, y->path);
}

/* -1 when 0 < 1, the order of (proc, tid) keys */
static int cmp_thread(int64_t p0, int64_t t0, int64_t p1, int64_t t1)
{
	if (p0 != p1)
		return p0 < p1 ? -1 : 1;
	return t0 < t1 ? -1 : t0 > t1;
}

/* (process, key) pairs and values (struct cprof_pkv, rows.c): the per-process latest times, the threads with
 * ranges, the GPU sums */

/* sorted by (proc, key), one entry each: the largest value (max) or the first (keep order) */
static void pv_unique_max(struct cprof_pkv *a, size_t *n)
{
	size_t i, k = 0;

	cprof_sort(a, *n, sizeof(*a), cprof_pkv_cmp);
	for (i = 0; i < *n; i++) {
		if (k && a[k - 1].proc == a[i].proc && a[k - 1].key == a[i].key) {
			if (a[i].v > a[k - 1].v)
				a[k - 1].v = a[i].v;
			continue;
		}
		a[k++] = a[i];
	}
	*n = k;
}

/* StringIds by id (its INTEGER PRIMARY KEY: a rowid-order scan is id order) */
struct rstr {
	int64_t id;
	char *value;
};

static const char *rstr_find(const struct rstr *s, size_t n, int nul, int64_t id)
{
	size_t lo = 0, hi = n;

	if (nul)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && s[lo].id == id ? s[lo].value : NULL;
}

static int load_strs(sqlite3 *db, struct rstr **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, ret = -EIO;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT id, value FROM StringIds", -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 1);

		if (v == NULL)
			continue; /* NOT NULL in the schema; a damaged one joins as a missing string */
		if (cprof_grow(out, &cap, *n, sizeof(**out)) < 0 || ((*out)[*n].value = strdup((const char *)v)) == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		(*out)[(*n)++].id = sqlite3_column_int64(st, 0);
	}
	ret = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(st);
	return ret;
}

static void free_strs(struct rstr *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].value);
	free(s);
}

/* What the table needs of NVTX_EVENTS, in one scan in rowid order: the ranges and start/end pairs of process
 * proc (0: all) with their texts and domains, the marks, each process's latest time (end, else start) and
 * the (process, thread) pairs that have ranges (every process's, as the calls' filter had them). */
struct nvtx_scan {
	struct cprof_pkv *nend;  /* (proc, 0, latest time) */
	size_t nnend, capnend;
	struct cprof_pkv *thr;   /* (proc, tid, 0) */
	size_t nthr, capthr;
};

static int load_ranges(sqlite3 *db, int64_t proc, const struct rstr *s, size_t ns, struct rng **out, size_t *n,
		       struct cprof_range_table *t, struct nvtx_scan *v)
{
	sqlite3_stmt *st = NULL;
	struct rng *r = NULL;
	size_t cap = 0, cnt = 0;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(db, "SELECT id, processId, tid, start, end, eventType, parentId, domainId, textId"
				   " FROM NVTX_EVENTS", -1, &st, NULL) != SQLITE_OK) {
		ret = -EIO;
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 5), *text, *dom;
		int64_t p = sqlite3_column_int64(st, 1);
		int nul_p = sqlite3_column_type(st, 1) == SQLITE_NULL, is_range;
		struct rng *x;

		/* max(coalesce(end, start)) per process */
		if (!nul_p && (sqlite3_column_type(st, 4) != SQLITE_NULL || sqlite3_column_type(st, 3) != SQLITE_NULL) &&
		    (ret = cprof_pkv_add(&v->nend, &v->nnend, &v->capnend, p, 0,
				  sqlite3_column_int64(st, sqlite3_column_type(st, 4) != SQLITE_NULL ? 4 : 3))) < 0)
			goto out;
		if (type == NULL)
			continue;
		if (!strcmp(type, "mark")) {
			t->marks += proc == 0 || (!nul_p && p == proc);
			continue;
		}
		is_range = !strcmp(type, "range") || !strcmp(type, "startend");
		if (!is_range)
			continue;
		if (!nul_p && sqlite3_column_type(st, 2) != SQLITE_NULL &&
		    (ret = cprof_pkv_add(&v->thr, &v->nthr, &v->capthr, p, sqlite3_column_int64(st, 2), 0)) < 0)
			goto out;
		if (proc != 0 && (nul_p || p != proc))
			continue;
		if (!cprof_row_times_ok(st, 3, 4, 1)) {
			ret = cprof_bad_time("NVTX_EVENTS", st, 3, 4);
			goto out;
		}
		if ((ret = cprof_grow(&r, &cap, cnt, sizeof(*r))) < 0)
			goto out;
		x = &r[cnt];
		memset(x, 0, sizeof(*x));
		x->id = sqlite3_column_int64(st, 0);
		x->proc = p;
		x->tid = sqlite3_column_int64(st, 2);
		x->start = sqlite3_column_int64(st, 3);
		x->open = sqlite3_column_type(st, 4) == SQLITE_NULL;
		x->end = x->open ? x->start : sqlite3_column_int64(st, 4);
		x->startend = !strcmp(type, "startend");
		x->parent_id = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
		x->domain_id = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7);
		x->parent = x->row = -1;
		text = rstr_find(s, ns, sqlite3_column_type(st, 8) == SQLITE_NULL, sqlite3_column_int64(st, 8));
		dom = rstr_find(s, ns, sqlite3_column_type(st, 7) == SQLITE_NULL, sqlite3_column_int64(st, 7));
		/* a range without a message still has a place in the tree */
		x->text = strdup(text ? text : "(no message)");
		x->domain = dom ? strdup(dom) : NULL;
		cnt++;
		if (x->text == NULL || (dom && x->domain == NULL)) {
			ret = -ENOMEM;
			goto out;
		}
		t->open_ranges += x->open;
	}
	if (rc != SQLITE_DONE)
		ret = -EIO;
	pv_unique_max(v->nend, &v->nnend);
	pv_unique_max(v->thr, &v->nthr);
out:
	sqlite3_finalize(st);
	*out = r;
	*n = cnt;
	return ret;
}

/* A call of a thread with ranges: its start, time, GPU time and ops (every call's), outermost or not. */
struct rcall {
	int64_t proc, tid, start, dur, gpu, ops;
	int nested;
};

static int cmp_rcall(const void *a, const void *b)
{
	const struct rcall *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The GPU time and op count per (process, our correlation id): every external-correlation row of the id
 * (kind 5) with every GPU op of its CUPTI id, as the old join summed them; each table one scan. */
static int gpu_sums(sqlite3 *db, int64_t proc, struct cprof_pkv **agg, size_t *nagg, int64_t **ops_n)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					      "CUPTI_ACTIVITY_KIND_MEMSET" };
	struct cprof_pkv *ex = NULL; /* (proc, CUPTI id, index into agg) */
	size_t nex = 0, capex = 0, cap = 0, i;
	sqlite3_stmt *st = NULL;
	int rc, ret = -EIO, t;

	*agg = NULL;
	*nagg = 0;
	*ops_n = NULL;
	if (sqlite3_prepare_v2(db, "SELECT processId, externalId, correlationId, externalKind FROM"
				   " CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION", -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);

		if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 1) == SQLITE_NULL ||
		    sqlite3_column_type(st, 2) == SQLITE_NULL || sqlite3_column_type(st, 3) == SQLITE_NULL ||
		    sqlite3_column_int64(st, 3) != 5 || (proc != 0 && p != proc))
			continue;
		if (cprof_pkv_add(agg, nagg, &cap, p, sqlite3_column_int64(st, 1), 0) < 0 ||
		    cprof_pkv_add(&ex, &nex, &capex, p, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 1)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto out;
	/* the aggregates by (proc, our id); each row of ex points at its own */
	pv_unique_max(*agg, nagg);
	if ((*ops_n = calloc(*nagg ? *nagg : 1, sizeof(**ops_n))) == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < *nagg; i++)
		(*agg)[i].v = 0;
	for (i = 0; i < nex; i++)
		ex[i].v = (int64_t)cprof_pkv_lower(*agg, *nagg, ex[i].proc, ex[i].v);
	cprof_sort(ex, nex, sizeof(*ex), cprof_pkv_cmp);
	for (t = 0; t < 3; t++) {
		char sql[128];

		snprintf(sql, sizeof(sql), "SELECT processId, correlationId, end - start FROM %s", tables[t]);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
			goto out;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t p = sqlite3_column_int64(st, 0), c = sqlite3_column_int64(st, 1);
			int has_d = sqlite3_column_type(st, 2) != SQLITE_NULL;
			int64_t d = sqlite3_column_int64(st, 2);

			if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 1) == SQLITE_NULL)
				continue;
			for (i = cprof_pkv_lower(ex, nex, p, c); i < nex && ex[i].proc == p && ex[i].key == c; i++) {
				(*ops_n)[ex[i].v]++;
				if (has_d)
					(*agg)[ex[i].v].v += d;
			}
		}
		sqlite3_finalize(st);
		st = NULL;
		if (rc != SQLITE_DONE)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	free(ex);
	return ret;
}

/* The calls of the threads that have ranges, by (process, thread, start), with what they launched; and each
 * process's latest call end (for ranges never ended). CPROF_API in one scan. */
static int load_calls(sqlite3 *db, int64_t proc, const struct nvtx_scan *v, struct rcall **out, size_t *n,
		      struct cprof_pkv **api_end, size_t *napi_end)
{
	struct cprof_pkv *agg = NULL;
	int64_t *ops_n = NULL;
	size_t nagg = 0, cap = 0, capend = 0;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	*out = NULL;
	*n = 0;
	*api_end = NULL;
	*napi_end = 0;
	if ((ret = gpu_sums(db, proc, &agg, &nagg, &ops_n)) < 0)
		goto out;
	ret = -EIO;
	if (sqlite3_prepare_v2(db, "SELECT processId, tid, start, end, nested, correlationId FROM CPROF_API", -1, &st,
			       NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
		int nul_p = sqlite3_column_type(st, 0) == SQLITE_NULL;
		size_t k;
		struct rcall *c;

		/* max(end) per process */
		if (!nul_p && sqlite3_column_type(st, 3) != SQLITE_NULL &&
		    cprof_pkv_add(api_end, napi_end, &capend, p, 0, sqlite3_column_int64(st, 3)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		if (nul_p || sqlite3_column_type(st, 1) == SQLITE_NULL || (proc != 0 && p != proc))
			continue;
		k = cprof_pkv_lower(v->thr, v->nthr, p, tid);
		if (k == v->nthr || v->thr[k].proc != p || v->thr[k].key != tid)
			continue;
		if (cprof_grow(out, &cap, *n, sizeof(**out)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		c = &(*out)[(*n)++];
		c->proc = p;
		c->tid = tid;
		c->start = sqlite3_column_int64(st, 2);
		c->dur = sqlite3_column_type(st, 2) == SQLITE_NULL || sqlite3_column_type(st, 3) == SQLITE_NULL
				 ? 0 : sqlite3_column_int64(st, 3) - sqlite3_column_int64(st, 2);
		c->nested = sqlite3_column_int(st, 4) != 0;
		c->gpu = c->ops = 0;
		if (sqlite3_column_type(st, 5) != SQLITE_NULL) {
			int64_t x = sqlite3_column_int64(st, 5);

			k = cprof_pkv_lower(agg, nagg, p, x);
			if (k < nagg && agg[k].proc == p && agg[k].key == x) {
				c->gpu = agg[k].v;
				c->ops = ops_n[k];
			}
		}
	}
	if (rc != SQLITE_DONE)
		goto out;
	pv_unique_max(*api_end, napi_end);
	cprof_sort(*out, *n, sizeof(**out), cmp_rcall);
	ret = 0;
out:
	sqlite3_finalize(st);
	free(agg);
	free(ops_n);
	return ret;
}

/* A range never ended is measured up to its process's end: the latest of its exit, its last call's end and
 * its last annotation, over the processes PROCESSES has. */
static int close_open(sqlite3 *db, struct rng *r, size_t n, const struct nvtx_scan *v, const struct cprof_pkv *api_end,
		      size_t napi_end)
{
	struct cprof_pkv *ends = NULL;
	sqlite3_stmt *st = NULL;
	size_t cap = 0, cnt = 0, i, k;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(db, "SELECT id, endNs FROM PROCESSES", -1, &st, NULL) != SQLITE_OK) {
		ret = -EIO;
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* max(coalesce(endNs, 0), coalesce(last call end, 0), coalesce(last annotation, 0)) */
		int64_t p = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1), a = 0, b = 0;

		k = cprof_pkv_lower(api_end, napi_end, p, 0);
		if (k < napi_end && api_end[k].proc == p)
			a = api_end[k].v;
		k = cprof_pkv_lower(v->nend, v->nnend, p, 0);
		if (k < v->nnend && v->nend[k].proc == p)
			b = v->nend[k].v;
		e = a > e ? a : e;
		e = b > e ? b : e;
		if ((ret = cprof_pkv_add(&ends, &cnt, &cap, p, 0, e)) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		ret = -EIO;
		goto out;
	}
	/* by process id, as the old ORDER BY p.id gave them (a repeated id: its first row) */
	for (i = 1; i < cnt && ends[i - 1].proc < ends[i].proc; i++)
		;
	if (i < cnt)
		qsort(ends, cnt, sizeof(*ends), cprof_pkv_cmp);
	for (i = 0; i < n; i++) {
		size_t lo = 0, hi = cnt;

		/* the ends come ordered by process id */
		while (r[i].open && lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (ends[mid].proc == r[i].proc) {
				if (ends[mid].v > r[i].start)
					r[i].end = ends[mid].v;
				break;
			}
			if (ends[mid].proc < r[i].proc)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
out:
	sqlite3_finalize(st);
	free(ends);
	return ret;
}

/* A path's bytes at most: 255 nested ranges of 4000-byte names made paths grow quadratically (2.1 GB of
 * JSON from a 2.8 MB profile, issue 21 item 4). A longer one keeps its head and its tail around "…". */
#define PATH_MAX_BYTES 4096
#define NAME_MAX_BYTES 512 /* one range's part of a path */
#define PATH_HEAD 1024

/* n bytes of s at most, cut back to a UTF-8 character boundary */
static size_t utf8_cut(const char *s, size_t n)
{
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* where a tail of at most n bytes of s (length len) starts, on a character boundary */
static size_t utf8_tail(const char *s, size_t len, size_t n)
{
	size_t at = len > n ? len - n : 0;

	while (at < len && ((unsigned char)s[at] & 0xc0) == 0x80)
		at++;
	return at;
}

static void put_name(char *out, size_t *o, const char *name)
{
	size_t n = strlen(name);

	if (n > NAME_MAX_BYTES) {
		size_t h = utf8_cut(name, NAME_MAX_BYTES / 2), t = utf8_tail(name, n, NAME_MAX_BYTES / 2 - 4);

		memcpy(out + *o, name, h);
		memcpy(out + *o + h, "\u2026", 3);
		memcpy(out + *o + h + 3, name + t, n - t);
		*o += h + 3 + n - t;
	} else {
		memcpy(out + *o, name, n);
		*o += n;
	}
}

/* parent/domain:text, each name and the whole bounded (cprof-internal: the result is at most PATH_MAX_BYTES) */
static char *range_path(const char *parent, const char *domain, const char *text, int level)
{
	size_t cap = (parent ? strlen(parent) : 0) + 2 * NAME_MAX_BYTES + 8, o = 0;
	char *p = malloc(cap);

	if (p == NULL)
		return NULL;
	if (parent) {
		o = strlen(parent);
		memcpy(p, parent, o);
		p[o++] = '/';
	}
	if (domain) {
		put_name(p, &o, domain);
		p[o++] = ':';
	}
	put_name(p, &o, text);
	p[o] = '\0';
	if (o > PATH_MAX_BYTES) {
		/* the depth in the cut keeps the rows of deep paths apart (their heads and tails may be equal) */
		char mid[48];
		int ml = snprintf(mid, sizeof(mid), "\u2026(depth %d)\u2026", level);
		size_t h = utf8_cut(p, PATH_HEAD), t = utf8_tail(p, o, PATH_MAX_BYTES - PATH_HEAD - (size_t)ml);

		memcpy(p + h, mid, (size_t)ml);
		memmove(p + h + ml, p + t, o - t + 1);
	}
	return p;
}

/* Gives range i its row, after its parent's: the path is the parent's plus its own name. */
static int resolve(struct rng *r, int i, struct cprof_range_table *t, size_t *cap, struct rowmap *m, int depth)
{
	struct rng *x = &r[i];
	const char *parent_path = NULL;
	int64_t parent_dom = -1;
	char *path, *text;
	int ret;

	if (x->row >= 0)
		return x->row;
	/* -2 while its parents are resolved: a corrupt chain that comes back to it (a cycle) ends there */
	x->row = -2;
	if (!m->by_name && x->parent >= 0 && r[x->parent].row != -2 && depth < 256) {
		if ((ret = resolve(r, x->parent, t, cap, m, depth + 1)) < 0)
			return ret;
		parent_path = t->rows[ret].path;
		parent_dom = r[x->parent].domain_id;
		x->level = r[x->parent].level + 1;
	}
	text = norm_text(m, x->text);
	if (text == NULL)
		return -ENOMEM;
	path = range_path(parent_path, x->domain && x->domain_id != parent_dom ? x->domain : NULL, text, x->level);
	free(text);
	if (path == NULL)
		return -ENOMEM;
	ret = row_get(t, cap, m, path, x->startend);
	if (ret >= 0)
		x->row = ret;
	return ret;
}

static void add_sums(struct sums *s, int nested, int64_t dur, int64_t gpu, int64_t ops)
{
	s->calls += !nested;
	s->api += nested ? 0 : dur;
	s->gpu += gpu;
	s->ops += ops;
}

static void snap(struct rng *x, const struct sums *s)
{
	x->snap_calls = s->calls;
	x->snap_api = s->api;
	x->snap_gpu = s->gpu;
	x->snap_ops = s->ops;
}

static void settle(struct rng *x, const struct sums *s)
{
	x->calls = s->calls - x->snap_calls;
	x->api = s->api - x->snap_api;
	x->gpu = s->gpu - x->snap_gpu;
	x->ops = s->ops - x->snap_ops;
}

/* One ordered pass per thread: the running sums of the thread's calls are noted when a range begins (ranges by
 * start) and subtracted when it ends (ranges by end), so a call costs O(1) however many ranges hold it. GPU
 * time from every call (a library's nested launches included), call count and time from the outermost ones,
 * as the rest of the report counts them. */
static int sweep(const struct rcall *calls, size_t ncalls, struct rng *r, size_t n)
{
	struct by_end *be = NULL;
	struct sums s = { 0 };
	size_t rs = 0, re = 0, i, c;
	int64_t cp = 0, ct = 0;
	int have = 0;

	be = malloc((n ? n : 1) * sizeof(*be));
	if (be == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		be[i] = (struct by_end){ r[i].proc, r[i].tid, r[i].end, (int)i };
	if (n)
		qsort(be, n, sizeof(*be), cmp_by_end);
	for (c = 0;; c++) {
		int more = c < ncalls;
		int64_t p = more ? calls[c].proc : 0, tid = more ? calls[c].tid : 0, start = more ? calls[c].start : 0;

		if (have && (!more || p != cp || tid != ct)) {
			/* the thread's last call: what is left of its ranges began or ended after it */
			for (; rs < n && r[rs].proc == cp && r[rs].tid == ct; rs++)
				snap(&r[rs], &s);
			for (; re < n && be[re].proc == cp && be[re].tid == ct; re++)
				settle(&r[be[re].idx], &s);
			have = 0;
		}
		if (!more)
			break;
		if (!have) {
			/* ranges of threads without calls keep their zeros */
			while (rs < n && cmp_thread(r[rs].proc, r[rs].tid, p, tid) < 0)
				rs++;
			while (re < n && cmp_thread(be[re].proc, be[re].tid, p, tid) < 0)
				re++;
			memset(&s, 0, sizeof(s));
			cp = p;
			ct = tid;
			have = 1;
		}
		/* a call counts for a range when it starts inside it, both ends included */
		for (; rs < n && r[rs].proc == p && r[rs].tid == tid && r[rs].start <= start; rs++)
			snap(&r[rs], &s);
		for (; re < n && be[re].proc == p && be[re].tid == tid && be[re].end < start; re++)
			settle(&r[be[re].idx], &s);
		add_sums(&s, calls[c].nested, calls[c].dur, calls[c].gpu, calls[c].ops);
	}
	free(be);
	return 0;
}

int cprof_ranges_build(sqlite3 *db, int64_t proc, struct cprof_range_table *t)
{
	return cprof_ranges_build_by(db, proc, 0, t);
}

int cprof_ranges_build_by(sqlite3 *db, int64_t proc, int by_name, struct cprof_range_table *t)
{
	struct rng *r = NULL;
	struct by_id *ids = NULL;
	struct rowmap m = { 0 };
	struct nvtx_scan v = { 0 };
	struct rstr *strs = NULL;
	struct rcall *calls = NULL;
	struct cprof_pkv *api_end = NULL;
	size_t n = 0, cap = 0, i, nstrs = 0, ncalls = 0, napi_end = 0;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	t->by_name = by_name;
	m.by_name = by_name;
	/* the table first: an early return must not leave the compiled pattern behind */
	if (!cprof_has_table(db, "NVTX_EVENTS"))
		return 0;
	m.have_re = regcomp(&m.step, cprof_step_re_default, REG_EXTENDED | REG_NOSUB) == 0;
	/* each table one scan in rowid order; the joins (strings, threads, GPU time per call) in memory */
	if ((ret = load_strs(db, &strs, &nstrs)) < 0 || (ret = load_ranges(db, proc, strs, nstrs, &r, &n, t, &v)) < 0)
		goto out;
	t->ranges = n;
	if (n == 0)
		goto out;
	if ((ret = load_calls(db, proc, &v, &calls, &ncalls, &api_end, &napi_end)) < 0 ||
	    (t->open_ranges && (ret = close_open(db, r, n, &v, api_end, napi_end)) < 0))
		goto out;
	if (n)
		qsort(r, n, sizeof(*r), cmp_thread_start);
	ids = malloc(n * sizeof(*ids));
	if (ids == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		ids[i] = (struct by_id){ r[i].id, (int)i };
	if (n)
		qsort(ids, n, sizeof(*ids), cmp_by_id);
	for (i = 0; i < n; i++) {
		struct by_id key = { r[i].parent_id, 0 }, *hit;

		r[i].self = r[i].end - r[i].start;
		if (r[i].startend || r[i].parent_id < 0)
			continue;
		hit = bsearch(&key, ids, n, sizeof(*ids), cmp_by_id);
		if (hit && hit->idx != (int)i && !r[hit->idx].startend)
			r[i].parent = hit->idx;
	}
	for (i = 0; i < n; i++)
		if (r[i].parent >= 0)
			r[r[i].parent].self -= r[i].end - r[i].start;
	if ((ret = sweep(calls, ncalls, r, n)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		struct cprof_range_row *w;
		double d = (double)(r[i].end - r[i].start);
		int k = resolve(r, (int)i, t, &cap, &m, 0);

		if (k < 0) {
			ret = k;
			goto out;
		}
		w = &t->rows[k];
		if (w->count == 0 || d < w->min_ns)
			w->min_ns = d;
		if (w->count == 0 || d > w->max_ns)
			w->max_ns = d;
		w->count++;
		w->cpu_ns += d;
		w->self_cpu_ns += (double)(r[i].self > 0 ? r[i].self : 0);
		w->calls += (uint64_t)r[i].calls;
		w->api_ns += (double)r[i].api;
		w->gpu_ns += (double)r[i].gpu;
		w->gpu_ops += (uint64_t)r[i].ops;
	}
	if (t->n)
		qsort(t->rows, t->n, sizeof(t->rows[0]), cmp_rows);
out:
	if (ret < 0)
		pr_err("reading the NVTX ranges failed: %s", ret == -EIO ? sqlite3_errmsg(db) : strerror(-ret));
	for (i = 0; i < n; i++) {
		free(r[i].text);
		free(r[i].domain);
	}
	free(r);
	free(ids);
	free(m.slot);
	free_strs(strs, nstrs);
	free(v.nend);
	free(v.thr);
	free(calls);
	free(api_end);
	if (m.have_re)
		regfree(&m.step);
	return ret;
}

void cprof_ranges_free(struct cprof_range_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->rows[i].path);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
