/* Finding the real definition behind each hook, whichever way the CUDA library was loaded. */
#include <dlfcn.h>
#include <stddef.h>

#define PR_FMT "cprof: symbols"
#include "common/log.h"
#include "preload/cprof.h"

void *cprof_resolve(const char *sym, const char *soname)
{
	void *p = dlvsym(RTLD_NEXT, sym, soname);
	void *h;

	if (p)
		return p;
	/* RTLD_NEXT misses a library that came in with dlopen(RTLD_LOCAL), as under Python */
	h = dlopen(soname, RTLD_NOLOAD | RTLD_LAZY);
	if (h) {
		p = dlvsym(h, sym, soname);
		if (p == NULL)
			p = dlsym(h, sym);
		dlclose(h);
	}
	if (p == NULL)
		p = dlsym(RTLD_NEXT, sym); /* an unversioned build of the library */
	if (p == NULL)
		pr_warn("cannot find the real %s in %s; the call fails with an error", sym, soname);
	return p;
}
