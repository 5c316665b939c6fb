/* Simulated libcuda.so.1: the driver API subset a Triton-style program uses, producing DRIVER records. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "engine.h"

#define DCBID(name) CUPTI_DRIVER_TRACE_CBID_##name
#define FUNC_MAGIC 0x46554e43u
#define MOD_MAGIC 0x4d4f4455u

struct CUctx_st {
	int device;
};

struct CUmod_st {
	uint32_t magic;
};

struct CUfunc_st {
	uint32_t magic;
	const char *name;
	uint16_t regs;
	int max_dyn_smem; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, as set by the program */
	int cache_config;
};

static struct CUctx_st g_primary;

/* Registers per thread: the cubin is not read, so a stable value derived from the name (as cudart does). */
static uint16_t regs_for(const char *name)
{
	uint32_t h = 2166136261u;
	for (const char *s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (uint16_t)(16 + (h % 7) * 8);
}
static int g_inited;
static __thread CUcontext t_ctx;

#define ENTER(name, flags)                                                                                      \
	struct simgpu_call c_;                                                                                  \
	int err = simgpu_api_enter(&c_, DCBID(name), SIMGPU_ENTER_DRIVER_API | (flags), NULL)

/* Driver errors for the states the runtime maps to cudaError_t. */
static int drv_err(int cuda_rt_err)
{
	switch (cuda_rt_err) {
	case 0: return CUDA_SUCCESS;
	case 2: return CUDA_ERROR_OUT_OF_MEMORY;
	case 100: return CUDA_ERROR_NO_DEVICE;
	case 35: return CUDA_ERROR_NO_DEVICE;
	case 400: return CUDA_ERROR_INVALID_HANDLE;
	case 600: return CUDA_ERROR_NOT_READY;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
}

static int finish(struct simgpu_call *c, int err)
{
	return simgpu_api_exit(c, err);
}

/* The runtime initialises the driver and makes the primary context current, as the real cudart does through
 * libcuda: driver calls a program reaches through cudaGetDriverEntryPoint (PyTorch does) see that state. */
static int drv_inited(void)
{
	return __atomic_load_n(&g_inited, __ATOMIC_ACQUIRE) || simgpu_driver_ready();
}

static CUcontext cur_ctx(void)
{
	return t_ctx ? t_ctx : simgpu_ctx_created() ? &g_primary : NULL;
}

static int need_ctx(void)
{
	if (!drv_inited())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!cur_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return drv_err(simgpu_ctx_ensure());
}

CUresult cuInit(unsigned int Flags)
{
	ENTER(cuInit, SIMGPU_ENTER_DRIVER);
	if (!err && Flags)
		err = CUDA_ERROR_INVALID_VALUE;
	else if (err || simgpu_cfg()->device_count < 1)
		err = CUDA_ERROR_NO_DEVICE;
	if (!err)
		__atomic_store_n(&g_inited, 1, __ATOMIC_RELEASE);
	return (CUresult)finish(&c_, err);
}

CUresult cuDriverGetVersion(int *driverVersion)
{
	ENTER(cuDriverGetVersion, 0);
	if (!driverVersion)
		err = CUDA_ERROR_INVALID_VALUE;
	else
		*driverVersion = CUDA_VERSION;
	return (CUresult)finish(&c_, err);
}

CUresult cuDeviceGetCount(int *count)
{
	ENTER(cuDeviceGetCount, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!count)
		err = CUDA_ERROR_INVALID_VALUE;
	else
		*count = simgpu_cfg()->device_count;
	return (CUresult)finish(&c_, err);
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	ENTER(cuDeviceGet, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!device || ordinal != 0)
		err = CUDA_ERROR_INVALID_DEVICE;
	else
		*device = 0;
	return (CUresult)finish(&c_, err);
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	ENTER(cuDeviceGetName, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!name || len <= 0 || dev != 0)
		err = CUDA_ERROR_INVALID_VALUE;
	else {
		strncpy(name, "Simulated GPU (cprof simgpu)", (size_t)len - 1);
		name[len - 1] = '\0';
	}
	return (CUresult)finish(&c_, err);
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	ENTER(cuDeviceGetAttribute, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!pi || dev != 0)
		err = CUDA_ERROR_INVALID_VALUE;
	if (err)
		return (CUresult)finish(&c_, err);
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = simgpu_cfg()->sm_count; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *pi = 49152; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = 232448; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *pi = 2048; break;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *pi = 65536; break;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *pi = 65536; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *pi = 233472; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *pi = 32; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *pi = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *pi = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *pi = 64; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *pi = 2147483647; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *pi = 65535; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *pi = 65535; break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *pi = 1980000; break;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *pi = 2619000; break;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *pi = 6144; break;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *pi = 52428800; break;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *pi = 65536; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = 0x19; break;
	default: *pi = 0; break;
	}
	return (CUresult)finish(&c_, 0);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	ENTER(cuDevicePrimaryCtxRetain, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!pctx || dev != 0)
		err = CUDA_ERROR_INVALID_VALUE;
	else
		err = drv_err(simgpu_ctx_ensure());
	if (!err)
		*pctx = &g_primary;
	return (CUresult)finish(&c_, err);
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	ENTER(cuDevicePrimaryCtxRelease_v2, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (dev != 0)
		err = CUDA_ERROR_INVALID_DEVICE;
	return (CUresult)finish(&c_, err);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	ENTER(cuCtxSetCurrent, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (ctx && ctx != &g_primary)
		err = CUDA_ERROR_INVALID_CONTEXT;
	else
		t_ctx = ctx;
	return (CUresult)finish(&c_, err);
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	ENTER(cuCtxGetCurrent, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!pctx)
		err = CUDA_ERROR_INVALID_VALUE;
	else
		*pctx = cur_ctx();
	return (CUresult)finish(&c_, err);
}

CUresult cuCtxSynchronize(void)
{
	ENTER(cuCtxSynchronize, 0);
	if (!err)
		err = need_ctx();
	if (!err)
		simgpu_device_sync(&c_);
	return (CUresult)finish(&c_, err);
}

/* No profiler to switch on the simulated GPU: the calls need a context, as the driver's do, and make their records. */
CUresult cuProfilerStart(void)
{
	ENTER(cuProfilerStart, 0);
	if (!err)
		err = need_ctx();
	return (CUresult)finish(&c_, err);
}

CUresult cuProfilerStop(void)
{
	ENTER(cuProfilerStop, 0);
	if (!err)
		err = need_ctx();
	return (CUresult)finish(&c_, err);
}

/* The image is not parsed: loading costs what a module load costs, any function name resolves. */
static int module_load(CUmodule *module, const void *image)
{
	int err = need_ctx();
	if (!err && (!module || !image))
		err = CUDA_ERROR_INVALID_VALUE;
	struct CUmod_st *m = NULL;
	if (!err && !(m = calloc(1, sizeof(*m))))
		err = CUDA_ERROR_OUT_OF_MEMORY;
	if (!err) {
		m->magic = MOD_MAGIC;
		simgpu_spin(simgpu_cfg()->module_load_ns);
		*module = m;
	}
	return err;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	ENTER(cuModuleLoadData, 0);
	if (!err)
		err = module_load(module, image);
	return (CUresult)finish(&c_, err);
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
			    void **optionValues)
{
	(void)numOptions, (void)options, (void)optionValues;
	ENTER(cuModuleLoadDataEx, 0);
	if (!err)
		err = module_load(module, image);
	return (CUresult)finish(&c_, err);
}

/* A cubin file (PyTorch's static Triton launcher loads the file Triton wrote): it must exist and be readable. */
CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	ENTER(cuModuleLoad, 0);
	if (!err && !fname)
		err = CUDA_ERROR_INVALID_VALUE;
	if (!err && access(fname, R_OK))
		err = CUDA_ERROR_FILE_NOT_FOUND;
	if (!err)
		err = module_load(module, fname);
	return (CUresult)finish(&c_, err);
}

CUresult cuModuleUnload(CUmodule hmod)
{
	ENTER(cuModuleUnload, 0);
	if (!err)
		err = need_ctx();
	if (!err && (!hmod || hmod->magic != MOD_MAGIC))
		err = CUDA_ERROR_INVALID_HANDLE;
	if (!err) {
		hmod->magic = 0;
		free(hmod);
	}
	return (CUresult)finish(&c_, err);
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	ENTER(cuModuleGetFunction, 0);
	if (!err)
		err = need_ctx();
	if (!err && (!hmod || hmod->magic != MOD_MAGIC))
		err = CUDA_ERROR_INVALID_HANDLE;
	if (!err && (!hfunc || !name))
		err = CUDA_ERROR_INVALID_VALUE;
	struct CUfunc_st *f = NULL;
	if (!err && !(f = calloc(1, sizeof(*f))))
		err = CUDA_ERROR_OUT_OF_MEMORY;
	if (!err) {
		f->magic = FUNC_MAGIC;
		f->name = simgpu_intern(name);
		f->regs = regs_for(name);
		f->max_dyn_smem = 49152;
		*hfunc = f;
	}
	return (CUresult)finish(&c_, err);
}

static int launch(struct simgpu_call *c, CUfunction f, const unsigned grid[3], const unsigned block[3],
		  unsigned smem, CUstream stream, int per_thread, const CUlaunchAttribute *attrs, unsigned nattrs)
{
	struct simgpu_stream *s;
	int err = need_ctx();
	if (err)
		return err;
	if (!f || f->magic != FUNC_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2] ||
	    (unsigned long long)block[0] * block[1] * block[2] > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	if (smem > (unsigned)(f->max_dyn_smem > 49152 ? f->max_dyn_smem : 49152))
		return CUDA_ERROR_INVALID_VALUE;
	if (simgpu_stream_resolve(stream, per_thread, &s))
		return CUDA_ERROR_INVALID_HANDLE;
	simgpu_module_load(f->name);
	simgpu_spin(simgpu_cfg()->launch_ns);
	struct simgpu_launch l = {
		.name = f->name,
		.grid = { grid[0], grid[1], grid[2] },
		.block = { block[0], block[1], block[2] },
		.dyn_smem = smem,
		.regs = f->regs,
	};
	for (unsigned i = 0; attrs && i < nattrs; i++) {
		if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
			l.cluster[0] = attrs[i].value.clusterDim.x;
			l.cluster[1] = attrs[i].value.clusterDim.y;
			l.cluster[2] = attrs[i].value.clusterDim.z;
		}
	}
	l.duration_ns = simgpu_kernel_cost(l.grid, l.block);
	simgpu_launch(c, s, &l);
	return 0;
}

static CUresult launch_api(uint32_t cbid, int per_thread, CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			   unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
			   unsigned int sharedMemBytes, CUstream hStream)
{
	struct simgpu_call c;
	int bad = !f || f->magic != FUNC_MAGIC;
	simgpu_api_enter(&c, cbid, SIMGPU_ENTER_DRIVER_API, bad ? NULL : f->name);
	const unsigned grid[3] = { gridDimX, gridDimY, gridDimZ }, block[3] = { blockDimX, blockDimY, blockDimZ };
	return (CUresult)finish(&c, launch(&c, f, grid, block, sharedMemBytes, hStream, per_thread, NULL, 0));
}

static CUresult launch_ex_api(uint32_t cbid, int per_thread, const CUlaunchConfig *config, CUfunction f)
{
	struct simgpu_call c;
	int bad = !f || f->magic != FUNC_MAGIC;
	simgpu_api_enter(&c, cbid, SIMGPU_ENTER_DRIVER_API, bad ? NULL : f->name);
	if (!config)
		return (CUresult)finish(&c, CUDA_ERROR_INVALID_VALUE);
	const unsigned grid[3] = { config->gridDimX, config->gridDimY, config->gridDimZ };
	const unsigned block[3] = { config->blockDimX, config->blockDimY, config->blockDimZ };
	return (CUresult)finish(&c, launch(&c, f, grid, block, config->sharedMemBytes, config->hStream, per_thread,
					   config->attrs, config->numAttrs));
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
			unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
			unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
	(void)kernelParams, (void)extra;
	return launch_api(DCBID(cuLaunchKernel), 0, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			  sharedMemBytes, hStream);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
			     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
			     unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
	(void)kernelParams, (void)extra;
	return launch_api(DCBID(cuLaunchKernel_ptsz), 1, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
			  blockDimZ, sharedMemBytes, hStream);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
	(void)kernelParams, (void)extra;
	return launch_ex_api(DCBID(cuLaunchKernelEx), 0, config, f);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
	(void)kernelParams, (void)extra;
	return launch_ex_api(DCBID(cuLaunchKernelEx_ptsz), 1, config, f);
}

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	ENTER(cuMemAlloc_v2, 0);
	if (!err)
		err = need_ctx();
	if (!err && (!dptr || !bytesize))
		err = CUDA_ERROR_INVALID_VALUE;
	void *p = NULL;
	if (!err) {
		simgpu_spin(simgpu_cfg()->malloc_ns);
		err = drv_err(simgpu_mem_alloc(&p, bytesize, SIMGPU_MEM_DEVICE));
	}
	if (!err)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return (CUresult)finish(&c_, err);
}

