/* Compile-only check: our _ptsz/_ptds prototypes against the real header's per-thread declarations. */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuda_runtime_api.h>

#include "cudart_pt.h"

/* Keeps the translation unit non-empty under -Wpedantic-like settings. */
int simgpu_sigcheck_pt_dummy;
