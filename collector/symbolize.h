/* Native stack symbolisation: function names for (module, offset) frames, read from the modules' ELF symbol tables. */
#ifndef CPROF_COLLECTOR_SYMBOLIZE_H
#define CPROF_COLLECTOR_SYMBOLIZE_H

#include <stdint.h>

struct sqlite3;
struct cprof_symtab;

/* The function symbols (.symtab and .dynsym) of one ELF file; 0 or -errno. */
int cprof_symtab_open(const char *path, struct cprof_symtab **out);
/* The (mangled) name of the function containing the module address off (exactly off: a caller holding a
 * return address passes it minus 1), NULL when none; *into (may be NULL) = off - the symbol's start.
 * The name lives until cprof_symtab_close. */
const char *cprof_symtab_lookup(const struct cprof_symtab *t, uint64_t off, uint64_t *into);
void cprof_symtab_close(struct cprof_symtab *t);

/* Fills CPROF_STACK_FRAMES.symbolId for native frames that have none, inside the caller's open transaction;
 * returns the number of frames resolved or -errno. */
int cprof_symbolize_profile(struct sqlite3 *db);

#endif
