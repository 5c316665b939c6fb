/* Command lines as a POSIX shell reads them back: what cprof-run stores for the run and cprofd for each process. */
#ifndef CPROF_COMMON_SHQUOTE_H
#define CPROF_COMMON_SHQUOTE_H

#include <stddef.h>

/* One argument quoted only when it must be: bare when it is made of letters, digits and _@%+=:,./- only; '...'
 * (a ' as '\'') when it is text; $'...' (POSIX.1-2024, bash, zsh, ksh) when it holds a byte a terminal would obey
 * or that is not UTF-8, written as \n, \t, \r or \xHH, so that no stored or printed form of it holds such a byte.
 * At most max bytes of a are taken (a cut argument's quote is still closed). Writes into out (NULL: only counts)
 * and returns the length, at most 4 * max + 3. */
size_t cprof_sh_quote(const char *a, size_t max, char *out);

/* len bytes of NUL-separated arguments (a HELLO's argv; the last may lack its NUL), each quoted, joined by
 * spaces, in a malloc'd string; NULL when out of memory. */
char *cprof_sh_join(const char *args, size_t len);

#endif
