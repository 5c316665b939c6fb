/* cprof report: the verdict and its evidence first, then the tables (kernels, copies, API, torch-style), as text, JSON or CSV. */
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "report/cmd/thresholds.h"
#include "report/cprof.h"
#include "report/render/report-fmt.h"
#include "report/term.h"

static const struct report_fmt_ops *const formats[] = { &report_fmt_text, &report_fmt_json, &report_fmt_csv };
static void usage(FILE *f)
{
	fprintf(f, "usage: cprof report PROFILE.db [--format text|json|csv] [--top N] [--by kernel|api|op|callsite|range|stream|process]\n"
		   "                    [--sort KEY] [--timeunit ns|us|ms|s] [--include-startup] [--compute-pct P]\n"
		   "                    [--overhead-pct P] [--kernel-wait-us U] [--step-range REGEX] [--range-tree]\n"
		   "                    [--window run|verdict]\n"
		   "  --format FMT         text (default), json (cprof.summary/1, every row unless --top) or csv (one table:\n"
		   "                       the CUDA API unless --by names another)\n"
		   "  --top N              rows per table (default 15; 0: all)\n"
		   "  --by WHAT            one table only: kernel, api, op (ATen ops), callsite (file:line), range (NVTX),\n"
		   "                       stream or process\n"
		   "  --sort KEY           order of the kernel, memory and API tables, largest first: total (default),\n"
		   "                       calls, avg, med, min, max, std; or name (A to Z) - torch.profiler's sort_by\n"
		   "  --timeunit UNIT      one unit for those tables' times, as nsys stats --timeunit (default: the unit that\n"
		   "                       suits the largest value shown)\n"
		   "%s"
		   "  --range-tree         NVTX ranges by path (step N/forward), not by name\n"
		   "  --window WHICH       the tables over the whole run (run, the default) or the verdict's window (verdict)\n",
		cprof_threshold_help);
}

/* 0, 1 (--help given) or -1 (usage error, said) */
static int parse(int argc, char **argv, struct report_opts *o, const struct report_fmt_ops **fmt)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' }, { "top", required_argument, NULL, 't' },
		{ "by", required_argument, NULL, 'b' },     { "help", no_argument, NULL, 'h' },
		{ "range-tree", no_argument, NULL, 'r' },   { "window", required_argument, NULL, 'w' },
		{ "sort", required_argument, NULL, 'S' },   { "timeunit", required_argument, NULL, 'U' },
		CPROF_THRESHOLD_OPTIONS,                    { NULL, 0, NULL, 0 },
	};
	size_t i;
	char *end;
	int opt, r, by;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if ((r = cprof_threshold_opt(PR_FMT, opt, optarg, &o->th)) != 0) {
			if (r < 0)
				return -1;
			continue;
		}
		switch (opt) {
		case 'f':
			for (i = 0; i < sizeof(formats) / sizeof(formats[0]) && strcmp(optarg, formats[i]->name); i++)
				;
			if (i == sizeof(formats) / sizeof(formats[0])) {
				pr_err("unknown --format '%s' (text, json or csv)", optarg);
				return -1;
			}
			*fmt = formats[i];
			break;
		case 't':
			o->top = strtoul(optarg, &end, 10);
			o->top_set = 1;
			if (*optarg == '\0' || *end != '\0') {
				pr_err("--top wants a number, got '%s'", optarg);
				return -1;
			}
			break;
		case 'b':
			if ((by = report_by_key(optarg)) < 0) {
				pr_err("--by %s: expected kernel, api, op, callsite, range, stream or process", optarg);
				return -1;
			}
			o->by = by;
			break;
		case 'S':
			if ((o->sort = report_sort_key(optarg)) < 0) {
				pr_err("--sort %s: total, calls, avg, med, min, max, std or name", optarg);
				return -1;
			}
			break;
		case 'U':
			if ((report_timeunit = report_timeunit_key(optarg)) < 0) {
				pr_err("--timeunit %s: ns, us, ms or s", optarg);
				return -1;
			}
			break;
		case 'r':
			o->range_tree = 1;
			break;
		case 'w':
			if (!strcmp(optarg, "verdict"))
				o->verdict_window = 1;
			else if (strcmp(optarg, "run")) {
				pr_err("--window %s: expected run or verdict", optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return -1;
	}
	o->profile = argv[optind];
	return 0;
}

int cmd_report(int argc, char **argv)
{
	const struct report_fmt_ops *fmt = &report_fmt_text;
	struct report_opts o = { .by = REPORT_BY_ALL, .top = 15, .sort = REPORT_SORT_TOTAL };
	struct report_doc d;
	int ret;

	cprof_thresholds_default(&o.th);
	if ((ret = parse(argc, argv, &o, &fmt)) != 0)
		return ret > 0 ? CPROF_EXIT_OK : CPROF_EXIT_USAGE;
	if (fmt->json && !o.top_set)
		o.top = 0; /* JSON carries everything unless asked otherwise */
	o.one_table = fmt->one_table;
	o.json = fmt->json;
	if (fmt != &report_fmt_text)
		cprof_progress_off();
	cprof_progress_begin("cprof report: reading the profile");
	ret = report_doc_build(&o, &d) < 0 ? CPROF_EXIT_USAGE : CPROF_EXIT_OK;
	cprof_progress_end(); /* before the first line of output */
	if (ret == CPROF_EXIT_OK)
		fmt->render(&d);
	report_doc_free(&d);
	return ret;
}
