/* libFuzzer target: cprof's profile loader and the report commands on an arbitrary file (a damaged or hostile profile). */
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "report/cprof.h"

static char dir[128], db_path[192], out_path[192];

static void cleanup(void)
{
	unlink(db_path);
	unlink(out_path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/cprof-fuzz-profile-XXXXXX", base);
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(db_path, sizeof(db_path), "%s/p.db", dir);
	snprintf(out_path, sizeof(out_path), "%s/t.json", dir);
	atexit(cleanup);
	/* the commands print to stdout, and their one-line errors to stderr: neither is the point here */
	if (freopen("/dev/null", "w", stdout) == NULL)
		abort();
	cprof_log_level = CPROF_LOG_ERR - 1;
	return 0;
}

/* cmd_* parse their options with getopt_long: optind = 0 makes glibc start over for each call. */
static int run(int (*cmd)(int, char **), int argc, const char **argv)
{
	optind = 0;
	return cmd(argc, (char **)argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *info[] = { "info", db_path, NULL };
	const char *report[] = { "report", db_path, NULL };
	const char *json[] = { "report", db_path, "--format", "json", "--by", "process", NULL };
	const char *csv[] = { "report", db_path, "--format", "csv", NULL };
	const char *check[] = { "check", db_path, "--max-gpu-idle", "50", NULL };
	const char *trace[] = { "trace", db_path, "-f", "-o", out_path, NULL };
	int fd, rc;

	fd = open(db_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	/* a file that is not a readable profile stops at cprof_profile_open; the rest only for those */
	rc = run(cmd_info, 2, info);
	if (rc != CPROF_EXIT_OK)
		return 0;
	run(cmd_report, 2, report);
	run(cmd_report, 6, json);
	run(cmd_report, 4, csv);
	run(cmd_check, 4, check);
	run(cmd_trace, 5, trace);
	fflush(stdout);
	return 0;
}
