/* Hidden helpers shared by the engine's source files (never exported from libsimgpu_engine.so). */
#ifndef SIMGPU_ENGINE_INT_H
#define SIMGPU_ENGINE_INT_H

#include "engine.h"

#define SG_HIDDEN __attribute__((visibility("hidden")))

#define SG_CONTEXT_ID 1u
#define SG_DEVICE_ID 0u

SG_HIDDEN void sg_config_load(void);
SG_HIDDEN int sg_act_on(int kind);
SG_HIDDEN void sg_emit(const void *rec, size_t size);
SG_HIDDEN void sg_emit_call(struct simgpu_call *c, uint64_t end, int ret);
SG_HIDDEN void sg_emit_overhead(int overhead_kind, uint64_t start, uint64_t end);
SG_HIDDEN uint32_t sg_thread_id(void);
SG_HIDDEN void sg_callback_api(struct simgpu_call *c, int site, int ret);
SG_HIDDEN int sg_latency_timestamps(void);
SG_HIDDEN void sg_activity_atfork_prepare(void);
SG_HIDDEN void sg_activity_atfork_parent(void);
SG_HIDDEN void sg_activity_atfork_child(void);

#endif
