/* The model's host-side extras for a timeline: driver calls no runtime record covers, NVTX ranges, and names in table order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/cprof.h"
#include "report/model/model.h"

const char *const cprof_call_class_name[CPROF_CALL__N] = {
	[CPROF_CALL_OTHER] = NULL,       [CPROF_CALL_LAUNCH] = "launch", [CPROF_CALL_GEMM] = "gemm",
	[CPROF_CALL_MEMCPY] = "memcpy",  [CPROF_CALL_MEMSET] = "memset", [CPROF_CALL_SYNC] = "sync",
	[CPROF_CALL_MEMORY] = "memory",  [CPROF_CALL_MODULE] = "module", [CPROF_CALL_NVTX] = "nvtx",
};

uint8_t cprof_call_class_of(const char *cls)
{
	int i;

	for (i = 1; cls && i < CPROF_CALL__N; i++)
		if (!strcmp(cls, cprof_call_class_name[i]))
			return (uint8_t)i;
	return CPROF_CALL_OTHER;
}

/* ids below this are remembered a byte each; above (never seen from cprofd) by a search of the list */
#define FIRST_MAP_MAX (1 << 24)

int cprof_first_note(struct cprof_first_set *set, int64_t name, uint8_t cls)
{
	size_t i;

	if (name >= 0 && name < FIRST_MAP_MAX) {
		if ((size_t)name >= set->mapcap) {
			size_t cap = set->mapcap ? set->mapcap : 1024;
			uint8_t *map;

			while (cap <= (size_t)name)
				cap *= 2;
			if ((map = realloc(set->map, cap)) == NULL)
				return -ENOMEM;
			memset(map + set->mapcap, 0, cap - set->mapcap);
			set->map = map;
			set->mapcap = cap;
		}
		if (set->map[name])
			return 0;
		set->map[name] = 1;
	} else {
		for (i = 0; i < set->n; i++)
			if (set->v[i].name == name)
				return 0;
	}
	if (cprof_grow(&set->v, &set->cap, set->n, sizeof(*set->v)) < 0)
		return -ENOMEM;
	set->v[set->n].name = name;
	set->v[set->n++].cls = cls;
	return 0;
}

void cprof_first_done(struct cprof_first_set *set, struct cprof_first_name **out, size_t *n)
{
	free(set->map);
	*out = set->v;
	*n = set->n;
	memset(set, 0, sizeof(*set));
}

static const struct cprof_model *sort_model; /* qsort has no context argument */

/* The thread map built from the arrays, as load_threads' join gives it: each CUPTI handle gets the smallest
 * tid of the hooked calls whose external id its runtime or driver records carry. */
struct thread_map {
	struct cprof_thread *v;
	size_t n, cap;
};

static int note_tid(struct thread_map *tm, int64_t proc, int64_t handle, int64_t tid)
{
	size_t lo = 0, hi = tm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cprof_thread *t = &tm->v[mid];

		if (t->proc < proc || (t->proc == proc && t->handle < handle))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < tm->n && tm->v[lo].proc == proc && tm->v[lo].handle == handle) {
		if (tid < tm->v[lo].tid)
			tm->v[lo].tid = tid;
		return 0;
	}
	if (cprof_grow(&tm->v, &tm->cap, tm->n, sizeof(*tm->v)) < 0)
		return -ENOMEM;
	memmove(&tm->v[lo + 1], &tm->v[lo], (tm->n - lo) * sizeof(*tm->v));
	tm->v[lo].proc = proc;
	tm->v[lo].handle = handle;
	tm->v[lo].tid = tid;
	tm->n++;
	return 0;
}

/* hint: the last look-ups' places in m->ext and m->calls_by_corr (cprof_lower_pk) */
static int map_record(struct cprof_model *m, struct thread_map *tm, int64_t proc, int64_t handle, int64_t corr,
		      struct cprof_hint hint[2])
{
	size_t e;
	int ret;

