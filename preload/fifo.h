/* The FIFO to the collector: opening it as the one init.c checked, a descriptor table of its own, one-frame writes. */
#ifndef CPROF_PRELOAD_FIFO_H
#define CPROF_PRELOAD_FIFO_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct cprof_fifo {
	int fd;           /* in the flusher's own descriptor table when private_fds; -1: not open */
	char path[PATH_MAX];
	dev_t dev;        /* identity of the FIFO init.c checked: a replaced path is refused */
	ino_t ino;
	int want_private; /* 0: share the program's descriptor table (CPROF_PRIVATE_FDS=0) */
	int private_fds;  /* the calling thread unshared its table */
};

/* fd is the FIFO the path named when init.c checked it. Async-signal-safe. */
__attribute__((visibility("hidden"))) int cprof_fifo_is_ours(const struct cprof_fifo *f, int fd);
/* A new descriptor (never 0-2) on the FIFO, by path; -ESTALE when the path is another file now, -errno.
 * Async-signal-safe. */
__attribute__((visibility("hidden"))) int cprof_fifo_open(const struct cprof_fifo *f);
/* The calling thread gets a descriptor table of its own, emptied (want_private; where unshare is refused
 * the shared table stays and cprof_fifo_usable checks it before every write). */
__attribute__((visibility("hidden"))) void cprof_fifo_isolate(struct cprof_fifo *f);
/* 1: f->fd is our FIFO (reopened by path when the program closed or reused the number); 0: it cannot be. */
__attribute__((visibility("hidden"))) int cprof_fifo_usable(struct cprof_fifo *f);
/* A full pipe: waits up to 10 ms for room, or returns -EAGAIN when deadline_ms (CLOCK_MONOTONIC) has passed. */
__attribute__((visibility("hidden"))) int cprof_fifo_wait(int fd, unsigned long long deadline_ms);
/* One frame, one write(2) on fd, waiting on a full pipe until deadline_ms (0: not at all): 0, -EAGAIN (still
 * full at the deadline), -EIO (a short write: cannot happen at or under PIPE_BUF), or -errno; a SIGPIPE it
 * raised is consumed. Async-signal-safe. */
__attribute__((visibility("hidden"))) int cprof_fifo_write(int fd, const void *buf, size_t len, unsigned long long deadline_ms);
/* SIGPIPE from a write to a FIFO without a reader is thread-directed: blocked in the writing thread it stays
 * pending there, and is taken here so that it never reaches the program. */
__attribute__((visibility("hidden"))) void cprof_fifo_consume_sigpipe(void);
__attribute__((visibility("hidden"))) unsigned long long cprof_fifo_mono_ms(void);

#endif
