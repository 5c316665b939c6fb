/* cprof check: the CI gate. Exit 0 when every condition holds, 1 when one fails, 3 when the profile is incomplete. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof check"
#include "common/log.h"
#include "report/cprof.h"
#include "report/model/summary.h"

/* kernels below this share of the baseline's GPU time are too small to gate on one by one */
#define KERNEL_GATE_SHARE 0.01

static void usage(FILE *f)
{
	fprintf(f, "usage: cprof check PROFILE.db [--expect overhead-bound|compute-bound|mixed] [--max-gpu-idle PCT]\n"
		   "                   [--baseline OLD.db [--max-regression PCT]] [--require-complete]\n"
		   "exit status: 0 passed, 1 a condition failed, 2 usage or unreadable input, 3 profile incomplete\n");
}

static int parse_pct(const char *opt, const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (*arg == '\0' || *end != '\0' || v < 0 || v > 1e6) {
		pr_err("%s wants a percentage, got '%s'", opt, arg);
		return -1;
	}
	*out = v;
	return 0;
}

static int regress(const char *what, double old, double now, double pct, const char *unit)
{
	double limit = old * (1 + pct / 100);

	if (now <= limit || old <= 0)
		return 0;
	if (!strcmp(unit, "ns")) {
		char a[32], b[32];

		cprof_fmt_dur(a, sizeof(a), now);
		cprof_fmt_dur(b, sizeof(b), old);
		printf("FAIL %s: %s vs baseline %s (+%.1f%%, allowed +%.1f%%)\n", what, a, b, 100 * (now / old - 1), pct);
	} else {
		printf("FAIL %s: %.0f vs baseline %.0f (+%.1f%%, allowed +%.1f%%)\n", what, now, old, 100 * (now / old - 1), pct);
	}
	return 1;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "expect", required_argument, NULL, 'e' },       { "max-gpu-idle", required_argument, NULL, 'i' },
		{ "baseline", required_argument, NULL, 'b' },     { "max-regression", required_argument, NULL, 'r' },
		{ "require-complete", no_argument, NULL, 'c' },   { "include-startup", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },               { NULL, 0, NULL, 0 },
	};
	const char *expect = NULL, *baseline = NULL;
	double max_idle = -1, max_reg = 10;
	int opt, require_complete = 0, failed = 0, ret;
	struct cprof_thresholds th;
	struct cprof_summary now = { 0 }, old = { 0 };
	size_t i;

	cprof_thresholds_default(&th);
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			if (strcmp(optarg, "overhead-bound") && strcmp(optarg, "compute-bound") && strcmp(optarg, "mixed")) {
				pr_err("--expect overhead-bound, compute-bound or mixed, not '%s'", optarg);
				return CPROF_EXIT_USAGE;
			}
			expect = optarg;
			break;
		case 'i':
			if (parse_pct("--max-gpu-idle", optarg, &max_idle) < 0)
				return CPROF_EXIT_USAGE;
			break;
		case 'b':
			baseline = optarg;
			break;
		case 'r':
			if (parse_pct("--max-regression", optarg, &max_reg) < 0)
				return CPROF_EXIT_USAGE;
			break;
		case 'c':
			require_complete = 1;
			break;
		case 's':
			th.include_startup = 1;
			break;
		case 'h':
			usage(stdout);
			return CPROF_EXIT_OK;
		default:
			usage(stderr);
			return CPROF_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return CPROF_EXIT_USAGE;
	}
	if (cprof_summary_load(argv[optind], &th, &now) < 0)
		return CPROF_EXIT_USAGE;
	if (baseline && cprof_summary_load(baseline, &th, &old) < 0) {
		cprof_summary_free(&now);
		return CPROF_EXIT_USAGE;
	}
	if (require_complete && !now.complete) {
		/* an incomplete profile cannot vouch for anything: say so and stop */
		printf("INCOMPLETE %s: %s\n", cprof_tx(argv[optind]), cprof_tx(now.reason));
		ret = CPROF_EXIT_INCOMPLETE;
		goto out;
	}
	if (expect && strcmp(expect, now.v.verdict)) {
		printf("FAIL verdict: %s (GPU busy %.1f%%), expected %s\n", now.v.verdict, now.v.busy_pct, expect);
		failed++;
	}
	if (max_idle >= 0 && 100 - now.v.busy_pct > max_idle) {
		printf("FAIL GPU idle: %.1f%% of the window, allowed %.1f%%\n", 100 - now.v.busy_pct, max_idle);
		failed++;
	}
	if (baseline) {
		failed += regress("total GPU kernel time", old.kernel_ns, now.kernel_ns, max_reg, "ns");
		failed += regress("kernel launches", (double)old.kernel_count, (double)now.kernel_count, max_reg, "count");
		/* the program's own steps (NVTX), when both runs mark them: the time a user waits for */
		if (old.steps && now.steps)
			failed += regress("median step time", old.step_median_ns, now.step_median_ns, max_reg, "ns");
		for (i = 0; i < old.n; i++) {
			const struct cprof_kstat *o = &old.names[i], *n;
			char what[300];

			if (o->api || o->total_ns < KERNEL_GATE_SHARE * old.kernel_ns)
				continue;
			n = cprof_summary_find(&now, o->name, 0);
			if (n == NULL)
				continue;
			snprintf(what, sizeof(what), "kernel %.200s time", cprof_tx(o->name));
			failed += regress(what, o->total_ns, n->total_ns, max_reg, "ns");
		}
	}
	if (failed == 0)
		printf("PASS %s: %s, GPU busy %.1f%%%s\n", cprof_tx(argv[optind]), now.v.verdict, now.v.busy_pct,
		       baseline ? ", no regression against the baseline" : "");
	ret = failed ? CPROF_EXIT_GATE_FAILED : CPROF_EXIT_OK;
out:
	cprof_summary_free(&now);
	cprof_summary_free(&old);
	return ret;
}
