/* What check and diff compare between profiles: the verdict, totals, and per-kernel time and count. */
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "report/model/analysis.h"
#include "report/model/model.h"
#include "report/cprof.h"
#include "report/model/summary.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cprof_kstat *)a)->name, ((const struct cprof_kstat *)b)->name);
}

/* per name: kernels from CUPTI, and hooked API calls (prefixed "api:") */
static int load_names(sqlite3 *db, struct cprof_summary *s)
{
	static const char sql[] =
		"SELECT 'kernel', coalesce(n.value, '?'), count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
		" LEFT JOIN StringIds n ON n.id = k.nameId GROUP BY k.nameId"
		" UNION ALL SELECT 'api', n.value, count(*), sum(a.end - a.start) FROM CPROF_API a JOIN StringIds n"
		" ON n.id = a.nameId GROUP BY a.nameId";
	sqlite3_stmt *st;
	size_t cap = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct cprof_kstat *k;

		if (cprof_grow(&s->names, &cap, s->n, sizeof(*s->names)) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
		k = &s->names[s->n++];
		k->api = !strcmp((const char *)sqlite3_column_text(st, 0), "api");
		k->name = cprof_demangle((const char *)sqlite3_column_text(st, 1));
		k->count = sqlite3_column_int64(st, 2);
		k->total_ns = sqlite3_column_double(st, 3);
	}
	sqlite3_finalize(st);
	if (s->n)
		qsort(s->names, s->n, sizeof(s->names[0]), by_name);
	return 0;
}

int cprof_summary_load(const char *path, const struct cprof_thresholds *t, struct cprof_summary *s)
{
	struct cprof_phase *ph = NULL;
	char sim[16];
	sqlite3 *db;
	size_t i;

	memset(s, 0, sizeof(*s));
	if ((db = cprof_profile_open(path)) == NULL)
		return -1;
	if (cprof_model_load(db, CPROF_MODEL_TIMELINE | CPROF_MODEL_HOST, &s->model) < 0 || cprof_headline(&s->model, 0, t, &s->v, &ph) < 0 ||
	    load_names(db, s) < 0) {
		/* check and diff stop here: say why (a time out of range, a damaged page) */
		pr_err("%s: cannot read the profile: %s", cprof_tx(path), cprof_model_errmsg(db));
		free(ph);
		sqlite3_close(db);
		cprof_summary_free(s);
		return -1;
	}
	free(ph);
	s->complete = cprof_meta_int(db, "complete", 0) == 1;
	s->simulated = !strcmp(cprof_meta(db, "simulated_gpu", sim, sizeof(sim), "0"), "1");
	cprof_meta(db, "incomplete_reason", s->reason, sizeof(s->reason), "");
	sqlite3_close(db);
	{
		const struct cprof_step *st = NULL;
		int n = cprof_model_steps(&s->model, 0, t->step_re, &st);

		if (n > 1) {
			s->steps = n;
			s->step_median_ns = (double)cprof_steps_median(st, n, cprof_steps_cold(st, n) ? 1 : 0);
		}
	}
	if (cprof_compile_cost(&s->model, 0, &s->compile) < 0) {
		pr_err("%s: out of memory", cprof_tx(path));
		cprof_summary_free(s);
		return -1;
	}
	for (i = 0; i < s->n; i++)
		if (!s->names[i].api) {
			s->kernel_count += s->names[i].count;
			s->kernel_ns += s->names[i].total_ns;
		}
	return 0;
}

const struct cprof_kstat *cprof_summary_find(const struct cprof_summary *s, const char *name, int api)
{
	struct cprof_kstat key = { .name = (char *)name };
	const struct cprof_kstat *k;
	size_t i;

	k = s->n ? bsearch(&key, s->names, s->n, sizeof(s->names[0]), by_name) : NULL;
	if (k == NULL || k->api == api)
		return k;
	/* the same name as a kernel and as a call: look at its neighbours */
	for (i = 0; i < s->n; i++)
		if (s->names[i].api == api && !strcmp(s->names[i].name, name))
			return &s->names[i];
	return NULL;
}

void cprof_summary_free(struct cprof_summary *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->names[i].name);
	free(s->names);
	cprof_model_free(&s->model);
	memset(s, 0, sizeof(*s));
}
