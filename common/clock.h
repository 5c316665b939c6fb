/* The one clock every cprof timestamp uses: CLOCK_REALTIME in ns, the clock CUPTI uses on Linux. */
#ifndef CPROF_COMMON_CLOCK_H
#define CPROF_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t cprof_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
