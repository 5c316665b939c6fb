/* The recording-window schedule file of a run (RUNDIR/windows): written by cprof-run and cprof capture, followed by libcprof.so. */
#ifndef CPROF_COMMON_WINDOWS_H
#define CPROF_COMMON_WINDOWS_H

#include <stdint.h>

/* the file's name in the run's private directory; the preload finds it through CPROF_WINDOWS */
#define CPROF_WINDOWS_FILE "windows"

/* Replaces the schedule at path with one window [start, end) (end 0: until the process ends; start 0 and
 * end 0 together: no window at all, recording off until one is added). 0 or -errno. */
int cprof_windows_init(const char *path, uint64_t start, uint64_t end, const char *why);
/* Adds the window [start, end) to the schedule at path, numbered one past the last (*number). -EBUSY when a
 * window still open at start is there already (*busy_until: its end), -ENOENT when there is no schedule. */
int cprof_windows_add(const char *path, uint64_t start, uint64_t end, const char *why, int *number,
		      uint64_t *busy_until);

/* One line of the schedule: its number, start, end (0: open) and *why_off, where its reason starts.
 * 0 or -EINVAL. */
int cprof_windows_parse(const char *line, int *number, uint64_t *start, uint64_t *end, int *why_off);

#endif
