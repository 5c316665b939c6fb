/* cprof diff: what changed between two profiles, the kernels and calls whose time or count moved most first. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof diff"
#include "common/log.h"
#include "report/cprof.h"
#include "report/model/summary.h"

struct change {
	const char *name;
	int api;
	double old_ns, new_ns;
	int64_t old_n, new_n;
};

static int by_delta(const void *a, const void *b)
{
	const struct change *x = a, *y = b;
	double dx = fabs(x->new_ns - x->old_ns), dy = fabs(y->new_ns - y->old_ns);

	return dx < dy ? 1 : dx > dy ? -1 : strcmp(x->name, y->name);
}

static void pct(char *buf, size_t size, double old, double now)
{
	if (old <= 0)
		snprintf(buf, size, "%s", now > 0 ? "new" : "-");
	else if (now <= 0)
		snprintf(buf, size, "gone");
	else
		snprintf(buf, size, "%+.1f%%", 100 * (now / old - 1));
}

int cmd_diff(int argc, char **argv)
{
	struct cprof_thresholds th;
	struct cprof_summary a = { 0 }, b = { 0 };
	struct change *c = NULL;
	size_t n = 0, i, j;
	char x[32], y[32], p[32], name[96];
	int ret = CPROF_EXIT_USAGE;

	if (argc != 3 || argv[1][0] == '-') {
		fprintf(argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr, "usage: cprof diff OLD.db NEW.db\n");
		return argc == 2 && !strcmp(argv[1], "--help") ? CPROF_EXIT_OK : CPROF_EXIT_USAGE;
	}
	cprof_thresholds_default(&th);
	if (cprof_summary_load(argv[1], &th, &a) < 0 || cprof_summary_load(argv[2], &th, &b) < 0)
		goto out;
	c = calloc(a.n + b.n + 1, sizeof(*c));
	if (c == NULL)
		goto out;
	for (i = 0; i < a.n; i++) {
		const struct cprof_kstat *k = cprof_summary_find(&b, a.names[i].name, a.names[i].api);

		c[n++] = (struct change){ a.names[i].name, a.names[i].api, a.names[i].total_ns, k ? k->total_ns : 0,
					  a.names[i].count, k ? k->count : 0 };
	}
	for (j = 0; j < b.n; j++)
		if (cprof_summary_find(&a, b.names[j].name, b.names[j].api) == NULL)
			c[n++] = (struct change){ b.names[j].name, b.names[j].api, 0, b.names[j].total_ns, 0, b.names[j].count };
	qsort(c, n, sizeof(*c), by_delta);

	printf("cprof diff: %s -> %s\n", cprof_tx(argv[1]), cprof_tx(argv[2]));
	printf("  verdict      %-16s -> %s\n", a.v.verdict, b.v.verdict);
	printf("  GPU busy     %15.1f%% -> %.1f%%\n", a.v.busy_pct, b.v.busy_pct);
	cprof_fmt_dur(x, sizeof(x), a.kernel_ns);
	cprof_fmt_dur(y, sizeof(y), b.kernel_ns);
	pct(p, sizeof(p), a.kernel_ns, b.kernel_ns);
	printf("  kernel time  %16s -> %s (%s)\n", x, y, p);
	pct(p, sizeof(p), (double)a.kernel_count, (double)b.kernel_count);
	printf("  kernels      %16lld -> %lld (%s)\n", (long long)a.kernel_count, (long long)b.kernel_count, p);
	if (a.steps && b.steps) {
		cprof_fmt_dur(x, sizeof(x), a.step_median_ns);
		cprof_fmt_dur(y, sizeof(y), b.step_median_ns);
		pct(p, sizeof(p), a.step_median_ns, b.step_median_ns);
		printf("  median step  %16s -> %s (%s; %d -> %d NVTX steps)\n", x, y, p, a.steps, b.steps);
	}
	printf("\n  %-6s  %12s  %12s  %8s  %9s  %9s  %s\n", "Kind", "Old time", "New time", "Change", "Old count",
	       "New count", "Name");
	for (i = 0; i < n && i < 20; i++) {
		if (c[i].old_ns == c[i].new_ns && c[i].old_n == c[i].new_n)
			break;
		cprof_fmt_dur(x, sizeof(x), c[i].old_ns);
		cprof_fmt_dur(y, sizeof(y), c[i].new_ns);
		pct(p, sizeof(p), c[i].old_ns, c[i].new_ns);
		cprof_shorten(c[i].name, name, sizeof(name));
		printf("  %-6s  %12s  %12s  %8s  %9lld  %9lld  %s\n", c[i].api ? "api" : "kernel", x, y, p,
		       (long long)c[i].old_n, (long long)c[i].new_n, cprof_tx(name));
	}
	if (i == 0)
		printf("  (no kernel or call changed)\n");
	ret = CPROF_EXIT_OK;
out:
	free(c);
	cprof_summary_free(&a);
	cprof_summary_free(&b);
	return ret;
}
