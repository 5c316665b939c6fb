/* Loads a profile once: each table in one statement into arrays sorted by time, the correlation index resolved. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof"
#include "common/ending.h"
#include "common/log.h"
#include "report/cprof.h"
#include "report/model/model.h"

/* one (process, CUPTI correlation id) -> the earliest runtime or driver record with it */
struct corr {
	int64_t proc, id;
	uint64_t start, end;
};

static int cmp_corr(const void *a, const void *b)
{
	const struct corr *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* 1 when a record has this (proc, id); *start gets the earliest start and *end its end, else both are left alone */
static int corr_find(const struct corr *c, size_t n, int64_t proc, int64_t id, uint64_t *start, uint64_t *end,
		     struct cprof_hint *hint)
{
	size_t lo = cprof_lower_pk(c, n, sizeof(*c), proc, id, hint);

	if (lo < n && c[lo].proc == proc && c[lo].id == id) {
		*start = c[lo].start;
		*end = c[lo].end;
		return 1;
	}
	return 0;
}

/* how many records carry (proc, id) */
static uint16_t corr_count(const struct corr *c, size_t n, int64_t proc, int64_t id, struct cprof_hint *hint)
{
	size_t lo = cprof_lower_pk(c, n, sizeof(*c), proc, id, hint), k = 0;

	while (lo < n && c[lo].proc == proc && c[lo].id == id && k < UINT16_MAX)
		lo++, k++;
	return (uint16_t)k;
}

/* the driver records' correlation index, as load_ops reads it: a record without a start still counts as
 * seen (coalesce(min(start), ...) in SQL gives 0 then) */
static int driver_corr(const struct cprof_drv_rec *d, size_t nd, struct corr **out, size_t *n)
{
	size_t i;

	*n = 0;
	if ((*out = malloc((nd ? nd : 1) * sizeof(**out))) == NULL)
		return -ENOMEM;
	for (i = 0; i < nd; i++)
		if (d[i].corr != CPROF_NO_ID) {
			(*out)[*n].proc = d[i].proc;
			(*out)[*n].id = d[i].corr;
			(*out)[*n].start = d[i].start;
			(*out)[(*n)++].end = d[i].end;
		}
	if (*n)
		cprof_sort(*out, *n, sizeof(**out), cmp_corr);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int load_ops(sqlite3 *db, struct cprof_model *m, int attribute, const struct cprof_drv_rec *d, size_t nd)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					      "CUPTI_ACTIVITY_KIND_MEMSET" };
	struct corr *rt = NULL, *drv = NULL;
	size_t nrt = 0, ndrv = 0, cap = 0, n = 0, i, nnames = 0;
	struct cprof_hint rt_hint = { 0 }, drv_hint = { 0 };
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
			rt[nrt].start = m->rt[i].start;
			rt[nrt++].end = m->rt[i].end;
		}
	if (nrt)
		cprof_sort(rt, nrt, sizeof(*rt), cmp_corr);
	if (attribute && (ret = driver_corr(d, nd, &drv, &ndrv)) < 0)
		goto out;
	for (t = 0; t < 3; t++) {
		char sql[256];
		sqlite3_stmt *st;
		uint32_t row = 0;
		int rc;

		snprintf(sql, sizeof(sql), "SELECT processId, start, end, correlationId, %s, deviceId, streamId, %s, %s FROM %s",
			 t == 0 ? "nameId" : "NULL",
			 t == 0 ? "0, 0, 0, 0" : t == 1 ? "copyKind, bytes, srcKind, dstKind" : "0, bytes, 0, 0",
			 t == 0 ? "gridX, gridY, gridZ, blockX, blockY, blockZ, graphId" : "0, 0, 0, 0, 0, 0, graphId", tables[t]);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
			ret = -EIO;
			goto out;
		}
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct cprof_op *o;
			uint64_t launch = 0, enq = 0;

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
			o->hooked = 0; /* mark_hooked sets the hooked ones once all is loaded */
			o->ndrv = 0;
			o->row = row++;
			o->dev = (int32_t)sqlite3_column_int64(st, 5);
			o->stream = (uint32_t)sqlite3_column_int64(st, 6);
			o->copy = sqlite3_column_int64(st, 7) >= 0 && sqlite3_column_int64(st, 7) <= 10
					  ? (uint8_t)sqlite3_column_int64(st, 7) : 0;
			o->bytes = sqlite3_column_int64(st, 8);
			o->srckind = (uint8_t)sqlite3_column_int(st, 9);
			o->dstkind = (uint8_t)sqlite3_column_int(st, 10);
			o->shape = 0;
			o->graph = sqlite3_column_type(st, 17) != SQLITE_NULL && sqlite3_column_int64(st, 17) != 0;
			if (t == 0) {
				uint64_t h = 1469598103934665603ULL; /* FNV-1a over the six dimensions */
				int c;

				for (c = 11; c <= 16; c++)
					h = (h ^ (uint64_t)sqlite3_column_int64(st, c)) * 1099511628211ULL;
				o->shape = (uint32_t)(h ^ (h >> 32)) | 1; /* never 0: known */
			}
			if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
				int64_t id = sqlite3_column_int64(st, 3);
				int in_rt = corr_find(rt, nrt, o->proc, id, &launch, &enq, &rt_hint);

				o->corr = id;
				if (in_rt)
					o->via = 1;
				else if (corr_find(drv, ndrv, o->proc, id, &launch, &enq, &drv_hint)) {
					o->via = 2;
					o->ndrv = corr_count(drv, ndrv, o->proc, id, &drv_hint);
				}
			}
			o->launch = launch;
			o->enq = enq;
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

		if ((ret = cprof_radix_sort_at(names, nnames, sizeof(*names), 0)) < 0)
			goto out;
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
	if ((ret = cprof_sort_by_start(k, n, sizeof(*k))) < 0)
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

