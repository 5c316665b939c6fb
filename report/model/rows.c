/* What every part of the model shares, below all of them: the row time checks of the loaders, sorting by start, finding by time and by (process, correlation id). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/model/model.h"

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

/* The model's arrays hold structs that begin with their uint64_t start. They are sorted by start, rows of
 * equal start kept in the order read (what SQLite's sorter gives them), by radix.c. */
static uint64_t start_at(const void *arr, size_t elem, size_t i)
{
	uint64_t s;

	memcpy(&s, (const char *)arr + i * elem, sizeof(s));
	return s;
}

int cprof_sort_by_start(void *arr, size_t n, size_t elem)
{
	/* a radix sort: the qsort of an index by start was a fifth of a report's load */
	return cprof_radix_sort(arr, n, elem);
}

/* the first element whose start is >= t */
size_t cprof_first_at(const void *arr, size_t n, size_t elem, uint64_t t)
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

int cprof_ext_cmp(const void *a, const void *b)
{
	const struct cprof_ext *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

size_t cprof_model_ext_lower(const struct cprof_model *m, int64_t proc, int64_t corr)
{
	struct cprof_ext key = { proc, corr, 0, 0 };
	size_t lo = 0, hi = m->next;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cprof_ext_cmp(&m->ext[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int cprof_model_ext_of(const struct cprof_model *m, int64_t proc, int64_t corr, int64_t *ext)
{
	size_t lo = cprof_model_ext_lower(m, proc, corr);

	if (lo < m->next && m->ext[lo].proc == proc && m->ext[lo].corr == corr) {
		*ext = m->ext[lo].ext;
		return 1;
	}
	return 0;
}

int64_t cprof_model_rt_ext(const struct cprof_model *m, const struct cprof_rt *r, struct cprof_hint *hint)
{
	size_t lo;

	if (r->corr == CPROF_NO_ID)
		return CPROF_NO_ID;
	lo = cprof_lower_pk(m->ext, m->next, sizeof(*m->ext), r->proc, r->corr, hint);
	return lo < m->next && m->ext[lo].proc == r->proc && m->ext[lo].corr == r->corr ? m->ext[lo].ext : CPROF_NO_ID;
}

void cprof_model_link_rt(struct cprof_model *m)
{
	struct cprof_hint hint = { 0 };

	for (size_t i = 0; i < m->nrt; i++)
		m->rt[i].ext = cprof_model_rt_ext(m, &m->rt[i], &hint);
}

int cprof_model_has_ext(const struct cprof_model *m, int64_t proc, int64_t corr)
{
	int64_t ext;

	return cprof_model_ext_of(m, proc, corr, &ext);
}

int cprof_pkv_cmp(const void *a, const void *b)
{
	const struct cprof_pkv *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

size_t cprof_pkv_lower(const struct cprof_pkv *a, size_t n, int64_t proc, int64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid].proc < proc || (a[mid].proc == proc && a[mid].key < key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int cprof_pkv_add(struct cprof_pkv **a, size_t *n, size_t *cap, int64_t proc, int64_t key, int64_t v)
{
	if (cprof_grow(a, cap, *n, sizeof(**a)) < 0)
		return -ENOMEM;
	(*a)[(*n)++] = (struct cprof_pkv){ proc, key, v };
	return 0;
}

size_t cprof_lower_i64(const void *arr, size_t n, size_t elem, size_t off, int64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t k;

		memcpy(&k, (const char *)arr + mid * elem + off, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* a process's index in the model's processes (by id), by binary search; m->nprocs when it has none */
size_t cprof_model_proc_index(const struct cprof_model *m, int64_t proc)
{
	size_t lo = cprof_lower_i64(m->procs, m->nprocs, sizeof(*m->procs), offsetof(struct cprof_proc, id), proc);

	return lo < m->nprocs && m->procs[lo].id == proc ? lo : m->nprocs;
}

/* by binary search over the model's strings (by id): here, below every model file that names things */
const char *cprof_model_string(const struct cprof_model *m, int64_t id)
{
	size_t lo = 0, hi = m->nstrings;

	if (m->string_at)
		return id >= 0 && (uint64_t)id < m->nstring_at ? m->string_at[id] : NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->strings[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nstrings && m->strings[lo].id == id ? m->strings[lo].value : NULL;
}

/* keys of the model's arrays by index, for cprof_radix_sort_ix and cprof_radix_sort_ix_by (ctx: the model) */
int64_t cprof_key_call_proc(const void *ctx, uint32_t i)
{
	return ((const struct cprof_model *)ctx)->calls[i].proc;
}

int64_t cprof_key_call_tid(const void *ctx, uint32_t i)
{
	return ((const struct cprof_model *)ctx)->calls[i].tid;
}

int64_t cprof_key_call_corr(const void *ctx, uint32_t i)
{
	return ((const struct cprof_model *)ctx)->calls[i].corr;
}

int64_t cprof_key_rt_proc(const void *ctx, uint32_t i)
{
	return ((const struct cprof_model *)ctx)->rt[i].proc;
}

int64_t cprof_key_rt_tid(const void *ctx, uint32_t i)
{
	return ((const struct cprof_model *)ctx)->rt[i].tid;
}

int64_t cprof_key_op_proc(const void *ctx, uint32_t i)
{
	return ((const struct cprof_model *)ctx)->ops[i].proc;
}

int64_t cprof_key_op_stream(const void *ctx, uint32_t i)
{
	return ((const struct cprof_model *)ctx)->ops[i].stream;
}

struct pk_key {
	const char *a;
	size_t elem;
	int64_t proc, key;
};

/* element i, which begins with (proc, key), is before the key looked up */
static int pk_below(const void *ctx, size_t i)
{
	const struct pk_key *k = ctx;
	int64_t p, v;

	memcpy(&p, k->a + i * k->elem, sizeof(p));
	memcpy(&v, k->a + i * k->elem + sizeof(p), sizeof(v));
	return p < k->proc || (p == k->proc && v < k->key);
}

size_t cprof_lower_pk(const void *arr, size_t n, size_t elem, int64_t proc, int64_t key, struct cprof_hint *hint)
{
	struct pk_key k = { arr, elem, proc, key };

	return cprof_gallop(n, hint, pk_below, &k);
}
