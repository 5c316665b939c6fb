/* Loads a profile once: each table in one statement into arrays sorted by time, the correlation index resolved. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "report/cprof.h"
#include "report/model/model.h"

/* one (process, CUPTI correlation id) -> the earliest runtime or driver record with it */
struct corr {
	int64_t proc, id;
	uint64_t start;
};

static char bad_time_msg[200];

int cprof_row_times_ok(sqlite3_stmt *st, int si, int ei, int null_end)
{
	const int64_t max = (int64_t)1 << 62;
	int64_t s = sqlite3_column_int64(st, si), e;

	if (sqlite3_column_type(st, si) != SQLITE_INTEGER || s < 0 || s >= max)
		return 0;
	if (null_end && sqlite3_column_type(st, ei) == SQLITE_NULL)
		return 1;
	e = sqlite3_column_int64(st, ei);
	return sqlite3_column_type(st, ei) == SQLITE_INTEGER && e >= s && e < max;
}

int cprof_bad_time(const char *table, sqlite3_stmt *st, int si, int ei)
{
	if (bad_time_msg[0] == '\0')
		snprintf(bad_time_msg, sizeof(bad_time_msg), "%s has values out of range (start %s, end %s)", table,
			 sqlite3_column_text(st, si) ? (const char *)sqlite3_column_text(st, si) : "NULL",
			 sqlite3_column_text(st, ei) ? (const char *)sqlite3_column_text(st, ei) : "NULL");
	return -ERANGE;
}

const char *cprof_model_errmsg(sqlite3 *db)
{
	return bad_time_msg[0] ? bad_time_msg : sqlite3_errmsg(db);
}

static int cmp_corr(const void *a, const void *b)
{
	const struct corr *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* 1 when a record has this (proc, id); *start gets the earliest start, else is left alone */
static int corr_find(const struct corr *c, size_t n, int64_t proc, int64_t id, uint64_t *start)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c[mid].proc < proc || (c[mid].proc == proc && c[mid].id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && c[lo].proc == proc && c[lo].id == id) {
		*start = c[lo].start;
		return 1;
	}
	return 0;
}

