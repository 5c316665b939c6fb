/* Turning the FIFO's byte stream into validated frames and store rows; knows every producer's state. */
#ifndef CPROF_COLLECTOR_INGEST_H
#define CPROF_COLLECTOR_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "collector/store.h"

struct cprof_producer {
	uint32_t pid;
	int64_t proc_id;   /* PROCESSES.id of the current instance, 0 before HELLO */
	int banned;        /* sent a malformed frame: everything further from it is dropped */
	int ended;         /* said BYE */
	int crashed;       /* sent CRASH: a fatal signal reached it */
	uint32_t next_seq;
	uint32_t frames;
	uint32_t seq_gaps;
	uint64_t recorded;
	uint64_t lost;
	uint64_t start_ns; /* the current instance's HELLO */
	uint64_t last_ns;  /* its latest event time: where it ends when a new HELLO replaces it */
	/* local string id -> StringIds.id: a hash table sized by the strings it sent, not by their ids (PyTorch
	 * registers ~10^5 kernels and sends the names of the few it runs; a forged id costs one slot) */
	uint32_t *strkeys;
	int64_t *strvals;
	size_t strcap, strn;
	uint64_t strings;  /* strings it sent */
};

/* The StringIds.id of a process's string id; 0 when it never sent that string. */
int64_t cprof_strmap_get(const struct cprof_producer *p, uint32_t id);

struct cprof_ingest {
	struct cprof_store *store;
	struct cprof_producer *prod;
	size_t nprod, cap;
	uint8_t *buf;
	size_t len, bufcap;
	uint64_t frames;
	uint64_t bad_frames;      /* malformed or undecodable */
	uint64_t dropped_frames;  /* well-formed but from a banned or unknown producer */
	uint64_t events;
	uint64_t gpu_records;
	uint64_t stacks;
	uint64_t nvtx_events;     /* of events: NVTX annotations, not CUDA calls */
	uint64_t lost;            /* what the producers said they dropped (rings full, collector gone) */
	uint64_t lost_spool_full; /* records that arrived when the spool had no room (disk full) */
	uint64_t lost_unstored;   /* records spooled but not stored (store failed, cprofd stopped) */
	uint64_t processes;
	uint64_t live;            /* producers that said HELLO and no BYE yet */
	uint64_t refused_producers; /* new pids beyond CPROF_INGEST_MAX_LIVE: their frames were dropped */
	uint64_t replaced;        /* instances ended by a second HELLO from their pid, without BYE */
	int run_ended;
	int run_end_by_signal;    /* cprofd: the run's end comes from cprof-run's signal; RUN_END frames are forged */
	uint64_t forged_run_ends; /* RUN_END frames refused (from a process of the job, not cprof-run) */
	uint64_t suspect_hellos;  /* cprofd: HELLOs /proc did not back (cprof_hello_evidence) */
	struct cprof_wire_run_end run_end;
	uint64_t crashed;         /* processes that sent CRASH */
	uint32_t run_end_pid;     /* cprof-run, the sender of RUN_END: its child is the run's top process */
	int interrupt_signal;     /* cprof-run forwarded this signal to the target (SIGINT, SIGTERM, ...) */
	int store_failed;
	uint64_t arrival_ns;      /* when the bytes being fed reached cprofd (the spool's writer stores later); 0: now */
	uint64_t max_bytes;       /* --max-size: no event is stored once the profile holds this much (0: no limit) */
	uint64_t cut_ns;          /* when the limit stopped the storing: the latest event stored then (0: never) */
	uint64_t unrecorded;      /* events and GPU records that came after the cut, counted and not stored */
	uint64_t since_check;     /* records stored since the profile's size was last looked at */
	struct cprof_nvtx *nvtx;  /* NVTX pairing state (collector/nvtx.c), NULL until the first annotation */
};

/* Producers alive at once (each costs its state and string map): more are refused, counted. A job has
 * one per process using CUDA; a forger inventing pids would otherwise grow the collector without bound. */
#define CPROF_INGEST_MAX_LIVE 4096

int cprof_ingest_init(struct cprof_ingest *in, struct cprof_store *store);
/* Appends bytes read from the FIFO and handles every complete frame in them. */
int cprof_ingest_feed(struct cprof_ingest *in, const void *data, size_t len);
/* The run is over: producers without BYE are closed, the totals and completeness go to META. */
int cprof_ingest_finish(struct cprof_ingest *in, int clean);
void cprof_ingest_free(struct cprof_ingest *in);

#endif
