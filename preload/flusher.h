/* What init.c hands the flusher: the FIFO, its timing, and who this process is. */
#ifndef CPROF_PRELOAD_FLUSHER_H
#define CPROF_PRELOAD_FLUSHER_H

#include <limits.h>
#include <sys/types.h>

#include "common/wire.h"

#define CPROF_HELLO_MAX_ARGS 64

struct cprof_hello_info {
	struct cprof_wire_hello fixed;
	char exe[1024];
	char host[256];
	char args[3072];
	char *argv[CPROF_HELLO_MAX_ARGS];
	int argc;
};

struct cprof_flusher_cfg {
	char fifo_path[PATH_MAX]; /* the flusher opens it itself, in its own descriptor table */
	dev_t fifo_dev;           /* identity of the FIFO init.c checked: a replaced path is refused */
	ino_t fifo_ino;
	int private_fds;          /* 0: share the target's descriptor table (CPROF_PRIVATE_FDS=0) */
	int flush_ms;
	int exit_timeout_ms;
	int defer_mb;             /* CUPTI records left unconverted while the machine has no spare core, at most */
	uint32_t ring_size;       /* the shared-memory ring's bytes (a power of two); 0: frames through the FIFO only */
	struct cprof_hello_info hello;
};

__attribute__((visibility("hidden"))) int cprof_flusher_start(const struct cprof_flusher_cfg *cfg);
__attribute__((visibility("hidden"))) void cprof_flusher_strings_lock(int lock);
/* exec hooks: everything recorded goes out with a BYE(exec) and the flusher pauses; if exec fails, resume. */
__attribute__((visibility("hidden"))) void cprof_flusher_exec_begin(void);
__attribute__((visibility("hidden"))) void cprof_flusher_exec_failed(void);
/* 1 in the process that started the flusher; 0 in a vfork child, which shares our memory but is not us. */
__attribute__((visibility("hidden"))) int cprof_flusher_owner(void);
struct cprof_ring;
/* the rings' thread_start: the thread's schedstat baseline, then the crash handler's signal stack */
__attribute__((visibility("hidden"))) void cprof_flusher_thread_start(struct cprof_ring *r);

#endif