	for (e = cprof_lower_pk(m->ext, m->next, sizeof(*m->ext), proc, corr, &hint[0]);
	     e < m->next && m->ext[e].proc == proc && m->ext[e].corr == corr; e++) {
		size_t c;

		for (c = cprof_calls_corr_lower(m, proc, m->ext[e].ext, &hint[1]); c < m->ncalls; c++) {
			const struct cprof_call *x = &m->calls[m->calls_by_corr[c]];

			if (x->proc != proc || x->corr != m->ext[e].ext)
				break;
			if ((ret = note_tid(tm, proc, handle, x->tid)) < 0)
				return ret;
		}
	}
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

int cprof_model_read_driver(sqlite3 *db, struct cprof_drv_rec **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT processId, threadId, start, end, nameId, correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_drv_rec *r;

		if (cprof_grow(out, &cap, *n, sizeof(**out)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		r = &(*out)[(*n)++];
		r->proc = sqlite3_column_int64(st, 0);
		r->tid = sqlite3_column_int64(st, 1);
		r->start = (uint64_t)sqlite3_column_int64(st, 2);
		r->end = (uint64_t)sqlite3_column_int64(st, 3);
		r->name = sqlite3_column_type(st, 4) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 4);
		r->corr = sqlite3_column_type(st, 5) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 5);
		r->null_proc = sqlite3_column_type(st, 0) == SQLITE_NULL;
		r->null_tid = sqlite3_column_type(st, 1) == SQLITE_NULL;
		r->null_start = sqlite3_column_type(st, 2) == SQLITE_NULL;
		r->null_end = sqlite3_column_type(st, 3) == SQLITE_NULL;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* the runtime records' (process, correlation id) pairs, sorted for bsearch; NULL ids left out */
static int64_t (*rt_keys(const struct cprof_model *m, size_t *n))[2]
{
	int64_t (*rt)[2] = malloc((m->nrt ? m->nrt : 1) * sizeof(*rt));
	size_t i;

	*n = 0;
	if (rt == NULL)
		return NULL;
	for (i = 0; i < m->nrt; i++)
		if (m->rt[i].corr != CPROF_NO_ID) {
			rt[*n][0] = m->rt[i].proc;
			rt[(*n)++][1] = m->rt[i].corr;
		}
	if (*n)
		cprof_sort(rt, *n, sizeof(*rt), cmp_key);
	return rt;
}

static int cmp_call_thread(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct cprof_call *x = &sort_model->calls[i], *y = &sort_model->calls[j];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The hooked calls by (process, tid, start), each with the latest end of its thread's calls up to it: a
 * span [s, e] of a thread lies inside one of its calls iff the last call starting at or before s has that
 * running latest end >= e (what SQL's NOT EXISTS (... a.start <= s AND a.end >= e) asked row by row). */
struct enclosing {
	const struct cprof_model *m;
	uint32_t *ix;
	uint64_t *maxend;
};

static int enclosing_build(struct enclosing *en, const struct cprof_model *m)
{
	size_t i;

	en->m = m;
	en->ix = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*en->ix));
	en->maxend = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*en->maxend));
	if (en->ix == NULL || en->maxend == NULL)
		return -ENOMEM;
	for (i = 0; i < m->ncalls; i++)
		en->ix[i] = (uint32_t)i;
	if (m->ncalls && cprof_radix_sort_ix_by(en->ix, m->ncalls, m->calls, sizeof(*m->calls), cprof_key_call_proc,
						cprof_key_call_tid, m) < 0) {
		sort_model = m;
		cprof_sort(en->ix, m->ncalls, sizeof(*en->ix), cmp_call_thread);
		sort_model = NULL;
	}
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[en->ix[i]], *p = i ? &m->calls[en->ix[i - 1]] : NULL;

		en->maxend[i] = c->end;
		if (p && p->proc == c->proc && p->tid == c->tid && en->maxend[i - 1] > c->end)
			en->maxend[i] = en->maxend[i - 1];
	}
	return 0;
}

