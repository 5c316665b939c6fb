/* cprof check: the CI gate. Exit 0 when every condition holds, 1 when one fails, 3 when the profile is incomplete. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PR_FMT "cprof check"
#include "common/log.h"
#include "report/cmd/thresholds.h"
#include "report/cprof.h"
#include "report/term.h"
#include "report/model/gates.h"
#include "report/model/summary.h"
#include "report/render/check.h"

static const struct cprof_check_fmt *const formats[] = {
	&cprof_check_text, &cprof_check_json, &cprof_check_junit, &cprof_check_markdown,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cprof check PROFILE.db [--expect overhead-bound|compute-bound|mixed] [--max-gpu-idle PCT]\n"
		"                   [--baseline OLD.db [--max-regression PCT]] [--require-complete] [--include-startup]\n"
		"                   [--compute-pct P] [--kernel-wait-us U] [--step-range REGEX]\n"
		"                   [--format text|json|junit|markdown] [-o FILE|-] [-f] [--top N] [--validate-only]\n"
		"\n"
		"  --expect VERDICT      fail unless the run's verdict is VERDICT\n"
		"  --max-gpu-idle PCT    fail when the GPU idled more than PCT%% of the verdict's window\n"
		"  --baseline OLD.db     compare with an earlier profile: total kernel time, kernel launches, the median\n"
		"                        NVTX step and each kernel of at least 1%% of the baseline's GPU time\n"
		"  --max-regression PCT  how much more each of those may take than in the baseline (default 10; needs\n"
		"                        --baseline)\n"
		"  --require-complete    exit 3 when events were lost or the run did not end cleanly\n"
		"  --format FMT          text (default: one FAIL line per failed condition, or one PASS line), json\n"
		"                        (cprof.check/1), junit (XML for Jenkins, GitLab, GitHub test reporters) or\n"
		"                        markdown (for $GITHUB_STEP_SUMMARY or a PR comment: verdict, gates, top changes)\n"
		"  -o, --output FILE     write the format to FILE (- is standard output); the text lines still go to\n"
		"                        standard output, so a job's log shows the result\n"
		"  -f, --force           overwrite FILE\n"
		"  --top N               changes against the baseline that markdown and json show (default 10; 0: all)\n"
		"  --validate-only       check the options (and that --baseline can be read, and -o written) and stop\n"
		"                        without reading PROFILE (cprof-run --check does it before it runs the command)\n"
		"\n"
		"the verdict's thresholds, as cprof report and cprof html take them:\n"
		"%s"
		"\n"
		"exit status: 0 passed, 1 a condition failed, 2 usage or unreadable input, 3 profile incomplete\n",
		cprof_threshold_help);
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

/* One line for what getopt refused (opterr is off): an unknown option, or one without its value. */
static void bad_option(int argc, char **argv, const struct option *opts)
{
	/* getopt moved past an option it rejected whole (a long one, or a lone short one) */
	const char *arg = optind > 1 && optind <= argc ? argv[optind - 1] : "?";
	int i;

	if (optopt == 0) {
		pr_err("unknown %soption '%s' (cprof check --help lists them)", strncmp(arg, "--", 2) ? "" : "or ambiguous ",
		       cprof_tx(arg));
		return;
	}
	for (i = 0; opts[i].name; i++)
		if (opts[i].val == optopt && opts[i].has_arg == required_argument) {
			pr_err("--%s needs a value", opts[i].name);
			return;
		}
	if (optopt > ' ' && optopt < 0x7f)
		pr_err("unknown option '-%c' (cprof check --help lists them)", optopt);
	else
		pr_err("unknown option '%s' (cprof check --help lists them)", cprof_tx(arg));
}

/* --validate-only: what the options name that a run cannot fix, so cprof-run --check refuses it before the run
 * rather than after: a baseline that cannot be read, an output that may not be written. */
static int validate_inputs(const char *profile, const char *baseline, const char *out, int force)
{
	char *const inputs[] = { (char *)profile, (char *)baseline };
	int err;

	if (baseline && access(baseline, R_OK) < 0) {
		err = -errno;
		pr_err("--baseline %s: %s", cprof_tx(baseline), strerror(-err));
		return err;
	}
	if (out && strcmp(out, "-") && (err = cprof_out_check(PR_FMT, out, inputs, baseline ? 2 : 1, force, 0)) < 0)
		return err;
	return 0;
}

