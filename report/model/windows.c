/* The recording windows of a profile (CPROF_WINDOWS, --max-size's META keys): loaded once, and the spans the verdict covers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/cprof.h"
#include "report/model/model.h"

static char *dup_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

struct outer_mark {
	int64_t proc;
	uint64_t t;
	int start;
};

static int mark_cmp(const void *pa, const void *pb)
{
	const struct outer_mark *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->t < b->t ? -1 : a->t > b->t;
}

/* Each process window's outer bounds: the capture-start at or before its start and the capture-stop at or after its
 * end, with no other mark between (a --max-size cut or a window open at its process's end has no stop of its own).
 * Loaded once and searched (a query per window was O(windows x statuses)). */
static int load_outer_bounds(sqlite3 *db, struct cprof_model *m)
{
	struct outer_mark *mk = NULL;
	sqlite3_stmt *st;
	size_t n = 0, cap = 0;

	if (m->rec.n == 0 || !cprof_has_table(db, "CPROF_STATUS"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT processId, timeNs, code = 'capture-start' FROM CPROF_STATUS"
				   " WHERE code IN ('capture-start', 'capture-stop') AND processId IS NOT NULL AND timeNs > 0",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (cprof_grow(&mk, &cap, n, sizeof(*mk)) < 0) {
			sqlite3_finalize(st);
			free(mk);
			return -ENOMEM;
		}
		mk[n++] = (struct outer_mark){ sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
					       sqlite3_column_int(st, 2) };
	}
	sqlite3_finalize(st);
	if (n > 1)
		qsort(mk, n, sizeof(*mk), mark_cmp);
	for (size_t i = 0; i < m->rec.n; i++) {
		struct cprof_window *w = &m->rec.w[i];
		size_t l = 0, h = n;

		if (w->proc == 0)
			continue;
		while (l < h) { /* the first mark after (proc, start) */
			size_t mid = l + (h - l) / 2;

			if (mk[mid].proc < w->proc || (mk[mid].proc == w->proc && mk[mid].t <= w->start))
				l = mid + 1;
			else
				h = mid;
		}
		if (l > 0 && mk[l - 1].proc == w->proc && mk[l - 1].start)
			w->ostart = mk[l - 1].t;
		for (; l < n && mk[l].proc == w->proc && mk[l].t < w->end; l++)
			;
		if (l < n && mk[l].proc == w->proc && !mk[l].start)
			w->oend = mk[l].t;
	}
	free(mk);
	return 0;
}

int cprof_model_load_windows(sqlite3 *db, struct cprof_model *m)
{
	struct cprof_recording *r = &m->rec;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->max_size = cprof_meta_int(db, "max_size", 0);
	r->max_size_cut_ns = (uint64_t)cprof_meta_int(db, "max_size_cut_ns", 0);
	r->unrecorded = cprof_meta_int(db, "max_size_unrecorded", 0);
	if (!cprof_has_table(db, "CPROF_WINDOWS"))
		return 0; /* a profile from before issue 31: recorded whole, or in --capture-range windows it kept in CPROF_STATUS */
	r->base_ns = (uint64_t)cprof_query_int(db, "SELECT coalesce(min(startNs), 0) FROM PROCESSES", 0);
	if (sqlite3_prepare_v2(db, "SELECT coalesce(processId, 0), coalesce(pid, 0), number, start, end, why, endWhy"
				   " FROM CPROF_WINDOWS ORDER BY start, processId", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct cprof_window *w;

		if (!cprof_row_times_ok(st, 3, 4, 0)) {
			ret = cprof_bad_time("CPROF_WINDOWS", st, 3, 4);
			break;
		}
		if (cprof_grow(&r->w, &cap, r->n, sizeof(*r->w)) < 0) {
			ret = -ENOMEM;
			break;
		}
		w = &r->w[r->n];
		w->proc = sqlite3_column_int64(st, 0);
		w->pid = sqlite3_column_int64(st, 1);
		w->number = sqlite3_column_int(st, 2);
		w->start = (uint64_t)sqlite3_column_int64(st, 3);
		w->end = (uint64_t)sqlite3_column_int64(st, 4);
		w->why = dup_text(st, 5);
		w->end_why = dup_text(st, 6);
		r->n++;
		if (w->why == NULL || w->end_why == NULL) {
			ret = -ENOMEM;
			break;
		}
	}
	sqlite3_finalize(st);
	return ret < 0 ? ret : load_outer_bounds(db, m);
}

void cprof_model_free_windows(struct cprof_model *m)
{
	for (size_t i = 0; i < m->rec.n; i++) {
		free(m->rec.w[i].why);
		free(m->rec.w[i].end_why);
	}
	free(m->rec.w);
	memset(&m->rec, 0, sizeof(m->rec));
}

int cprof_model_recorded_spans(const struct cprof_model *m, int64_t proc, uint64_t (**out)[2])
{
	uint64_t(*sp)[2] = NULL, *ends;
	size_t n = 0, i, k;

	*out = NULL;
	if (m->rec.n == 0)
		return 0;
	sp = calloc(m->rec.n, sizeof(*sp));
	if (sp == NULL)
		return -ENOMEM;
	/* by start already: merge the overlapping ones (several processes' windows of one capture) */
	for (i = 0; i < m->rec.n; i++) {
		const struct cprof_window *w = &m->rec.w[i];

		if (proc && w->proc && w->proc != proc)
			continue;
		if (n && w->start <= sp[n - 1][1]) {
			if (w->end > sp[n - 1][1])
				sp[n - 1][1] = w->end;
			continue;
		}
		sp[n][0] = w->start;
		sp[n][1] = w->end;
		n++;
	}
	/* the GPU finishes what was queued inside a window after it closes: that time was recorded too (up to
	 * the next window's start); the windows as recorded decide which op was queued inside one */
	ends = malloc(n * sizeof(*ends));
	if (ends == NULL) {
		free(sp);
		return -ENOMEM;
	}
	for (k = 0; k < n; k++)
		ends[k] = sp[k][1];
	for (i = 0; i < m->nops; i++) {
		const struct cprof_op *o = &m->ops[i];
		uint64_t launch = o->launch ? o->launch : o->start;
		size_t lo = 0, hi = n;

		if (proc && o->proc != proc)
			continue;
		while (lo < hi) { /* the last span starting at or before launch */
			size_t mid = (lo + hi) / 2;

			if (sp[mid][0] <= launch)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0 || launch >= ends[lo - 1] || o->end <= sp[lo - 1][1])
			continue;
		k = lo - 1;
		sp[k][1] = k + 1 < n && o->end > sp[k + 1][0] ? sp[k + 1][0] : o->end;
	}
	free(ends);
	*out = sp;
	return (int)n;
}