CUresult cuMemFree(CUdeviceptr dptr)
{
	ENTER(cuMemFree_v2, 0);
	if (!err)
		err = need_ctx();
	if (!err) {
		simgpu_device_sync(NULL);
		simgpu_spin(simgpu_cfg()->free_ns);
		err = drv_err(simgpu_mem_free((void *)(uintptr_t)dptr, SIMGPU_MEM_DEVICE));
	}
	return (CUresult)finish(&c_, err);
}

static int copy(struct simgpu_call *c, void *dst, const void *src, size_t n, int h2d)
{
	struct simgpu_stream *s;
	size_t avail;
	int err = need_ctx();
	if (err)
		return err;
	const void *dev = h2d ? dst : src;
	const void *host = h2d ? src : dst;
	if (n && (simgpu_mem_kind_of(dev, &avail) != SIMGPU_MEM_DEVICE || avail < n || !host))
		return CUDA_ERROR_INVALID_VALUE;
	simgpu_stream_resolve(NULL, 0, &s);
	simgpu_spin(simgpu_cfg()->memcpy_ns);
	if (!n)
		return 0;
	int hk = simgpu_mem_kind_of(host, NULL) == SIMGPU_MEM_PINNED ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
								      : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	uint64_t end = simgpu_copy(c, s, n, h2d ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
				   h2d ? hk : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
				   h2d ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : hk, 0);
	if (simgpu_cfg()->copy_data)
		memmove(dst, src, n); /* after queueing, so it overlaps the simulated transfer */
	simgpu_wait_until(end);
	return 0;
}

CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	ENTER(cuMemcpyHtoD_v2, 0);
	if (!err)
		err = copy(&c_, (void *)(uintptr_t)dstDevice, srcHost, ByteCount, 1);
	return (CUresult)finish(&c_, err);
}

CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	ENTER(cuMemcpyDtoH_v2, 0);
	if (!err)
		err = copy(&c_, dstHost, (const void *)(uintptr_t)srcDevice, ByteCount, 0);
	return (CUresult)finish(&c_, err);
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	ENTER(cuStreamCreate, 0);
	if (!err)
		err = need_ctx();
	if (!err && !phStream)
		err = CUDA_ERROR_INVALID_VALUE;
	if (!err) {
		simgpu_spin(simgpu_cfg()->api_ns);
		err = drv_err(simgpu_stream_create(Flags, 0, (void **)phStream));
	}
	return (CUresult)finish(&c_, err);
}

CUresult cuStreamDestroy(CUstream hStream)
{
	ENTER(cuStreamDestroy_v2, 0);
	if (!err)
		err = need_ctx();
	if (!err)
		err = drv_err(simgpu_stream_destroy(hStream));
	return (CUresult)finish(&c_, err);
}

CUresult cuStreamSynchronize(CUstream hStream)
{
	ENTER(cuStreamSynchronize, 0);
	struct simgpu_stream *s;
	if (!err)
		err = need_ctx();
	if (!err && simgpu_stream_resolve(hStream, 0, &s))
		err = CUDA_ERROR_INVALID_HANDLE;
	if (!err)
		simgpu_stream_sync(&c_, s);
	return (CUresult)finish(&c_, err);
}

