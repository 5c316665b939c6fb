/* The profile store: one SQLite file, written by cprofd with prepared statements in batched transactions. */
#ifndef CPROF_COLLECTOR_STORE_H
#define CPROF_COLLECTOR_STORE_H

#include <stdint.h>

#include "common/wire.h"

struct cprof_store;

int cprof_store_open(struct cprof_store **out, const char *path);
/* Commits what is pending, records the final state and closes. complete: 1 when nothing is missing. */
int cprof_store_close(struct cprof_store *s);

int cprof_store_meta(struct cprof_store *s, const char *key, const char *value);
int cprof_store_meta_int(struct cprof_store *s, const char *key, int64_t value);

/* A HELLO: a new process instance; *proc_id is its PROCESSES.id. */
int cprof_store_process(struct cprof_store *s, const struct cprof_wire_hello *h, int64_t *proc_id);
/* a BYE reason of cprofd's own: the instance was replaced by a new HELLO from its pid (no BYE came) */
#define CPROF_STORE_BYE_REPLACED 4
int cprof_store_process_end(struct cprof_store *s, int64_t proc_id, const struct cprof_wire_bye *bye,
			    uint64_t recorded, uint64_t lost, uint32_t frames, uint32_t seq_gaps);
/* A string of a process: returns the global StringIds id in *global_id. */
int cprof_store_string(struct cprof_store *s, const char *text, size_t len, int64_t *global_id);
int cprof_store_api(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_api *ev,
		    int64_t kernel_name_id);
/* One frame of a stack: native (module, offset) or Python (file, function, line in off). */
int cprof_store_frame(struct cprof_store *s, int64_t proc_id, uint32_t stack, int level, int native, uint64_t off,
		      int64_t module_or_file, int64_t func);
/* Names the native frames from the modules' symbol tables (at the end of the run: files still there). */
int cprof_store_symbolize(struct cprof_store *s);
int cprof_store_gpu(struct cprof_store *s, int64_t proc_id, const struct cprof_wire_gpu *g, int64_t name_id);
/* a process's running cost totals and losses by cause (CPROF_COST) */
int cprof_store_cost(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_cost *c);
/* one API's running total of calls counted, not recorded (CPROF_API_COUNTS) */
int cprof_store_count(struct cprof_store *s, int64_t proc_id, uint32_t pid, uint64_t time_ns,
		      const struct cprof_wire_count *c);
int cprof_store_status(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_status *w);
int cprof_store_diag(struct cprof_store *s, uint32_t pid, const char *message);
/* time_ns: when the frame reached the collector (0: now) */
int cprof_store_lost(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_lost *l,
		     uint64_t time_ns);
/* A CRASH frame: the signal, and each thread's last call (kernel_name_id: the collector's string id, 0 none). */
int cprof_store_crash(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_crash *c);
int cprof_store_crash_call(struct cprof_store *s, int64_t proc_id, const struct cprof_wire_crash_thread *t,
			   int64_t kernel_name_id);
/* PROCESSES.ending for every process (top_ppid: cprof-run's pid, whose child run_end describes). */
int cprof_store_endings(struct cprof_store *s, uint32_t top_ppid, const struct cprof_wire_run_end *run_end);
/* The THREADS summary of what was stored, committed (store_close does it if not done). */
int cprof_store_threads(struct cprof_store *s);
/* Bytes the profile holds now, what is still batched included; -errno. */
int64_t cprof_store_bytes(struct cprof_store *s);
/* CPROF_WINDOWS from the capture-start/stop statuses, after every process ended; cut_ns: when --max-size
 * stopped the storing (0: never), which ends the windows open then (or the whole run's, when it had none). */
int cprof_store_windows(struct cprof_store *s, uint64_t cut_ns);
/* META calls_by_program, calls_inside_libraries, calls_seen_only_by_cupti: cprof report's call totals, counted
 * as the rows went in, when they could be (else none: cprof info then counts the rows). At the finish. */
int cprof_store_call_split(struct cprof_store *s);
/* Drops the open transaction (after a failed write, e.g. a full disk). */
void cprof_store_abort(struct cprof_store *s);

/* Ends the current transaction when it is big or old enough (force: always). */
int cprof_store_commit(struct cprof_store *s, int force);

/* The open connection, for collector modules with statements of their own (nvtx.c, symbolize.c).
 * Call cprof_store_begin(s, rows) before writing: the rows join the store's batched transaction. */
struct sqlite3 *cprof_store_db(struct cprof_store *s);
int cprof_store_begin(struct cprof_store *s, unsigned rows);

/* Statistics for tests and the summary. */
uint64_t cprof_store_rows(const struct cprof_store *s);

#endif
