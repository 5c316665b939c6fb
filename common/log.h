/* Logging shared by every cprof binary: pr_err/pr_warn/pr_dbg with a per-file PR_FMT prefix, stderr only. */
#ifndef CPROF_COMMON_LOG_H
#define CPROF_COMMON_LOG_H

#include <stdarg.h>

#ifndef PR_FMT
#define PR_FMT "cprof"
#endif

enum cprof_log_level { CPROF_LOG_ERR = 0, CPROF_LOG_WARN = 1, CPROF_LOG_INFO = 2, CPROF_LOG_DBG = 3 };

/* Level from CPROF_DEBUG (0..3); the preload sets it itself because it may not read env under AT_SECURE. */
extern int cprof_log_level;

void cprof_log(int level, const char *prefix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define pr_err(fmt, ...)  cprof_log(CPROF_LOG_ERR, PR_FMT, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) cprof_log(CPROF_LOG_WARN, PR_FMT, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) cprof_log(CPROF_LOG_INFO, PR_FMT, fmt, ##__VA_ARGS__)
#define pr_dbg(fmt, ...)                                                       \
	do {                                                                   \
		if (cprof_log_level >= CPROF_LOG_DBG)                          \
			cprof_log(CPROF_LOG_DBG, PR_FMT, fmt, ##__VA_ARGS__);  \
	} while (0)

#endif