static const char *error_name(CUresult e)
{
	switch (e) {
	case CUDA_SUCCESS: return "CUDA_SUCCESS";
	case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
	case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
	case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
	case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
	case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
	case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
	case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
	case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
	default: return NULL;
	}
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = error_name(error);
	return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = error_name(error);
	return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---------------------------------------------------------------- what PyTorch and the samples ask the driver */

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	ENTER(cuDevicePrimaryCtxGetState, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!flags || !active || dev != 0)
		err = CUDA_ERROR_INVALID_VALUE;
	else {
		*flags = 0;
		*active = simgpu_ctx_created();
	}
	return (CUresult)finish(&c_, err);
}

CUresult cuCtxGetDevice(CUdevice *device)
{
	ENTER(cuCtxGetDevice, 0);
	if (!err)
		err = need_ctx();
	if (!err && !device)
		err = CUDA_ERROR_INVALID_VALUE;
	if (!err)
		*device = 0;
	return (CUresult)finish(&c_, err);
}

/* A created context is the device's primary context: the simulator has one device and one context. */
CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
	(void)params, (void)flags;
	ENTER(cuCtxCreate_v4, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!pctx || dev != 0)
		err = CUDA_ERROR_INVALID_VALUE;
	else
		err = drv_err(simgpu_ctx_ensure());
	if (!err)
		*pctx = t_ctx = &g_primary;
	return (CUresult)finish(&c_, err);
}

