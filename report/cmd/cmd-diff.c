/* cprof diff: what changed between two profiles, the verdict first, then the kernels and calls that moved most. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PR_FMT "cprof diff"
#include "common/log.h"
#include "report/cprof.h"
#include "report/term.h"
#include "report/model/gates.h"
#include "report/model/summary.h"
#include "report/render/diff.h"

static const struct cprof_diff_fmt *const formats[] = { &cprof_diff_text, &cprof_diff_json, &cprof_diff_markdown };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cprof diff OLD.db NEW.db [--format text|json|markdown] [--top N] [--max-regression PCT]\n"
		"                  [-o FILE|-] [-f] [--include-startup]\n"
		"\n"
		"  --format FMT          text (default), json (cprof.diff/1) or markdown (a PR comment, a job summary)\n"
		"  --top N               rows shown (default 20; 0: all). Kernels come first, ranked by the change in\n"
		"                        GPU time, then CUDA calls by the change in host time, synchronising calls last\n"
		"  --max-regression PCT  exit 1 when NEW takes more than PCT%% longer than OLD: total kernel time, kernel\n"
		"                        launches, the median NVTX step, a kernel of at least 1%% of OLD's GPU time\n"
		"  -o, --output FILE     write to FILE instead of standard output (- is standard output)\n"
		"  -f, --force           overwrite FILE\n"
		"  --include-startup     count context creation and the first launches in the verdicts\n"
		"\n"
		"exit status: 0 compared (and within --max-regression), 1 --max-regression exceeded, 2 usage or\n"
		"unreadable input\n");
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'F' },       { "top", required_argument, NULL, 't' },
		{ "max-regression", required_argument, NULL, 'r' }, { "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },              { "include-startup", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },               { NULL, 0, NULL, 0 },
	};
	const struct cprof_diff_fmt *fmt = &cprof_diff_text;
	struct cprof_thresholds th;
	struct cprof_summary a = { 0 }, b = { 0 };
	struct cprof_change *c = NULL;
	struct cprof_gate *gates = NULL;
	struct cprof_diff_result r = { 0 };
	const char *out = "-";
	int opt, force = 0, err, ret = CPROF_EXIT_USAGE;
	char *end;
	size_t i;

	r.top = 20;
	r.max_reg = -1;
	cprof_thresholds_default(&th);
	while ((opt = getopt_long(argc, argv, "ho:f", opts, NULL)) != -1) {
		switch (opt) {
		case 'F':
			for (i = 0; i < sizeof(formats) / sizeof(formats[0]) && strcmp(optarg, formats[i]->name); i++)
				;
			if (i == sizeof(formats) / sizeof(formats[0])) {
				pr_err("unknown --format '%s' (text, json or markdown)", optarg);
				return CPROF_EXIT_USAGE;
			}
			fmt = formats[i];
			break;
		case 't':
			r.top = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || *optarg == '-') {
				pr_err("--top wants a number, got '%s'", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'r':
			r.max_reg = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || !(r.max_reg >= 0 && r.max_reg <= 1e6)) {
				pr_err("--max-regression wants a percentage, got '%s'", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			force = 1;
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
	if (optind != argc - 2) {
		usage(stderr);
		return CPROF_EXIT_USAGE;
	}
	/* the shared check: an existing file needs -f, and neither profile may be the output */
	if (strcmp(out, "-") && cprof_out_check(PR_FMT, out, argv + optind, 2, force, 0) < 0)
		return CPROF_EXIT_USAGE;
	if (fmt != &cprof_diff_text)
		cprof_progress_off();
	cprof_progress_begin("cprof diff: reading the profiles");
	if (cprof_summary_load(argv[optind], &th, &a) < 0 || cprof_summary_load(argv[optind + 1], &th, &b) < 0)
		goto out;
	cprof_progress_end();
	if (cprof_changes_build(&a, &b, &c, &r.nchanges) < 0)
		goto nomem;
	r.old_path = argv[optind];
	r.new_path = argv[optind + 1];
	r.a = &a;
	r.b = &b;
	r.changes = c;
	r.simulated = a.simulated || b.simulated;
	if (r.max_reg >= 0) {
		struct cprof_gate_opts go = { NULL, -1, r.max_reg };

		if ((r.failed = cprof_gates_build(&b, &a, &go, &gates, &r.ngates)) < 0)
			goto nomem;
		r.gates = gates;
	}
	{
		FILE *f;

		if ((err = cprof_out_open(out, &f)) < 0) {
			pr_err("cannot write %s: %s", cprof_tx(out), strerror(-err));
			goto out;
		}
		fmt->write(f, &r);
		if ((err = cprof_out_finish(f, out, force)) < 0) {
			pr_err("cannot write %s: %s", cprof_tx(out), strerror(-err));
			goto out;
		}
	}
	ret = r.failed ? CPROF_EXIT_GATE_FAILED : CPROF_EXIT_OK;
	goto out;
nomem:
	pr_err("out of memory");
out:
	cprof_progress_end();
	free(c);
	free(gates);
	cprof_summary_free(&a);
	cprof_summary_free(&b);
	return ret;
}
