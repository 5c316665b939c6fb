/* Iterations marked by the program: NVTX ranges whose names match the step pattern (ProfilerStep#N, step). */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "common/steps.h"
#include "report/model/analysis.h"
#include "report/cprof.h"
#include "report/model/model.h"

const char cprof_step_re_default[] = CPROF_STEP_RE_DEFAULT;

int cprof_step_re_check(const char *re, char *err, size_t size)
{
	regex_t rx;
	int rc = regcomp(&rx, re ? re : cprof_step_re_default, REG_EXTENDED | REG_NOSUB);

	if (rc != 0) {
		regerror(rc, &rx, err, size);
		return -EINVAL;
	}
	regfree(&rx);
	return 0;
}

struct cand {
	int64_t proc, tid, start, end;
	char *name;
};

/* The step ranges of one thread: the thread (of process proc, 0 = any) with the most matching ranges, its
 * outermost matching ones (a "step" inside "ProfilerStep#3" is not a step of its own), in time order. */
int cprof_steps_load(sqlite3 *db, int64_t proc, const char *re, struct cprof_step **out)
{
	sqlite3_stmt *st = NULL;
	regex_t rx;
	struct cand *c = NULL;
	struct cprof_step *steps = NULL;
	size_t n = 0, ncand = 0, cap = 0, i, best = 0, nsteps = 0, capsteps = 0;
	int64_t last_text = -1, best_proc = 0, best_tid = 0, open_end = -1, cur_proc = -1, cur_tid = -1, count = 0;
	int last_match = 0, ret = 0;

	*out = NULL;
	if (!cprof_has_table(db, "NVTX_EVENTS"))
		return 0;
	if (regcomp(&rx, re ? re : cprof_step_re_default, REG_EXTENDED | REG_NOSUB) != 0)
		return -EINVAL;
	/* ranges never closed end with their process */
	if (sqlite3_prepare_v2(db,
			       "SELECT n.processId, n.tid, n.start, coalesce(n.end, nullif(p.endNs, 0), n.start), n.textId, s.value"
			       " FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId JOIN PROCESSES p ON p.id = n.processId"
			       " WHERE n.eventType = 'range' AND (?1 = 0 OR n.processId = ?1)"
			       " ORDER BY n.processId, n.tid, n.textId",
			       -1, &st, NULL) != SQLITE_OK) {
		ret = -EIO;
		goto out;
	}
	sqlite3_bind_int64(st, 1, proc);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t text = sqlite3_column_int64(st, 4);

		/* rows come grouped by name: the pattern is tried once per name */
		if (text != last_text) {
			const unsigned char *s = sqlite3_column_text(st, 5);

			last_match = s && regexec(&rx, (const char *)s, 0, NULL, 0) == 0;
			last_text = text;
		}
		if (!last_match)
			continue;
		if (cprof_grow(&c, &cap, n, sizeof(*c)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		c[n].proc = sqlite3_column_int64(st, 0);
		c[n].tid = sqlite3_column_int64(st, 1);
		c[n].start = sqlite3_column_int64(st, 2);
		c[n].end = sqlite3_column_int64(st, 3);
		c[n].name = strdup((const char *)sqlite3_column_text(st, 5));
		n++;
	}
	ncand = n;
	/* the thread with the most steps */
	for (i = 0; i < n; i++) {
		if (c[i].proc != cur_proc || c[i].tid != cur_tid) {
			cur_proc = c[i].proc;
			cur_tid = c[i].tid;
			count = 0;
		}
		if (++count > (int64_t)best) {
			best = (size_t)count;
			best_proc = cur_proc;
			best_tid = cur_tid;
		}
	}
	for (i = 0; i < n; i++) {
		if (c[i].proc != best_proc || c[i].tid != best_tid)
			continue;
		if (cprof_grow(&steps, &capsteps, nsteps, sizeof(*steps)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		steps[nsteps].start = (uint64_t)c[i].start;
		steps[nsteps].end = (uint64_t)c[i].end;
		steps[nsteps].proc = c[i].proc;
		steps[nsteps].tid = c[i].tid;
		snprintf(steps[nsteps].name, sizeof(steps[nsteps].name), "%s", c[i].name);
		nsteps++;
	}
	/* time order, then drop the ones inside an earlier step */
	for (i = 1; i < nsteps; i++) {
		struct cprof_step x = steps[i];
		size_t k = i;

		while (k > 0 && steps[k - 1].start > x.start) {
			steps[k] = steps[k - 1];
			k--;
		}
		steps[k] = x;
	}
	n = 0;
	for (i = 0; i < nsteps; i++) {
		if ((int64_t)steps[i].start < open_end)
			continue;
		steps[n++] = steps[i];
		open_end = (int64_t)steps[i].end;
	}
	*out = steps;
	steps = NULL;
	ret = (int)n;
out:
	for (i = 0; c && i < ncand; i++)
		free(c[i].name);
	free(c);
	free(steps);
	sqlite3_finalize(st);
	regfree(&rx);
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median duration of steps [from, n); 0 when none. */
uint64_t cprof_steps_median(const struct cprof_step *s, int n, int from)
{
	uint64_t *d, m;
	int i, k = n - from;

	if (k <= 0)
		return 0;
	d = malloc(k * sizeof(*d));
	if (d == NULL)
		return 0;
	for (i = from; i < n; i++)
		d[i - from] = s[i].end - s[i].start;
	qsort(d, k, sizeof(*d), cmp_u64);
	m = k % 2 ? d[k / 2] : (d[k / 2 - 1] + d[k / 2]) / 2;
	free(d);
	return m;
}

int cprof_steps_cold(const struct cprof_step *s, int n)
{
	uint64_t med;

	/* the first step pays warm-up (lazy loading, allocator growth, autotuning) when it stands out */
	if (n < 3)
		return 0;
	med = cprof_steps_median(s, n, 1);
	return med > 0 && s[0].end - s[0].start > med * 3 / 2;
}
