/* The machine's CPU pressure (PSI, /proc/pressure/cpu): whether it has a spare core for cprof's work now. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preload/cprof.h"

int cprof_psi_some_total(const char *text, uint64_t *total_us)
{
	const char *p;
	char *end;
	unsigned long long v;

	/* "some avg10=.. avg60=.. avg300=.. total=N\nfull ...": the first line's total, in microseconds */
	if (strncmp(text, "some ", 5) != 0 || (p = strstr(text, "total=")) == NULL)
		return -EINVAL;
	end = strchr(text, '\n');
	if (end != NULL && p > end)
		return -EINVAL;
	errno = 0;
	v = strtoull(p + 6, &end, 10);
	if (errno != 0 || end == p + 6)
		return -EINVAL;
	*total_us = v;
	return 0;
}

int cprof_psi_busy(uint64_t stall_us, uint64_t elapsed_ms)
{
	/* some runnable task waited for a CPU over a tenth of the time: no core is spare (a SCHED_IDLE writer on an
	 * otherwise idle core waits only while something else takes it, briefly) */
	return elapsed_ms > 0 && stall_us * 10 >= elapsed_ms * 1000;
}
