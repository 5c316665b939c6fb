/* cprof trace: the profile as a Chrome trace laid out as Kineto writes it (Perfetto, TensorBoard, HTA). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "report/cprof.h"
#include "report/term.h"
#include "report/model/model.h"
#include "report/model/ranges.h"
#include "report/model/stacks.h"
#include "report/render/trace.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cprof trace PROFILE.db -o TRACE.json|- [-f] [-q]\n"
		   "       cprof trace PROFILE.db --per-rank DIR [-f] [-q]\n"
		   "  writes a Chrome trace in Kineto's layout (Perfetto, TensorBoard, Holistic Trace Analysis)\n"
		   "  -o, --output PATH  the trace file (never overwritten unless -f); - writes to standard output\n"
		   "  --per-rank DIR     one trace per rank, DIR/rank-N.json, as HTA's multi-rank analysis reads them\n"
		   "  -f, --force        overwrite existing files\n"
		   "  -q, --quiet        do not say on stderr what was written\n");
}

/* Kineto writes every ts relative to a base so a double keeps ns precision; the base is the profile's first
 * timestamp rounded down to a whole second. */
static void choose_base(struct trace *t)
{
	int64_t first = t->src.first_start;

	if (first < 0)
		first = cprof_meta_int(t->src.db, "created_ns", 0);
	if (first < 0)
		first = 0;
	t->base_ns = first - first % 1000000000;
	t->first_rel_ns = first - t->base_ns;
}

static int export_trace(struct trace *t)
{
	int ret;

	if ((ret = trace_load_procs(t)) < 0)
		return ret;
	t->simulated = t->src.simulated;
	choose_base(t);
	trace_write_header(t);
	if ((ret = trace_write_metadata(t)) < 0 || (ret = trace_write_nvtx(t)) < 0 || (ret = trace_write_hooked(t)) < 0 ||
	    (ret = trace_write_api_records(t, CPROF_TSRC_RUNTIME, "cuda_runtime")) < 0 ||
	    (ret = trace_write_api_records(t, CPROF_TSRC_DRIVER, "cuda_driver")) < 0 ||
	    (ret = trace_write_gpu_ops(t, GPU_KERNEL)) < 0 || (ret = trace_write_gpu_ops(t, GPU_MEMCPY)) < 0 ||
	    (ret = trace_write_gpu_ops(t, GPU_MEMSET)) < 0 || (ret = trace_write_overhead(t)) < 0)
		return ret;
	trace_put(t, "\n  ]\n}\n");
	return 0;
}

static void trace_free(struct trace *t)
{
	size_t i;

	for (i = 0; i < t->ndm; i++)
		free(t->dm[i].text);
	free(t->dm);
	free(t->procs);
	free(t->seen_threads);
	free(t->py);
	if (t->src.db)
		cprof_trace_src_close(&t->src);
}

/* One export, profile to file; rank >= 0 keeps that rank's processes only. Returns an exit code. */
static int export_to(const char *profile, const char *out, int force, int quiet, int64_t rank, int64_t world)
{
	struct trace t = { .first_event = 1, .rank = rank, .world = world };
	int err, ret = CPROF_EXIT_USAGE;

	if (strcmp(out, "-") && cprof_out_check(PR_FMT, out, (char *const *)&profile, 1, force, 0) < 0)
		return CPROF_EXIT_USAGE;
	if (quiet || !strcmp(out, "-"))
		cprof_progress_off();
	cprof_progress_begin("cprof trace: writing the trace");
	if (cprof_trace_src_open(profile, rank, &t.src) < 0)
		goto out; /* said why */
	if ((err = cprof_out_open(out, &t.f)) < 0) {
		pr_err("%s: cannot write next to it: %s", out, strerror(-err));
		goto out;
	}
	if (export_trace(&t) < 0) {
		/* export_trace said what failed */
		cprof_out_abort(t.f);
		goto out;
	}
	err = cprof_out_finish(t.f, out, force);
	if (err == -EEXIST) {
		pr_err("%s exists; -f overwrites it", out);
		goto out;
	} else if (err < 0) {
		pr_err("%s: write failed: %s", out, strerror(-err));
		goto out;
	}
	cprof_progress_end();
	if (!quiet) {
		char what[48];

		snprintf(what, sizeof(what), "%llu events", (unsigned long long)t.events);
		cprof_out_said("cprof trace", out, what);
	}
	ret = CPROF_EXIT_OK;
out:
	cprof_progress_end();
	trace_free(&t);
	return ret;
}

/* --per-rank DIR: DIR/rank-N.json for every rank the profile's processes carry */
static int export_ranks(const char *profile, const char *dir, int force, int quiet)
{
	int64_t *ranks = NULL, world = 0;
	size_t n = 0, i;
	int ret = CPROF_EXIT_USAGE;

	if (cprof_trace_src_ranks(profile, &ranks, &n, &world) < 0)
		goto out; /* said why */
	if (n == 0) {
		pr_err("%s: no process has a rank (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID); use -o", profile);
		goto out;
	}
	/* the world is what the launcher said, or at least every rank that showed up */
	if (world < (int64_t)n)
		world = (int64_t)n;
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		pr_err("%s: cannot create it: %s", dir, strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i++) {
		char path[PATH_MAX];

		if (snprintf(path, sizeof(path), "%s/rank-%lld.json", dir, (long long)ranks[i]) >= (int)sizeof(path)) {
			pr_err("%s: path too long", dir);
			goto out;
		}
		if ((ret = export_to(profile, path, force, 1, ranks[i], world)) != CPROF_EXIT_OK)
			goto out;
	}
	if (!quiet)
		fprintf(stderr, "cprof trace: wrote %zu traces, %s/rank-N.json\n", n, cprof_tx(dir));
	ret = CPROF_EXIT_OK;
out:
	free(ranks);
	return ret;
}

int cmd_trace(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "per-rank", required_argument, NULL, 'r' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *dir = NULL;
	int opt, force = 0, quiet = 0;

	while ((opt = getopt_long(argc, argv, "o:fqh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'r':
			dir = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return CPROF_EXIT_OK;
		default:
			usage(stderr);
			return CPROF_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || (out == NULL) == (dir == NULL) || (out && *out == '\0') || (dir && *dir == '\0')) {
		pr_err("%s (cprof trace --help)", optind >= argc ? "no profile given" :
						  optind < argc - 1 ? "more than one profile given" :
						  out && dir ? "-o and --per-rank exclude each other" :
								      "no output given: -o TRACE.json or --per-rank DIR");
		return CPROF_EXIT_USAGE;
	}
	return dir ? export_ranks(argv[optind], dir, force, quiet) : export_to(argv[optind], out, force, quiet, -1, 1);
}
