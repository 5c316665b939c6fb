/* Small /proc files read whole in one call, for the preload and the collector alike. */
#ifndef CPROF_COMMON_PROCFS_H
#define CPROF_COMMON_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads up to len - 1 bytes of path into buf, NUL-terminated (no allocation, async-signal-safe calls only).
 * Returns the bytes read (> 0), or -1 when the file cannot be opened or read, or is empty. */
ssize_t cprof_read_proc(const char *path, char *buf, size_t len);

/* A thread's time on a CPU and waiting on a run queue, in ns, from /proc/self/task/TID/schedstat (async-signal-safe:
 * no stdio, no allocation). Returns 0, -EIO when the file cannot be read, -EINVAL or -ERANGE when its text is not
 * two decimals. */
int cprof_schedstat_read(uint32_t tid, uint64_t *run_ns, uint64_t *wait_ns);
int cprof_schedstat_parse(const char *text, uint64_t *run_ns, uint64_t *wait_ns);

#endif
