/* The body of every generated "not supported" stub (gen_stubs.sh): say the name once on stderr, return the API's code. */
#ifndef SIMGPU_STUB_H
#define SIMGPU_STUB_H
#include <stdio.h>
#include <unistd.h>

/* Stubs take no parameters: under the SysV ABI a caller's arguments are simply ignored, and the result
 * register holds the API's "not supported" status (or 0 for functions that return no status). */
static inline void sg_stub_say(int *said, const char *name, long code)
{
	char line[192];
	size_t n;

	if (__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
		return;
	n = (size_t)snprintf(line, sizeof(line), "simgpu (simulated GPU): %s is not simulated, returned %ld\n", name,
			     code);
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	if (write(2, line, n) < 0)
		return;
}

#define SG_STUB(name, code)                              \
	long name(void);                                 \
	long name(void)                                  \
	{                                                \
		static int said;                         \
		sg_stub_say(&said, #name, (long)(code)); \
		return (code);                           \
	}
#endif
