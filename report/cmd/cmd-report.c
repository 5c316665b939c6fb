/* cprof report: the verdict and its evidence first, then the tables (kernels, copies, API, torch-style), as text, JSON or CSV. */
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "report/model/analysis.h"
#include "report/cprof.h"
#include "report/term.h"
#include "report/model/model.h"
#include "report/model/ops-nvtx.h"
#include "report/model/ranges.h"
#include "report/model/stacks.h"
#include "report/model/report.h"

enum fmt { FMT_TEXT, FMT_JSON, FMT_CSV };
enum by { BY_ALL, BY_KERNEL, BY_API, BY_STREAM, BY_PROCESS, BY_OP, BY_CALLSITE, BY_RANGE };

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
		   "  --include-startup    count context creation and the first launches in the verdict (left out by default)\n"
		   "  --compute-pct P      GPU busy share (percent) from which a GPU with full queues is compute-bound\n"
		   "                       (default 80)\n"
		   "  --overhead-pct P     ignored: the GPU's queues decide overhead-bound (kept for old scripts)\n"
		   "  --kernel-wait-us U   a gap between kernels shorter than U microseconds counts as the GPU waiting for\n"
		   "                       the next kernel, not for the host (default 30)\n"
		   "  --step-range REGEX   NVTX ranges that mark steps (default: ProfilerStep#N, step)\n"
		   "  --range-tree         NVTX ranges by path (step N/forward), not by name\n"
		   "  --window WHICH       the tables over the whole run (run, the default) or the verdict's window (verdict)\n");
}

