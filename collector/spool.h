/* The spool between cprofd's intake (FIFO -> memory or file, at pipe speed) and its writer thread (-> SQLite). */
#ifndef CPROF_COLLECTOR_SPOOL_H
#define CPROF_COLLECTOR_SPOOL_H

#include <stdint.h>
#include <sys/types.h>

#include "collector/ingest.h"

struct cprof_spool;

/* What the spool did, for META and the bench. Records are API events and GPU records. */
struct cprof_spool_stats {
	uint64_t bytes;            /* spooled */
	uint64_t frames;           /* whole frames spooled */
	uint64_t records;          /* records in them */
	uint64_t lost_full_records; /* records of frames the spool had no room for (disk full, file size limit) */
	uint64_t lost_full_frames;
	uint64_t lost_unstored_records; /* spooled but never stored: the store failed, or cprofd was stopped */
	uint64_t peak_lag_bytes;   /* most bytes spooled and not yet stored at once */
	uint64_t resets;           /* times the writer caught up and the file was emptied */
	uint64_t rings;            /* processes whose frames came through a shared-memory ring */
	uint64_t ring_bytes;       /* bytes taken from those rings */
	uint64_t intake_cpu_ns;    /* CPU of the intake thread (reads, framing, spool writes) */
	uint64_t writer_cpu_ns;    /* CPU of the writer thread (validation, SQLite) */
	uint64_t catchup_ns;       /* from the end of the intake to the writer's last stored record */
	uint64_t writer_run_cpu_ns; /* the part of writer_cpu_ns spent before the intake ended (while the program ran) */
	const char *writer_priority; /* during the run: "idle" (SCHED_IDLE), "nice 19" or "normal" */
	uint64_t suspect_hellos;   /* HELLOs whose pid is another user's or not of the run (see cprof_hello_evidence) */
	uint32_t suspect_pids[16]; /* the first of them */
};

/* What /proc says of the pid a HELLO claims (the FIFO names no writer, so a process of the job can claim
 * any pid): the process is gone (nothing to say), or it runs as our user below run_pid (cprof-run), or it
 * does not: suspect (a forged HELLO, or a daemon reparented away from the run before its first CUDA call). */
enum cprof_hello_evidence { CPROF_HELLO_OK, CPROF_HELLO_GONE, CPROF_HELLO_SUSPECT };
enum cprof_hello_evidence cprof_hello_evidence(uint32_t pid, pid_t run_pid, uid_t uid);
/* cprofd: check every HELLO against run_pid (its parent) and its user */
void cprof_spool_check_hellos(struct cprof_spool *sp, pid_t run_pid);

/* Creates the spool in the profile's directory (unlinked at once: it never outlives cprofd) and starts the
 * writer thread, which feeds everything spooled to in (cprof_ingest_feed) and commits. From here on, only the
 * writer touches in and its store, until cprof_spool_finish. */
int cprof_spool_open(struct cprof_spool **out, const char *db_path, struct cprof_ingest *in);
/* Intake: reads what the FIFO holds (waiting up to timeout_ms) and spools its whole frames. Returns bytes
 * read, 0 on timeout, or a negative errno from the FIFO. Never waits on the writer. */
ssize_t cprof_spool_intake(struct cprof_spool *sp, int fd, int timeout_ms);
/* Processes whose HELLO the intake has seen and no BYE yet (at most SPOOL_LIVE_MAX are tracked). */
#define SPOOL_LIVE_MAX 4096
size_t cprof_spool_live(const struct cprof_spool *sp, const uint32_t **pids);
/* The intake has seen RUN_END: cprof-run says the target is gone. */
int cprof_spool_run_ended(const struct cprof_spool *sp);
/* The writer's store failed (disk full): nothing further can be stored. */
int cprof_spool_failed(const struct cprof_spool *sp);
/* Ends the intake and waits for the writer to store the rest of the spool, or, with deadline_ns (a
 * cprof_now_ns time; 0 = none) passed, to stop and count what it did not store. Then frees the spool. */
int cprof_spool_finish(struct cprof_spool *sp, uint64_t deadline_ns, struct cprof_spool_stats *st);

#endif
