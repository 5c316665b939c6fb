/* The steps section of cprof report: which steps it shows and each one's verdict (the steps read by steps.c, the verdicts by analysis.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/model/analysis.h"
#include "report/model/model.h"

/* Which steps the steps section shows and their verdicts: JSON the first top (all with top 0); text the first
 * ones, then (many steps) only those far from the median, at most top. */
int cprof_steps_view(struct cprof_model *m, int64_t proc, const struct cprof_thresholds *t, int json, size_t top,
		     struct cprof_steps_view *out)
{
	const struct cprof_step *s = NULL;
	int n = cprof_model_steps(m, proc, t->step_re, &s), i;

	memset(out, 0, sizeof(*out));
	if (n < 0)
		return n;
	out->s = s;
	out->n = n;
	out->re = t->step_re ? t->step_re : cprof_step_re_default;
	out->cold = cprof_steps_cold(s, n);
	out->med = cprof_steps_median(s, n, out->cold ? 1 : 0);
	if (n == 0)
		return 0;
	out->shown = calloc((size_t)n, 1);
	out->has_v = calloc((size_t)n, 1);
	out->v = calloc((size_t)n, sizeof(*out->v));
	if (out->shown == NULL || out->has_v == NULL || out->v == NULL) {
		cprof_steps_view_free(out);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		uint64_t d = s[i].end - s[i].start;

		if (json) {
			if (top != 0 && (size_t)i >= top)
				continue;
		} else {
			if (top && out->nshown >= (int)top)
				break;
			if (n > 20 && i >= 10 && (double)d < 1.5 * (double)out->med)
				continue;
		}
		out->shown[i] = 1;
		out->nshown++;
		out->has_v[i] = cprof_analyse(m, proc, s[i].start, i + 1 < n ? s[i + 1].start : s[i].end, t, &out->v[i]) == 0;
	}
	return n;
}

void cprof_steps_view_free(struct cprof_steps_view *v)
{
	free(v->shown);
	free(v->has_v);
	free(v->v);
	memset(v, 0, sizeof(*v));
}
