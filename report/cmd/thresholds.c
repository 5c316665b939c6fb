/* The verdict's threshold options (--include-startup, --compute-pct, --overhead-pct, --kernel-wait-us, --step-range) for report, check and html. */
#include <stdint.h>
#include <stdlib.h>

#include "common/log.h"
#include "report/cmd/thresholds.h"

const char cprof_threshold_help[] =
	"  --include-startup    count context creation and the first launches in the verdict (left out by default)\n"
	"  --compute-pct P      GPU busy share (percent) from which a GPU with full queues is compute-bound\n"
	"                       (default 80)\n"
	"  --overhead-pct P     ignored: the GPU's queues decide overhead-bound (kept for old scripts)\n"
	"  --kernel-wait-us U   a gap between kernels shorter than U microseconds counts as the GPU waiting for\n"
	"                       the next kernel, not for the host (default 30)\n"
	"  --step-range REGEX   NVTX ranges that mark steps (default: ProfilerStep#N, step)\n";

static int parse_double(const char *cmd, const char *opt, const char *arg, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (*arg == '\0' || *end != '\0' || v < lo || v > hi) {
		cprof_log(CPROF_LOG_ERR, cmd, "%s wants a number in %g..%g, got '%s'", opt, lo, hi, arg);
		return -1;
	}
	*out = v;
	return 0;
}

int cprof_threshold_opt(const char *cmd, int opt, const char *arg, struct cprof_thresholds *th)
{
	char err[128];
	double d;

	switch (opt) {
	case CPROF_OPT_INCLUDE_STARTUP:
		th->include_startup = 1;
		return 1;
	case CPROF_OPT_COMPUTE_PCT:
		return parse_double(cmd, "--compute-pct", arg, 0, 100, &th->compute_pct) < 0 ? -1 : 1;
	case CPROF_OPT_OVERHEAD_PCT:
		if (parse_double(cmd, "--overhead-pct", arg, 0, 100, &th->overhead_pct) < 0)
			return -1;
		/* kept so scripts still run; a starved GPU is overhead-bound at any utilisation */
		cprof_log(CPROF_LOG_WARN, cmd, "--overhead-pct no longer decides the verdict (the GPU's queues do: docs/verdict.md); ignored");
		return 1;
	case CPROF_OPT_KERNEL_WAIT_US:
		if (parse_double(cmd, "--kernel-wait-us", arg, 0, 1e9, &d) < 0)
			return -1;
		th->kernel_wait_ns = (uint64_t)(d * 1000);
		return 1;
	case CPROF_OPT_STEP_RANGE:
		if (cprof_step_re_check(arg, err, sizeof(err)) < 0) {
			cprof_log(CPROF_LOG_ERR, cmd, "--step-range '%s': %s", arg, err);
			return -1;
		}
		th->step_re = arg;
		return 1;
	}
	return 0;
}
