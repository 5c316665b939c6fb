/* Hooks on driver-API launches and profiler switches (libcuda.so.1): Triton, torch.compile's launcher, cuda-python and
 * cuProfilerStart/Stop, by name or by entry point. */
#include <stdint.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define PR_FMT "cprof: driver"
#include "common/log.h"
#include "preload/hook.h"

#define LIBCUDA "libcuda.so.1"

/*
 * A driver function reaches a program three ways: through the PLT or dlsym on libcuda's handle (dlsym.c sends
 * those lookups here), or as a pointer from cuGetProcAddress / cudaGetDriverEntryPoint[ByVersion], which the
 * runtime and Triton use and which never pass through the loader. For the third, the pointer the driver gave
 * is kept in a slot and the program gets a hook that calls that slot: each hooked name has one slot per
 * stream-semantics flag (0 default, 1 legacy, 2 per-thread), so the hook always forwards to exactly what the
 * driver handed out. A slot is written once; a later, different answer for it is passed through unhooked.
 */

/* cuda.h's legacy cuGetProcAddress (CUDA 11.3-11.8 callers), declared only for the driver's own build */
typedef CUresult (*gpa_v1_fn)(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

/* The launch's arguments, as for a runtime launch: the flusher names the kernel from the CUfunction. */
static inline void fill_launch(struct cprof_wire_api *ev, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			       unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream s)
{
	ev->flags |= CPROF_API_F_KERNEL_KEY;
	ev->ptr = (uintptr_t)f;
	ev->stream = (uintptr_t)s;
	ev->arg[CPROF_ARG_GRID_X] = gx;
	ev->arg[CPROF_ARG_GRID_Y] = gy;
	ev->arg[CPROF_ARG_GRID_Z] = gz;
	ev->arg[CPROF_ARG_BLOCK_X] = bx;
	ev->arg[CPROF_ARG_BLOCK_Y] = by;
	ev->arg[CPROF_ARG_BLOCK_Z] = bz;
	ev->arg[CPROF_ARG_SHMEM] = smem;
}

typedef CUresult (*launch_fn)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			      unsigned bz, unsigned smem, CUstream s, void **params, void **extra);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *config, CUfunction f, void **params, void **extra);
typedef CUresult (*getfn_fn)(CUfunction *hfunc, CUmodule hmod, const char *name);

/* A launch made from inside another hooked call (a library's own launches) is that call's: passed through. */
static inline __attribute__((always_inline)) CUresult do_launch(launch_fn real, unsigned api, CUfunction f,
								 unsigned gx, unsigned gy, unsigned gz, unsigned bx,
								 unsigned by, unsigned bz, unsigned smem, CUstream s,
								 void **params, void **extra)
{
	struct cprof_wire_api ev = { 0 };
	struct cprof_call c;
	CUresult ret;

	if (unlikely(real == NULL))
		return CUDA_ERROR_NOT_FOUND;
	if (cprof_tls.depth > 0 || !cprof_enter(&c, api))
		return real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
	ret = real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
	fill_launch(&ev, f, gx, gy, gz, bx, by, bz, smem, s);
	cprof_leave(&c, &ev, api, (int)ret);
	return ret;
}

static inline __attribute__((always_inline)) CUresult do_launch_ex(launch_ex_fn real, unsigned api,
								    const CUlaunchConfig *config, CUfunction f,
								    void **params, void **extra)
{
	struct cprof_wire_api ev = { 0 };
	struct cprof_call c;
	CUresult ret;

	if (unlikely(real == NULL))
		return CUDA_ERROR_NOT_FOUND;
	if (cprof_tls.depth > 0 || !cprof_enter(&c, api))
		return real(config, f, params, extra);
	ret = real(config, f, params, extra);
	if (config)
		fill_launch(&ev, f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
			    config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream);
	else
		ev.ptr = (uintptr_t)f, ev.flags |= CPROF_API_F_KERNEL_KEY;
	cprof_leave(&c, &ev, api, (int)ret);
	return ret;
}

