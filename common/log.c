/* Logging to stderr with one write(2) per line so lines from many processes do not interleave. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/textsafe.h"

int cprof_log_level = CPROF_LOG_WARN;

void cprof_log(int level, const char *prefix, const char *fmt, ...)
{
	char raw[1024], line[1024];
	va_list ap;
	int n;

	if (level > cprof_log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	n = strlen(raw);
	if (n > 0 && raw[n - 1] == '\n')
		raw[n - 1] = '\0';
	/* one line, whatever the names in it hold (argv, paths, kernel names): controls become escapes */
	n = snprintf(line, sizeof(line) - 1, "%s: ", prefix);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		return;
	cprof_log_safe(line + n, sizeof(line) - 1 - n, raw);
	n = strlen(line);
	line[n++] = '\n';
	line[n] = '\0';
	/* stderr, never stdout: the target's stdout belongs to the target */
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nowhere left to report it */
	}
}
