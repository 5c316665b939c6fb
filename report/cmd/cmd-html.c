/* cprof html: one self-contained HTML page (verdict, findings, timeline, charts, tables) for a browser, offline. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof html"
#include "common/log.h"
#include "report/cmd/thresholds.h"
#include "report/render/html.h"
#include "report/term.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cprof html PROFILE.db -o REPORT.html|- [-f] [-q] [--include-startup] [--compute-pct P]\n"
		   "                  [--kernel-wait-us U] [--step-range REGEX]\n"
		   "  writes one self-contained HTML page: the verdict, findings, a zoomable timeline, charts and\n"
		   "  sortable tables; no network access, no external script or font\n"
		   "  -o, --output PATH    the page (never overwritten unless -f); - writes to standard output\n"
		   "  -f, --force          overwrite PATH if it exists\n"
		   "  -q, --quiet          do not say on stderr what was written\n"
		   "%s", cprof_threshold_help);
}

static void html_free(struct html *h)
{
	size_t i;

	for (i = 0; i < h->nprocs; i++)
		free(h->procs[i].argv);
	free(h->procs);
	free(h->ph);
	free(h->fd);
	html_tables_free(h);
	cprof_model_close(&h->model);
}

/* 0, 1 (--help) or -1 (a usage error, said) */
static int parse(int argc, char **argv, const char **out, int *force, int *quiet, struct cprof_thresholds *th)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },        { "help", no_argument, NULL, 'h' },
		CPROF_THRESHOLD_OPTIONS,                    { NULL, 0, NULL, 0 },
	};
	int opt, r;

	opterr = 0; /* one line of our own instead of getopt's */
	while ((opt = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
		if ((r = cprof_threshold_opt(PR_FMT, opt, optarg, th)) != 0) {
			if (r < 0)
				return -1;
			continue;
		}
		switch (opt) {
		case 'o':
			*out = optarg;
			break;
		case 'f':
			*force = 1;
			break;
		case 'q':
			*quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			pr_err("%s wants a value (cprof html --help)", argv[optind - 1]);
			return -1;
		default:
			pr_err("unknown option %s (cprof html --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (optind != argc - 1 || *out == NULL || **out == '\0') {
		pr_err("%s (cprof html --help)", optind >= argc ? "no profile given" :
						 optind < argc - 1 ? "more than one profile given" :
								     "no output given: -o REPORT.html");
		return -1;
	}
	return 0;
}

/* the page is written next to its target and moved in place only when complete */
int cmd_html(int argc, char **argv)
{
	struct cprof_model_opts mo = { .parts = CPROF_MODEL_ALL | CPROF_MODEL_HOST | CPROF_MODEL_STACKS | CPROF_MODEL_RANGES };
	struct html h;
	struct cprof_thresholds th;
	const char *out = NULL;
	int force = 0, quiet = 0, err, ret = CPROF_EXIT_USAGE;

	memset(&h, 0, sizeof(h));
	cprof_thresholds_default(&th);
	if ((err = parse(argc, argv, &out, &force, &quiet, &th)) != 0)
		return err > 0 ? CPROF_EXIT_OK : CPROF_EXIT_USAGE;
	if (strcmp(out, "-") && cprof_out_check(PR_FMT, out, argv + optind, 1, force, 0) < 0)
		return CPROF_EXIT_USAGE;
	h.profile = argv[optind];
	if (quiet || !strcmp(out, "-"))
		cprof_progress_off();
	cprof_progress_begin("cprof html: writing the page");
	if ((err = cprof_model_open(h.profile, &mo, &h.model)) < 0) {
		if (h.model.x && h.model.x->err[0])
			pr_err("%s: %s", h.profile, h.model.x->err);
		goto out;
	}
	if ((err = cprof_out_open(out, &h.f)) < 0) {
		pr_err("%s: cannot write next to it: %s", out, strerror(-err));
		goto out;
	}
	if ((err = html_write_page(&h, &th)) < 0) {
		pr_err("%s: cannot read the profile: %s", h.profile,
		       err == -EIO || err == -ERANGE ? cprof_model_why(&h.model) : strerror(-err));
		cprof_out_abort(h.f);
		goto out;
	}
	err = cprof_out_finish(h.f, out, force);
	if (err == -EEXIST) {
		pr_err("%s exists; -f overwrites it", out);
		goto out;
	} else if (err < 0) {
		pr_err("%s: write failed: %s", out, strerror(-err));
		goto out;
	}
	cprof_progress_end();
	if (!quiet)
		cprof_out_said("cprof html", out, NULL);
	ret = CPROF_EXIT_OK;
out:
	cprof_progress_end();
	html_free(&h);
	return ret;
}
