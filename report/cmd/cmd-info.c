/* cprof info: a few lines about a profile (what cprof-run prints at the end of a run). */
#include <errno.h>
#include <string.h>

#define PR_FMT "cprof info"
#include "common/log.h"
#include "report/cprof.h"
#include "report/model/model.h"
#include "report/model/report.h"

/* "N CUDA API calls (...)" as cprof report counts them (issue 29 item 2): its API table, named by what they
 * count (from cprofd's totals when it stored them: issue 32); the hooked calls alone when the timeline
 * cannot be read */
static void call_counts(struct cprof_model *m, int loaded, int64_t calls, char *buf, size_t size)
{
	const struct cprof_meta_facts *f = &m->x->meta;
	struct table apis = { 0 };
	struct call_counts cc;
	int n;

	if (f->calls_stored || (loaded && report_load_apis(m, 0, &apis) == 0)) {
		if (f->calls_stored)
			cc = (struct call_counts){ .program = f->calls_program, .in_libs = f->calls_in_libs,
						   .cupti_only = f->calls_cupti_only,
						   .total = f->calls_program + f->calls_in_libs + f->calls_cupti_only };
		else
			report_call_counts(m, 0, &apis, &cc);
		n = snprintf(buf, size, "%lld CUDA API calls (", (long long)cc.total);
		report_call_counts_text(&cc, buf + n, size - (size_t)n);
		strncat(buf, ")", size - strlen(buf) - 1);
	} else {
		snprintf(buf, size, "%lld hooked CUDA API calls", (long long)calls);
	}
	report_table_free(&apis);
}

int cmd_info(int argc, char **argv)
{
	/* a finished profile whose call totals cprofd stored is read no further than META and the small tables:
	 * cprof-run's summary of a 30M-record run waited minutes for the rows (issue 32) */
	const struct cprof_model_opts facts = { .parts = CPROF_MODEL_NO_ARRAYS | CPROF_MODEL_FACTS };
	const struct cprof_model_opts mo = { .parts = CPROF_MODEL_TIMELINE | CPROF_MODEL_COUNTS };
	const struct cprof_meta_facts *f;
	char counts[160], command[1024];
	int64_t nvtx, procs, calls, unaccounted;
	struct cprof_model model;
	int loaded;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr, "usage: cprof info PROFILE.db\n"
			"  what a profile holds, in a few lines: the command and its exit status, processes, calls,\n"
			"  lost events and whether it is complete, its recording windows, and whether its GPU was simulated\n");
		return argc == 2 && !strcmp(argv[1], "--help") ? CPROF_EXIT_OK : CPROF_EXIT_USAGE;
	}
	/* a profile whose timeline cannot be read still says what META and its tables hold */
	loaded = cprof_model_open(argv[1], &facts, &model) == 0;
	if (model.x != NULL && !model.x->meta.calls_stored) {
		cprof_model_close(&model);
		loaded = cprof_model_open(argv[1], &mo, &model) == 0;
	}
	if (model.x == NULL)
		return CPROF_EXIT_USAGE;
	f = &model.x->meta;
	cprof_meta_command(f, command, sizeof(command));
	printf("cprof: profile %s%s\n", cprof_tx(argv[1]), f->simulated ? " (simulated GPU)" : "");
	printf("cprof: command: %s", cprof_tx_quoted(command));
	if (f->exit_status >= 0)
		printf(" (exit status %lld)", (long long)f->exit_status);
	/* META's totals are written when the collector finishes: a killed one (or a full disk) left none, or
	 * old ones, while the tables hold what was stored; then count the tables (issue 21, item 12) */
	procs = f->finalised ? f->processes : f->proc_rows;
	nvtx = f->finalised ? f->nvtx_events : f->nvtx_rows;
	calls = f->finalised ? f->events - f->nvtx_events : f->api;
	call_counts(&model, loaded, calls, counts, sizeof(counts));
	printf("\ncprof: %lld process(es), %s, ", (long long)procs, counts);
	if (nvtx)
		printf("%lld NVTX annotations, ", (long long)nvtx);
	/* a process killed from outside could not count what it had not sent; a collector that could not write its
	 * final state left no count */
	printf("%s%lld lost events, %s%s%s\n", f->killed > 0 || !f->lost_known ? "at least " : "", (long long)f->lost_events,
	       f->complete ? "complete" : "INCOMPLETE", f->complete ? "" : ": ", f->complete ? "" : cprof_tx(f->reason));
	/* the program's own profiler (torch.profiler) used CUPTI too: what it got from cprof's session */
	if (f->cupti_shared.processes > 0)
		printf("cprof: CUPTI shared with the program's own profiler: %lld records handed to it (%lld kernels), "
		       "%lld it enabled and did not get%s; cprof kept its own records\n",
		       (long long)f->cupti_shared.handed, (long long)f->cupti_shared.kernels, (long long)f->cupti_shared.missed,
		       f->cupti_shared.pending ? " (some were still in its buffer at the end)" : "");
	/* what the processes said they produced and the collector neither stored nor heard they lost (frames
	 * dropped as malformed, from a banned process): the rule emitted = recorded + lost, shown when broken */
	unaccounted = f->unaccounted - f->lost_spool_full - f->lost_unstored;
	if (unaccounted > 0)
		printf("cprof: %lld events the processes emitted were neither stored nor counted lost (dropped by the"
		       " collector: see DIAGNOSTICS)\n", (long long)unaccounted);
	if (!f->finalised)
		printf("cprof: the collector did not finish this profile: the counts above are of what it stored\n");
	/* recorded in windows, or cut by --max-size: the counts above are of those only */
	if (f->has_windows) {
		if (f->max_size_cut_ns > 0)
			printf("cprof: recording stopped at --max-size (%lld bytes): %lld events and GPU records not recorded\n",
			       (long long)f->max_size, (long long)f->max_size_unrecorded);
		else if (f->windows > 0)
			printf("cprof: recorded in %lld window(s) (a row per process and window; cprof report lists them)\n",
			       (long long)f->windows);
	}
	printf("cprof: see it with: cprof report %s\n", cprof_tx(argv[1]));
	cprof_model_close(&model);
	return CPROF_EXIT_OK;
}
