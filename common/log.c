/* Logging to stderr with one write(2) per line so lines from many processes do not interleave. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

int cprof_log_level = CPROF_LOG_WARN;

void cprof_log(int level, const char *prefix, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (level > cprof_log_level)
		return;
	n = snprintf(line, sizeof(line), "%s: ", prefix);
	if (n < 0 || n >= (int)sizeof(line))
		return;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	n = strlen(line);
	if (n == 0 || line[n - 1] != '\n') {
		if (n >= (int)sizeof(line) - 1)
			n = sizeof(line) - 2;
		line[n++] = '\n';
		line[n] = '\0';
	}
	/* stderr, never stdout: the target's stdout belongs to the target */
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nowhere left to report it */
	}
}