static int parse_double(const char *opt, const char *arg, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (*arg == '\0' || *end != '\0' || v < lo || v > hi) {
		pr_err("%s wants a number in %g..%g, got '%s'", opt, lo, hi, arg);
		return -1;
	}
	*out = v;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },      { "top", required_argument, NULL, 't' },
		{ "by", required_argument, NULL, 'b' },          { "include-startup", no_argument, NULL, 'i' },
		{ "compute-pct", required_argument, NULL, 'c' }, { "overhead-pct", required_argument, NULL, 'o' },
		{ "kernel-wait-us", required_argument, NULL, 'k' }, { "help", no_argument, NULL, 'h' },
		{ "step-range", required_argument, NULL, 's' },    { "range-tree", no_argument, NULL, 'r' },
		{ "window", required_argument, NULL, 'w' },
		{ "sort", required_argument, NULL, 'S' },          { "timeunit", required_argument, NULL, 'U' },
		{ NULL, 0, NULL, 0 },
	};
	enum fmt fmt = FMT_TEXT;
	enum by by = BY_ALL;
	size_t top = 15, nprocs = 0, i;
	int top_set = 0, range_tree = 0, sort = REPORT_SORT_TOTAL, verdict_window = 0;
	char win_note[160], title[256];
	struct proc *procs = NULL;
	struct table apis = { 0 }, kernels = { 0 }, memops = { 0 }, torch = { 0 };
	struct cprof_thresholds th;
	struct cprof_stacks stacks = { 0 };
	struct cprof_attr_table ops = { 0 }, sites = { 0 }, chains = { 0 };
	struct cprof_range_table ranges = { 0 };
	struct cprof_op_table tops = { 0 };
	char op_evidence[512] = "";
	struct cprof_verdict v;
	struct cprof_phase *ph = NULL;
	struct cprof_finding *fd = NULL;
	struct cprof_device_verdict *dv = NULL;
	struct cprof_model model = { 0 };
	int nph = 0, nf = 0, ndv = 0;
	sqlite3 *db;
	int opt, ret = CPROF_EXIT_OK, complete, lower_bound = 0;
	int64_t lost, api_calls;
	struct call_counts cc;
	char calls_text[160];
	char reason[256], command[1024], simulated[16], gpu_note[256];
	char *end;
	double d;

	cprof_thresholds_default(&th);
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (!strcmp(optarg, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "csv"))
				fmt = FMT_CSV;
			else {
				pr_err("unknown --format '%s' (text, json or csv)", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 't':
			top = strtoul(optarg, &end, 10);
			top_set = 1;
			if (*optarg == '\0' || *end != '\0') {
				pr_err("--top wants a number, got '%s'", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'b':
			if (!strcmp(optarg, "api"))
				by = BY_API;
			else if (!strcmp(optarg, "kernel"))
				by = BY_KERNEL;
			else if (!strcmp(optarg, "stream"))
				by = BY_STREAM;
			else if (!strcmp(optarg, "process"))
				by = BY_PROCESS;
			else if (!strcmp(optarg, "op"))
				by = BY_OP;
			else if (!strcmp(optarg, "callsite"))
				by = BY_CALLSITE;
			else if (!strcmp(optarg, "range"))
				by = BY_RANGE;
			else {
				pr_err("--by %s: expected kernel, api, op, callsite, range, stream or process", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'i':
			th.include_startup = 1;
			break;
		case 'S':
			if ((sort = report_sort_key(optarg)) < 0) {
				pr_err("--sort %s: total, calls, avg, med, min, max, std or name", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'U': {
			static const char *const units[][3] = { { "ns", "nsec", "nanoseconds" }, { "us", "usec", "microseconds" },
								 { "ms", "msec", "milliseconds" }, { "s", "sec", "seconds" } };
			int u, k;

			for (u = 0; u < 4; u++)
				for (k = 0; k < 3; k++)
					if (!strcmp(optarg, units[u][k]))
						report_timeunit = u;
			if (report_timeunit < 0) {
				pr_err("--timeunit %s: ns, us, ms or s", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		}
		case 'r':
			range_tree = 1;
			break;
		case 'w':
			if (!strcmp(optarg, "verdict"))
				verdict_window = 1;
			else if (strcmp(optarg, "run")) {
				pr_err("--window %s: expected run or verdict", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 's': {
			char err[128];

			if (cprof_step_re_check(optarg, err, sizeof(err)) < 0) {
				pr_err("--step-range '%s': %s", optarg, err);
				return CPROF_EXIT_USAGE;
			}
			th.step_re = optarg;
			break;
		}
		case 'c':
			if (parse_double("--compute-pct", optarg, 0, 100, &th.compute_pct) < 0)
				return CPROF_EXIT_USAGE;
			break;
		case 'o':
			if (parse_double("--overhead-pct", optarg, 0, 100, &th.overhead_pct) < 0)
				return CPROF_EXIT_USAGE;
			/* kept so scripts still run; a starved GPU is overhead-bound at any utilisation */
			pr_warn("--overhead-pct no longer decides the verdict (the GPU's queues do: docs/verdict.md); ignored");
			break;
		case 'k':
			if (parse_double("--kernel-wait-us", optarg, 0, 1e9, &d) < 0)
				return CPROF_EXIT_USAGE;
			th.kernel_wait_ns = (uint64_t)(d * 1000);
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
	if (fmt == FMT_JSON && !top_set)
		top = 0; /* JSON carries everything unless asked otherwise */
	if (fmt != FMT_TEXT)
		cprof_progress_off();
	cprof_progress_begin("cprof report: reading the profile");
	db = cprof_profile_open(argv[optind]);
	if (db == NULL)
		return CPROF_EXIT_USAGE;
	complete = cprof_meta_int(db, "complete", 0) == 1;
	lost = cprof_meta_int(db, "lost_events", 0);
	cprof_meta(db, "incomplete_reason", reason, sizeof(reason), "");
	cprof_meta(db, "command", command, sizeof(command), "?");
	cprof_meta(db, "simulated_gpu", simulated, sizeof(simulated), "0");
	cprof_meta(db, "gpu_records_note", gpu_note, sizeof(gpu_note), "");
	if (fmt == FMT_CSV) {
		/* one table: load what it needs, nothing else */
		if (by == BY_RANGE) {
			if (cprof_ranges_build_by(db, 0, !range_tree, &ranges) < 0)
				ret = CPROF_EXIT_USAGE;
			else
				cprof_ranges_csv(&ranges, top_set ? top : 0);
		} else if (by == BY_OP && cprof_ops_build(db, 0, &tops) == 0 && tops.n) {
			cprof_ops_csv(&tops, top_set ? top : 0); /* op rows from PyTorch's own ranges (--torch-ops) */
		} else if (by == BY_OP || by == BY_CALLSITE) {
			if (cprof_stacks_load(db, &stacks) < 0 ||
			    cprof_attr_build(db, &stacks, by == BY_OP ? CPROF_BY_OP : CPROF_BY_CALLSITE, 0,
					     by == BY_OP ? &ops : &sites) < 0) {
				pr_err("%s: cannot read the call stacks: %s", argv[optind], sqlite3_errmsg(db));
				ret = CPROF_EXIT_USAGE;
			} else {
				cprof_attr_csv(by == BY_OP ? &ops : &sites, by == BY_OP ? CPROF_BY_OP : CPROF_BY_CALLSITE,
					       top_set ? top : 0);
			}
		} else if (cprof_model_load(db, by == BY_KERNEL ? CPROF_MODEL_GPU : CPROF_MODEL_TIMELINE, &model) < 0 ||
			   (by == BY_KERNEL ? report_load_kernels(&model, 0, &kernels) : report_load_apis(&model, 0, &apis)) < 0) {
			pr_err("%s: cannot read the profile: %s", argv[optind], cprof_model_errmsg(db));
			ret = CPROF_EXIT_USAGE;
		} else {
			report_table_sort(by == BY_KERNEL ? &kernels : &apis, sort);
			report_print_csv(by == BY_KERNEL ? &kernels : &apis, top_set ? top : 0);
		}
		goto out;
	}
	if (cprof_model_load(db, CPROF_MODEL_TIMELINE | CPROF_MODEL_HOST, &model) < 0 || report_load_procs(&model, &procs, &nprocs) < 0 || report_load_apis(&model, 0, &apis) < 0 ||
	    report_load_kernels(&model, 0, &kernels) < 0 || report_load_memops(&model, 0, &memops) < 0 || report_load_torch(&model, 0, &torch) < 0 ||
	    (nph = cprof_headline(&model, 0, &th, &v, &ph)) < 0) {
		pr_err("%s: cannot read the profile: %s", argv[optind], cprof_model_errmsg(db));
		ret = CPROF_EXIT_USAGE;
		goto out;
	}
	report_table_sort(&apis, sort);
	report_table_sort(&kernels, sort);
	report_table_sort(&memops, sort);
	/* every call: the hooks' and those only CUPTI saw, as the API table lists them */
	report_call_counts(&model, 0, &apis, &cc);
	api_calls = cc.total;
	report_call_counts_text(&cc, calls_text, sizeof(calls_text));
	nf = cprof_findings(&model, 0, &v, &fd);
	/* --window verdict: the tables over the verdict's window, as torch.profiler's table covers its block;
	 * the headline's counts stay the run's */
	if (verdict_window && !cprof_verdict_no_gpu(&v)) {
		struct cprof_model wm;

		report_table_free(&apis);
		report_table_free(&kernels);
		report_table_free(&memops);
		report_table_free(&torch);
		if (report_model_window(&model, &v, ph, nph, &wm) < 0 || report_load_apis(&wm, 0, &apis) < 0 ||
		    report_load_kernels(&wm, 0, &kernels) < 0 || report_load_memops(&wm, 0, &memops) < 0 ||
		    report_load_torch(&wm, 0, &torch) < 0) {
			report_model_window_free(&wm);
			pr_err("%s: cannot build the verdict window's tables", argv[optind]);
			ret = CPROF_EXIT_USAGE;
			goto out;
		}
		report_model_window_free(&wm);
		report_table_sort(&apis, sort);
		report_table_sort(&kernels, sort);
		report_table_sort(&memops, sort);
	} else {
		verdict_window = 0;
	}
	report_window_note(&v, verdict_window, win_note, sizeof(win_note));
	/* several GPUs: each its own utilisation and verdict, besides the union above */
	if ((ndv = cprof_device_verdicts(&model, 0, &th, &dv)) < 0) {
		pr_err("%s: cannot read the profile", argv[optind]);
		ret = CPROF_EXIT_USAGE;
		goto out;
	}
	/* a process killed from outside could not count what it had not sent */
	for (i = 0; i < model.nprocs; i++)
		if (model.procs[i].end && model.procs[i].end->killed)
			lower_bound = 1;
	if (cprof_stacks_load(db, &stacks) < 0 || cprof_attr_build3(db, &stacks, 0, &ops, &sites, &chains) < 0) {
		pr_err("%s: cannot read the call stacks: %s", argv[optind], sqlite3_errmsg(db));
		ret = CPROF_EXIT_USAGE;
		goto out;
	}
	/* an overhead-bound window names the ops whose host time it was */
	if (!strcmp(v.verdict, "overhead-bound") &&
	    cprof_ops_evidence(db, 0, v.start, v.end, op_evidence, sizeof(op_evidence)) < 0)
		op_evidence[0] = '\0';
	if (cprof_ops_build(db, 0, &tops) < 0) {
		pr_err("%s: cannot read the op ranges: %s", argv[optind], sqlite3_errmsg(db));
		ret = CPROF_EXIT_USAGE;
		goto out;
	}
	if (cprof_ranges_build_by(db, 0, !range_tree, &ranges) < 0) {
		ret = CPROF_EXIT_USAGE; /* cprof_ranges_build said why */
		goto out;
	}
	for (i = 0; i < nprocs; i++) {
		struct cprof_phase *pp = NULL;

		/* with one process its verdict is the run's: no second pass over the profile */
		if (nprocs == 1) {
			procs[i].v = v;
			if (report_load_apis(&model, procs[i].id, &procs[i].apis) < 0) {
				ret = CPROF_EXIT_USAGE;
				goto out;
			}
			report_table_sort(&procs[i].apis, sort);
			continue;
		}
		if (report_load_apis(&model, procs[i].id, &procs[i].apis) < 0 ||
		    cprof_headline(&model, procs[i].id, &th, &procs[i].v, &pp) < 0) {
			ret = CPROF_EXIT_USAGE;
			goto out;
		}
		report_table_sort(&procs[i].apis, sort);
		free(pp);
	}

	cprof_progress_end(); /* before the first line of output */
	if (fmt == FMT_JSON) {
		printf("{\"schema\":\"cprof.summary/1\",\"profile\":");
		cprof_json_str(stdout, argv[optind]);
		printf(",\"command\":");
		cprof_json_str(stdout, command);
		printf(",\"simulated_gpu\":%s,", strcmp(simulated, "1") == 0 ? "true" : "false");
		report_json_verdict_fields(&v);
		if (gpu_note[0]) {
			printf(",\"gpu_records_note\":");
			cprof_json_str(stdout, gpu_note);
		}
		{
			struct cprof_cupti_shared sh;

			/* the program's own CUPTI client got copies: how many, and how many it did not get */
			if (cprof_cupti_shared(db, &sh) == 0 && sh.processes > 0)
				printf(",\"cupti_shared\":{\"processes\":%lld,\"records_handed\":%lld,\"kernels_handed\":%lld,"
				       "\"records_not_handed\":%lld,\"records_pending\":%lld}",
				       (long long)sh.processes, (long long)sh.handed, (long long)sh.kernels,
				       (long long)sh.missed, (long long)sh.pending);
		}
		{
			double hta = cprof_hta_idle_pct(&model, 0);

			if (hta >= 0)
				printf(",\"hta_idle_pct\":%.4f", hta);
		}
		printf(",\"counts\":{\"api_calls\":%lld,\"kernels\":%lld,\"memcpys\":%lld,\"memsets\":%lld,"
		       "\"processes\":%zu,\"launch_calls\":%lld,\"memcpy_calls\":%lld,\"memset_calls\":%lld,"
		       "\"hooked_calls\":%lld,\"cupti_only_calls\":%lld}",
		       (long long)api_calls, (long long)cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", 0),
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY", 0),
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET", 0), nprocs,
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CPROF_API WHERE class='launch'", 0),
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CPROF_API WHERE class='memcpy'", 0),
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CPROF_API WHERE class='memset'", 0),
		       (long long)cprof_query_int(db, "SELECT count(*) FROM CPROF_API", 0),
		       (long long)(api_calls - cprof_query_int(db, "SELECT count(*) FROM CPROF_API", 0)));
		/* the same total, named for what each part counts (cprof info and the HTML print these) */
		printf(",\"calls\":{\"total\":%lld,\"by_program\":%lld,\"inside_libraries\":%lld,\"seen_only_by_cupti\":%lld}",
		       (long long)cc.total, (long long)cc.program, (long long)cc.in_libs, (long long)cc.cupti_only);
		printf(",\"lost_events\":%lld,\"lost_events_lower_bound\":%s,\"complete\":%s,\"incomplete_reason\":",
		       (long long)lost, lower_bound ? "true" : "false", complete ? "true" : "false");
		cprof_json_str(stdout, complete ? "" : reason);
		printf(",\"tables_window\":{\"name\":\"%s\",\"ns\":%llu}", verdict_window ? "verdict" : "run",
		       (unsigned long long)(verdict_window ? v.end - v.start : v.run_end - v.run_start));
		report_json_windows(&model.rec);
		printf(",\"kernels\":");
		report_json_table(&kernels, top, 1);
		printf(",\"memops\":");
		report_json_table(&memops, top, 0);
		printf(",\"apis\":");
		report_json_table(&apis, top, 0);
		printf(",\"stacks\":%zu,\"ops\":", stacks.n);
		cprof_attr_json(&ops, CPROF_BY_OP, top);
		printf(",\"torch_ops_evidence\":");
		cprof_json_str(stdout, op_evidence);
		printf(",\"torch_ops\":");
		cprof_ops_json(&tops, top);
		printf(",\"callsites\":");
		cprof_attr_json(&sites, CPROF_BY_CALLSITE, top);
		printf(",\"chains\":");
		cprof_attr_json(&chains, CPROF_BY_CHAIN, top);
		printf(",\"nvtx\":{\"ranges\":%llu,\"open_ranges\":%llu,\"marks\":%llu},\"ranges\":",
		       (unsigned long long)ranges.ranges, (unsigned long long)ranges.open_ranges,
		       (unsigned long long)ranges.marks);
		cprof_ranges_json(&ranges, top);
		report_json_ranks(db, procs, nprocs);
		cprof_steps_print(&model, 0, &th, 1, top);
		printf(",\"phases\":[");
		for (i = 0; i < (size_t)nph; i++) {
			printf("%s{\"start_ns\":%llu,\"end_ns\":%llu,", i ? "," : "", (unsigned long long)ph[i].start,
			       (unsigned long long)ph[i].end);
			report_json_verdict_fields(&ph[i].v);
			printf(",\"kernels\":%llu}", (unsigned long long)ph[i].v.kernels);
		}
		printf("],\"findings\":[");
		for (i = 0; i < (size_t)nf; i++) {
			printf("%s{\"id\":\"%s\",\"severity\":\"%s\",\"message\":", i ? "," : "", fd[i].id, fd[i].severity);
			cprof_json_str(stdout, fd[i].message);
			printf(",\"evidence\":");
			cprof_json_str(stdout, fd[i].evidence);
			printf("}");
		}
		printf("],\"devices\":[");
		for (i = 0; i < (size_t)ndv; i++) {
			printf("%s{\"device\":%d,", i ? "," : "", (int)dv[i].device);
			report_json_verdict_fields(&dv[i].v);
			printf(",\"kernels\":%llu}", (unsigned long long)dv[i].v.kernels);
		}
		printf("],\"processes\":[");
		for (i = 0; i < nprocs; i++) {
			printf("%s{\"pid\":%lld,\"ppid\":%lld,\"exe\":", i ? "," : "", (long long)procs[i].pid,
			       (long long)procs[i].ppid);
			cprof_json_str(stdout, procs[i].exe);
			printf(",\"argv\":");
			cprof_json_str(stdout, procs[i].argv);
			printf(",\"host\":");
			cprof_json_str(stdout, procs[i].host);
			if (procs[i].rank >= 0)
				printf(",\"rank\":%lld", (long long)procs[i].rank);
			printf(",\"ending\":");
			cprof_json_str(stdout, procs[i].bye);
			printf(",\"events\":%lld,\"lost_events\":%lld,", (long long)procs[i].recorded, (long long)procs[i].lost);
			report_json_verdict_fields(&procs[i].v);
			printf(",\"apis\":");
			report_json_table(&procs[i].apis, top, 0);
			printf("}");
		}
		printf("]}\n");
	} else {
		char dur[32];

		printf("cprof report: %s\n", cprof_tx(argv[optind]));
		printf("Command: %s\n", cprof_tx(command));
		if (strcmp(simulated, "1") == 0)
			printf("GPU: simulated GPU (tests/simgpu) - timings are modelled, not measured\n");
		if (gpu_note[0])
			printf("GPU records: %s\n", cprof_tx(gpu_note));
		cprof_fmt_dur(dur, sizeof(dur), (double)(v.run_end - v.run_start));
		printf("Processes: %zu   CUDA API calls: %lld (%s)   run: %s   lost events: %s%lld%s   %s%s%s\n", nprocs,
		       (long long)api_calls, calls_text, dur, lower_bound ? "at least " : "", (long long)lost,
		       lower_bound ? " (a process was killed: what it had not sent is lost uncounted)" : "",
		       complete ? "complete" : "INCOMPLETE",
		       complete ? "" : " - ", complete ? "" : cprof_tx(reason));
		for (i = 0; i < nprocs; i++)
			if (procs[i].bye[0] && strncmp(procs[i].bye, "exit", 4) != 0 && strcmp(procs[i].bye, "_exit") != 0 &&
			    strcmp(procs[i].bye, "exec") != 0)
				printf("Ended: pid %lld: %s\n", (long long)procs[i].pid, cprof_tx(procs[i].bye));
		report_print_windows(&model.rec);
		report_print_verdict_text(&v, ph, nph, fd, nf, op_evidence);
		if (ndv > 0) {
			printf("\nPer device (the verdict above is their union)\n");
			for (i = 0; i < (size_t)ndv; i++) {
				char line[1024];

				cprof_verdict_line(&dv[i].v, line, sizeof(line));
				printf("  GPU %d: %s\n", (int)dv[i].device, line);
			}
		}
		if (by == BY_ALL)
			cprof_steps_print(&model, 0, &th, 0, top_set ? top : 0);
		if (nprocs > 1) {
			printf("\nPer process\n");
			for (i = 0; i < nprocs; i++) {
				char line[1024];

				char rank[32] = "";

				cprof_verdict_line(&procs[i].v, line, sizeof(line));
				if (procs[i].rank >= 0)
					snprintf(rank, sizeof(rank), " (rank %lld)", (long long)procs[i].rank);
				/* the whole line: a cut one ended mid-number ("median launch call 42") */
				printf("  %lld%s: %s\n", (long long)procs[i].pid, rank, cprof_tx(line));
			}
		}
		report_print_ranks(db, procs, nprocs);
		/* each table says which window it covers (issue 29 item 6) */
		snprintf(title, sizeof(title), "GPU kernels (%s)", win_note);
		if (by == BY_ALL || by == BY_KERNEL)
			report_print_stats_table(title, &kernels, by == BY_KERNEL && !top_set ? 0 : top, 0);
		snprintf(title, sizeof(title), "GPU memory operations (%s)", win_note);
		if (by == BY_ALL)
			report_print_stats_table(title, &memops, top, 1);
		snprintf(title, sizeof(title), "%s (%s)", nprocs > 1 ? "CUDA API, all processes" : "CUDA API", win_note);
		if (by == BY_ALL || by == BY_API)
			report_print_stats_table(title, &apis, by == BY_API && !top_set ? 0 : top, 0);
		if (by == BY_API && nprocs > 1)
			for (i = 0; i < nprocs; i++) {
				char title[200];

				snprintf(title, sizeof(title), "CUDA API, process %lld: %.100s", (long long)procs[i].pid,
					 procs[i].argv[0] ? procs[i].argv : procs[i].exe);
				report_print_stats_table(title, &procs[i].apis, top_set ? top : 0, 0);
			}
		if (by == BY_ALL && (torch.n || kernels.n))
			printf("\nThe table below covers the %s\n", win_note);
		if (by == BY_ALL)
			report_print_torch(&torch, &kernels, top);
		if ((by == BY_ALL && ranges.n) || by == BY_RANGE)
			cprof_ranges_print(&ranges, by == BY_RANGE && !top_set ? 0 : top);
		if (by == BY_ALL && chains.n)
			cprof_attr_print(&chains, CPROF_BY_CHAIN, top);
		if (by == BY_ALL && sites.n)
			cprof_attr_print(&sites, CPROF_BY_CALLSITE, top);
		/* op rows from PyTorch's own ranges; kernels keep their own table */
		if ((by == BY_ALL || by == BY_OP) && tops.n)
			cprof_ops_print(&tops, by == BY_OP && !top_set ? 0 : top);
		if ((by == BY_OP && !tops.n) || by == BY_CALLSITE) {
			if (stacks.n == 0)
				printf("\nNo call stacks in this profile (recorded with --stacks off, or by an older cprof).\n");
			else
				cprof_attr_print(by == BY_OP ? &ops : &sites, by == BY_OP ? CPROF_BY_OP : CPROF_BY_CALLSITE,
						 top_set ? top : 0);
		}
		if (by == BY_STREAM) {
			sqlite3_stmt *st;

			printf("\nGPU streams\n\n  Device  Stream       Ops    Kernels  GPU time\n");
			if (sqlite3_prepare_v2(db, "SELECT deviceId, streamId, count(*), sum(kind='kernel'), sum(end - start)"
						   " FROM GPU_OPS GROUP BY 1, 2 ORDER BY 5 DESC", -1, &st, NULL) == SQLITE_OK) {
				while (sqlite3_step(st) == SQLITE_ROW) {
					cprof_fmt_dur(dur, sizeof(dur), sqlite3_column_double(st, 4));
					printf("  %6lld  %6lld  %8lld  %9lld  %s\n", (long long)sqlite3_column_int64(st, 0),
					       (long long)sqlite3_column_int64(st, 1), (long long)sqlite3_column_int64(st, 2),
					       (long long)sqlite3_column_int64(st, 3), dur);
				}
				sqlite3_finalize(st);
			}
		}
		if (by == BY_PROCESS) {
			printf("\n     PID     PPID  Rank     Events    API time  Lost  End                   Verdict          Command\n");
			printf(" -------  -------  ----  ---------  ----------  ----  --------------------  ---------------  -------\n");
			for (i = 0; i < nprocs; i++) {
				const char *ending = procs[i].bye[0] ? cprof_tx(procs[i].bye) : "killed";
				char r[24] = "-";

				if (procs[i].rank >= 0)
					snprintf(r, sizeof(r), "%lld", (long long)procs[i].rank);
				cprof_fmt_dur(dur, sizeof(dur), procs[i].apis.total);
				printf(" %7lld  %7lld  %4s  %9lld  %10s  %4lld  %-20.*s  %-15s  %.60s\n", (long long)procs[i].pid,
				       (long long)procs[i].ppid, r, (long long)procs[i].recorded, dur, (long long)procs[i].lost,
				       (int)strcspn(ending, ";"), /* the ending, not the last call */ ending, procs[i].v.verdict,
				       cprof_tx(procs[i].argv[0] ? procs[i].argv : procs[i].exe));
			}
		}
		if (nprocs == 0)
			printf("\nNo process made a CUDA call under cprof.\n");
	}
out:
	cprof_progress_end();
	for (i = 0; i < nprocs; i++) {
		report_table_free(&procs[i].apis);
	}
	free(procs);
	free(ph);
	free(fd);
	free(dv);
	report_table_free(&apis);
	report_table_free(&kernels);
	report_table_free(&memops);
	report_table_free(&torch);
	cprof_attr_free(&ops);
	cprof_attr_free(&sites);
	cprof_attr_free(&chains);
	cprof_ranges_free(&ranges);
	cprof_ops_free(&tops);
	cprof_stacks_free(&stacks);
	cprof_model_free(&model);
	sqlite3_close(db);
	return ret;
}
