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
	len = strlen(name);
	/* CUPTI's names carry the version the entry point came with (cudaLaunchKernel_v7000) */
	v = strrchr(name, '_');
	if (v && v[1] == 'v' && v[2] && strspn(v + 2, "0123456789") == strlen(v + 2))
		len = (size_t)(v - name);
	for (i = 1; i < CPROF_API__COUNT; i++)
		if (api_names[i] && strlen(api_names[i]) == len && !strncmp(api_names[i], name, len))
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