static int load_corr(sqlite3 *db, const char *table, struct corr **out, size_t *n)
{
	char sql[160];
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	/* a record without a start still counts as seen (coalesce(min(start), ...) in SQL gives 0 then) */
	snprintf(sql, sizeof(sql), "SELECT processId, correlationId, coalesce(start, 0) FROM %s WHERE correlationId IS NOT NULL",
		 table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cprof_grow(out, &cap, *n, sizeof(**out)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		(*out)[*n].proc = sqlite3_column_int64(st, 0);
		(*out)[*n].id = sqlite3_column_int64(st, 1);
		(*out)[(*n)++].start = (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EIO;
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_corr);
	return 0;
}

/* The model's arrays hold structs that begin with their uint64_t start. They are sorted by start, rows of
 * equal start kept in the order read (what SQLite's sorter gives them): an index sorted, then the array
 * permuted in place along its cycles, so sorting costs 4 bytes a row, not a second copy. */
static const char *sort_base;
static size_t sort_elem;
_Static_assert(offsetof(struct cprof_op, start) == 0 && offsetof(struct cprof_call, start) == 0 &&
		       offsetof(struct cprof_rt, start) == 0 && offsetof(struct cprof_ovh, start) == 0,
	       "sort_by_start reads the start at the front");

static uint64_t start_at(const void *arr, size_t elem, size_t i)
{
	uint64_t s;

	memcpy(&s, (const char *)arr + i * elem, sizeof(s));
	return s;
}

static int cmp_index(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t x = start_at(sort_base, sort_elem, i), y = start_at(sort_base, sort_elem, j);

	if (x != y)
		return x < y ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int sort_by_start(void *arr, size_t n, size_t elem)
{
	uint32_t *idx;
	char tmp[128], *a = arr;
	size_t i;

	if (n < 2)
		return 0;
	if (elem > sizeof(tmp) || n > UINT32_MAX || (idx = malloc(n * sizeof(*idx))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	sort_base = arr;
	sort_elem = elem;
	qsort(idx, n, sizeof(*idx), cmp_index);
	sort_base = NULL;
	/* position j gets the element that was at idx[j] */
	for (i = 0; i < n; i++) {
		size_t j = i;

		if (idx[i] == i)
			continue;
		memcpy(tmp, a + i * elem, elem);
		for (;;) {
			size_t k = idx[j];

			idx[j] = (uint32_t)j;
			if (k == i) {
				memcpy(a + j * elem, tmp, elem);
				break;
			}
			memcpy(a + j * elem, a + k * elem, elem);
			j = k;
		}
	}
	free(idx);
	return 0;
}

/* the first element whose start is >= t */
static size_t first_at(const void *arr, size_t n, size_t elem, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (start_at(arr, elem, mid) < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_name(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int load_ops(sqlite3 *db, struct cprof_model *m, int attribute)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					      "CUPTI_ACTIVITY_KIND_MEMSET" };
	struct corr *rt = NULL, *drv = NULL;
	size_t nrt = 0, ndrv = 0, cap = 0, n = 0, i, nnames = 0;
	struct cprof_op *k = NULL;
	int64_t *names = NULL;
	int ret, t;

	/* the runtime records are in the model already: their correlation index comes from there */
	rt = malloc((m->nrt ? m->nrt : 1) * sizeof(*rt));
	if (rt == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < m->nrt; i++)
		if (m->rt[i].corr != CPROF_NO_ID) {
			rt[nrt].proc = m->rt[i].proc;
			rt[nrt].id = m->rt[i].corr;
			rt[nrt++].start = m->rt[i].start;
		}
	if (nrt)
		qsort(rt, nrt, sizeof(*rt), cmp_corr);
	if (attribute && (ret = load_corr(db, "CUPTI_ACTIVITY_KIND_DRIVER", &drv, &ndrv)) < 0)
		goto out;
	for (t = 0; t < 3; t++) {
		char sql[200];
		sqlite3_stmt *st;
		int rc;

		snprintf(sql, sizeof(sql), "SELECT processId, start, end, correlationId, %s FROM %s", t == 0 ? "nameId" : "NULL",
			 tables[t]);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
			ret = -EIO;
			goto out;
		}
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct cprof_op *o;
			uint64_t launch = 0;

			if (cprof_grow(&k, &cap, n, sizeof(*k)) < 0) {
				sqlite3_finalize(st);
				ret = -ENOMEM;
				goto out;
			}
			if (!cprof_row_times_ok(st, 1, 2, 0)) {
				ret = cprof_bad_time(tables[t], st, 1, 2);
				sqlite3_finalize(st);
				goto out;
			}
			o = &k[n++];
			o->proc = sqlite3_column_int64(st, 0);
			o->start = (uint64_t)sqlite3_column_int64(st, 1);
			o->end = (uint64_t)sqlite3_column_int64(st, 2);
			o->kind = (uint8_t)t;
			o->kname = -1;
			o->name = sqlite3_column_type(st, 4) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 4);
			o->corr = CPROF_NO_ID;
			o->via = 0;
			if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
				int64_t id = sqlite3_column_int64(st, 3);
				int in_rt = corr_find(rt, nrt, o->proc, id, &launch);

				o->corr = id;
				if (in_rt)
					o->via = 1;
				else if (corr_find(drv, ndrv, o->proc, id, &launch))
					o->via = 2;
			}
			o->launch = launch;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE) {
			ret = -EIO;
			goto out;
		}
	}
	/* kernel names to dense indices: the warm-up rule counts per name over arrays */
	names = malloc((n ? n : 1) * sizeof(*names));
	if (names == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (k[i].kind == CPROF_OP_KERNEL)
			names[nnames++] = k[i].name;
	if (nnames) {
		size_t u = 0;

		qsort(names, nnames, sizeof(*names), cmp_name);
		for (i = 0; i < nnames; i++)
			if (u == 0 || names[u - 1] != names[i])
				names[u++] = names[i];
		nnames = u;
		for (i = 0; i < n; i++)
			if (k[i].kind == CPROF_OP_KERNEL) {
				int64_t *p = bsearch(&k[i].name, names, nnames, sizeof(*names), cmp_name);

				k[i].kname = (int32_t)(p - names);
			}
	}
	if ((ret = sort_by_start(k, n, sizeof(*k))) < 0)
		goto out;
	m->ops = k;
	k = NULL;
	m->nops = n;
	m->nknames = nnames;
	ret = 0;
out:
	free(rt);
	free(drv);
	free(k);
	free(names);
	return ret;
}

static int load_calls(sqlite3 *db, struct cprof_model *m)
{
	struct cprof_call *k = NULL;
	size_t n = 0, cap = 0;
	int64_t memcpy_id = cprof_query_int(db, "SELECT id FROM StringIds WHERE value = 'cudaMemcpy'", INT64_MIN);
	sqlite3_stmt *st;
	int rc, ret = -EIO;

	if (sqlite3_prepare_v2(db, "SELECT processId, start, end, nested = 0, class, nameId, tid, correlationId, a0"
				   " FROM CPROF_API", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *cls = (const char *)sqlite3_column_text(st, 4);
		struct cprof_call *c;

		if (cprof_grow(&k, &cap, n, sizeof(*k)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		if (!cprof_row_times_ok(st, 1, 2, 0)) {
			ret = cprof_bad_time("CPROF_API", st, 1, 2);
			goto out;
		}
		c = &k[n++];
		c->proc = sqlite3_column_int64(st, 0);
		c->start = (uint64_t)sqlite3_column_int64(st, 1);
		c->end = (uint64_t)sqlite3_column_int64(st, 2);
		c->outer = sqlite3_column_type(st, 3) != SQLITE_NULL && sqlite3_column_int(st, 3) == 1;
		c->launch = cls && !strcmp(cls, "launch");
		c->sync = cls && !strcmp(cls, "sync");
		c->gemm = cls && !strcmp(cls, "gemm");
		c->name = sqlite3_column_int64(st, 5);
		c->memcpy = c->name == memcpy_id;
		c->cut = c->sync || c->memcpy;
		c->tid = sqlite3_column_int64(st, 6);
		c->corr = sqlite3_column_type(st, 7) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 7);
		c->a0 = sqlite3_column_type(st, 8) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 8);
	}
	if (rc != SQLITE_DONE)
		goto out;
	if ((ret = sort_by_start(k, n, sizeof(*k))) < 0)
		goto out;
	m->calls = k;
	k = NULL;
	m->ncalls = n;
	ret = 0;
out:
	sqlite3_finalize(st);
	free(k);
	return ret;
}

static int load_overhead(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	if (!cprof_has_table(db, "CUPTI_ACTIVITY_KIND_OVERHEAD"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT processId, start, end FROM CUPTI_ACTIVITY_KIND_OVERHEAD WHERE overheadKind IN "
				   CPROF_PROFILER_OVERHEAD_KINDS, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!cprof_row_times_ok(st, 1, 2, 0)) {
			int ret = cprof_bad_time("CUPTI_ACTIVITY_KIND_OVERHEAD", st, 1, 2);

			sqlite3_finalize(st);
			return ret;
		}
		if (cprof_grow(&m->ovh, &cap, m->novh, sizeof(*m->ovh)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		m->ovh[m->novh].proc = sqlite3_column_int64(st, 0);
		m->ovh[m->novh].start = (uint64_t)sqlite3_column_int64(st, 1);
		m->ovh[m->novh++].end = (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EIO;
	return sort_by_start(m->ovh, m->novh, sizeof(*m->ovh));
}

static int load_runtime(sqlite3 *db, struct cprof_model *m)
{
	struct cprof_rt *k = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int rc, ret = -EIO;

	if (sqlite3_prepare_v2(db, "SELECT processId, threadId, start, end, nameId, correlationId"
				   " FROM CUPTI_ACTIVITY_KIND_RUNTIME", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_rt *r;

		if (cprof_grow(&k, &cap, n, sizeof(*k)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		if (!cprof_row_times_ok(st, 2, 3, 0)) {
			ret = cprof_bad_time("CUPTI_ACTIVITY_KIND_RUNTIME", st, 2, 3);
			goto out;
		}
		r = &k[n++];
		r->proc = sqlite3_column_int64(st, 0);
		r->tid = sqlite3_column_int64(st, 1);
		r->start = (uint64_t)sqlite3_column_int64(st, 2);
		r->end = (uint64_t)sqlite3_column_int64(st, 3);
		r->name = sqlite3_column_type(st, 4) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 4);
		r->corr = sqlite3_column_type(st, 5) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 5);
	}
	if (rc != SQLITE_DONE)
		goto out;
	if ((ret = sort_by_start(k, n, sizeof(*k))) < 0)
		goto out;
	m->rt = k;
	k = NULL;
	m->nrt = n;
	ret = 0;
out:
	sqlite3_finalize(st);
	free(k);
	return ret;
}

static int load_strings(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	/* rowid order: by id */
	if (sqlite3_prepare_v2(db, "SELECT id, value FROM StringIds ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 1);

		if (cprof_grow(&m->strings, &cap, m->nstrings, sizeof(*m->strings)) < 0 ||
		    (m->strings[m->nstrings].value = strdup(v ? (const char *)v : "")) == NULL) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		m->strings[m->nstrings++].id = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int cmp_ext(const void *a, const void *b)
{
	const struct cprof_ext *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int load_ext(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT processId, correlationId, externalId FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION"
				   " WHERE externalKind = 5 AND correlationId IS NOT NULL AND externalId IS NOT NULL",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cprof_grow(&m->ext, &cap, m->next, sizeof(*m->ext)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		m->ext[m->next].proc = sqlite3_column_int64(st, 0);
		m->ext[m->next].corr = sqlite3_column_int64(st, 1);
		m->ext[m->next++].ext = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EIO;
	if (m->next)
		qsort(m->ext, m->next, sizeof(*m->ext), cmp_ext);
	return 0;
}

const char *cprof_model_string(const struct cprof_model *m, int64_t id)
{
	size_t lo = 0, hi = m->nstrings;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->strings[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nstrings && m->strings[lo].id == id ? m->strings[lo].value : NULL;
}

static const struct cprof_model *sort_model; /* qsort has no context argument */

static int cmp_call_corr(const void *a, const void *b)
{
	const struct cprof_call *x = &sort_model->calls[*(const uint32_t *)a], *y = &sort_model->calls[*(const uint32_t *)b];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

int cprof_model_launched(struct cprof_model *m, int64_t proc,
			 int (*fn)(void *ctx, const struct cprof_call *c, const struct cprof_op *o), void *ctx)
{
	size_t i;
	int ret;

	if (m->calls_by_corr == NULL) {
		m->calls_by_corr = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*m->calls_by_corr));
		if (m->calls_by_corr == NULL)
			return -ENOMEM;
		for (i = 0; i < m->ncalls; i++)
			m->calls_by_corr[i] = (uint32_t)i;
		sort_model = m;
		if (m->ncalls)
			qsort(m->calls_by_corr, m->ncalls, sizeof(*m->calls_by_corr), cmp_call_corr);
		sort_model = NULL;
	}
	for (i = 0; i < m->nops; i++) {
		const struct cprof_op *o = &m->ops[i];
		struct cprof_ext key = { o->proc, o->corr, 0 };
		size_t lo = 0, hi = m->next, e;

		if (o->corr == CPROF_NO_ID || (proc != 0 && o->proc != proc))
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_ext(&m->ext[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (e = lo; e < m->next && !cmp_ext(&m->ext[e], &key); e++) {
			size_t a = 0, b = m->ncalls, c;

			while (a < b) {
				size_t mid = a + (b - a) / 2;
				const struct cprof_call *x = &m->calls[m->calls_by_corr[mid]];

				if (x->proc < o->proc || (x->proc == o->proc && x->corr < m->ext[e].ext))
					a = mid + 1;
				else
					b = mid;
			}
			for (c = a; c < m->ncalls; c++) {
				const struct cprof_call *x = &m->calls[m->calls_by_corr[c]];

				if (x->proc != o->proc || x->corr != m->ext[e].ext)
					break;
				if ((ret = fn(ctx, x, o)) < 0)
					return ret;
			}
		}
	}
	return 0;
}

int cprof_model_has_ext(const struct cprof_model *m, int64_t proc, int64_t corr)
{
	struct cprof_ext key = { proc, corr, 0 };
	size_t lo = 0, hi = m->next;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_ext(&m->ext[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->next && !cmp_ext(&m->ext[lo], &key);
}

static int cmp_kernel_corr(const void *a, const void *b)
{
	const struct cprof_op *x = &sort_model->ops[*(const uint32_t *)a], *y = &sort_model->ops[*(const uint32_t *)b];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : *(const uint32_t *)a > *(const uint32_t *)b;
}

int cprof_model_kernels_of(struct cprof_model *m, int64_t proc, int64_t corr,
			   int (*fn)(void *ctx, const struct cprof_op *o), void *ctx)
{
	size_t lo = 0, hi, i;
	int ret;

	if (corr == CPROF_NO_ID)
		return 0;
	if (m->kernels_by_corr == NULL) {
		m->kernels_by_corr = malloc((m->nops ? m->nops : 1) * sizeof(*m->kernels_by_corr));
		if (m->kernels_by_corr == NULL)
			return -ENOMEM;
		for (i = 0; i < m->nops; i++)
			if (m->ops[i].kind == CPROF_OP_KERNEL && m->ops[i].corr != CPROF_NO_ID)
				m->kernels_by_corr[m->nkernels_by_corr++] = (uint32_t)i;
		sort_model = m;
		if (m->nkernels_by_corr)
			qsort(m->kernels_by_corr, m->nkernels_by_corr, sizeof(*m->kernels_by_corr), cmp_kernel_corr);
		sort_model = NULL;
	}
	hi = m->nkernels_by_corr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cprof_op *o = &m->ops[m->kernels_by_corr[mid]];

		if (o->proc < proc || (o->proc == proc && o->corr < corr))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < m->nkernels_by_corr; i++) {
		const struct cprof_op *o = &m->ops[m->kernels_by_corr[i]];

		if (o->proc != proc || o->corr != corr)
			break;
		if ((ret = fn(ctx, o)) < 0)
			return ret;
	}
	return 0;
}

static int cmp_keyed(const void *a, const void *b)
{
	const struct cprof_keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->d < y->d ? -1 : x->d > y->d;
}

int cprof_model_group_stats(struct cprof_keyed *kd, size_t n, const char *(*label)(void *ctx, int64_t key),
			    int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st), void *ctx)
{
	double *d;
	size_t i, j;
	int ret = 0;

	if (n == 0)
		return 0;
	d = malloc(n * sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	qsort(kd, n, sizeof(*kd), cmp_keyed);
	for (i = 0; i < n; i = j) {
		struct cprof_stats st;
		const char *l;

		for (j = i; j < n && kd[j].key == kd[i].key; j++)
			d[j - i] = (double)kd[j].d;
		cprof_stats_finish(d, j - i, &st);
		l = label(ctx, kd[i].key);
		if ((ret = fn(ctx, kd[i].key, l ? l : "?", &st)) < 0)
			break;
	}
	free(d);
	return ret;
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

static int load_procs(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, ret = -EIO;

	/* PROCESSES.ending (how it ended, in words) and CPROF_CRASH are newer than some profiles; a crash
	 * adds the crashing thread's last CUDA call (and its kernel) to the ending */
	if (sqlite3_prepare_v2(db, "SELECT id, pid, ppid, coalesce(rank, -1), exe, argv, host,"
				   " coalesce(ending || (SELECT '; last CUDA call of thread ' || c.tid || ': ' || s.value ||"
				   " coalesce(' (' || k.value || ')', '') || ' returned ' || cc.returnValue FROM CPROF_CRASH c"
				   " JOIN CPROF_CRASH_CALLS cc ON cc.processId = c.processId AND cc.tid = c.tid"
				   " JOIN StringIds s ON s.id = cc.nameId LEFT JOIN StringIds k ON k.id = cc.kernelNameId"
				   " WHERE c.processId = PROCESSES.id LIMIT 1), ending, byeReason, ''),"
				   " coalesce(eventsRecorded, 0), coalesce(lostEvents, 0)"
				   " FROM PROCESSES ORDER BY id", -1, &st, NULL) != SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT id, pid, ppid, coalesce(rank, -1), exe, argv, host,"
				   " coalesce(byeReason, ''), coalesce(eventsRecorded, 0), coalesce(lostEvents, 0)"
				   " FROM PROCESSES ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_proc *p;

		if (cprof_grow(&m->procs, &cap, m->nprocs, sizeof(*m->procs)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		p = &m->procs[m->nprocs++];
		memset(p, 0, sizeof(*p));
		p->id = sqlite3_column_int64(st, 0);
		p->pid = sqlite3_column_int64(st, 1);
		p->ppid = sqlite3_column_int64(st, 2);
		p->rank = sqlite3_column_int64(st, 3);
		p->exe = col_text(st, 4);
		p->argv = col_text(st, 5);
		p->host = col_text(st, 6);
		p->bye = col_text(st, 7);
		p->recorded = sqlite3_column_int64(st, 8);
		p->lost = sqlite3_column_int64(st, 9);
		if (!p->exe || !p->argv || !p->host || !p->bye) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(st);
	return ret;
}

/* each CUPTI thread handle that made the CUPTI side of a hooked call: that call's tid */
static int load_threads(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db,
			       "SELECT r.processId, r.threadId, min(a.tid) FROM (SELECT processId, correlationId, threadId"
			       " FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT processId, correlationId, threadId"
			       " FROM CUPTI_ACTIVITY_KIND_DRIVER) r"
			       " JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = r.processId"
			       "  AND e.correlationId = r.correlationId AND e.externalKind = 5"
			       " JOIN CPROF_API a ON a.processId = e.processId AND a.correlationId = e.externalId"
			       " GROUP BY r.processId, r.threadId ORDER BY 1, 2",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cprof_grow(&m->threads, &cap, m->nthreads, sizeof(*m->threads)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		m->threads[m->nthreads].proc = sqlite3_column_int64(st, 0);
		m->threads[m->nthreads].handle = sqlite3_column_int64(st, 1);
		m->threads[m->nthreads++].tid = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int cprof_model_tid(const struct cprof_model *m, int64_t proc, int64_t handle, int64_t *tid)
{
	size_t lo = 0, hi = m->nthreads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cprof_thread *t = &m->threads[mid];

		if (t->proc < proc || (t->proc == proc && t->handle < handle))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->nthreads && m->threads[lo].proc == proc && m->threads[lo].handle == handle) {
		*tid = m->threads[lo].tid;
		return 1;
	}
	return 0;
}

int cprof_model_load(sqlite3 *db, unsigned parts, struct cprof_model *m)
{
	int ret;

	memset(m, 0, sizeof(*m));
	m->db = db;
	if ((ret = load_procs(db, m)) < 0 || ((parts & CPROF_MODEL_THREADS) && (ret = load_threads(db, m)) < 0) ||
	    ((parts & CPROF_MODEL_TIMELINE) &&
	     ((ret = load_runtime(db, m)) < 0 || (ret = load_ops(db, m, 1)) < 0 || (ret = load_calls(db, m)) < 0 ||
	      (ret = load_overhead(db, m)) < 0 || (ret = load_strings(db, m)) < 0 || (ret = load_ext(db, m)) < 0)) ||
	    (!(parts & CPROF_MODEL_TIMELINE) && (parts & CPROF_MODEL_GPU) &&
	     ((ret = load_ops(db, m, 0)) < 0 || (ret = load_strings(db, m)) < 0))) {
		cprof_model_free(m);
		m->db = db;
		return ret;
	}
	return 0;
}

int cprof_model_from_arrays(struct cprof_model *m, struct cprof_op *ops, size_t nops, struct cprof_call *calls,
			    size_t ncalls, struct cprof_ovh *ovh, size_t novh, size_t nknames)
{
	int ret;

	memset(m, 0, sizeof(*m));
	if ((ret = sort_by_start(ops, nops, sizeof(*ops))) < 0 || (ret = sort_by_start(calls, ncalls, sizeof(*calls))) < 0 ||
	    (ret = sort_by_start(ovh, novh, sizeof(*ovh))) < 0)
		return ret;
	m->ops = ops;
	m->nops = nops;
	m->calls = calls;
	m->ncalls = ncalls;
	m->ovh = ovh;
	m->novh = novh;
	m->nknames = nknames;
	return 0;
}

void cprof_model_free(struct cprof_model *m)
{
	size_t i;

	free(m->ops);
	free(m->calls);
	free(m->ovh);
	for (i = 0; i < m->nprocs; i++) {
		free(m->procs[i].exe);
		free(m->procs[i].argv);
		free(m->procs[i].host);
		free(m->procs[i].bye);
	}
	free(m->procs);
	free(m->threads);
	for (i = 0; i < m->nstrings; i++)
		free(m->strings[i].value);
	free(m->strings);
	free(m->ext);
	free(m->rt);
	free(m->calls_by_corr);
	free(m->kernels_by_corr);
	for (i = 0; i < m->nsteps_cache; i++)
		free(m->steps[i].s);
	free(m->steps);
	memset(m, 0, sizeof(*m));
}

int cprof_model_steps(struct cprof_model *m, int64_t proc, const char *re, const struct cprof_step **out)
{
	struct cprof_steps_cache *c;
	struct cprof_step *s = NULL;
	size_t i;
	int n;

	*out = NULL;
	for (i = 0; i < m->nsteps_cache; i++)
		if (m->steps[i].proc == proc && (m->steps[i].re == re || (re && m->steps[i].re && !strcmp(re, m->steps[i].re)))) {
			*out = m->steps[i].s;
			return m->steps[i].n;
		}
	if (m->db == NULL)
		return 0;
	n = cprof_steps_load(m->db, proc, re, &s);
	if (n < 0)
		return n;
	c = realloc(m->steps, (m->nsteps_cache + 1) * sizeof(*c));
	if (c == NULL) {
		free(s);
		return -ENOMEM;
	}
	m->steps = c;
	c[m->nsteps_cache].proc = proc;
	c[m->nsteps_cache].re = re;
	c[m->nsteps_cache].s = s;
	c[m->nsteps_cache++].n = n;
	*out = s;
	return n;
}

size_t cprof_model_ops_from(const struct cprof_model *m, uint64_t t)
{
	return first_at(m->ops, m->nops, sizeof(*m->ops), t);
}

size_t cprof_model_calls_from(const struct cprof_model *m, uint64_t t)
{
	return first_at(m->calls, m->ncalls, sizeof(*m->calls), t);
}
