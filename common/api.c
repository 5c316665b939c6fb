/* Names and classes of the hooked entry points, generated from the one list in api.h. */
#include <stddef.h>
#include <string.h>

#include "common/api.h"

#define CPROF_API_NAME(id, sym, cls) [id] = sym,
static const char *const api_names[CPROF_API__COUNT] = { CPROF_API_LIST(CPROF_API_NAME) };
#undef CPROF_API_NAME

#define CPROF_API_CLS(id, sym, cls) [id] = cls,
static const unsigned char api_classes[CPROF_API__COUNT] = { CPROF_API_LIST(CPROF_API_CLS) };
#undef CPROF_API_CLS

const char *cprof_api_name(unsigned api)
{
	return api < CPROF_API__COUNT ? api_names[api] : NULL;
}

unsigned cprof_api_by_name(const char *name)
{
	size_t len, i;
	const char *v;

	if (name == NULL)
		return CPROF_API_NONE;
	for (i = 1; i < CPROF_API__COUNT; i++)
		if (api_names[i] && !strcmp(api_names[i], name))
			return (unsigned)i;
	/* CUPTI's names carry the CUDA version the entry point came with, 4 digits or more (cudaLaunchKernel_v7000,
	 * cudaGraphLaunch_v10000); a symbol's own _v2 (cublasSgemm_v2) is part of its name, matched above */
	v = strrchr(name, '_');
	if (v == NULL || v[1] != 'v' || strlen(v + 2) < 4 || strspn(v + 2, "0123456789") != strlen(v + 2))
		return CPROF_API_NONE;
	len = (size_t)(v - name);
	for (i = 1; i < CPROF_API__COUNT; i++)
		if (api_names[i] && !strncmp(api_names[i], name, len) && api_names[i][len] == '\0')
			return (unsigned)i;
	return CPROF_API_NONE;
}

enum cprof_api_class cprof_api_class(unsigned api)
{
	return api < CPROF_API__COUNT ? (enum cprof_api_class)api_classes[api] : CPROF_CLASS_OTHER;
}

const char *cprof_api_class_name(enum cprof_api_class cls)
{
	static const char *const names[] = { "other", "launch", "memory", "memcpy", "memset",
					      "sync",  "query",  "module", "gemm",  "nvtx", "device",
					      "stream", "graph", "library", "blas" };
	return (unsigned)cls < sizeof(names) / sizeof(names[0]) ? names[cls] : "other";
}
