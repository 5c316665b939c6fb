/* What init.c hands the flusher: the FIFO, its timing, and who this process is. */
#ifndef CPROF_PRELOAD_FLUSHER_H
#define CPROF_PRELOAD_FLUSHER_H

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
	int fifo_fd;
	int flush_ms;
	int exit_timeout_ms;
	struct cprof_hello_info hello;
};

__attribute__((visibility("hidden"))) int cprof_flusher_start(const struct cprof_flusher_cfg *cfg);
__attribute__((visibility("hidden"))) void cprof_flusher_strings_lock(int lock);

#endif
