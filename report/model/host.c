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

static int cmp_key(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Driver calls, as cprof html draws them beside the runtime calls only CUPTI saw: those whose correlation
 * id no runtime record and no external id of ours carries (a NULL id is carried by none). */
static int load_driver_only(sqlite3 *db, struct cprof_model *m)
{
	struct cprof_first_set first = { 0 };
	int64_t (*rt)[2] = NULL;
	size_t nrt = 0, cap = 0, i;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	rt = malloc((m->nrt ? m->nrt : 1) * sizeof(*rt));
	if (rt == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nrt; i++)
		if (m->rt[i].corr != CPROF_NO_ID) {
			rt[nrt][0] = m->rt[i].proc;
			rt[nrt++][1] = m->rt[i].corr;
		}
	if (nrt)
		qsort(rt, nrt, sizeof(*rt), cmp_key);
	ret = -EIO;
	if (sqlite3_prepare_v2(db, "SELECT processId, threadId, start, end, nameId, correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER",
			       -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_rt *r;
		int64_t key[2] = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 5) };

		if (sqlite3_column_type(st, 5) != SQLITE_NULL &&
		    ((nrt && bsearch(key, rt, nrt, sizeof(*rt), cmp_key)) || cprof_model_has_ext(m, key[0], key[1])))
			continue;
		if (cprof_grow(&m->drv, &cap, m->ndrv, sizeof(*m->drv)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		r = &m->drv[m->ndrv++];
		r->proc = key[0];
		r->tid = sqlite3_column_int64(st, 1);
		r->start = (uint64_t)sqlite3_column_int64(st, 2);
		r->end = (uint64_t)sqlite3_column_int64(st, 3);
		r->name = sqlite3_column_int64(st, 4); /* a NULL one as 0, as the timeline names it */
		r->corr = sqlite3_column_type(st, 5) == SQLITE_NULL ? CPROF_NO_ID : key[1];
		if ((ret = cprof_first_note(&first, r->name, 0)) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		ret = -EIO;
		goto out;
	}
	ret = cprof_sort_by_start(m->drv, m->ndrv, sizeof(*m->drv));
out:
	cprof_first_done(&first, &m->first_drv, &m->nfirst_drv);
	sqlite3_finalize(st);
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

int cprof_model_load_host(sqlite3 *db, struct cprof_model *m)
{
	int ret;

	if ((ret = load_driver_only(db, m)) < 0 || (ret = load_nvtx_ranges(db, m)) < 0)
		return ret;
	return 0;
}

void cprof_model_free_host(struct cprof_model *m)
{
	free(m->drv);
	free(m->nvtx);
	free(m->first_calls);
	free(m->first_rt);
	free(m->first_drv);
}
