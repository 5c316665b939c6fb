/* The GPU memory operations table (copies by kind, memsets), one loader for cprof report and cprof html. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/cprof.h"
#include "report/model/model.h"

struct memop_group {
	char *name;
	struct cprof_stats st;
	double bytes;
};

struct memop_groups {
	struct memop_group *g;
	size_t n, cap;
	int copy; /* the label is a copyKind, named afterwards */
};

static int add_group(void *arg, int64_t key, const char *label, const struct cprof_stats *st)
{
	struct memop_groups *gs = arg;
	struct memop_group *g;

	(void)key;
	if (cprof_grow(&gs->g, &gs->cap, gs->n, sizeof(*gs->g)) < 0)
		return -ENOMEM;
	g = &gs->g[gs->n];
	memset(g, 0, sizeof(*g));
	g->name = strdup(gs->copy ? cprof_copy_kind_name(atoi(label)) : label);
	if (g->name == NULL)
		return -ENOMEM;
	g->st = *st;
	gs->n++;
	return 0;
}

int cprof_model_memop_stats(const struct cprof_model *m, int64_t proc,
			    int (*fn)(void *ctx, const char *name, const struct cprof_stats *st, double bytes), void *ctx)
{
	struct memop_groups gs = { .copy = 1 };
	sqlite3_stmt *st = NULL;
	size_t i;
	int ret;

	/* SQLite's grouping kept as it was (NULL kinds and durations sort first), so the table does not move */
	if (cprof_group_stats(m->db,
			      "SELECT copyKind, copyKind, end - start AS d FROM CUPTI_ACTIVITY_KIND_MEMCPY"
			      " WHERE (?1 = 0 OR processId = ?1) ORDER BY copyKind, d",
			      proc, add_group, &gs) < 0) {
		ret = -EIO;
		goto out;
	}
	gs.copy = 0;
	if (cprof_group_stats(m->db,
			      "SELECT -1, '[CUDA memset]', end - start AS d FROM CUPTI_ACTIVITY_KIND_MEMSET"
			      " WHERE (?1 = 0 OR processId = ?1) ORDER BY d",
			      proc, add_group, &gs) < 0) {
		ret = -EIO;
		goto out;
	}
	ret = -EIO;
	if (sqlite3_prepare_v2(m->db,
			       "SELECT copyKind, sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE (?1 = 0 OR processId = ?1)"
			       " GROUP BY copyKind UNION ALL SELECT -1, sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMSET"
			       " WHERE (?1 = 0 OR processId = ?1)",
			       -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, proc);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int k = sqlite3_column_int(st, 0);
		const char *name = k < 0 ? "[CUDA memset]" : cprof_copy_kind_name(k);

		for (i = 0; i < gs.n; i++)
			if (!strcmp(gs.g[i].name, name))
				gs.g[i].bytes = sqlite3_column_double(st, 1);
	}
	ret = 0;
	for (i = 0; i < gs.n && ret >= 0; i++)
		ret = fn(ctx, gs.g[i].name, &gs.g[i].st, gs.g[i].bytes);
out:
	sqlite3_finalize(st);
	for (i = 0; i < gs.n; i++)
		free(gs.g[i].name);
	free(gs.g);
	return ret < 0 ? ret : 0;
}
