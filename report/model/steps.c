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

/* a step range's place in the order the thread choice reads them: (process, thread, text), table order within */
static int64_t by_text(const void *ctx, uint32_t i)
{
	return ((const struct cprof_step_range *)ctx)[i].text;
}

static int64_t by_tid(const void *ctx, uint32_t i)
{
	return ((const struct cprof_step_range *)ctx)[i].tid;
}

static int64_t by_proc(const void *ctx, uint32_t i)
{
	return ((const struct cprof_step_range *)ctx)[i].proc;
}

/* The step ranges of one thread: the thread (of process proc, 0 = any) with the most matching ranges, its
 * outermost matching ones (a "step" inside "ProfilerStep#3" is not a step of its own), in time order. From
 * the model's step ranges (m->step_ranges), no query. */
int cprof_steps_of(const struct cprof_model *m, int64_t proc, const char *re, struct cprof_step **out)
{
	const struct cprof_step_range *r = m->step_ranges;
	regex_t rx;
	uint32_t *ix = NULL;
	struct cprof_step *steps = NULL;
	size_t n = 0, i, best = 0, nsteps = 0, capsteps = 0;
	int64_t last_text = -1, best_proc = 0, best_tid = 0, open_end = -1, cur_proc = -1, cur_tid = -1, count = 0;
	int last_match = 0, ret = 0, have_text = 0;

	*out = NULL;
	if (m->nstep_ranges == 0)
		return 0;
	if (regcomp(&rx, re ? re : cprof_step_re_default, REG_EXTENDED | REG_NOSUB) != 0)
		return -EINVAL;
	if ((ix = malloc(m->nstep_ranges * sizeof(*ix))) == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < m->nstep_ranges; i++)
		if (proc == 0 || r[i].proc == proc)
			ix[n++] = (uint32_t)i;
	/* grouped by name within each thread, as the pattern is tried once per name */
	if (cprof_radix_sort_ix(ix, n, by_text, r) < 0 || cprof_radix_sort_ix(ix, n, by_tid, r) < 0 ||
	    cprof_radix_sort_ix(ix, n, by_proc, r) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	/* the matching ones, the thread with the most steps */
	{
		size_t k = 0;

		for (i = 0; i < n; i++) {
			const struct cprof_step_range *x = &r[ix[i]];

			if (!have_text || x->text != last_text) {
				const char *s = cprof_model_string(m, x->text);

				last_match = s && regexec(&rx, s, 0, NULL, 0) == 0;
				last_text = x->text;
				have_text = 1;
			}
			if (last_match)
				ix[k++] = ix[i];
		}
		n = k;
	}
	for (i = 0; i < n; i++) {
		const struct cprof_step_range *x = &r[ix[i]];

		if (x->proc != cur_proc || x->tid != cur_tid) {
			cur_proc = x->proc;
			cur_tid = x->tid;
			count = 0;
		}
		if (++count > (int64_t)best) {
			best = (size_t)count;
			best_proc = cur_proc;
			best_tid = cur_tid;
		}
	}
	for (i = 0; i < n; i++) {
		const struct cprof_step_range *x = &r[ix[i]];

		if (x->proc != best_proc || x->tid != best_tid)
			continue;
		if (cprof_grow(&steps, &capsteps, nsteps, sizeof(*steps)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		steps[nsteps].start = (uint64_t)x->start;
		steps[nsteps].end = (uint64_t)x->end;
		steps[nsteps].proc = x->proc;
		steps[nsteps].tid = x->tid;
		snprintf(steps[nsteps].name, sizeof(steps[nsteps].name), "%s", cprof_model_string(m, x->text));
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
	free(ix);
	free(steps);
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
