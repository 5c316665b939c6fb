/* cprof: reads profiles written by cprof-run; one table of subcommands, one file per command. */
#include <stdio.h>
#include <string.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "common/version.h"
#include "report/cprof.h"
#include "report/term.h"

static const struct cprof_cmd commands[] = {
	{ "report", cmd_report, "the verdict, its evidence, findings, and the kernel/memory/API tables" },
	{ "check", cmd_check, "the CI gate: expected verdict, GPU idle, regression against a baseline" },
	{ "diff", cmd_diff, "what changed between two profiles" },
	{ "merge", cmd_merge, "profiles of several nodes into one" },
	{ "info", cmd_info, "what a profile holds, in a few lines" },
	{ "trace", cmd_trace, "a Chrome trace in Kineto's layout (Perfetto, TensorBoard, HTA)" },
	{ "html", cmd_html, "one self-contained HTML page: verdict, findings, timeline, charts, tables" },
	{ "capture", cmd_capture, "record a window of a running cprof-run --on-demand job: cprof capture PID|RUN-DIR --duration S" },
	{ "stacks", cmd_stacks, "the recorded call stacks for a flame graph (folded, speedscope)" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: cprof COMMAND PROFILE.db [options]\n"
		   "       cprof help [COMMAND]   a command's options (as cprof COMMAND --help)\n"
		   "       cprof -V, --version\n"
		   "reads the SQLite profiles cprof-run writes\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\noptions every command takes:\n"
		   "  --wide              names whole, however wide the terminal (off a terminal text is never cut to a width)\n"
		   "  --color[=WHEN]      colour for verdicts, severities and PASS/FAIL: auto (default: on a terminal),\n"
		   "                      always, never\n"
		   "A FILE that a command writes may be -: standard output. Work that takes more than 2 s shows its progress\n"
		   "on stderr when stderr is a terminal.\n"
		   "Environment: NO_COLOR (not empty) turns colour off; COLUMNS sets the width of text on a terminal.\n"
		   "\nexit status: 0 ok, 1 gate failed, 2 usage or unreadable input, 3 profile incomplete;\n"
		   "cprof capture: 4 another user's run, 5 no such run, 6 a capture is open already\n");
}

int main(int argc, char **argv)
{
	char *help_argv[] = { argv[0], NULL, "--help", NULL };
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CPROF_EXIT_USAGE : CPROF_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("cprof %s\n", CPROF_VERSION);
		return CPROF_EXIT_OK;
	}
	if ((argc = cprof_term_setup(argc, argv)) < 0)
		return CPROF_EXIT_USAGE;
	if (argc < 2) {
		usage(stderr);
		return CPROF_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc == 2) {
			usage(stdout);
			return CPROF_EXIT_OK;
		}
		for (i = 0; i < sizeof(commands) / sizeof(commands[0]) && strcmp(argv[2], commands[i].name); i++)
			;
		if (argc > 3 || i == sizeof(commands) / sizeof(commands[0])) {
			pr_err("help %s: no such command (cprof help lists them)", cprof_tx(argv[2]));
			return CPROF_EXIT_USAGE;
		}
		/* as if cprof COMMAND --help */
		help_argv[1] = argv[2];
		argc = 3;
		argv = help_argv;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			int rc = commands[i].fn(argc - 1, argv + 1);

			/* a full disk or a closed pipe must not pass for a complete report (as perf and git) */
			if (fflush(stdout) != 0 || ferror(stdout)) {
				pr_err("write failure on standard output");
				return CPROF_EXIT_USAGE;
			}
			return rc;
		}
	pr_err("unknown command '%s' (cprof --help lists them)", argv[1]);
	return CPROF_EXIT_USAGE;
}
