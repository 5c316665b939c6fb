/* Return-code names from tables generated out of the toolkit's headers (scripts/gen-cuda-errors). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/cuda-errors.h"
#include "cuda-errors.inc"

static const char *lookup(const struct cprof_err_name *t, size_t n, int code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

#define LOOKUP(t, code) lookup(t, sizeof(t) / sizeof(t[0]), code)

const char *cprof_error_name(const char *api, int code)
{
	if (api == NULL)
		return NULL;
	if (!strncmp(api, "cublas", 6))
		return LOOKUP(cprof_cublas_errors, code);
	/* driver entry points: cuInit, cuLaunchKernel; runtime ones: cudaMalloc, __cudaLaunchKernel */
	if (api[0] == 'c' && api[1] == 'u' && api[2] >= 'A' && api[2] <= 'Z')
		return LOOKUP(cprof_driver_errors, code);
	return LOOKUP(cprof_cudart_errors, code);
}

int cprof_name_code(char *buf, size_t size, const char *api, int code)
{
	const char *name = cprof_error_name(api, code);

	return name ? snprintf(buf, size, "%d (%s)", code, name) : snprintf(buf, size, "%d", code);
}
