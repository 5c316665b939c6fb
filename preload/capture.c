/* Capture ranges (cprof-run --capture-range): record only between cudaProfilerStart/Stop, or inside an NVTX range. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_profiler_api.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "preload/hook.h"

#define CUDART "libcudart.so.13"

CPROF_HIDDEN int cprof_capture_mode;
static char nvtx_name[200];
/* the thread (the address of its marker) and nesting level of the NVTX range that opened the capture */
static __thread char thread_marker;
static _Atomic(char *) nvtx_thread;
static int nvtx_level;
static _Atomic uint64_t windows;

int cprof_capture_init(void)
{
	const char *v = getenv("CPROF_CAPTURE");

	cprof_capture_mode = CPROF_CAPTURE_NONE;
	if (v == NULL || *v == '\0')
		return 0;
	if (!strcmp(v, "cudaProfilerApi")) {
		cprof_capture_mode = CPROF_CAPTURE_PROFILER_API;
	} else if (!strncmp(v, "nvtx:", 5) && v[5] != '\0' && strlen(v + 5) < sizeof(nvtx_name)) {
		snprintf(nvtx_name, sizeof(nvtx_name), "%s", v + 5);
		cprof_capture_mode = CPROF_CAPTURE_NVTX;
	} else {
		pr_warn("ignoring CPROF_CAPTURE=%s (want cudaProfilerApi or nvtx:NAME); recording the whole run", v);
		return 0;
	}
	return 1;
}

/* Pauses (ON -> PAUSED) or resumes (PAUSED -> ON) recording; a library switched off stays off. */
static void capture_set(int on, const char *why)
{
	int from = on ? CPROF_ST_PAUSED : CPROF_ST_ON;
	char text[240];

	if (!on)
		cprof_cupti_pause(1); /* before the state flips: what CUPTI finished so far belongs to the window */
	if (!atomic_compare_exchange_strong(&cprof_state, &from, on ? CPROF_ST_ON : CPROF_ST_PAUSED))
		return;
	if (on) {
		atomic_fetch_add(&windows, 1);
		cprof_cupti_pause(0);
	}
	snprintf(text, sizeof(text), "%s", why);
	cprof_flusher_status(on ? CPROF_STATUS_CAPTURE_START : CPROF_STATUS_CAPTURE_STOP,
			     (int32_t)atomic_load(&windows), text);
}

void cprof_capture_nvtx_push(const char *message, int level)
{
	char why[240];

	char *none = NULL;

	if (message == NULL || strcmp(message, nvtx_name) != 0)
		return;
	if (!atomic_compare_exchange_strong(&nvtx_thread, &none, &thread_marker))
		return; /* a window is open already: nested or concurrent ranges of that name do not restart it */
	cprof_active(); /* the first annotation may come before any CUDA call: start (paused) first */
	nvtx_level = level;
	snprintf(why, sizeof(why), "NVTX range %.200s pushed", nvtx_name);
	capture_set(1, why);
}

void cprof_capture_nvtx_pop(int level)
{
	if (atomic_load(&nvtx_thread) != &thread_marker || level != nvtx_level)
		return;
	capture_set(0, "NVTX range popped");
	atomic_store(&nvtx_thread, NULL);
}

static cudaError_t real_cudaProfilerStart(void)
	CPROF_HOOK_BODY(cudaError_t, cudaProfilerStart, CUDART, cudaErrorSharedObjectSymbolNotFound, (), {})
static cudaError_t real_cudaProfilerStop(void)
	CPROF_HOOK_BODY(cudaError_t, cudaProfilerStop, CUDART, cudaErrorSharedObjectSymbolNotFound, (), {})

/* cudaProfilerStart/Stop: recorded like any call, and in --capture-range=cudaProfilerApi they open and close
 * the windows (the start is inside its window, the stop too). */
CPROF_EXPORT cudaError_t cudaProfilerStart(void)
{
	if (cprof_capture_mode == CPROF_CAPTURE_PROFILER_API && atomic_load(&cprof_state) != CPROF_ST_OFF) {
		cprof_active();
		capture_set(1, "cudaProfilerStart");
	}
	return real_cudaProfilerStart();
}

CPROF_EXPORT cudaError_t cudaProfilerStop(void)
{
	cudaError_t ret = real_cudaProfilerStop();

	if (cprof_capture_mode == CPROF_CAPTURE_PROFILER_API)
		capture_set(0, "cudaProfilerStop");
	return ret;
}
