/* NVTX annotations in the collector: push/pop paired per thread and domain, start/end by id, stored as NVTX_EVENTS. */
#ifndef CPROF_COLLECTOR_NVTX_H
#define CPROF_COLLECTOR_NVTX_H

struct cprof_ingest;
struct cprof_producer;
struct cprof_wire_api;

/* One event of class CPROF_CLASS_NVTX from producer p. Returns 0, -EIO (the store failed) or -EBADMSG
 * (malformed: the producer is to be banned). Unbalanced annotations are the program's, not malformed:
 * they are counted and reported in DIAGNOSTICS when the process ends. */
int cprof_nvtx_event(struct cprof_ingest *in, struct cprof_producer *p, const struct cprof_wire_api *ev);
/* p's process ended (BYE, exec, or the run ended without BYE): ranges still open are stored with end NULL
 * (readers treat NULL as "open until the process ended"), and its counts go to DIAGNOSTICS. */
int cprof_nvtx_process_end(struct cprof_ingest *in, struct cprof_producer *p);
/* Frees the state and the prepared statements; call before the store is closed. */
void cprof_nvtx_free(struct cprof_ingest *in);

#endif
