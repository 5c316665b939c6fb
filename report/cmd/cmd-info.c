/* cprof info: a few lines about a profile (what cprof-run prints at the end of a run). */
#include <string.h>

#define PR_FMT "cprof info"
#include "common/log.h"
#include "report/cprof.h"
#include "report/model/model.h"
#include "report/model/report.h"

int cmd_info(int argc, char **argv)
{
	char command[1024], reason[256], sim[8];
	sqlite3 *db;
	int64_t status, nvtx, procs, calls, unaccounted;
	char counts[160];
	struct cprof_model model;
	struct table apis = { 0 };
	int complete, finalised;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr, "usage: cprof info PROFILE.db\n"
			"  what a profile holds, in a few lines: the command and its exit status, processes, calls,\n"
			"  kernels, lost events and whether it is complete, and whether its GPU was simulated\n");
		return argc == 2 && !strcmp(argv[1], "--help") ? CPROF_EXIT_OK : CPROF_EXIT_USAGE;
	}
	db = cprof_profile_open(argv[1]);
	if (db == NULL)
		return CPROF_EXIT_USAGE;
	complete = cprof_meta_int(db, "complete", 0) == 1;
	status = cprof_meta_int(db, "exit_status", -1);
	cprof_meta(db, "command", command, sizeof(command), "?");
	cprof_meta(db, "incomplete_reason", reason, sizeof(reason), "");
	cprof_meta(db, "simulated_gpu", sim, sizeof(sim), "0");
	printf("cprof: profile %s%s\n", cprof_tx(argv[1]), strcmp(sim, "1") == 0 ? " (simulated GPU)" : "");
	printf("cprof: command: %s", cprof_tx(command));
	if (status >= 0)
		printf(" (exit status %lld)", (long long)status);
	/* META's totals are written when the collector finishes: a killed one (or a full disk) left none, or
	 * old ones, while the tables hold what was stored; then count the tables (issue 21, item 12) */
	finalised = cprof_meta_int(db, "finalised", 0) == 1;
	if (finalised) {
		nvtx = cprof_meta_int(db, "nvtx_events", 0);
		procs = cprof_meta_int(db, "processes", 0);
		calls = cprof_meta_int(db, "events", 0) - nvtx;
	} else {
		procs = cprof_query_int(db, "SELECT count(*) FROM PROCESSES", 0);
		calls = cprof_query_int(db, "SELECT count(*) FROM CPROF_API", 0);
		nvtx = cprof_has_table(db, "NVTX_EVENTS") ? cprof_query_int(db, "SELECT count(*) FROM NVTX_EVENTS", 0) : 0;
	}
	/* the calls as cprof report counts them (issue 29 item 2): its API table, named by what they count */
	if (cprof_model_load(db, CPROF_MODEL_TIMELINE, &model) == 0) {
		struct call_counts cc;
		int n;

		if (report_load_apis(&model, 0, &apis) == 0) {
			report_call_counts(&model, 0, &apis, &cc);
			n = snprintf(counts, sizeof(counts), "%lld CUDA API calls (", (long long)cc.total);
			report_call_counts_text(&cc, counts + n, sizeof(counts) - (size_t)n);
			strncat(counts, ")", sizeof(counts) - strlen(counts) - 1);
		} else {
			snprintf(counts, sizeof(counts), "%lld hooked CUDA API calls", (long long)calls);
		}
		report_table_free(&apis);
		cprof_model_free(&model);
	} else {
		snprintf(counts, sizeof(counts), "%lld hooked CUDA API calls", (long long)calls);
	}
	printf("\ncprof: %lld process(es), %s, ", (long long)procs, counts);
	if (nvtx)
		printf("%lld NVTX annotations, ", (long long)nvtx);
	/* a process killed from outside could not count what it had not sent */
	printf("%s%lld lost events, %s%s%s\n",
	       cprof_query_int(db, "SELECT count(*) FROM PROCESSES WHERE ending LIKE '%killed by signal%'"
				   " OR ending LIKE '%no goodbye%'", 0) > 0 ? "at least " : "",
	       (long long)cprof_meta_int(db, "lost_events", 0), complete ? "complete" : "INCOMPLETE",
	       complete ? "" : ": ", complete ? "" : cprof_tx(reason));
	{
		struct cprof_cupti_shared sh;

		/* the program's own profiler (torch.profiler) used CUPTI too: what it got from cprof's session */
		if (cprof_cupti_shared(db, &sh) == 0 && sh.processes > 0)
			printf("cprof: CUPTI shared with the program's own profiler: %lld records handed to it (%lld kernels), "
			       "%lld it enabled and did not get%s; cprof kept its own records\n",
			       (long long)sh.handed, (long long)sh.kernels, (long long)sh.missed,
			       sh.pending ? " (some were still in its buffer at the end)" : "");
	}
	/* what the processes said they produced and the collector neither stored nor heard they lost (frames
	 * dropped as malformed, from a banned process): the rule emitted = recorded + lost, shown when broken */
	unaccounted = cprof_query_int(db, "SELECT coalesce(sum(max(eventsEmitted - eventsRecorded - lostEvents, 0)), 0)"
					  " FROM PROCESSES WHERE eventsEmitted IS NOT NULL", 0) -
		      cprof_meta_int(db, "lost_spool_full", 0) - cprof_meta_int(db, "lost_unstored", 0);
	if (unaccounted > 0)
		printf("cprof: %lld events the processes emitted were neither stored nor counted lost (dropped by the"
		       " collector: see DIAGNOSTICS)\n", (long long)unaccounted);
	if (!finalised)
		printf("cprof: the collector did not finish this profile: the counts above are of what it stored\n");
	/* recorded in windows, or cut by --max-size: the counts above are of those only */
	if (cprof_has_table(db, "CPROF_WINDOWS")) {
		int64_t nw = cprof_query_int(db, "SELECT count(*) FROM CPROF_WINDOWS", 0);

		if (cprof_meta_int(db, "max_size_cut_ns", 0) > 0)
			printf("cprof: recording stopped at --max-size (%lld bytes): %lld events and GPU records not recorded\n",
			       (long long)cprof_meta_int(db, "max_size", 0), (long long)cprof_meta_int(db, "max_size_unrecorded", 0));
		else if (nw > 0)
			printf("cprof: recorded in %lld window(s) (a row per process and window; cprof report lists them)\n",
			       (long long)nw);
	}
	printf("cprof: see it with: cprof report %s\n", cprof_tx(argv[1]));
	sqlite3_close(db);
	return CPROF_EXIT_OK;
}