/* cuModuleGetFunction: the CUfunction -> name map that names later launches. */
static inline __attribute__((always_inline)) CUresult do_getfn(getfn_fn real, CUfunction *hfunc, CUmodule hmod,
								const char *name)
{
	struct cprof_wire_api ev = { 0 };
	struct cprof_call c;
	CUresult ret;

	if (unlikely(real == NULL))
		return CUDA_ERROR_NOT_FOUND;
	if (!cprof_enter(&c, CPROF_API_cuModuleGetFunction))
		return real(hfunc, hmod, name);
	ret = real(hfunc, hmod, name);
	if (ret == CUDA_SUCCESS && hfunc && *hfunc && name) {
		cprof_kernel_register(*hfunc, name);
		ev.name = cprof_kernel_name_id(*hfunc);
		ev.ptr = (uintptr_t)*hfunc;
	}
	cprof_leave(&c, &ev, CPROF_API_cuModuleGetFunction, (int)ret);
	return ret;
}

typedef CUresult (*profiler_fn)(void);

/* cuProfilerStart/Stop: recorded like any call, and under --capture-range cudaProfilerApi they open and close the
 * window (capture.c: the start inside its window, the stop too). The real cudart's cudaProfilerStart/Stop call
 * them through the entry point cuGetProcAddress gave it, so through here: that call is the runtime one's, passed
 * through (a second switch would name the window's end after the driver's call, and record the call twice). */
static CUresult do_profiler(profiler_fn real, int start)
{
	unsigned api = start ? CPROF_API_cuProfilerStart : CPROF_API_cuProfilerStop;
	struct cprof_wire_api ev = { 0 };
	struct cprof_call c;
	CUresult ret;
	int recorded;

	if (unlikely(real == NULL))
		return CUDA_ERROR_NOT_FOUND;
	if (cprof_capture_in_runtime_profiler())
		return real();
	if (start)
		cprof_capture_profiler_api(1, "cuProfilerStart");
	recorded = cprof_enter(&c, api);
	ret = real();
	if (recorded)
		cprof_leave(&c, &ev, api, (int)ret);
	if (!start)
		cprof_capture_profiler_api(0, "cuProfilerStop");
	return ret;
}

/* ---------------------------------------------------------------- by name (PLT, dlsym on libcuda's handle) */

extern CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				    unsigned bz, unsigned smem, CUstream s, void **params, void **extra);
extern CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params, void **extra);

#define BYNAME_LAUNCH(sym)                                                                                      \
	CPROF_EXPORT CUresult sym(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
				  unsigned bz, unsigned smem, CUstream s, void **params, void **extra)          \
	{                                                                                                       \
		return do_launch(CPROF_REAL(sym, LIBCUDA), CPROF_API_##sym, f, gx, gy, gz, bx, by, bz, smem, s, \
				 params, extra);                                                                \
	}
#define BYNAME_LAUNCH_EX(sym)                                                                                   \
	CPROF_EXPORT CUresult sym(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)      \
	{                                                                                                       \
		return do_launch_ex(CPROF_REAL(sym, LIBCUDA), CPROF_API_##sym, config, f, params, extra);       \
	}

BYNAME_LAUNCH(cuLaunchKernel)
BYNAME_LAUNCH(cuLaunchKernel_ptsz)
BYNAME_LAUNCH_EX(cuLaunchKernelEx)
BYNAME_LAUNCH_EX(cuLaunchKernelEx_ptsz)

CPROF_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	return do_getfn(CPROF_REAL(cuModuleGetFunction, LIBCUDA), hfunc, hmod, name);
}

CPROF_EXPORT CUresult cuProfilerStart(void)
{
	return do_profiler(CPROF_REAL(cuProfilerStart, LIBCUDA), 1);
}

CPROF_EXPORT CUresult cuProfilerStop(void)
{
	return do_profiler(CPROF_REAL(cuProfilerStop, LIBCUDA), 0);
}

