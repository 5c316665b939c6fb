/* --sort and --timeunit for report's kernel, memory and API tables (torch.profiler's sort_by, nsys stats' --timeunit). */
#include <stdlib.h>
#include <string.h>

#include "report/model/report.h"

static const char *const keys[REPORT_SORT__N] = {
	[REPORT_SORT_TOTAL] = "total", [REPORT_SORT_CALLS] = "calls", [REPORT_SORT_AVG] = "avg",
	[REPORT_SORT_MED] = "med",     [REPORT_SORT_MIN] = "min",     [REPORT_SORT_MAX] = "max",
	[REPORT_SORT_STD] = "std",     [REPORT_SORT_NAME] = "name",
};

int report_sort_key(const char *name)
{
	int i;

	for (i = 0; i < REPORT_SORT__N; i++)
		if (!strcmp(name, keys[i]))
			return i;
	/* torch.profiler's and nsys's words for the same columns */
	if (!strcmp(name, "instances") || !strcmp(name, "count"))
		return REPORT_SORT_CALLS;
	if (!strcmp(name, "time"))
		return REPORT_SORT_TOTAL;
	return -1;
}

static double value(const struct row *r, int key)
{
	switch (key) {
	case REPORT_SORT_CALLS: return (double)r->st.n;
	case REPORT_SORT_AVG: return r->st.avg;
	case REPORT_SORT_MED: return r->st.med;
	case REPORT_SORT_MIN: return r->st.min;
	case REPORT_SORT_MAX: return r->st.max;
	case REPORT_SORT_STD: return r->st.std;
	default: return r->st.total;
	}
}

static int sort_key;

static int cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double vx, vy;

	if (sort_key == REPORT_SORT_NAME)
		return strcmp(x->name, y->name);
	/* largest first, then by total, then by name: the same order every run */
	vx = value(x, sort_key);
	vy = value(y, sort_key);
	if (vx != vy)
		return vx < vy ? 1 : -1;
	if (x->st.total != y->st.total)
		return x->st.total < y->st.total ? 1 : -1;
	return strcmp(x->name, y->name);
}

void report_table_sort(struct table *t, int key)
{
	if (key <= REPORT_SORT_TOTAL || t->n < 2)
		return; /* the tables come by total already */
	sort_key = key;
	qsort(t->rows, t->n, sizeof(t->rows[0]), cmp);
}

int report_timeunit = -1;

int report_timeunit_key(const char *name)
{
	static const char *const units[][3] = { { "ns", "nsec", "nanoseconds" }, { "us", "usec", "microseconds" },
						 { "ms", "msec", "milliseconds" }, { "s", "sec", "seconds" } };
	int u, k;

	for (u = 0; u < 4; u++)
		for (k = 0; k < 3; k++)
			if (!strcmp(name, units[u][k]))
				return u;
	return -1;
}