/* the result into FILE (or standard output), moved in place only when complete */
static int write_to(const char *out, int force, const struct cprof_check_fmt *fmt, const struct cprof_check_result *r)
{
	/* the shared check: an existing file needs -f, and neither the profile nor its baseline may be the output */
	char *const inputs[] = { (char *)r->profile, (char *)r->baseline };
	FILE *f;
	int err;

	if (strcmp(out, "-") && (err = cprof_out_check(PR_FMT, out, inputs, r->baseline ? 2 : 1, force, 0)) < 0)
		return err;
	if ((err = cprof_out_open(out, &f)) < 0) {
		pr_err("cannot write %s: %s", cprof_tx(out), strerror(-err));
		return err;
	}
	fmt->write(f, r);
	if ((err = cprof_out_finish(f, out, force)) < 0)
		pr_err("cannot write %s: %s", cprof_tx(out), strerror(-err));
	return err;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "expect", required_argument, NULL, 'e' },       { "max-gpu-idle", required_argument, NULL, 'i' },
		{ "baseline", required_argument, NULL, 'b' },     { "max-regression", required_argument, NULL, 'r' },
		{ "require-complete", no_argument, NULL, 'c' },   CPROF_THRESHOLD_OPTIONS,
		{ "format", required_argument, NULL, 'F' },       { "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },              { "top", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },               { "validate-only", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cprof_check_fmt *fmt = &cprof_check_text;
	const char *baseline = NULL, *out = NULL;
	struct cprof_gate_opts go = { NULL, -1, 10 };
	int opt, require_complete = 0, reg_set = 0, force = 0, validate_only = 0, ret = CPROF_EXIT_USAGE;
	struct cprof_thresholds th;
	struct cprof_summary now = { 0 }, old = { 0 };
	struct cprof_gate *gates = NULL;
	struct cprof_change *changes = NULL;
	struct cprof_check_result r = { 0 };
	char *end;
	size_t i;

	r.top = 10;
	cprof_thresholds_default(&th);
	/* getopt's own message names the subcommand ("check: ...") and prints the option unescaped: ours is
	 * one line, the same for cprof check and for cprof-run --check's validation */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "ho:f", opts, NULL)) != -1) {
		int t = cprof_threshold_opt(PR_FMT, opt, optarg, &th);

		if (t < 0)
			return CPROF_EXIT_USAGE;
		if (t > 0)
			continue;
		switch (opt) {
		case 'e':
			if (strcmp(optarg, "overhead-bound") && strcmp(optarg, "compute-bound") && strcmp(optarg, "mixed")) {
				pr_err("--expect overhead-bound, compute-bound or mixed, not '%s'", optarg);
				return CPROF_EXIT_USAGE;
			}
			go.expect = optarg;
			break;
		case 'i':
			if (parse_pct("--max-gpu-idle", optarg, &go.max_idle) < 0)
				return CPROF_EXIT_USAGE;
			break;
		case 'b':
			baseline = optarg;
			break;
		case 'r':
			if (parse_pct("--max-regression", optarg, &go.max_reg) < 0)
				return CPROF_EXIT_USAGE;
			reg_set = 1;
			break;
		case 'c':
			require_complete = 1;
			break;
		case 'F':
			for (i = 0; i < sizeof(formats) / sizeof(formats[0]) && strcmp(optarg, formats[i]->name); i++)
				;
			if (i == sizeof(formats) / sizeof(formats[0])) {
				pr_err("unknown --format '%s' (text, json, junit or markdown)", optarg);
				return CPROF_EXIT_USAGE;
			}
			fmt = formats[i];
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 't':
			r.top = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0') {
				pr_err("--top wants a number, got '%s'", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'V':
			validate_only = 1;
			break;
		case 'h':
			/* a gate asked for the manual checks nothing: cprof-run's run would pass it (a review, 2026-12-06) */
			if (validate_only) {
				pr_err("--help is not a gate option (the gate would print this manual and check nothing)");
				return CPROF_EXIT_USAGE;
			}
			usage(stdout);
			return CPROF_EXIT_OK;
		default:
			bad_option(argc, argv, opts);
			/* a caller that validates wants the one line, not the manual */
			if (!validate_only)
				usage(stderr);
			return CPROF_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		if (optind < argc - 1)
			pr_err("one profile expected; '%s' is not an option", cprof_tx(argv[optind + 1]));
		else
			pr_err("no profile given");
		if (!validate_only)
			usage(stderr);
		return CPROF_EXIT_USAGE;
	}
	/* a limit with nothing to compare against would pass silently: the gate a user meant never ran */
	if (reg_set && !baseline) {
		pr_err("--max-regression needs --baseline OLD.db (the profile to compare with)");
		return CPROF_EXIT_USAGE;
	}
	if (validate_only)
		return validate_inputs(argv[optind], baseline, out, force) < 0 ? CPROF_EXIT_USAGE : CPROF_EXIT_OK;
	if (fmt != &cprof_check_text && (out == NULL || !strcmp(out, "-")))
		cprof_progress_off(); /* machine-readable output on the terminal */
	cprof_progress_begin("cprof check: reading the profiles");
	if (cprof_summary_load(argv[optind], &th, &now) < 0)
		goto out;
	if (baseline && cprof_summary_load(baseline, &th, &old) < 0)
		goto out;
	cprof_progress_end();
	r.profile = argv[optind];
	r.baseline = baseline;
	r.now = &now;
	r.old = baseline ? &old : NULL;
	r.simulated = now.simulated;
	r.incomplete = require_complete && !now.complete;
	if (!r.incomplete) {
		if ((r.failed = cprof_gates_build(&now, r.old, &go, &gates, &r.ngates)) < 0 ||
		    (r.old && cprof_changes_build(&old, &now, &changes, &r.nchanges) < 0)) {
			pr_err("out of memory");
			goto out;
		}
		r.gates = gates;
		r.changes = changes;
	}
	r.exit_status = r.incomplete ? CPROF_EXIT_INCOMPLETE : r.failed ? CPROF_EXIT_GATE_FAILED : CPROF_EXIT_OK;
	if (out && strcmp(out, "-")) {
		if (write_to(out, force, fmt, &r) < 0)
			goto out;
		fmt = &cprof_check_text;
	}
	fmt->write(stdout, &r);
	ret = r.exit_status;
out:
	cprof_progress_end();
	free(gates);
	free(changes);
	cprof_summary_free(&now);
	cprof_summary_free(&old);
	return ret;
}