/* torch.compile's ranges among the NVTX annotations: one scan, a few rows kept */
static int load_torch_ranges(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	if (!cprof_has_table(db, "NVTX_EVENTS"))
		return 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT n.processId, n.tid, n.start, n.end, n.textId, s.value = 'TorchDynamo Cache Lookup'"
			       " FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE n.eventType = 'range'"
			       " AND n.end IS NOT NULL AND (s.value = 'TorchDynamo Cache Lookup'"
			       " OR s.value LIKE 'Torch-Compiled Region: %') ORDER BY n.start",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_torch_range *r;

		if (cprof_grow(&m->torch, &cap, m->ntorch, sizeof(*m->torch)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		r = &m->torch[m->ntorch++];
		r->proc = sqlite3_column_int64(st, 0);
		r->tid = sqlite3_column_int64(st, 1);
		r->start = (uint64_t)sqlite3_column_int64(st, 2);
		r->end = (uint64_t)sqlite3_column_int64(st, 3);
		r->text = sqlite3_column_int64(st, 4);
		r->lookup = sqlite3_column_int(st, 5) != 0;
		if (r->end < r->start)
			m->ntorch--; /* a hostile end: not a range */
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* the NVTX ranges steps may be: NVTX_EVENTS and PROCESSES each in one scan, the joins (StringIds, the
 * process's end) in memory; after load_strings */
static int load_step_ranges(sqlite3 *db, struct cprof_model *m)
{
	struct { int64_t id, end; } *pe = NULL;
	size_t npe = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int rc, ret = -EIO;

	if (!cprof_has_table(db, "NVTX_EVENTS"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT id, endNs FROM PROCESSES", -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cprof_grow(&pe, &cap, npe, sizeof(*pe)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		pe[npe].id = sqlite3_column_int64(st, 0);
		/* nullif(endNs, 0): NULL and 0 alike are no end */
		pe[npe++].end = sqlite3_column_type(st, 1) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto out;
	cprof_sort(pe, npe, sizeof(*pe), cmp_name); /* by id, the first member */
	cap = 0;
	if (sqlite3_prepare_v2(db, "SELECT processId, tid, start, end, textId FROM NVTX_EVENTS WHERE eventType = 'range'",
			       -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(st, 0), text = sqlite3_column_int64(st, 4), pend = 0;
		size_t i;
		int found = 0;

		if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 4) == SQLITE_NULL ||
		    cprof_model_string(m, text) == NULL)
			continue;
		{
			size_t lo = 0, hi = npe;

			while (lo < hi) {
				i = lo + (hi - lo) / 2;
				if (pe[i].id < proc)
					lo = i + 1;
				else
					hi = i;
			}
			if (lo < npe && pe[lo].id == proc) {
				found = 1;
				pend = pe[lo].end;
			}
		}
		if (!found)
			continue;
		if (cprof_grow(&m->step_ranges, &cap, m->nstep_ranges, sizeof(*m->step_ranges)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		m->step_ranges[m->nstep_ranges++] = (struct cprof_step_range){
			proc, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			sqlite3_column_type(st, 3) != SQLITE_NULL ? sqlite3_column_int64(st, 3)
			: pend ? pend : sqlite3_column_int64(st, 2), text };
	}
	ret = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(st);
	free(pe);
	return ret;
}

static int load_calls(sqlite3 *db, struct cprof_model *m)
{
	struct cprof_call *k = NULL;
	size_t n = 0, cap = 0, gcap = 0;
	int64_t memcpy_id = cprof_query_int(db, "SELECT id FROM StringIds WHERE value = 'cudaMemcpy'", INT64_MIN);
	/* graph replays and the calls that make a graph (a capture's end, an instantiation): few names, looked up once */
	int64_t replay_ids[2] = { cprof_query_int(db, "SELECT id FROM StringIds WHERE value = 'cudaGraphLaunch'", INT64_MIN),
				  cprof_query_int(db, "SELECT id FROM StringIds WHERE value = 'cudaGraphLaunch_ptsz'", INT64_MIN) };
	int64_t made_ids[3] = { /* a capture's end, then the two instantiations */
		cprof_query_int(db, "SELECT id FROM StringIds WHERE value = 'cudaStreamEndCapture'", INT64_MIN),
		cprof_query_int(db, "SELECT id FROM StringIds WHERE value = 'cudaGraphInstantiate'", INT64_MIN),
		cprof_query_int(db, "SELECT id FROM StringIds WHERE value = 'cudaGraphInstantiateWithFlags'", INT64_MIN)
	};
	/* class 'sync' but the host does not wait: it orders two streams on the GPU */
	int64_t wait_id = cprof_query_int(db, "SELECT id FROM StringIds WHERE value = 'cudaStreamWaitEvent'", INT64_MIN);
	struct cprof_first_set first = { 0 };
	sqlite3_stmt *st;
	int rc, ret = -EIO;

	if (sqlite3_prepare_v2(db, "SELECT processId, start, end, nested = 0, class, nameId, tid, correlationId, a0,"
				    " stream, coalesce(bytes, 0), coalesce(returnValue, 0), a1, a2, a3, kernelNameId FROM CPROF_API", -1, &st, NULL) != SQLITE_OK)
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
		c->gemm = cls && !strcmp(cls, "gemm");
		c->name = sqlite3_column_int64(st, 5);
		c->sync = cls && !strcmp(cls, "sync") && c->name != wait_id;
		c->memcpy = c->name == memcpy_id;
		c->graph = c->name == replay_ids[0] || c->name == replay_ids[1] ? CPROF_GRAPH_REPLAY
			   : c->name == made_ids[0]                               ? CPROF_GRAPH_CAPTURED
			   : c->name == made_ids[1] || c->name == made_ids[2]     ? CPROF_GRAPH_INSTANTIATED
										  : CPROF_GRAPH_NONE;
		c->cut = c->sync || c->memcpy;
		c->tid = sqlite3_column_int64(st, 6);
		c->corr = sqlite3_column_type(st, 7) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 7);
		c->a0 = sqlite3_column_type(st, 8) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 8);
		c->stream = sqlite3_column_type(st, 9) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 9);
		c->bytes = sqlite3_column_int64(st, 10);
		c->ret = sqlite3_column_int(st, 11);
		c->copy = cls && !strcmp(cls, "memcpy");
		c->cls = cprof_call_class_of(cls);
		c->nested = sqlite3_column_type(st, 3) != SQLITE_NULL && sqlite3_column_int(st, 3) == 0;
		c->kname = sqlite3_column_type(st, 15) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 15);
		if (!c->nested && (ret = cprof_first_note(&first, c->name, c->cls)) < 0)
			goto out;
		if (c->gemm) {
			struct cprof_gemm *g;

			if (cprof_grow(&m->gemms, &gcap, m->ngemms, sizeof(*m->gemms)) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			g = &m->gemms[m->ngemms++];
			g->proc = c->proc;
			g->name = c->name;
			g->m = c->a0;
			g->n = sqlite3_column_type(st, 12) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 12);
			g->k = sqlite3_column_type(st, 13) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 13);
			g->batch = sqlite3_column_type(st, 14) == SQLITE_NULL ? CPROF_NO_ID : sqlite3_column_int64(st, 14);
		}
		ret = -EIO;
	}
	if (rc != SQLITE_DONE)
		goto out;
	if ((ret = cprof_sort_by_start(k, n, sizeof(*k))) < 0)
		goto out;
	/* one process's calls: a window's calls are counted by two searches (cost.c) */
	m->calls_proc = n ? k[0].proc : 0;
	for (size_t i = 1; i < n && m->calls_proc; i++)
		if (k[i].proc != m->calls_proc)
			m->calls_proc = 0;
	/* each process's calls, counted once: counting them window by window walked every call of the run for each
	 * (O(windows x calls): 14 s of a 4,000-window report of two processes, 2026-12-06) */
	for (size_t i = 0; i < m->nprocs; i++)
		m->procs[i].ncalls = 0;
	for (size_t i = 0, p = m->nprocs; i < n; i++) {
		if (p == m->nprocs || m->procs[p].id != k[i].proc)
			p = cprof_model_proc_index(m, k[i].proc);
		if (p < m->nprocs)
			m->procs[p].ncalls++;
	}
	m->calls = k;
	k = NULL;
	m->ncalls = n;
	ret = 0;
out:
	cprof_first_done(&first, &m->first_calls, &m->nfirst_calls);
	sqlite3_finalize(st);
	free(k);
	return ret;
}

static int load_overhead(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	if (!cprof_has_table(db, "CUPTI_ACTIVITY_KIND_OVERHEAD")) {
		m->no_ovh_table = 1;
		return 0;
	}
	/* objectKind 2 (THREAD): contextId holds objectId's threadId (collector/store.c) */
	if (sqlite3_prepare_v2(db, "SELECT processId, start, end, CASE WHEN objectKind = 2 THEN coalesce(contextId, 0) ELSE 0 END"
				   " FROM CUPTI_ACTIVITY_KIND_OVERHEAD WHERE overheadKind IN " CPROF_PROFILER_OVERHEAD_KINDS,
				   -1, &st, NULL) != SQLITE_OK)
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
		m->ovh[m->novh].end = (uint64_t)sqlite3_column_int64(st, 2);
		m->ovh[m->novh].tid = sqlite3_column_int64(st, 3);
		m->ovh[m->novh++].background = 0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EIO;
	return cprof_sort_by_start(m->ovh, m->novh, sizeof(*m->ovh));
}

static int load_runtime(sqlite3 *db, struct cprof_model *m)
{
	struct cprof_first_set first = { 0 };
	struct cprof_rt *k = NULL;
	size_t n = 0, cap = 0;
	struct cprof_hint ext_hint = { 0 };
	sqlite3_stmt *st;
	int rc, ret = -EIO;

	if (sqlite3_prepare_v2(db, "SELECT processId, threadId, start, end, nameId, correlationId, coalesce(returnValue, 0)"
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
		r->ret = sqlite3_column_int(st, 6);
		/* the calls only CUPTI saw; the external ids are loaded first (a search each here, once: five readers
		 * looked it up again for every record, 9% of a 1M-record report) */
		r->ext = cprof_model_rt_ext(m, r, &ext_hint);
		if (r->ext == CPROF_NO_ID &&
		    (ret = cprof_first_note(&first, r->name == CPROF_NO_ID ? 0 : r->name, 0)) < 0)
			goto out;
		ret = -EIO;
	}
	if (rc != SQLITE_DONE)
		goto out;
	if ((ret = cprof_sort_by_start(k, n, sizeof(*k))) < 0)
		goto out;
	m->rt = k;
	k = NULL;
	m->nrt = n;
	ret = 0;
out:
	cprof_first_done(&first, &m->first_rt, &m->nfirst_rt);
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
	if (rc != SQLITE_DONE)
		return -EIO;
	/* dense ids (at most twice as many slots as strings, and a few spare) get a direct index */
	if (m->nstrings > 0 && m->strings[0].id >= 0 &&
	    (uint64_t)m->strings[m->nstrings - 1].id < 2 * (uint64_t)m->nstrings + 1024 &&
	    (m->string_at = calloc((size_t)m->strings[m->nstrings - 1].id + 1, sizeof(*m->string_at))) != NULL) {
		m->nstring_at = (size_t)m->strings[m->nstrings - 1].id + 1;
		for (size_t i = 0; i < m->nstrings; i++)
			m->string_at[m->strings[i].id] = m->strings[i].value;
	}
	return 0;
}

/* rows of one (proc, corr) kept in table order: a search finds the first */
static int cmp_ext_seq(const void *a, const void *b)
{
	const struct cprof_ext *x = a, *y = b;
	int c = cprof_ext_cmp(a, b);

	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int load_ext(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	/* sized at once: doubling copies the array and keeps a spare half */
	size_t cap = (size_t)cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION", 0);
	int rc;

	if (cap && (m->ext = malloc(cap * sizeof(*m->ext))) == NULL)
		return -ENOMEM;
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
		m->ext[m->next].seq = (uint32_t)m->next;
		m->ext[m->next++].ext = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EIO;
	if (m->next)
		cprof_sort(m->ext, m->next, sizeof(*m->ext), cmp_ext_seq);
	return 0;
}


/* the counted calls by name (cost.c loads them; the names are the strings' here, above it) */
static int counted_name_cmp(const void *pa, const void *pb)
{
	const struct cprof_counted *a = pa, *b = pb;

	return a->name < b->name ? -1 : a->name > b->name;
}

static int counted_calls_desc(const void *pa, const void *pb)
{
	const struct cprof_counted *a = pa, *b = pb;

	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

int cprof_model_counted_calls(const struct cprof_model *m, int64_t proc, struct cprof_counted **out)
{
	struct cprof_counted *o;
	size_t i, n = 0, u = 0;

	*out = NULL;
	if (m->ncounted == 0)
		return 0;
	if ((o = malloc(m->ncounted * sizeof(*o))) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->ncounted; i++)
		if ((!proc || m->counted[i].proc == proc) && cprof_model_string(m, m->counted[i].name) && m->counted[i].calls)
			o[n++] = m->counted[i];
	if (n > 1)
		qsort(o, n, sizeof(*o), counted_name_cmp);
	for (i = 0; i < n; i++) {
		if (u && o[u - 1].name == o[i].name) {
			o[u - 1].calls += o[i].calls;
			continue;
		}
		o[u] = o[i];
		o[u++].proc = proc;
	}
	if (u == 0) {
		free(o);
		return 0;
	}
	if (u > 1)
		qsort(o, u, sizeof(*o), counted_calls_desc);
	*out = o;
	return (int)u;
}

static const struct cprof_model *sort_model; /* qsort has no context argument */

static int cmp_call_corr(const void *a, const void *b)
{
	const struct cprof_call *x = &sort_model->calls[*(const uint32_t *)a], *y = &sort_model->calls[*(const uint32_t *)b];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

int cprof_model_calls_by_corr(struct cprof_model *m)
{
	size_t i;

	if (m->calls_by_corr)
		return 0;
	if ((m->calls_by_corr = malloc((m->ncalls ? m->ncalls : 1) * sizeof(*m->calls_by_corr))) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->ncalls; i++)
		m->calls_by_corr[i] = (uint32_t)i;
	/* the stable radix passes give what the stable qsort gave: ties of (proc, corr) in table order */
	if (m->ncalls && cprof_radix_sort_ix_by(m->calls_by_corr, m->ncalls, m->calls, sizeof(*m->calls),
						cprof_key_call_proc, cprof_key_call_corr, m) < 0) {
		sort_model = m;
		cprof_sort(m->calls_by_corr, m->ncalls, sizeof(*m->calls_by_corr), cmp_call_corr);
		sort_model = NULL;
	}
	return 0;
}

struct call_key {
	const struct cprof_model *m;
	int64_t proc, corr;
};

static int call_below(const void *ctx, size_t i)
{
	const struct call_key *k = ctx;
	const struct cprof_call *x = &k->m->calls[k->m->calls_by_corr[i]];

	return x->proc < k->proc || (x->proc == k->proc && x->corr < k->corr);
}

size_t cprof_calls_corr_lower(const struct cprof_model *m, int64_t proc, int64_t corr, struct cprof_hint *hint)
{
	struct call_key k = { m, proc, corr };

	return cprof_gallop(m->ncalls, hint, call_below, &k);
}

void cprof_model_free_indexes(struct cprof_model *m)
{
	free(m->calls_by_corr);
	free(m->launch_call);
	free(m->kernels_by_corr);
	m->calls_by_corr = NULL;
	m->launch_call = NULL;
	m->kernels_by_corr = NULL;
}

/* The op -> launching call join of every op, once: the report walks it five times (the load's hooked marks,
 * the tiny-kernel and graph findings, the launched-time table, the last step's drain), and each walk was two
 * binary searches per op, 15% of a 1M-record report. */
static int launch_calls(struct cprof_model *m)
{
	size_t i;
	struct cprof_hint ext_hint = { 0 }, call_hint = { 0 };

	if (m->launch_call)
		return 0;
	if (cprof_model_calls_by_corr(m) < 0)
		return -ENOMEM;
	if ((m->launch_call = malloc((m->nops ? m->nops : 1) * sizeof(*m->launch_call))) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nops; i++) {
		const struct cprof_op *o = &m->ops[i];
		struct cprof_ext key = { o->proc, o->corr, 0, 0 };
		size_t lo, a;

		m->launch_call[i] = CPROF_NO_CALL;
		if (o->corr == CPROF_NO_ID)
			continue;
		lo = cprof_lower_pk(m->ext, m->next, sizeof(*m->ext), o->proc, o->corr, &ext_hint);
		/* one external id per CUPTI correlation and one call per external id in a process, as the preload
		 * numbers them: a profile that repeats ids (forged, damaged) is joined on the first of each, not on
		 * every pair (5,000 launches sharing one id: 10^11 pairs, minutes of report) */
		if (lo >= m->next || cprof_ext_cmp(&m->ext[lo], &key))
			continue;
		a = cprof_calls_corr_lower(m, o->proc, m->ext[lo].ext, &call_hint);
		if (a < m->ncalls && m->calls[m->calls_by_corr[a]].proc == o->proc &&
		    m->calls[m->calls_by_corr[a]].corr == m->ext[lo].ext)
			m->launch_call[i] = m->calls_by_corr[a];
	}
	return 0;
}

int cprof_model_launched(struct cprof_model *m, int64_t proc,
			 int (*fn)(void *ctx, const struct cprof_call *c, const struct cprof_op *o), void *ctx)
{
	size_t i;
	int ret;

	if ((ret = launch_calls(m)) < 0)
		return ret;
	for (i = 0; i < m->nops; i++) {
		const struct cprof_op *o = &m->ops[i];

		if (m->launch_call[i] == CPROF_NO_CALL || (proc != 0 && o->proc != proc))
			continue;
		if ((ret = fn(ctx, &m->calls[m->launch_call[i]], o)) < 0)
			return ret;
	}
	return 0;
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
			cprof_sort(m->kernels_by_corr, m->nkernels_by_corr, sizeof(*m->kernels_by_corr), cmp_kernel_corr);
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
	if (cprof_radix_sort_keyed(kd, n) < 0) {
		free(d);
		return -ENOMEM;
	}
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

/* what the statuses say of each process: its hooks were never in the call path (hooks-absent), CUPTI recorded its
 * occupancy queries only at first (queries-sampled); a profile older than the table or the codes says nothing, and
 * each of its processes counts as hooked and recorded whole */
static int load_proc_statuses(sqlite3 *db, struct cprof_model *m)
{
	sqlite3_stmt *st;
	int rc;

	if (!cprof_has_table(db, "CPROF_STATUS"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT processId, code = 'hooks-absent' FROM CPROF_STATUS"
				   " WHERE code IN ('hooks-absent', 'queries-sampled')", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = cprof_model_proc_index(m, sqlite3_column_int64(st, 0)); /* procs are in id order */

		if (i >= m->nprocs)
			continue;
		if (sqlite3_column_int(st, 1))
			m->procs[i].hooks_absent = 1;
		else if (!m->procs[i].queries_sampled) {
			m->procs[i].queries_sampled = 1;
			m->queries_sampled++;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
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
	if (ret == 0)
		ret = load_proc_statuses(db, m);
out:
	sqlite3_finalize(st);
	return ret;
}

const char *cprof_end_kernel_name(const char *mangled, char *buf, size_t size)
{
	char *d = cprof_demangle(mangled);

	cprof_shorten(d ? d : mangled, buf, size);
	free(d);
	return buf;
}

void cprof_end_free(struct cprof_end *e)
{
	size_t i;

	if (e == NULL)
		return;
	free(e->ending);
	free(e->err_api);
	for (i = 0; i < e->ncalls; i++) {
		free(e->calls[i].api);
		free(e->calls[i].kernel);
	}
	free(e->calls);
	for (i = 0; i < e->nkernels; i++)
		free(e->kernels[i].name);
	free(e->kernels);
	for (i = 0; i < e->nerr_kernels; i++)
		free(e->err_kernels[i].name);
	free(e->err_kernels);
	free(e);
}

static char *col_dup_or_null(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? strdup((const char *)t) : NULL;
}

/* rows of (name, CUPTI stream, handle) into *out */
static int load_end_kernels(sqlite3_stmt *st, struct cprof_end_kernel **out, size_t *n)
{
	size_t cap = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_end_kernel *k;

		if (cprof_grow(out, &cap, *n, sizeof(**out)) < 0)
			return -ENOMEM;
		k = &(*out)[(*n)++];
		k->name = col_dup_or_null(st, 0);
		k->stream = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
		k->handle = (uint64_t)sqlite3_column_int64(st, 2);
		if (k->name == NULL)
			return -ENOMEM;
	}
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* the last calls of each thread: the CRASH record's when there is one (it has the calls a crash could not
 * send), else the profile's */
static const char end_calls_crash_sql[] =
	"SELECT c.tid, s.value, k.value, c.returnValue FROM CPROF_CRASH_CALLS c JOIN StringIds s ON s.id = c.nameId"
	" LEFT JOIN StringIds k ON k.id = c.kernelNameId WHERE c.processId = ?1 ORDER BY c.tid LIMIT 64";
/* each thread's last outermost call (the query of a model without its timeline; ending.c does it on the arrays) */
static const char end_calls_api_sql[] =
	"SELECT t.tid, s.value, k.value, a.returnValue FROM THREADS t"
	" JOIN CPROF_API a ON a.id = (SELECT b.id FROM CPROF_API b WHERE b.start <= t.lastNs AND b.processId = t.processId"
	"  AND b.tid = t.tid AND b.nested = 0 ORDER BY b.start DESC, b.id DESC LIMIT 1)"
	" JOIN StringIds s ON s.id = a.nameId LEFT JOIN StringIds k ON k.id = a.kernelNameId"
	" WHERE t.processId = ?1 ORDER BY t.tid LIMIT 64";
/* The last launches on each stream: from the process's last call back over at most 20,000 calls (of
 * every process: in a merged job the others' calls count too), a stream idle over all of them left out;
 * names are looked up only for the rows kept. These queries are what a model without its timeline runs
 * (report --by kernel, trace, stacks): on a profile without the indexes older cprofd made, a scan of the
 * calls; a model with its timeline looks up on its arrays (report/model/ending.c) the same rows. */
#define END_MAX_STREAMS 8
#define END_PER_STREAM 3
static const char end_scan_sql[] =
	"SELECT a.processId, a.class IN ('launch', 'gemm'), a.nameId, a.kernelNameId, a.stream, a.correlationId"
	" FROM CPROF_API a WHERE a.start <= coalesce((SELECT max(lastNs) FROM THREADS WHERE processId = ?1),"
	" 9223372036854775807) ORDER BY a.start DESC, a.id DESC LIMIT 20000";
static const char end_string_sql[] = "SELECT value FROM StringIds WHERE id = ?1";
static const char end_stream_id_sql[] =
	"SELECT kk.streamId FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e JOIN CUPTI_ACTIVITY_KIND_KERNEL kk"
	" ON kk.processId = e.processId AND kk.correlationId = e.correlationId"
	" WHERE e.processId = ?1 AND e.externalKind = 5 AND e.externalId = ?2 LIMIT 1";

/* the string of StringIds id (column i of st; NULL stays NULL), strdup'ed */
static char *end_string(sqlite3_stmt *str, sqlite3_stmt *st, int i)
{
	char *v = NULL;

	if (str == NULL || sqlite3_column_type(st, i) == SQLITE_NULL)
		return NULL;
	sqlite3_reset(str);
	sqlite3_bind_int64(str, 1, sqlite3_column_int64(st, i));
	if (sqlite3_step(str) == SQLITE_ROW)
		v = col_dup_or_null(str, 0);
	sqlite3_reset(str);
	return v;
}

/* CUPTI's stream id of the kernel our call corr launched; -1 when CUPTI did not deliver it */
static int64_t end_stream_id(sqlite3_stmt *sid, int64_t proc, int64_t corr)
{
	int64_t id = -1;

	if (sid == NULL)
		return -1;
	sqlite3_reset(sid);
	sqlite3_bind_int64(sid, 1, proc);
	sqlite3_bind_int64(sid, 2, corr);
	if (sqlite3_step(sid) == SQLITE_ROW)
		id = sqlite3_column_int64(sid, 0);
	sqlite3_reset(sid);
	return id;
}

static int end_scan(sqlite3 *db, int64_t proc, struct cprof_end *e)
{
	sqlite3_stmt *st = NULL, *sid = NULL, *str = NULL;
	size_t kcap = 0, nstreams = 0, i, j;
	uint64_t streams[END_MAX_STREAMS];
	int per[END_MAX_STREAMS], rc, ret = 0;

	if (sqlite3_prepare_v2(db, end_scan_sql, -1, &st, NULL) != SQLITE_OK)
		return 0; /* an older profile */
	if (sqlite3_prepare_v2(db, end_stream_id_sql, -1, &sid, NULL) != SQLITE_OK)
		sid = NULL;
	if (sqlite3_prepare_v2(db, end_string_sql, -1, &str, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		sqlite3_finalize(sid);
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, proc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t h = (uint64_t)sqlite3_column_int64(st, 4);
		struct cprof_end_kernel *k;

		if (sqlite3_column_int64(st, 0) != proc || !sqlite3_column_int(st, 1))
			continue;
		for (i = 0; i < nstreams && streams[i] != h; i++)
			;
		if (i == nstreams) {
			if (nstreams == END_MAX_STREAMS)
				continue;
			streams[nstreams] = h;
			per[nstreams++] = 0;
		}
		if (per[i] >= END_PER_STREAM)
			continue;
		per[i]++;
		if (cprof_grow(&e->kernels, &kcap, e->nkernels, sizeof(*e->kernels)) < 0) {
			ret = -ENOMEM;
			break;
		}
		k = &e->kernels[e->nkernels++];
		k->handle = h;
		k->stream = end_stream_id(sid, proc, sqlite3_column_int64(st, 5));
		if ((k->name = end_string(str, st, 3)) == NULL && (k->name = end_string(str, st, 2)) == NULL)
			k->name = strdup("?");
		if (k->name == NULL) {
			ret = -ENOMEM;
			break;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = -EIO;
	sqlite3_finalize(st);
	sqlite3_finalize(sid);
	sqlite3_finalize(str);
	/* by stream handle, each stream's latest first (stable: few elements) */
	for (i = 1; i < e->nkernels; i++)
		for (j = i; j > 0 && e->kernels[j - 1].handle > e->kernels[j].handle; j--) {
			struct cprof_end_kernel t = e->kernels[j];

			e->kernels[j] = e->kernels[j - 1];
			e->kernels[j - 1] = t;
		}
	return ret;
}

/* THREADS of proc as (tid, lastNs) pairs, by tid; a NULL lastNs is -1 (no call is before it) */
static int end_threads(sqlite3 *db, int64_t proc, int64_t (**out)[2], size_t *n, int64_t *bound)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, any = 0;

	*out = NULL;
	*n = 0;
	*bound = INT64_MAX;
	if (sqlite3_prepare_v2(db, "SELECT tid, lastNs FROM THREADS WHERE processId = ?1 ORDER BY tid", -1, &st, NULL) != SQLITE_OK)
		return 1; /* an older profile: none */
	sqlite3_bind_int64(st, 1, proc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t last = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);

		if (cprof_grow(out, &cap, *n, sizeof(**out)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		(*out)[*n][0] = sqlite3_column_int64(st, 0);
		(*out)[(*n)++][1] = last;
		/* max(lastNs) ignores NULLs */
		if (sqlite3_column_type(st, 1) != SQLITE_NULL && (!any || last > *bound)) {
			*bound = last;
			any = 1;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The rows of end_calls_crash_sql / end_calls_api_sql into e->calls (tid, api, kernel, ret). */
static int end_call_rows(sqlite3_stmt *st, struct cprof_end *e, size_t *cap)
{
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_end_call *c;

		if (cprof_grow(&e->calls, cap, e->ncalls, sizeof(*e->calls)) < 0)
			return -ENOMEM;
		c = &e->calls[e->ncalls++];
		c->tid = sqlite3_column_int64(st, 0);
		c->api = col_dup_or_null(st, 1);
		c->kernel = col_dup_or_null(st, 2);
		c->ret = sqlite3_column_int64(st, 3);
		if (c->api == NULL)
			return -ENOMEM;
	}
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* load_end on the model's arrays (a model with its timeline): no query that needs an index */
static int load_end_arrays(sqlite3 *db, const struct cprof_model *m, struct cprof_proc *p, struct cprof_end *e,
			   int has_err, int signal)
{
	int64_t(*threads)[2] = NULL, bound;
	size_t nthreads = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int ret = 0, old;

	if (has_err) {
		struct cprof_end_err r;

		if (cprof_end_error(m, p->id, &r)) {
			e->err_tid = r.tid;
			if ((e->err_api = strdup(r.api)) == NULL)
				return -ENOMEM;
			e->err = r.ret;
			e->err_device = !r.scoped;
			if (e->err && (ret = cprof_end_err_kernels(m, p->id, r.start, e->err_device, r.stream, &e->err_kernels,
								   &e->nerr_kernels)) < 0)
				return ret;
		}
	}
	if ((old = end_threads(db, p->id, &threads, &nthreads, &bound)) < 0)
		return old;
	if (signal) {
		if (sqlite3_prepare_v2(db, end_calls_crash_sql, -1, &st, NULL) != SQLITE_OK)
			goto out;
		sqlite3_bind_int64(st, 1, p->id);
		if ((ret = end_call_rows(st, e, &cap)) < 0)
			goto out;
	} else if (old) {
		goto out; /* no THREADS table: the query failed to prepare, and so stopped here */
	} else if ((ret = cprof_end_thread_calls(m, p->id, (const int64_t(*)[2])threads, nthreads, &e->calls, &e->ncalls)) < 0)
		goto out;
	if (!old) /* the query that reads THREADS failed to prepare: none, as before */
		ret = cprof_end_stream_kernels(m, p->id, bound, &e->kernels, &e->nkernels);
out:
	sqlite3_finalize(st);
	free(threads);
	return ret;
}

static int load_end(sqlite3 *db, const struct cprof_model *m, struct cprof_proc *p, const char *ending, int signal)
{
	struct cprof_end *e = calloc(1, sizeof(*e));
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	/* a table this profile lacks (older ones) leaves that part empty */
	int ret = 0, has_err = !strncmp(ending, "CUDA error ", 11);
	uint64_t err_start = 0, err_stream = 0;

	if (e == NULL)
		return -ENOMEM;
	p->end = e;
	e->signal = signal;
	e->killed = strstr(ending, "killed by signal") != NULL || !strncmp(ending, "no goodbye", 10);
	if ((e->ending = strdup(ending)) == NULL)
		return -ENOMEM;
	if (m != NULL)
		return load_end_arrays(db, m, p, e, has_err, signal);
	if (has_err) {
		if (sqlite3_prepare_v2(db, cprof_ending_error_sql, -1, &st, NULL) != SQLITE_OK)
			goto out;
		sqlite3_bind_int64(st, 1, p->id);
		if (sqlite3_step(st) == SQLITE_ROW) {
			e->err_tid = sqlite3_column_int64(st, 1);
			e->err_api = col_dup_or_null(st, 2);
			e->err = sqlite3_column_int64(st, 3);
			err_stream = (uint64_t)sqlite3_column_int64(st, 4);
			err_start = (uint64_t)sqlite3_column_int64(st, 5);
			e->err_device = !sqlite3_column_int(st, 7);
		}
		sqlite3_finalize(st);
		st = NULL;
		if (e->err) {
			if (sqlite3_prepare_v2(db, cprof_ending_kernels_sql, -1, &st, NULL) != SQLITE_OK)
				goto out;
			sqlite3_bind_int64(st, 1, p->id);
			sqlite3_bind_int64(st, 2, (int64_t)err_start);
			if (!e->err_device)
				sqlite3_bind_int64(st, 3, (int64_t)err_stream);
			if ((ret = load_end_kernels(st, &e->err_kernels, &e->nerr_kernels)) < 0)
				goto out;
			sqlite3_finalize(st);
			st = NULL;
		}
	}
	if (sqlite3_prepare_v2(db, signal ? end_calls_crash_sql : end_calls_api_sql, -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, p->id);
	ret = end_call_rows(st, e, &cap);
	sqlite3_finalize(st);
	st = NULL;
	if (ret < 0)
		goto out;
	ret = end_scan(db, p->id, e);
out:
	sqlite3_finalize(st);
	return ret;
}

/* The Ended: line's text: the ending, the crashing thread's last call, the last kernels on the stream of
 * the failing CUDA call, and for a kill that the counts are a lower bound */
static int end_line(struct cprof_proc *p)
{
	const struct cprof_end *e = p->end;
	char line[1024], k[100];
	size_t i, n;

	int64_t stream = -1;

	/* CUPTI's id of the stream: from any of its kernels (a launch that failed has none) */
	for (i = 0; i < e->nerr_kernels && stream < 0; i++)
		stream = e->err_kernels[i].stream;
	n = (size_t)snprintf(line, sizeof(line), "%s", p->bye);
	if (e->err && e->nerr_kernels && n < sizeof(line)) {
		if (e->err_device)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "; last kernels before it (any stream): ");
		else if (stream >= 0)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "; last kernels on its stream (%lld) before it: ",
					      (long long)stream);
		else
			n += (size_t)snprintf(line + n, sizeof(line) - n, "; last kernels on its stream before it: ");
		for (i = 0; i < e->nerr_kernels && n < sizeof(line); i++)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", i ? ", " : "",
					      cprof_end_kernel_name(e->err_kernels[i].name, k, sizeof(k)));
	}
	if (e->killed && n < sizeof(line))
		snprintf(line + n, sizeof(line) - n,
			 "; its event counts are a lower bound (what it had not sent yet was lost uncounted)");
	free(p->bye);
	p->bye = strdup(line);
	return p->bye ? 0 : -ENOMEM;
}

static int load_ext(sqlite3 *db, struct cprof_model *m);
static int load_strings(sqlite3 *db, struct cprof_model *m);

/* The arrays the ending's look-ups need, for a model loaded without its timeline (report --by kernel, trace,
 * stacks): read only when a process ended abnormally, and freed after. 0, or < 0: the profile lacks a table
 * (the queries then, as before) */
static int end_arrays(sqlite3 *db, struct cprof_model *t)
{
	memset(t, 0, sizeof(*t));
	if (load_ext(db, t) < 0 || load_ops(db, t, 0, NULL, 0) < 0 || load_calls(db, t) < 0 || load_strings(db, t) < 0) {
		cprof_model_free(t);
		return -EIO;
	}
	return 0;
}

/* how each process that did not end normally ended; profiles older than PROCESSES.ending have none.
 * arrays: the model has its timeline (calls, ops, external ids, strings), the look-ups run on it; else on
 * arrays read for them alone: the queries (common/ending.h), without the indexes older cprofd made,
 * are scans, one of them quadratic in the calls of a thread */
enum { ENDS_READ_ARRAYS, ENDS_ON_MODEL, ENDS_BY_QUERY };
static int load_ends(sqlite3 *db, struct cprof_model *m, int how)
{
	struct cprof_model tmp, *t = how == ENDS_ON_MODEL ? m : NULL;
	int tried = how != ENDS_READ_ARRAYS;
	sqlite3_stmt *st;
	size_t i;
	int ret = 0;

	/* a signal the program's own handler took before it went on to a clean exit ("exit ... (its own handler
	 * took ...)", cprofd's words) is no crash */
	if (sqlite3_prepare_v2(db, "SELECT p.ending, (SELECT c.signal FROM CPROF_CRASH c WHERE c.processId = p.id"
				   " AND p.ending NOT LIKE 'exit%' LIMIT 1) FROM PROCESSES p WHERE p.id = ?1", -1, &st, NULL) != SQLITE_OK)
		return 0;
	for (i = 0; i < m->nprocs && ret == 0; i++) {
		const char *ending;
		int sig;

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, m->procs[i].id);
		if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL)
			continue;
		ending = (const char *)sqlite3_column_text(st, 0);
		sig = sqlite3_column_int(st, 1);
		if (ending == NULL || (!sig && strncmp(ending, "CUDA error ", 11) && !strstr(ending, "killed by signal") &&
				       strncmp(ending, "no goodbye", 10)))
			continue;
		if (!tried) {
			tried = 1;
			if (end_arrays(db, &tmp) == 0)
				t = &tmp;
		}
		if ((ret = load_end(db, t, &m->procs[i], ending, sig)) == 0)
			ret = end_line(&m->procs[i]);
	}
	sqlite3_finalize(st);
	if (t == &tmp)
		cprof_model_free(&tmp);
	return ret;
}

/* each CUPTI thread handle that made the CUPTI side of a hooked call: that call's tid */
static const char threads_sql[] =
	"SELECT r.processId, r.threadId, min(a.tid) FROM (SELECT processId, correlationId, threadId"
	" FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT processId, correlationId, threadId"
	" FROM CUPTI_ACTIVITY_KIND_DRIVER) r"
	" JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = r.processId"
	"  AND e.correlationId = r.correlationId AND e.externalKind = 5"
	" JOIN CPROF_API a ON a.processId = e.processId AND a.correlationId = e.externalId"
	" GROUP BY r.processId, r.threadId ORDER BY 1, 2";

/* run 0: only prepare the statement, so that a profile without its tables fails here as before */
static int load_threads(sqlite3 *db, struct cprof_model *m, int run)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, threads_sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (!run) {
		/* only the check that the tables are there: the map comes from the arrays */
		sqlite3_finalize(st);
		return 0;
	}
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

/* the few facts the no-gpu-activity verdict rests on besides the calls; a table a profile lacks gives no fact */
static int load_run_facts(sqlite3 *db, struct cprof_model *m)
{
	char note[200];

	m->ended_killed = cprof_killed_processes(db) > 0;
	m->cupti_recording = cprof_query_int(db, "SELECT count(*) FROM CPROF_STATUS WHERE code = 'cupti-started'", 0) > 0 &&
			     cprof_query_int(db, "SELECT count(*) FROM CPROF_STATUS WHERE code = 'cupti-conflict'", 0) == 0;
	cprof_meta(db, "gpu_records_note", note, sizeof(note), "");
	if ((m->gpu_note = strdup(note)) == NULL)
		return -ENOMEM;
	cprof_meta(db, "recording", note, sizeof(note), "");
	return (m->recording_opt = strdup(note)) == NULL ? -ENOMEM : 0;
}

static int mark_hooked(void *ctx, const struct cprof_call *c, const struct cprof_op *o)
{
	struct cprof_model *m = ctx;

	if (c->launch)
		m->ops[o - m->ops].hooked = 1;
	return 0;
}

int cprof_model_load(sqlite3 *db, unsigned parts, struct cprof_model *m)
{
	/* a timeline with its host extras has every input of the thread map in memory: no join needed */
	int host_threads = (parts & CPROF_MODEL_ALL) == CPROF_MODEL_ALL && (parts & CPROF_MODEL_HOST);
	int ext_loaded = 0, ret;
	struct cprof_drv_rec *drv = NULL;
	size_t ndrv = 0;

	memset(m, 0, sizeof(*m));
	m->exit_status = cprof_meta_int(db, "exit_status", -1);
	/* the external ids first, so that the runtime loader can tell the calls only CUPTI saw; a profile that
	 * lacks them fails below, at the table it failed at before */
	if ((parts & CPROF_MODEL_TIMELINE) && !(ext_loaded = load_ext(db, m) == 0)) {
		free(m->ext);
		m->ext = NULL;
		m->next = 0;
	}
	/* the driver table is read once, for the launches' times, the API table and the timeline; a profile
	 * without it has no API table (report_load_apis fails, as its query did). The endings: on the timeline's
	 * arrays once loaded, on arrays read for them for the kernel table's model; a trace or the stacks show
	 * none, and look none up */
	if ((ret = load_procs(db, m)) < 0 || ((parts & (CPROF_MODEL_TIMELINE | CPROF_MODEL_GPU)) == CPROF_MODEL_GPU &&
				      (ret = load_ends(db, m, ENDS_READ_ARRAYS)) < 0) ||
	    (ret = cprof_model_load_windows(db, m)) < 0 ||
	    ((parts & CPROF_MODEL_THREADS) && (ret = load_threads(db, m, !host_threads)) < 0) ||
	    ((parts & CPROF_MODEL_TIMELINE) &&
	     ((ret = load_runtime(db, m)) < 0 || (ret = cprof_model_read_driver(db, &drv, &ndrv)) < 0 ||
	      (ret = load_ops(db, m, 1, drv, ndrv)) < 0 || (ret = load_calls(db, m)) < 0 || (ret = load_torch_ranges(db, m)) < 0 ||
	      (ret = load_overhead(db, m)) < 0 || (ret = cprof_model_load_cost(db, m)) < 0 ||
	      (ret = load_strings(db, m)) < 0 ||
	      (!ext_loaded && (ret = load_ext(db, m)) < 0) || (ret = cprof_model_driver_api(m, drv, ndrv)) < 0 ||
	      (ret = load_run_facts(db, m)) < 0 || (ret = load_step_ranges(db, m)) < 0 || (ret = load_ends(db, m, ENDS_ON_MODEL)) < 0 ||
	      ((parts & CPROF_MODEL_HOST) && (ret = cprof_model_load_host(db, m, host_threads, drv, ndrv)) < 0))) ||
	    (!(parts & CPROF_MODEL_TIMELINE) && (parts & CPROF_MODEL_GPU) &&
	     ((ret = load_ops(db, m, 0, NULL, 0)) < 0 || (ret = load_strings(db, m)) < 0)) ||
	    ((parts & CPROF_MODEL_TRACE) && !(parts & (CPROF_MODEL_TIMELINE | CPROF_MODEL_GPU)) &&
	     (ret = load_strings(db, m)) < 0)) {
		free(drv);
		cprof_model_free(m);
		return ret;
	}
	free(drv);
	/* which ops a hooked launch call launched, once, not in every analysis: the others (driver API, a
	 * library's own launches inside a hooked cuBLAS call) are timed from CUPTI's records */
	if ((parts & CPROF_MODEL_TIMELINE) &&
	    ((ret = cprof_model_launched(m, 0, mark_hooked, m)) < 0 || (ret = cprof_model_cupti_in_calls(m)) < 0)) {
		cprof_model_free(m);
		return ret;
	}
	if ((parts & CPROF_MODEL_TIMELINE) && (ret = cprof_model_pace(m)) < 0) {
		cprof_model_free(m);
		return ret;
	}
	if (parts & CPROF_MODEL_TIMELINE)
		cprof_model_window_costs(m);
	return 0;
}

int cprof_model_load_ends_by_query(sqlite3 *db, struct cprof_model *m)
{
	int ret;

	memset(m, 0, sizeof(*m));
	if ((ret = load_procs(db, m)) < 0 || (ret = load_ends(db, m, ENDS_BY_QUERY)) < 0)
		cprof_model_free(m);
	return ret;
}

int cprof_model_from_arrays(struct cprof_model *m, struct cprof_op *ops, size_t nops, struct cprof_call *calls,
			    size_t ncalls, struct cprof_ovh *ovh, size_t novh, size_t nknames)
{
	int ret;

	memset(m, 0, sizeof(*m));
	if ((ret = cprof_sort_by_start(ops, nops, sizeof(*ops))) < 0 || (ret = cprof_sort_by_start(calls, ncalls, sizeof(*calls))) < 0 ||
	    (ret = cprof_sort_by_start(ovh, novh, sizeof(*ovh))) < 0)
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

	cprof_model_free_host(m);
	cprof_model_free_windows(m);
	free(m->ops);
	free(m->calls);
	free(m->ovh);
	free(m->cost);
	free(m->rspan);
	free(m->wait_base);
	free(m->pace_proc);
	free(m->counted);
	free(m->gemms);
	free(m->gpu_note);
	free(m->recording_opt);
	free(m->torch);
	for (i = 0; i < m->nprocs; i++) {
		free(m->procs[i].exe);
		free(m->procs[i].argv);
		free(m->procs[i].host);
		free(m->procs[i].bye);
		cprof_end_free(m->procs[i].end);
	}
	free(m->procs);
	free(m->threads);
	for (i = 0; i < m->nstrings; i++)
		free(m->strings[i].value);
	free(m->strings);
	free(m->string_at);
	free(m->ext);
	free(m->rt);
	cprof_model_free_indexes(m);
	for (i = 0; i < m->nsteps_cache; i++)
		free(m->steps[i].s);
	free(m->steps);
	free(m->step_ranges);
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
	n = cprof_steps_of(m, proc, re, &s);
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
	return cprof_first_at(m->ops, m->nops, sizeof(*m->ops), t);
}

size_t cprof_model_calls_from(const struct cprof_model *m, uint64_t t)
{
	return cprof_first_at(m->calls, m->ncalls, sizeof(*m->calls), t);
}
