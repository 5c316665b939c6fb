/* Kernel names for people: the C++ ABI demangler (libstdc++'s __cxa_demangle) and a shortened form for tables. */
#include <stdlib.h>
#include <string.h>

#include "report/cprof.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *cprof_demangle(const char *name)
{
	int status = -1;
	char *d;

	if (name == NULL)
		return strdup("?");
	if (name[0] == '_' && name[1] == 'Z') {
		d = __cxa_demangle(name, NULL, NULL, &status);
		if (status == 0 && d)
			return d;
		free(d);
	}
	return strdup(name);
}

/* Template arguments and parameter lists collapse to <...> and (...) until the name fits. */
void cprof_shorten(const char *full, char *out, size_t size)
{
	size_t n = strlen(full), o = 0, i;
	int depth = 0;

	if (n < size && n <= 70) {
		memcpy(out, full, n + 1);
		return;
	}
	for (i = 0; i < n && o + 4 < size; i++) {
		char c = full[i];

		if (c == '<' || c == '(') {
			if (depth++ == 0) {
				out[o++] = c;
				out[o++] = '.';
				out[o++] = '.';
				out[o++] = '.';
			}
			continue;
		}
		if (c == '>' || c == ')') {
			if (depth > 0 && --depth == 0)
				out[o++] = c;
			continue;
		}
		if (depth == 0)
			out[o++] = c;
	}
	out[o] = '\0';
	if (o > 70 && size > 71) {
		/* still long: the start names the kernel (library, architecture, tile) */
		memcpy(out + 67, "...", 4);
	}
}