CUresult cuCtxDestroy(CUcontext ctx)
{
	ENTER(cuCtxDestroy_v2, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (ctx != &g_primary)
		err = CUDA_ERROR_INVALID_CONTEXT;
	else if (t_ctx == ctx)
		t_ctx = NULL;
	return (CUresult)finish(&c_, err);
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	ENTER(cuDeviceTotalMem_v2, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!bytes || dev != 0)
		err = CUDA_ERROR_INVALID_VALUE;
	else
		*bytes = simgpu_cfg()->mem_bytes;
	return (CUresult)finish(&c_, err);
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	ENTER(cuDeviceComputeCapability, 0);
	if (!drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	else if (!major || !minor || dev != 0)
		err = CUDA_ERROR_INVALID_VALUE;
	else
		*major = 9, *minor = 0;
	return (CUresult)finish(&c_, err);
}

/* The driver's log callbacks: accepted, nothing is ever logged. */
CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc, void *userData, CUlogsCallbackHandle *callback_out)
{
	(void)callbackFunc, (void)userData;
	if (callback_out)
		*callback_out = (CUlogsCallbackHandle)&g_primary;
	return CUDA_SUCCESS;
}

CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback)
{
	(void)callback;
	return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- what Triton's and inductor's launchers ask */

static int check_func(CUfunction f)
{
	if (!drv_inited())
		return CUDA_ERROR_NOT_INITIALIZED;
	return !f || f->magic != FUNC_MAGIC ? CUDA_ERROR_INVALID_HANDLE : 0;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
	ENTER(cuFuncGetAttribute, 0);
	if (!err)
		err = check_func(hfunc);
	if (!err && !pi)
		err = CUDA_ERROR_INVALID_VALUE;
	if (err)
		return (CUresult)finish(&c_, err);
	switch (attrib) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
	case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = hfunc->regs; break;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = hfunc->max_dyn_smem; break;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = 90; break;
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
	default: *pi = 0; break; /* static/const/local (spill) sizes: none */
	}
	return (CUresult)finish(&c_, 0);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
	ENTER(cuFuncSetAttribute, 0);
	if (!err)
		err = check_func(hfunc);
	if (!err && attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
		if (value < 0 || value > 232448)
			err = CUDA_ERROR_INVALID_VALUE;
		else
			hfunc->max_dyn_smem = value;
	}
	return (CUresult)finish(&c_, err);
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
	ENTER(cuFuncSetCacheConfig, 0);
	if (!err)
		err = check_func(hfunc);
	if (!err)
		hfunc->cache_config = (int)config;
	return (CUresult)finish(&c_, err);
}

/* Blocks of f per multiprocessor, limited by threads, registers and shared memory as the hardware would be. */
static int blocks_per_sm(CUfunction f, int block, size_t smem)
{
	if (block <= 0)
		return 0;
	int warps = (block + 31) / 32;
	int by_threads = 2048 / (warps * 32);
	int by_regs = 65536 / (f->regs * warps * 32);
	int by_smem = smem ? (int)(233472 / (smem + 1024)) : 32;
	int n = by_threads < by_regs ? by_threads : by_regs;
	n = n < by_smem ? n : by_smem;
	return n < 32 ? n : 32;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
						     size_t dynamicSMemSize)
{
	ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessor, 0);
	if (!err)
		err = check_func(func);
	if (!err && !numBlocks)
		err = CUDA_ERROR_INVALID_VALUE;
	if (!err) {
		simgpu_spin(simgpu_cfg()->occupancy_ns);
		*numBlocks = blocks_per_sm(func, blockSize, dynamicSMemSize);
	}
	return (CUresult)finish(&c_, err);
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize,
							      size_t dynamicSMemSize, unsigned int flags)
{
	(void)flags;
	ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 0);
	if (!err)
		err = check_func(func);
	if (!err && !numBlocks)
		err = CUDA_ERROR_INVALID_VALUE;
	if (!err) {
		simgpu_spin(simgpu_cfg()->occupancy_ns);
		*numBlocks = blocks_per_sm(func, blockSize, dynamicSMemSize);
	}
	return (CUresult)finish(&c_, err);
}

