/* cupti-share.c's interface: the program's own CUPTI client (torch.profiler/Kineto) served from cprof's session. */
#ifndef CPROF_CUPTI_SHARE_H
#define CPROF_CUPTI_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "preload/cprof.h"

struct cprof_share_counts {
	uint64_t handed;  /* records in buffers given back to the program's buffer-completed callback */
	uint64_t kernels; /* of them kernel records */
	uint64_t missed;  /* records of kinds it enabled that it did not get (no buffer from it, too small) */
	uint64_t pending; /* records copied into its current buffer, not given back yet */
	uint64_t buffers; /* buffers given back */
};

/* the CUPTI functions the copying needs, resolved by cupti.c from the real library */
CPROF_HIDDEN void cprof_share_init(__typeof__(&cuptiActivityGetNextRecord) next_record,
				   __typeof__(&cuptiGetTimestamp) timestamp);
/* 1 once the program registered its buffer callbacks with cprof instead of CUPTI */
CPROF_HIDDEN int cprof_share_active(void);
CPROF_HIDDEN void cprof_share_register(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done);
/* the program enables or disables a kind; returns whether it had the kind on before */
CPROF_HIDDEN int cprof_share_kind(CUpti_ActivityKind kind, int on);
CPROF_HIDDEN int cprof_share_kind_on(CUpti_ActivityKind kind);
/* cuptiActivityEnableRuntimeApi / cuptiActivityEnableDriverApi: records of one API the program does not want */
CPROF_HIDDEN void cprof_share_api(int driver, uint32_t cbid, int enable);
/* the program's clock for its copies (cuptiActivityRegisterTimestampCallback); CUPTI itself keeps its own */
CPROF_HIDDEN void cprof_share_timestamps(CUpti_TimestampCallbackFunc func);
/* a completed cprof buffer: copy the program's records into buffers from its own callbacks */
CPROF_HIDDEN void cprof_share_forward(uint8_t *buf, size_t valid);
/* the program flushed: its current buffer goes back to it; more: request the next one while it has kinds on */
CPROF_HIDDEN void cprof_share_complete(int more);
/* the image ends (exit, exec, a crash): the program's callbacks are called no more */
CPROF_HIDDEN void cprof_share_stop(void);
CPROF_HIDDEN void cprof_share_resume(void);
/* the program finalized CUPTI: its callbacks, kinds and clock are forgotten */
CPROF_HIDDEN void cprof_share_finalize(void);
CPROF_HIDDEN void cprof_share_counts(struct cprof_share_counts *c);
CPROF_HIDDEN void cprof_share_reset_after_fork(void);

#endif
