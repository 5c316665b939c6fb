/* libFuzzer target: the collector's intake of FIFO bytes (frame validation, resync, dispatch into the store). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/wire.h"
#include "collector/ingest.h"
#include "collector/store.h"

/* One store for many inputs (creating the schema costs more than an input); a fresh one every so often
 * keeps the file small. On tmpfs when there is one. */
#define INPUTS_PER_STORE 2000

static struct cprof_store *store;
static char path[256];
static unsigned inputs;

static void drop_store(void)
{
	char side[300];

	if (store)
		cprof_store_close(store);
	store = NULL;
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

static void new_store(void)
{
	static unsigned n;
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	drop_store();
	snprintf(path, sizeof(path), "%s/cprof-fuzz-wire-%d-%u.db", dir, (int)getpid(), n++);
	unlink(path);
	if (cprof_store_open(&store, path) < 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	cprof_log_level = CPROF_LOG_ERR - 1; /* malformed frames are the point: no log lines */
	atexit(drop_store);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cprof_ingest in;
	size_t off = 0, step;
	uint8_t frame[CPROF_WIRE_MAX_FRAME];
	size_t flen;

	/* the validator alone, on the input as one buffer: it must never read past what it is given */
	if (size <= sizeof(frame)) {
		memcpy(frame, data, size);
		cprof_wire_check(frame, size, &flen);
	}
	if (store == NULL || ++inputs % INPUTS_PER_STORE == 0)
		new_store();
	if (cprof_ingest_init(&in, store) < 0)
		abort();
	/* the FIFO hands over any chunking: split where the first byte says */
	step = size ? 1 + data[0] % 97 * 43 : 1;
	while (off < size) {
		size_t n = size - off < step ? size - off : step;

		if (cprof_ingest_feed(&in, data + off, n) < 0)
			break;
		off += n;
	}
	cprof_ingest_finish(&in, 1);
	cprof_ingest_free(&in);
	return 0;
}