static int enclosed(const struct enclosing *en, int64_t proc, int64_t tid, uint64_t s, uint64_t e)
{
	size_t lo = 0, hi = en->m->ncalls;

	/* the first call after (proc, tid, s): the one before it, if of the same thread, started at or before s */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cprof_call *c = &en->m->calls[en->ix[mid]];

		if (c->proc < proc || (c->proc == proc && (c->tid < tid || (c->tid == tid && c->start <= s))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	lo--;
	return en->m->calls[en->ix[lo]].proc == proc && en->m->calls[en->ix[lo]].tid == tid && en->maxend[lo] >= e;
}

int cprof_model_driver_api(struct cprof_model *m, const struct cprof_drv_rec *d, size_t nd)
{
	struct enclosing en = { 0 };
	int64_t (*rt)[2] = NULL;
	size_t nrt = 0, cap = 0, i;
	int ret = -ENOMEM;

	if ((rt = rt_keys(m, &nrt)) == NULL || (ret = enclosing_build(&en, m)) < 0)
		goto out;
	for (i = 0; i < nd; i++) {
		const struct cprof_drv_rec *r = &d[i];
		int64_t key[2] = { r->proc, r->corr };

		/* the SQL joined StringIds on the name: a NULL one is not counted */
		if (r->name == CPROF_NO_ID)
			continue;
		if (!r->null_proc && r->corr != CPROF_NO_ID && nrt && bsearch(key, rt, nrt, sizeof(*rt), cmp_key))
			continue;
		if (!r->null_proc && !r->null_tid && !r->null_start && !r->null_end &&
		    enclosed(&en, r->proc, r->tid, r->start, r->end))
			continue;
		if (cprof_grow(&m->drv_api, &cap, m->ndrv_api, sizeof(*m->drv_api)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		m->drv_api[m->ndrv_api].proc = r->null_proc ? CPROF_NO_ID : r->proc;
		m->drv_api[m->ndrv_api].name = r->name;
		m->drv_api[m->ndrv_api++].d = r->null_start || r->null_end ? 0 : (int64_t)(r->end - r->start);
	}
	m->drv_api_loaded = 1;
	ret = 0;
out:
	free(en.ix);
	free(en.maxend);
	free(rt);
	return ret;
}

/* Driver calls, as cprof html draws them beside the runtime calls only CUPTI saw: those whose correlation
 * id no runtime record and no external id of ours carries (a NULL id is carried by none). */
static int load_driver_only(const struct cprof_drv_rec *d, size_t nd, struct cprof_model *m, struct thread_map *tm)
{
	struct cprof_first_set first = { 0 };
	int64_t (*rt)[2] = NULL;
	size_t nrt = 0, cap = 0, i;
	struct cprof_hint hint[2] = { 0 };
	int ret = -ENOMEM;

	if ((rt = rt_keys(m, &nrt)) == NULL)
		goto out;
	for (i = 0; i < nd; i++) {
		struct cprof_rt *r;
		int64_t key[2] = { d[i].proc, d[i].corr };

		if (d[i].corr != CPROF_NO_ID && cprof_model_has_ext(m, key[0], key[1])) {
			if ((ret = map_record(m, tm, key[0], d[i].tid, key[1], hint)) < 0)
				goto out;
			continue;
		}
		if (d[i].corr != CPROF_NO_ID && nrt && bsearch(key, rt, nrt, sizeof(*rt), cmp_key))
			continue;
		if (cprof_grow(&m->drv, &cap, m->ndrv, sizeof(*m->drv)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		r = &m->drv[m->ndrv++];
		r->proc = key[0];
		r->tid = d[i].tid;
		r->start = d[i].start;
		r->end = d[i].end;
		r->name = d[i].name == CPROF_NO_ID ? 0 : d[i].name; /* a NULL one as 0, as the timeline names it */
		r->corr = d[i].corr;
		r->ext = CPROF_NO_ID; /* none: those with ours were taken above */
		r->ret = 0;
		if ((ret = cprof_first_note(&first, r->name, 0)) < 0)
			goto out;
	}
	ret = cprof_sort_by_start(m->drv, m->ndrv, sizeof(*m->drv));
out:
	cprof_first_done(&first, &m->first_drv, &m->nfirst_drv);
	free(rt);
	return ret;
}

static int load_nvtx_ranges(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	if (!cprof_has_table(db, "NVTX_EVENTS"))
		return 0;
	/* the order ORDER BY start gives, ties included, is the order the timeline draws them in */
	if (sqlite3_prepare_v2(db,
			       "SELECT processId, tid, start, end, textId, depth FROM NVTX_EVENTS"
			       " WHERE eventType IN ('range', 'startend') ORDER BY start",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_nvtx_range *r;

		if (cprof_grow(&m->nvtx, &cap, m->nnvtx, sizeof(*m->nvtx)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		r = &m->nvtx[m->nnvtx++];
		r->proc = sqlite3_column_int64(st, 0);
		r->tid = sqlite3_column_int64(st, 1);
		r->start = (uint64_t)sqlite3_column_int64(st, 2);
		r->open = sqlite3_column_type(st, 3) == SQLITE_NULL;
		r->end = r->open ? 0 : (uint64_t)sqlite3_column_int64(st, 3);
		r->text = sqlite3_column_int64(st, 4);
		r->depth = sqlite3_column_int(st, 5);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int cprof_model_load_host(sqlite3 *db, struct cprof_model *m, int threads, const struct cprof_drv_rec *d, size_t nd)
{
	struct thread_map tm = { 0 };
	size_t i;
	struct cprof_hint hint[2] = { 0 };
	int ret;

	if ((ret = cprof_model_calls_by_corr(m)) < 0)
		return ret;
	for (i = 0; i < m->nrt; i++)
		if (m->rt[i].corr != CPROF_NO_ID &&
		    (ret = map_record(m, &tm, m->rt[i].proc, m->rt[i].tid, m->rt[i].corr, hint)) < 0)
			goto out;
	if ((ret = load_driver_only(d, nd, m, &tm)) < 0 || (ret = load_nvtx_ranges(db, m)) < 0)
		goto out;
	if (threads) {
		m->threads = tm.v;
		m->nthreads = tm.n;
		tm.v = NULL;
	}
out:
	free(tm.v);
	return ret;
}

void cprof_model_free_host(struct cprof_model *m)
{
	free(m->drv);
	free(m->drv_api);
	free(m->nvtx);
	free(m->first_calls);
	free(m->first_rt);
	free(m->first_drv);
}