/* ---------------------------------------------------------------- by entry point: one slot per name and flag */

#define NFLAGS 3
static _Atomic(void *) slot_launch[NFLAGS], slot_launch_ex[NFLAGS], slot_getfn[NFLAGS], slot_prof_start[NFLAGS],
	slot_prof_stop[NFLAGS];

/* the per-thread flavour of a default-semantics slot is not known: named as the legacy one */
#define SLOT_LAUNCH(i, api)                                                                                     \
	static CUresult ep_launch_##i(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,          \
				      unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,        \
				      void **extra)                                                              \
	{                                                                                                       \
		return do_launch((launch_fn)atomic_load_explicit(&slot_launch[i], memory_order_acquire), api, f, \
				 gx, gy, gz, bx, by, bz, smem, s, params, extra);                               \
	}                                                                                                       \
	static CUresult ep_launch_ex_##i(const CUlaunchConfig *config, CUfunction f, void **params, void **extra) \
	{                                                                                                       \
		return do_launch_ex((launch_ex_fn)atomic_load_explicit(&slot_launch_ex[i], memory_order_acquire), \
				    api##Ex, config, f, params, extra);                                         \
	}                                                                                                       \
	static CUresult ep_getfn_##i(CUfunction *hfunc, CUmodule hmod, const char *name)                        \
	{                                                                                                       \
		return do_getfn((getfn_fn)atomic_load_explicit(&slot_getfn[i], memory_order_acquire), hfunc,     \
				hmod, name);                                                                    \
	}                                                                                                       \
	static CUresult ep_prof_start_##i(void)                                                                 \
	{                                                                                                       \
		return do_profiler((profiler_fn)atomic_load_explicit(&slot_prof_start[i], memory_order_acquire), \
				   1);                                                                           \
	}                                                                                                       \
	static CUresult ep_prof_stop_##i(void)                                                                  \
	{                                                                                                       \
		return do_profiler((profiler_fn)atomic_load_explicit(&slot_prof_stop[i], memory_order_acquire), \
				   0);                                                                           \
	}

#define CPROF_API_cuLaunchKernel_ptszEx CPROF_API_cuLaunchKernelEx_ptsz
SLOT_LAUNCH(0, CPROF_API_cuLaunchKernel)
SLOT_LAUNCH(1, CPROF_API_cuLaunchKernel)
SLOT_LAUNCH(2, CPROF_API_cuLaunchKernel_ptsz)

static void *const ep_launch[NFLAGS] = { (void *)ep_launch_0, (void *)ep_launch_1, (void *)ep_launch_2 };
static void *const ep_launch_ex[NFLAGS] = { (void *)ep_launch_ex_0, (void *)ep_launch_ex_1, (void *)ep_launch_ex_2 };
static void *const ep_getfn[NFLAGS] = { (void *)ep_getfn_0, (void *)ep_getfn_1, (void *)ep_getfn_2 };
static void *const ep_prof_start[NFLAGS] = { (void *)ep_prof_start_0, (void *)ep_prof_start_1,
					      (void *)ep_prof_start_2 };
static void *const ep_prof_stop[NFLAGS] = { (void *)ep_prof_stop_0, (void *)ep_prof_stop_1, (void *)ep_prof_stop_2 };

/* 1 when p is one of our own hooks (a lookup the dlsym interposer already answered, or one asked twice). */
static int is_ours(void *p)
{
	for (int i = 0; i < NFLAGS; i++)
		if (p == ep_launch[i] || p == ep_launch_ex[i] || p == ep_getfn[i] || p == ep_prof_start[i] ||
		    p == ep_prof_stop[i])
			return 1;
	return p == (void *)cuLaunchKernel || p == (void *)cuLaunchKernel_ptsz || p == (void *)cuLaunchKernelEx ||
	       p == (void *)cuLaunchKernelEx_ptsz || p == (void *)cuModuleGetFunction || p == (void *)cuProfilerStart ||
	       p == (void *)cuProfilerStop;
}

/* What the program gets for (symbol, flags) when the driver answered *pfn: our hook or the driver's own. */
static void *swap_entry(const char *symbol, void *real, uint64_t flags)
{
	_Atomic(void *) *slots;
	void *const *hooks;
	void *expected = NULL;
	unsigned i = (unsigned)(flags & 3);

	if (symbol == NULL || real == NULL || i >= NFLAGS || is_ours(real) ||
	    atomic_load_explicit(&cprof_state, memory_order_relaxed) == CPROF_ST_OFF)
		return real;
	if (strcmp(symbol, "cuLaunchKernel") == 0)
		slots = slot_launch, hooks = ep_launch;
	else if (strcmp(symbol, "cuLaunchKernelEx") == 0)
		slots = slot_launch_ex, hooks = ep_launch_ex;
	else if (strcmp(symbol, "cuModuleGetFunction") == 0)
		slots = slot_getfn, hooks = ep_getfn;
	else if (strcmp(symbol, "cuProfilerStart") == 0)
		slots = slot_prof_start, hooks = ep_prof_start;
	else if (strcmp(symbol, "cuProfilerStop") == 0)
		slots = slot_prof_stop, hooks = ep_prof_stop;
	else
		return real;
	if (atomic_compare_exchange_strong(&slots[i], &expected, real) || expected == real)
		return hooks[i];
	return real; /* another version of the function under the same flag: not ours to guess */
}

CPROF_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
					  CUdriverProcAddressQueryResult *symbolStatus)
{
	__typeof__(&cuGetProcAddress_v2) real = CPROF_REAL(cuGetProcAddress_v2, LIBCUDA);
	CUresult ret;

	if (unlikely(real == NULL))
		return CUDA_ERROR_NOT_FOUND;
	ret = real(symbol, pfn, cudaVersion, flags, symbolStatus);
	if (ret == CUDA_SUCCESS && pfn)
		*pfn = swap_entry(symbol, *pfn, flags);
	return ret;
}

