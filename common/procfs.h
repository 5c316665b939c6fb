/* Small /proc files read whole in one call, for the preload and the collector alike. */
#ifndef CPROF_COMMON_PROCFS_H
#define CPROF_COMMON_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/* Reads up to len - 1 bytes of path into buf, NUL-terminated (no allocation, async-signal-safe calls only).
 * Returns the bytes read (> 0), or -1 when the file cannot be opened or read, or is empty. */
ssize_t cprof_read_proc(const char *path, char *buf, size_t len);

#endif