/* Clusters of the configured size that fit on the device at once: SMs / cluster size, at least one. */
CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config)
{
	ENTER(cuOccupancyMaxActiveClusters, 0);
	if (!err)
		err = check_func(func);
	if (!err && (!numClusters || !config))
		err = CUDA_ERROR_INVALID_VALUE;
	if (!err) {
		unsigned size = 1;
		for (unsigned i = 0; config->attrs && i < config->numAttrs; i++)
			if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
				size = config->attrs[i].value.clusterDim.x * config->attrs[i].value.clusterDim.y *
				       config->attrs[i].value.clusterDim.z;
		*numClusters = size ? simgpu_cfg()->sm_count / (int)size : 0;
	}
	return (CUresult)finish(&c_, err);
}

/* Memory is host memory: a pointer the engine allocated (device or pinned) is its own device address. */
static int pointer_attr(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	size_t avail;
	enum simgpu_mem_kind k = simgpu_mem_kind_of((const void *)(uintptr_t)ptr, &avail);
	int known = k == SIMGPU_MEM_DEVICE || k == SIMGPU_MEM_PINNED;
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attribute) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		if (!known)
			return CUDA_ERROR_INVALID_VALUE;
		*(CUcontext *)data = &g_primary;
		return 0;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		if (!known)
			return CUDA_ERROR_INVALID_VALUE;
		*(unsigned *)data = k == SIMGPU_MEM_DEVICE ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
		return 0;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (!known)
			return CUDA_ERROR_INVALID_VALUE;
		*(CUdeviceptr *)data = ptr;
		return 0;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		if (!known)
			return CUDA_ERROR_INVALID_VALUE;
		*(int *)data = 0;
		return 0;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned *)data = 0;
		return 0;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	ENTER(cuPointerGetAttribute, 0);
	if (!err && !drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	if (!err)
		err = pointer_attr(data, attribute, ptr);
	return (CUresult)finish(&c_, err);
}

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
				CUdeviceptr ptr)
{
	ENTER(cuPointerGetAttributes, 0);
	if (!err && !drv_inited())
		err = CUDA_ERROR_NOT_INITIALIZED;
	if (!err && (!attributes || !data))
		err = CUDA_ERROR_INVALID_VALUE;
	/* unlike the single query, an unknown pointer is no error here: its attributes read as zero */
	for (unsigned i = 0; !err && i < numAttributes; i++)
		if (data[i] && pointer_attr(data[i], attributes[i], ptr))
			memset(data[i], 0, attributes[i] == CU_POINTER_ATTRIBUTE_CONTEXT ||
						   attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_POINTER ||
						   attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER
					       ? sizeof(void *)
					       : sizeof(unsigned));
	return (CUresult)finish(&c_, err);
}

/* The entry points a launcher asks for, as the driver hands them out: its own functions, not what the loader
 * would bind (a profiler's LD_PRELOAD export of the same name never comes back from here, as on a real driver).
 * The per-thread-stream flag picks the _ptsz flavour. The runtime's cudaGetDriverEntryPoint comes here too, through
 * cuGetProcAddress_v2 as the real runtime does. */
static void *driver_entry(const char *symbol, uint64_t flags)
{
	int ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
	if (!symbol)
		return NULL;
	if (!strcmp(symbol, "cuLaunchKernel"))
		return ptds ? (void *)cuLaunchKernel_ptsz : (void *)cuLaunchKernel;
	if (!strcmp(symbol, "cuLaunchKernelEx"))
		return ptds ? (void *)cuLaunchKernelEx_ptsz : (void *)cuLaunchKernelEx;
	if (!strcmp(symbol, "cuModuleGetFunction"))
		return (void *)cuModuleGetFunction;
	if (!strcmp(symbol, "cuModuleLoadData"))
		return (void *)cuModuleLoadData;
	if (!strcmp(symbol, "cuFuncGetAttribute"))
		return (void *)cuFuncGetAttribute;
	if (!strcmp(symbol, "cuFuncSetAttribute"))
		return (void *)cuFuncSetAttribute;
	if (!strcmp(symbol, "cuProfilerStart"))
		return (void *)cuProfilerStart;
	if (!strcmp(symbol, "cuProfilerStop"))
		return (void *)cuProfilerStop;
	return NULL;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *symbolStatus)
{
	void *p = driver_entry(symbol, flags);
	int found = p != NULL;
	if (found && pfn)
		*pfn = p;
	else
		found = simgpu_driver_symbol(symbol, cudaVersion, pfn);
	if (symbolStatus)
		*symbolStatus = found ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return found ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* The CUDA 11.3-11.8 signature, still exported by the driver for old callers. */
#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