#undef cuGetProcAddress
CPROF_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	gpa_v1_fn real = (gpa_v1_fn)CPROF_REAL(cuGetProcAddress, LIBCUDA);
	CUresult ret;

	if (unlikely(real == NULL))
		return CUDA_ERROR_NOT_FOUND;
	ret = real(symbol, pfn, cudaVersion, flags);
	if (ret == CUDA_SUCCESS && pfn)
		*pfn = swap_entry(symbol, *pfn, flags);
	return ret;
}

/* The runtime's doors to the same entry points (PyTorch's c10 driver API, cuda-python's runtime module); the
 * first is deprecated in CUDA 13 but still what older builds call. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
CPROF_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
						 enum cudaDriverEntryPointQueryResult *driverStatus)
{
	__typeof__(&cudaGetDriverEntryPoint) real = CPROF_REAL(cudaGetDriverEntryPoint, "libcudart.so.13");
	cudaError_t ret;

	if (unlikely(real == NULL))
		return cudaErrorSharedObjectSymbolNotFound;
	ret = real(symbol, funcPtr, flags, driverStatus);
	if (ret == cudaSuccess && funcPtr)
		*funcPtr = swap_entry(symbol, *funcPtr, flags);
	return ret;
}
#pragma GCC diagnostic pop

CPROF_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
							  unsigned long long flags,
							  enum cudaDriverEntryPointQueryResult *driverStatus)
{
	__typeof__(&cudaGetDriverEntryPointByVersion) real =
		CPROF_REAL(cudaGetDriverEntryPointByVersion, "libcudart.so.13");
	cudaError_t ret;

	if (unlikely(real == NULL))
		return cudaErrorSharedObjectSymbolNotFound;
	ret = real(symbol, funcPtr, cudaVersion, flags, driverStatus);
	if (ret == cudaSuccess && funcPtr)
		*funcPtr = swap_entry(symbol, *funcPtr, flags);
	return ret;
}
