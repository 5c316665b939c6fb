/* The verdict's threshold options, one parser shared by cprof report, check and html. */
#ifndef CPROF_REPORT_CMD_THRESHOLDS_H
#define CPROF_REPORT_CMD_THRESHOLDS_H

#include <getopt.h>

#include "report/model/analysis.h"

/* getopt_long values of the options, above every short option */
enum {
	CPROF_OPT_INCLUDE_STARTUP = 0x100, CPROF_OPT_COMPUTE_PCT, CPROF_OPT_OVERHEAD_PCT, CPROF_OPT_KERNEL_WAIT_US,
	CPROF_OPT_STEP_RANGE,
};
/* the entries of a command's struct option table */
#define CPROF_THRESHOLD_OPTIONS                                                              \
	{ "include-startup", no_argument, NULL, CPROF_OPT_INCLUDE_STARTUP },                 \
	{ "compute-pct", required_argument, NULL, CPROF_OPT_COMPUTE_PCT },                   \
	{ "overhead-pct", required_argument, NULL, CPROF_OPT_OVERHEAD_PCT },                 \
	{ "kernel-wait-us", required_argument, NULL, CPROF_OPT_KERNEL_WAIT_US },             \
	{ "step-range", required_argument, NULL, CPROF_OPT_STEP_RANGE }
/* their lines of a command's --help */
extern const char cprof_threshold_help[];
/* 1: opt was one of them, set in *th; 0: another option; -1: a bad value (said, prefixed with cmd) */
int cprof_threshold_opt(const char *cmd, int opt, const char *arg, struct cprof_thresholds *th);

#endif
