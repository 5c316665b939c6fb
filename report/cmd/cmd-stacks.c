/* cprof stacks: the recorded call stacks as a flame graph's input (folded lines, or speedscope's JSON). */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#define PR_FMT "cprof stacks"
#include "common/log.h"
#include "report/cprof.h"
#include "report/term.h"
#include "report/model/flame.h"
#include "report/model/parts.h"
#include "report/render/stacks.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cprof stacks PROFILE.db [--folded | --format folded|speedscope] [--weight cpu|gpu] [-o FILE|-] [-f]\n"
		"  the call stacks cprof-run recorded (native and Python frames, the CUDA call at the tip), weighted by\n"
		"  time in nanoseconds, for a flame graph: flamegraph.pl, inferno, speedscope, Perfetto, flameshow\n"
		"  --folded            Brendan Gregg's folded format, one 'frame;frame;call WEIGHT' line per stack (default)\n"
		"  --format FMT        folded, or speedscope (speedscope's JSON file format, one sampled profile)\n"
		"  --weight cpu        host time in each hooked CUDA call, nested calls inside their outer one (default);\n"
		"                      the weights add up to the time in hooked calls\n"
		"  --weight gpu        GPU time of the kernels, copies and memsets each stack launched (the kernel is the\n"
		"                      tip); the weights add up to the GPU time of every op\n"
		"  -o, --output FILE   write to FILE instead of standard output (- is standard output)\n"
		"  -f, --force         overwrite FILE\n"
		"  Calls recorded without a stack are '[no stack recorded];CALL' (cprof-run --stacks chooses which are).\n");
}

int cmd_stacks(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "folded", no_argument, NULL, 'F' },   { "format", required_argument, NULL, 't' },
		{ "weight", required_argument, NULL, 'w' }, { "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },    { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cprof_stacks_fmt *fmt = &cprof_stacks_folded;
	struct cprof_stacks_doc doc = { 0 };
	struct cprof_model_opts mo = { .parts = CPROF_MODEL_FLAME };
	struct cprof_model model;
	const char *out = "-";
	int opt, force = 0, err, ret = CPROF_EXIT_USAGE;
	FILE *f;

	doc.weight = CPROF_FLAME_CPU;
	while ((opt = getopt_long(argc, argv, "ho:f", opts, NULL)) != -1) {
		switch (opt) {
		case 'F':
			fmt = &cprof_stacks_folded;
			break;
		case 't':
			if (!strcmp(optarg, "folded"))
				fmt = &cprof_stacks_folded;
			else if (!strcmp(optarg, "speedscope"))
				fmt = &cprof_stacks_speedscope;
			else {
				pr_err("unknown --format '%s' (folded or speedscope)", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'w':
			if (!strcmp(optarg, "cpu"))
				doc.weight = CPROF_FLAME_CPU;
			else if (!strcmp(optarg, "gpu"))
				doc.weight = CPROF_FLAME_GPU;
			else {
				pr_err("--weight cpu or gpu, not '%s'", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			force = 1;
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
	if (strcmp(out, "-") && cprof_out_check(PR_FMT, out, argv + optind, 1, force, 0) < 0)
		return CPROF_EXIT_USAGE;
	cprof_progress_off(); /* its output is for a program */
	mo.flame_weight = doc.weight;
	if ((err = cprof_model_open(argv[optind], &mo, &model)) < 0) {
		if (model.x)
			pr_err("%s: %s", cprof_tx(argv[optind]), model.x->err);
		goto out;
	}
	doc.profile = argv[optind];
	doc.flame = &model.x->flame;
	doc.simulated = model.x->meta.simulated;
	if ((err = cprof_out_open(out, &f)) < 0) {
		pr_err("cannot write %s: %s", cprof_tx(out), strerror(-err));
		goto out;
	}
	if ((err = fmt->write(f, &doc)) < 0) {
		cprof_out_abort(f);
		pr_err("%s", strerror(-err));
		goto out;
	}
	if ((err = cprof_out_finish(f, out, force)) < 0) {
		pr_err("cannot write %s: %s", cprof_tx(out), strerror(-err));
		goto out;
	}
	ret = CPROF_EXIT_OK;
out:
	cprof_model_close(&model);
	return ret;
}
