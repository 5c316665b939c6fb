/* Simulated libcudart.so.13: the runtime API a nvcc -cudart shared program needs, on the simulated GPU. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cbid_names.h"
#include "cudart_pt.h"
#include "engine.h"

#define CBID(name) CUPTI_RUNTIME_TRACE_CBID_##name

/* The __cuda* registration and launch entry points nvcc emits; declared in C++-only headers. */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaUnregisterFatBinary(void **handle);
void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun, const char *deviceName,
			    int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
		       size_t size, int constant, int global);
void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress, char *deviceAddress, const char *deviceName,
			      int ext, size_t size, int constant, int global);
char __cudaInitModule(void **handle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
			       cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
				    cudaStream_t stream);

/* ---------------------------------------------------------------- per-thread state, call bracket */

static __thread cudaError_t t_last_error;

static cudaError_t finish(struct simgpu_call *c, int err)
{
	if (err)
		t_last_error = (cudaError_t)err;
	return (cudaError_t)simgpu_api_exit(c, err);
}

#define ENTER(name, flags)                                                                                      \
	struct simgpu_call c_;                                                                                  \
	int err = simgpu_api_enter(&c_, CBID(name), (flags), NULL)

#define CTX (SIMGPU_ENTER_DRIVER | SIMGPU_ENTER_CTX)
#define DRV SIMGPU_ENTER_DRIVER

static const struct simgpu_config *cfg(void)
{
	return simgpu_cfg();
}

/* ---------------------------------------------------------------- kernel registry */

#define KERNEL_MAGIC 0x4b524e4cu
#define KBUCKETS 4096

struct sg_kernel {
	uint32_t magic;
	uint16_t regs;
	const void *host_fun;
	const char *name;
	struct sg_kernel *next_by_fun;
	struct sg_kernel *next_by_addr;
};

static pthread_rwlock_t g_kernels_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct sg_kernel *g_by_fun[KBUCKETS];
static struct sg_kernel *g_by_addr[KBUCKETS];

static size_t ptr_bucket(const void *p)
{
	uintptr_t x = (uintptr_t)p;
	x ^= x >> 17;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 52) % KBUCKETS;
}

/* Registers per thread are not in a fat binary we could read without the driver: derive a stable one. */
static uint16_t regs_for(const char *name)
{
	uint32_t h = 2166136261u;
	for (const char *s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (uint16_t)(16 + (h % 7) * 8);
}

static struct sg_kernel *kernel_by_fun(const void *fun)
{
	pthread_rwlock_rdlock(&g_kernels_lock);
	struct sg_kernel *k = g_by_fun[ptr_bucket(fun)];
	while (k && k->host_fun != fun)
		k = k->next_by_fun;
	pthread_rwlock_unlock(&g_kernels_lock);
	return k;
}

static struct sg_kernel *kernel_by_handle(const void *h)
{
	pthread_rwlock_rdlock(&g_kernels_lock);
	struct sg_kernel *k = g_by_addr[ptr_bucket(h)];
	while (k && (const void *)k != h)
		k = k->next_by_addr;
	pthread_rwlock_unlock(&g_kernels_lock);
	return k;
}

/* cudaLaunchKernel takes a host stub or, since CUDA 12, a cudaKernel_t. */
static struct sg_kernel *kernel_lookup(const void *func)
{
	struct sg_kernel *k = kernel_by_fun(func);
	return k ? k : kernel_by_handle(func);
}

struct fatbin_handle {
	void *fatCubin;
	int nfun;
};

void **__cudaRegisterFatBinary(void *fatCubin)
{
	struct fatbin_handle *h = calloc(1, sizeof(*h));
	if (!h)
		abort();
	h->fatCubin = fatCubin;
	return (void **)h;
}

void __cudaRegisterFatBinaryEnd(void **handle)
{
	(void)handle;
}

void __cudaUnregisterFatBinary(void **handle)
{
	/* Kernel entries stay: interned names must stay valid for CUPTI consumers flushing at exit. */
	free(handle);
}

void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun, const char *deviceName,
			    int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
	(void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
	struct sg_kernel *k = calloc(1, sizeof(*k));
	if (!k)
		abort();
	k->magic = KERNEL_MAGIC;
	k->host_fun = hostFun;
	k->name = simgpu_intern(deviceName);
	k->regs = regs_for(k->name);
	pthread_rwlock_wrlock(&g_kernels_lock);
	size_t bf = ptr_bucket(hostFun), ba = ptr_bucket(k);
	k->next_by_fun = g_by_fun[bf];
	g_by_fun[bf] = k;
	k->next_by_addr = g_by_addr[ba];
	g_by_addr[ba] = k;
	pthread_rwlock_unlock(&g_kernels_lock);
	if (handle)
		((struct fatbin_handle *)handle)->nfun++;
}

void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
		       size_t size, int constant, int global)
{
	(void)handle, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)ext, (void)size, (void)constant,
		(void)global;
}

void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress, char *deviceAddress, const char *deviceName,
			      int ext, size_t size, int constant, int global)
{
	(void)handle, (void)hostVarPtrAddress, (void)deviceAddress, (void)deviceName, (void)ext, (void)size,
		(void)constant, (void)global;
}

char __cudaInitModule(void **handle)
{
	(void)handle;
	return 1;
}

/* ---------------------------------------------------------------- <<<>>> configuration stack */

struct call_config {
	dim3 grid, block;
	size_t smem;
	void *stream;
};

#define CONFIG_DEPTH 16
static __thread struct call_config t_cfg[CONFIG_DEPTH];
static __thread int t_ncfg;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream)
{
	if (t_ncfg >= CONFIG_DEPTH)
		return 1;
	t_cfg[t_ncfg++] = (struct call_config){ gridDim, blockDim, sharedMem, stream };
	return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
	if (t_ncfg == 0)
		return cudaErrorMissingConfiguration;
	struct call_config *c = &t_cfg[--t_ncfg];
	*gridDim = c->grid;
	*blockDim = c->block;
	*sharedMem = c->smem;
	*(void **)stream = c->stream;
	return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	struct sg_kernel *k = kernel_by_fun(func);
	if (!k)
		return cudaErrorInvalidDeviceFunction;
	*kernel = (cudaKernel_t)(void *)k;
	return cudaSuccess;
}

/* ---------------------------------------------------------------- launches */

static int launch_common(struct simgpu_call *c, struct sg_kernel *k, dim3 grid, dim3 block, size_t smem,
			 const void *stream, int ptsz)
{
	struct simgpu_stream *s;
	if (!k)
		return cudaErrorInvalidDeviceFunction;
	if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0 ||
	    (uint64_t)block.x * block.y * block.z > 1024 || block.z > 64 || grid.y > 65535 || grid.z > 65535)
		return cudaErrorInvalidConfiguration;
	if (smem > 232448)
		return cudaErrorInvalidValue;
	int err = simgpu_stream_resolve(stream, ptsz, &s);
	if (err)
		return err;
	simgpu_module_load(k->name);
	simgpu_spin(cfg()->launch_ns);
	struct simgpu_launch l = {
		.name = k->name,
		.grid = { grid.x, grid.y, grid.z },
		.block = { block.x, block.y, block.z },
		.dyn_smem = (uint32_t)smem,
		.regs = k->regs,
	};
	l.duration_ns = simgpu_kernel_cost(l.grid, l.block);
	simgpu_launch(c, s, &l);
	return 0;
}

/* func is a host stub or a cudaKernel_t (by_handle: only the latter); the lookup is inside the call's record, as
 * real cudart's argument work is after CUPTI's entry stamp: a record that left it out would put the simulator's
 * lookup into the time a hook sees outside the record, which cprof reads as CUPTI's in-call cost. */
static cudaError_t launch(uint32_t cbid, const void *func, int by_handle, dim3 grid, dim3 block, size_t smem,
			  const void *stream, int ptsz)
{
	struct simgpu_call c;
	uint64_t t0 = simgpu_now();
	struct sg_kernel *k = by_handle ? kernel_by_handle(func) : kernel_lookup(func);
	int err = simgpu_api_enter_at(&c, t0, cbid, CTX, k ? k->name : NULL);
	if (!err)
		err = launch_common(&c, k, grid, block, smem, stream, ptsz);
	return finish(&c, err);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
			     cudaStream_t stream)
{
	(void)args;
	return launch(CBID(cudaLaunchKernel_v7000), func, 0, gridDim, blockDim, sharedMem, stream, 0);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
				  cudaStream_t stream)
{
	(void)args;
	return launch(CBID(cudaLaunchKernel_ptsz_v7000), func, 0, gridDim, blockDim, sharedMem, stream, 1);
}

/* CUPTI in CUDA 13 reports <<<>>> launches as cudaLaunchKernel, so the records match what profilers expect. */
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
			       cudaStream_t stream)
{
	(void)args;
	return launch(CBID(cudaLaunchKernel_v7000), kernel, 1, gridDim, blockDim, sharedMem, stream,
		      0);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
				    cudaStream_t stream)
{
	(void)args;
	return launch(CBID(cudaLaunchKernel_ptsz_v7000), kernel, 1, gridDim, blockDim, sharedMem,
		      stream, 1);
}

static cudaError_t launch_ex(uint32_t cbid, const cudaLaunchConfig_t *config, const void *func, int ptsz)
{
	struct simgpu_call c;
	uint64_t t0 = simgpu_now();
	struct sg_kernel *k = kernel_lookup(func); /* inside the record, as in launch() */
	int err = simgpu_api_enter_at(&c, t0, cbid, CTX, k ? k->name : NULL);
	if (!err && !config)
		err = cudaErrorInvalidValue;
	if (!err)
		err = launch_common(&c, k, config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream,
				    ptsz);
	if (!err) {
		for (unsigned i = 0; i < config->numAttrs; i++) {
			if (config->attrs[i].id == cudaLaunchAttributeClusterDimension) {
				c.gpu.kernel.clusterX = config->attrs[i].val.clusterDim.x;
				c.gpu.kernel.clusterY = config->attrs[i].val.clusterDim.y;
				c.gpu.kernel.clusterZ = config->attrs[i].val.clusterDim.z;
			}
		}
	}
	return finish(&c, err);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	(void)args;
	return launch_ex(CBID(cudaLaunchKernelExC_v11060), config, func, 0);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	(void)args;
	return launch_ex(CBID(cudaLaunchKernelExC_ptsz_v11060), config, func, 1);
}

static cudaError_t graph_launch(uint32_t cbid, cudaGraphExec_t graphExec, cudaStream_t stream, int ptsz)
{
	struct simgpu_graph *e = (struct simgpu_graph *)(void *)graphExec;
	struct simgpu_stream *s;
	struct simgpu_call c;
	int err = simgpu_api_enter(&c, cbid, CTX, NULL);
	if (!err && !simgpu_graph_valid(e, 1))
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_stream_resolve(stream, ptsz, &s);
	if (!err) {
		simgpu_spin(cfg()->launch_ns);
		simgpu_graph_launch(&c, s, e);
	}
	return finish(&c, err);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	return graph_launch(CBID(cudaGraphLaunch_v10000), graphExec, stream, 0);
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	return graph_launch(CBID(cudaGraphLaunch_ptsz_v10000), graphExec, stream, 1);
}

/* ---------------------------------------------------------------- device */

static void fill_props(struct cudaDeviceProp *p)
{
	const struct simgpu_config *g = cfg();
	memset(p, 0, sizeof(*p));
	strcpy(p->name, "Simulated GPU (cprof simgpu)");
	memcpy(p->uuid.bytes, "cprof-simgpu-000", 16);
	p->totalGlobalMem = g->mem_bytes;
	p->sharedMemPerBlock = 49152;
	p->regsPerBlock = 65536;
	p->warpSize = 32;
	p->memPitch = 2147483647;
	p->maxThreadsPerBlock = 1024;
	p->maxThreadsDim[0] = 1024;
	p->maxThreadsDim[1] = 1024;
	p->maxThreadsDim[2] = 64;
	p->maxGridSize[0] = 2147483647;
	p->maxGridSize[1] = 65535;
	p->maxGridSize[2] = 65535;
	p->totalConstMem = 65536;
	p->major = 9;
	p->minor = 0;
	p->textureAlignment = 512;
	p->texturePitchAlignment = 32;
	p->multiProcessorCount = g->sm_count;
	p->canMapHostMemory = 1;
	p->surfaceAlignment = 512;
	p->concurrentKernels = 1;
	p->ECCEnabled = 1;
	p->pciBusID = 0x19;
	p->asyncEngineCount = 3;
	p->unifiedAddressing = 1;
	p->memoryBusWidth = 6144;
	p->l2CacheSize = 52428800;
	p->persistingL2CacheMaxSize = 32768000;
	p->maxThreadsPerMultiProcessor = 2048;
	p->streamPrioritiesSupported = 1;
	p->globalL1CacheSupported = 1;
	p->localL1CacheSupported = 1;
	p->sharedMemPerMultiprocessor = 233472;
	p->regsPerMultiprocessor = 65536;
	p->managedMemory = 1;
	p->concurrentManagedAccess = 1;
	p->computePreemptionSupported = 1;
	p->cooperativeLaunch = 1;
	p->sharedMemPerBlockOptin = 232448;
	p->maxBlocksPerMultiProcessor = 32;
	p->accessPolicyMaxWindowSize = 134213632;
	p->reservedSharedMemPerBlock = 1024;
	p->hostRegisterSupported = 1;
	p->memoryPoolsSupported = 1;
	p->clusterLaunch = 1;
	p->hostNumaId = -1;
	p->deviceNumaId = -1;
	p->gpuPciDeviceID = 0x233510de;
}

static int check_device(int device)
{
	if (cfg()->device_count < 1)
		return cudaErrorNoDevice;
	return device >= 0 && device < cfg()->device_count ? 0 : cudaErrorInvalidDevice;
}

cudaError_t cudaGetDeviceCount(int *count)
{
	ENTER(cudaGetDeviceCount_v3020, DRV);
	if (!count && !err)
		err = cudaErrorInvalidValue;
	if (count)
		*count = err ? 0 : cfg()->device_count;
	if (!err && cfg()->device_count < 1)
		err = cudaErrorNoDevice;
	simgpu_spin(cfg()->api_ns);
	return finish(&c_, err);
}

cudaError_t cudaSetDevice(int device)
{
	/* Since CUDA 12 cudaSetDevice creates the primary context. */
	ENTER(cudaSetDevice_v3020, DRV);
	if (!err)
		err = check_device(device);
	if (!err)
		err = simgpu_ctx_ensure();
	if (!err)
		simgpu_set_device(device);
	return finish(&c_, err);
}

cudaError_t cudaGetDevice(int *device)
{
	ENTER(cudaGetDevice_v3020, DRV);
	if (!err && !device)
		err = cudaErrorInvalidValue;
	if (!err && cfg()->device_count < 1)
		err = cudaErrorNoDevice;
	if (!err)
		*device = simgpu_get_device();
	return finish(&c_, err);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	ENTER(cudaGetDeviceProperties_v12000, DRV);
	if (!err && !prop)
		err = cudaErrorInvalidValue;
	if (!err)
		err = check_device(device);
	if (!err)
		fill_props(prop);
	simgpu_spin(cfg()->api_ns);
	return finish(&c_, err);
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	ENTER(cudaDeviceGetAttribute_v5000, DRV);
	if (!err && !value)
		err = cudaErrorInvalidValue;
	if (!err)
		err = check_device(device);
	if (err)
		return finish(&c_, err);
	struct cudaDeviceProp p;
	fill_props(&p);
	int v;
	switch (attr) {
	case cudaDevAttrMaxThreadsPerBlock: v = p.maxThreadsPerBlock; break;
	case cudaDevAttrMaxBlockDimX: v = p.maxThreadsDim[0]; break;
	case cudaDevAttrMaxBlockDimY: v = p.maxThreadsDim[1]; break;
	case cudaDevAttrMaxBlockDimZ: v = p.maxThreadsDim[2]; break;
	case cudaDevAttrMaxGridDimX: v = p.maxGridSize[0]; break;
	case cudaDevAttrMaxGridDimY: v = p.maxGridSize[1]; break;
	case cudaDevAttrMaxGridDimZ: v = p.maxGridSize[2]; break;
	case cudaDevAttrMaxSharedMemoryPerBlock: v = (int)p.sharedMemPerBlock; break;
	case cudaDevAttrTotalConstantMemory: v = (int)p.totalConstMem; break;
	case cudaDevAttrWarpSize: v = p.warpSize; break;
	case cudaDevAttrMaxRegistersPerBlock: v = p.regsPerBlock; break;
	case cudaDevAttrClockRate: v = 1980000; break;
	case cudaDevAttrMultiProcessorCount: v = p.multiProcessorCount; break;
	case cudaDevAttrComputeCapabilityMajor: v = p.major; break;
	case cudaDevAttrComputeCapabilityMinor: v = p.minor; break;
	case cudaDevAttrMaxThreadsPerMultiProcessor: v = p.maxThreadsPerMultiProcessor; break;
	case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = (int)p.sharedMemPerMultiprocessor; break;
	case cudaDevAttrMaxRegistersPerMultiprocessor: v = p.regsPerMultiprocessor; break;
	case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = (int)p.sharedMemPerBlockOptin; break;
	case cudaDevAttrMaxBlocksPerMultiprocessor: v = p.maxBlocksPerMultiProcessor; break;
	case cudaDevAttrL2CacheSize: v = p.l2CacheSize; break;
	case cudaDevAttrGlobalMemoryBusWidth: v = p.memoryBusWidth; break;
	case cudaDevAttrMemoryClockRate: v = 2619000; break;
	case cudaDevAttrAsyncEngineCount: v = p.asyncEngineCount; break;
	case cudaDevAttrUnifiedAddressing: v = 1; break;
	case cudaDevAttrConcurrentKernels: v = 1; break;
	case cudaDevAttrEccEnabled: v = 1; break;
	case cudaDevAttrPciBusId: v = p.pciBusID; break;
	case cudaDevAttrCanMapHostMemory: v = 1; break;
	case cudaDevAttrManagedMemory: v = 1; break;
	case cudaDevAttrConcurrentManagedAccess: v = 1; break;
	case cudaDevAttrCooperativeLaunch: v = 1; break;
	case cudaDevAttrMemoryPoolsSupported: v = 1; break;
	case cudaDevAttrClusterLaunch: v = 1; break;
	case cudaDevAttrStreamPrioritiesSupported: v = 1; break;
	case cudaDevAttrIntegrated: v = 0; break;
	default: v = 0; break;
	}
	*value = v;
	return finish(&c_, 0);
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	ENTER(cudaRuntimeGetVersion_v3020, 0);
	if (!runtimeVersion)
		err = cudaErrorInvalidValue;
	else
		*runtimeVersion = CUDART_VERSION;
	return finish(&c_, err);
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	ENTER(cudaDriverGetVersion_v3020, 0);
	if (!driverVersion)
		err = cudaErrorInvalidValue;
	else
		*driverVersion = cfg()->no_driver ? 0 : 13000;
	return finish(&c_, err);
}

cudaError_t cudaDeviceSynchronize(void)
{
	ENTER(cudaDeviceSynchronize_v3020, CTX);
	if (!err)
		err = simgpu_device_sync(&c_);
	return finish(&c_, err);
}

cudaError_t cudaDeviceReset(void)
{
	ENTER(cudaDeviceReset_v3020, DRV);
	if (!err && simgpu_ctx_created()) {
		simgpu_device_sync(NULL);
		simgpu_ctx_reset();
	}
	return finish(&c_, err);
}

cudaError_t cudaGetLastError(void)
{
	ENTER(cudaGetLastError_v3020, 0);
	(void)err;
	cudaError_t e = t_last_error;
	t_last_error = cudaSuccess;
	return (cudaError_t)simgpu_api_exit(&c_, e);
}

cudaError_t cudaPeekAtLastError(void)
{
	ENTER(cudaPeekAtLastError_v3020, 0);
	(void)err;
	return (cudaError_t)simgpu_api_exit(&c_, t_last_error);
}

static const char *error_name(cudaError_t error)
{
	if ((unsigned)error < sizeof(sg_cuda_error_names) / sizeof(sg_cuda_error_names[0]) &&
	    sg_cuda_error_names[error])
		return sg_cuda_error_names[error];
	return "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t error)
{
	return error_name(error);
}

const char *cudaGetErrorString(cudaError_t error)
{
	switch (error) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorMemoryAllocation: return "out of memory";
	case cudaErrorInitializationError: return "initialization error";
	case cudaErrorInvalidConfiguration: return "invalid configuration argument";
	case cudaErrorInvalidDeviceFunction: return "invalid device function";
	case cudaErrorInsufficientDriver:
		return "CUDA driver version is insufficient for CUDA runtime version";
	case cudaErrorNoDevice: return "no CUDA-capable device is detected";
	case cudaErrorInvalidDevice: return "invalid device ordinal";
	case cudaErrorInvalidResourceHandle: return "invalid resource handle";
	case cudaErrorNotReady: return "device not ready";
	case cudaErrorNotSupported: return "operation not supported";
	case cudaErrorMissingConfiguration: return "__global__ function call is not configured";
	case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
	case cudaErrorUnknown: return "unknown error";
	default: break;
	}
	return error_name(error);
}

/* ---------------------------------------------------------------- memory */

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	ENTER(cudaMalloc_v3020, CTX);
	if (!err && !devPtr)
		err = cudaErrorInvalidValue;
	if (!err) {
		simgpu_spin(cfg()->malloc_ns);
		err = simgpu_mem_alloc(devPtr, size, SIMGPU_MEM_DEVICE);
	}
	return finish(&c_, err);
}

cudaError_t cudaFree(void *devPtr)
{
	/* cudaFree(0) is the idiomatic way to create the context: it must pay for it. */
	ENTER(cudaFree_v3020, CTX);
	if (!err && devPtr) {
		simgpu_device_sync(NULL);
		simgpu_spin(cfg()->free_ns);
		err = simgpu_mem_free(devPtr, SIMGPU_MEM_DEVICE);
	}
	return finish(&c_, err);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	ENTER(cudaMallocHost_v3020, CTX);
	if (!err && !ptr)
		err = cudaErrorInvalidValue;
	if (!err) {
		simgpu_spin(cfg()->malloc_ns);
		err = simgpu_mem_alloc(ptr, size, SIMGPU_MEM_PINNED);
	}
	return finish(&c_, err);
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	(void)flags;
	ENTER(cudaHostAlloc_v3020, CTX);
	if (!err && !pHost)
		err = cudaErrorInvalidValue;
	if (!err) {
		simgpu_spin(cfg()->malloc_ns);
		err = simgpu_mem_alloc(pHost, size, SIMGPU_MEM_PINNED);
	}
	return finish(&c_, err);
}

cudaError_t cudaFreeHost(void *ptr)
{
	ENTER(cudaFreeHost_v3020, CTX);
	if (!err && ptr) {
		simgpu_device_sync(NULL);
		simgpu_spin(cfg()->free_ns);
		err = simgpu_mem_free(ptr, SIMGPU_MEM_PINNED);
	}
	return finish(&c_, err);
}

static int malloc_async(void **p, size_t size, const void *stream, int ptsz)
{
	struct simgpu_stream *s;
	if (!p)
		return cudaErrorInvalidValue;
	int err = simgpu_stream_resolve(stream, ptsz, &s);
	if (err)
		return err;
	/* Stream-ordered pools are cheap once warm: a launch-sized cost. */
	simgpu_spin(cfg()->api_ns * 4);
	return simgpu_mem_alloc(p, size, SIMGPU_MEM_DEVICE);
}

static int free_async(void *p, const void *stream, int ptsz)
{
	struct simgpu_stream *s;
	int err = simgpu_stream_resolve(stream, ptsz, &s);
	if (err)
		return err;
	simgpu_spin(cfg()->api_ns * 4);
	/* Memory is host memory: freeing it while queued work "uses" it is harmless, kernels never run. */
	return simgpu_mem_free(p, SIMGPU_MEM_DEVICE);
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	ENTER(cudaMallocAsync_v11020, CTX);
	if (!err)
		err = malloc_async(devPtr, size, hStream, 0);
	return finish(&c_, err);
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	ENTER(cudaMallocAsync_ptsz_v11020, CTX);
	if (!err)
		err = malloc_async(devPtr, size, hStream, 1);
	return finish(&c_, err);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	ENTER(cudaFreeAsync_v11020, CTX);
	if (!err)
		err = free_async(devPtr, hStream, 0);
	return finish(&c_, err);
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	ENTER(cudaFreeAsync_ptsz_v11020, CTX);
	if (!err)
		err = free_async(devPtr, hStream, 1);
	return finish(&c_, err);
}

cudaError_t cudaMemGetInfo(size_t *free_, size_t *total)
{
	ENTER(cudaMemGetInfo_v3020, CTX);
	if (!err && (!free_ || !total))
		err = cudaErrorInvalidValue;
	if (!err) {
		*total = cfg()->mem_bytes;
		*free_ = cfg()->mem_bytes - simgpu_mem_used();
	}
	return finish(&c_, err);
}

static int cupti_mem_kind(enum simgpu_mem_kind k)
{
	switch (k) {
	case SIMGPU_MEM_DEVICE: return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	case SIMGPU_MEM_PINNED: return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	default: return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	}
}

static int do_memcpy(struct simgpu_call *c, void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
		     const void *stream, int async, int per_thread)
{
	struct simgpu_stream *s;
	size_t davail, savail;
	enum simgpu_mem_kind dk = simgpu_mem_kind_of(dst, &davail);
	enum simgpu_mem_kind sk = simgpu_mem_kind_of(src, &savail);
	int ddev = dk == SIMGPU_MEM_DEVICE, sdev = sk == SIMGPU_MEM_DEVICE;
	int err = simgpu_stream_resolve(stream, per_thread, &s);
	if (err)
		return err;
	if (count && (!dst || !src))
		return cudaErrorInvalidValue;
	/* With unified addressing the pointers decide; an explicit kind that contradicts them is an error. */
	switch (kind) {
	case cudaMemcpyHostToHost: err = (ddev || sdev) ? cudaErrorInvalidValue : 0; break;
	case cudaMemcpyHostToDevice: err = (!ddev || sdev) ? cudaErrorInvalidValue : 0; break;
	case cudaMemcpyDeviceToHost: err = (ddev || !sdev) ? cudaErrorInvalidValue : 0; break;
	case cudaMemcpyDeviceToDevice: err = (!ddev || !sdev) ? cudaErrorInvalidValue : 0; break;
	case cudaMemcpyDefault: break;
	default: return cudaErrorInvalidMemcpyDirection;
	}
	if (err)
		return err;
	if ((ddev && davail < count) || (sdev && savail < count))
		return cudaErrorInvalidValue;
	int ck = ddev ? (sdev ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD : CUPTI_ACTIVITY_MEMCPY_KIND_HTOD)
		      : (sdev ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOH : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
	simgpu_spin(cfg()->memcpy_ns);
	if (!count)
		return 0;
	/* Queue first: the host's own memmove then overlaps the simulated transfer instead of delaying it. */
	uint64_t end = simgpu_copy(c, s, count, ck, cupti_mem_kind(sk), cupti_mem_kind(dk), async);
	if (cfg()->copy_data)
		memmove(dst, src, count);
	/*
	 * Synchronous copies return when done, except device-to-device; pageable host memory makes an
	 * async copy synchronous too (the driver stages it), which is what profilers should reveal.
	 */
	int host_waits = !async ? ck != CUPTI_ACTIVITY_MEMCPY_KIND_DTOD
				: ((ck == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD && sk == SIMGPU_MEM_PAGEABLE) ||
				   (ck == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH && dk == SIMGPU_MEM_PAGEABLE) ||
				   ck == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
	if (host_waits)
		simgpu_wait_until(end);
	return 0;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	ENTER(cudaMemcpy_v3020, CTX);
	if (!err)
		err = do_memcpy(&c_, dst, src, count, kind, NULL, 0, 0);
	return finish(&c_, err);
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	ENTER(cudaMemcpy_ptds_v7000, CTX);
	if (!err)
		err = do_memcpy(&c_, dst, src, count, kind, NULL, 0, 1);
	return finish(&c_, err);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	ENTER(cudaMemcpyAsync_v3020, CTX);
	if (!err)
		err = do_memcpy(&c_, dst, src, count, kind, stream, 1, 0);
	return finish(&c_, err);
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				 cudaStream_t stream)
{
	ENTER(cudaMemcpyAsync_ptsz_v7000, CTX);
	if (!err)
		err = do_memcpy(&c_, dst, src, count, kind, stream, 1, 1);
	return finish(&c_, err);
}

static int do_memset(struct simgpu_call *c, void *p, int value, size_t count, const void *stream, int async,
		     int per_thread)
{
	struct simgpu_stream *s;
	size_t avail;
	int err = simgpu_stream_resolve(stream, per_thread, &s);
	if (err)
		return err;
	if (count && (simgpu_mem_kind_of(p, &avail) != SIMGPU_MEM_DEVICE || avail < count))
		return cudaErrorInvalidValue;
	simgpu_spin(cfg()->memcpy_ns);
	if (count) {
		simgpu_memset(c, s, count, value, async);
		if (cfg()->copy_data)
			memset(p, value, count);
	}
	/* cudaMemset on device memory is asynchronous to the host as well. */
	return 0;
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	ENTER(cudaMemset_v3020, CTX);
	if (!err)
		err = do_memset(&c_, devPtr, value, count, NULL, 0, 0);
	return finish(&c_, err);
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	ENTER(cudaMemset_ptds_v7000, CTX);
	if (!err)
		err = do_memset(&c_, devPtr, value, count, NULL, 0, 1);
	return finish(&c_, err);
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	ENTER(cudaMemsetAsync_v3020, CTX);
	if (!err)
		err = do_memset(&c_, devPtr, value, count, stream, 1, 0);
	return finish(&c_, err);
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	ENTER(cudaMemsetAsync_ptsz_v7000, CTX);
	if (!err)
		err = do_memset(&c_, devPtr, value, count, stream, 1, 1);
	return finish(&c_, err);
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
	ENTER(cudaPointerGetAttributes_v4000, CTX);
	if (!err && !attributes)
		err = cudaErrorInvalidValue;
	if (!err) {
		enum simgpu_mem_kind k = simgpu_mem_kind_of(ptr, NULL);
		memset(attributes, 0, sizeof(*attributes));
		attributes->type = k == SIMGPU_MEM_DEVICE   ? cudaMemoryTypeDevice
				   : k == SIMGPU_MEM_PINNED ? cudaMemoryTypeHost
							    : cudaMemoryTypeUnregistered;
		attributes->device = 0;
		attributes->devicePointer = k == SIMGPU_MEM_PAGEABLE ? NULL : (void *)(uintptr_t)ptr;
		attributes->hostPointer = k == SIMGPU_MEM_DEVICE ? NULL : (void *)(uintptr_t)ptr;
	}
	return finish(&c_, err);
}

/* ---------------------------------------------------------------- streams and events */

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	ENTER(cudaStreamCreate_v3020, CTX);
	if (!err && !pStream)
		err = cudaErrorInvalidValue;
	if (!err) {
		simgpu_spin(cfg()->api_ns);
		err = simgpu_stream_create(cudaStreamDefault, 0, (void **)pStream);
	}
	return finish(&c_, err);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	ENTER(cudaStreamCreateWithFlags_v5000, CTX);
	if (!err && (!pStream || (flags & ~1u)))
		err = cudaErrorInvalidValue;
	if (!err) {
		simgpu_spin(cfg()->api_ns);
		err = simgpu_stream_create(flags, 0, (void **)pStream);
	}
	return finish(&c_, err);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
	ENTER(cudaStreamCreateWithPriority_v5050, CTX);
	if (!err && (!pStream || (flags & ~1u)))
		err = cudaErrorInvalidValue;
	if (!err) {
		simgpu_spin(cfg()->api_ns);
		err = simgpu_stream_create(flags, priority < -5 ? -5 : priority > 0 ? 0 : priority,
					   (void **)pStream);
	}
	return finish(&c_, err);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	ENTER(cudaDeviceGetStreamPriorityRange_v5050, CTX);
	if (!err) {
		if (leastPriority)
			*leastPriority = 0;
		if (greatestPriority)
			*greatestPriority = -5;
	}
	return finish(&c_, err);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	ENTER(cudaStreamDestroy_v5050, CTX);
	if (!err) {
		simgpu_spin(cfg()->api_ns);
		err = simgpu_stream_destroy(stream);
	}
	return finish(&c_, err);
}

static int stream_sync(struct simgpu_call *c, const void *stream, int ptsz)
{
	struct simgpu_stream *s;
	int err = simgpu_stream_resolve(stream, ptsz, &s);
	return err ? err : simgpu_stream_sync(c, s);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	ENTER(cudaStreamSynchronize_v3020, CTX);
	if (!err)
		err = stream_sync(&c_, stream, 0);
	return finish(&c_, err);
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	ENTER(cudaStreamSynchronize_ptsz_v7000, CTX);
	if (!err)
		err = stream_sync(&c_, stream, 1);
	return finish(&c_, err);
}

static int stream_query(const void *stream, int ptsz)
{
	struct simgpu_stream *s;
	int err = simgpu_stream_resolve(stream, ptsz, &s);
	return err ? err : simgpu_stream_query(s);
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	ENTER(cudaStreamQuery_v3020, CTX);
	if (!err)
		err = stream_query(stream, 0);
	return finish(&c_, err);
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	ENTER(cudaStreamQuery_ptsz_v7000, CTX);
	if (!err)
		err = stream_query(stream, 1);
	return finish(&c_, err);
}

static int stream_wait_event(struct simgpu_call *c, const void *stream, const void *event, int ptsz)
{
	struct simgpu_stream *s;
	int err = simgpu_stream_resolve(stream, ptsz, &s);
	if (err)
		return err;
	simgpu_spin(cfg()->api_ns);
	return simgpu_stream_wait_event(c, s, event);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	(void)flags;
	ENTER(cudaStreamWaitEvent_v3020, CTX);
	if (!err)
		err = stream_wait_event(&c_, stream, event, 0);
	return finish(&c_, err);
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	(void)flags;
	ENTER(cudaStreamWaitEvent_ptsz_v7000, CTX);
	if (!err)
		err = stream_wait_event(&c_, stream, event, 1);
	return finish(&c_, err);
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	ENTER(cudaEventCreate_v3020, CTX);
	if (!err && !event)
		err = cudaErrorInvalidValue;
	if (!err) {
		simgpu_spin(cfg()->api_ns);
		err = simgpu_event_create(cudaEventDefault, (void **)event);
	}
	return finish(&c_, err);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	ENTER(cudaEventCreateWithFlags_v3020, CTX);
	if (!err && !event)
		err = cudaErrorInvalidValue;
	if (!err) {
		simgpu_spin(cfg()->api_ns);
		err = simgpu_event_create(flags, (void **)event);
	}
	return finish(&c_, err);
}

static int event_record(const void *event, const void *stream, int ptsz)
{
	struct simgpu_stream *s;
	int err = simgpu_stream_resolve(stream, ptsz, &s);
	if (err)
		return err;
	simgpu_spin(cfg()->api_ns);
	return simgpu_event_record(event, s);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	ENTER(cudaEventRecord_v3020, CTX);
	if (!err)
		err = event_record(event, stream, 0);
	return finish(&c_, err);
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	ENTER(cudaEventRecord_ptsz_v7000, CTX);
	if (!err)
		err = event_record(event, stream, 1);
	return finish(&c_, err);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	ENTER(cudaEventSynchronize_v3020, CTX);
	if (!err)
		err = simgpu_event_sync(&c_, event);
	return finish(&c_, err);
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
	ENTER(cudaEventQuery_v3020, CTX);
	if (!err)
		err = simgpu_event_query(event);
	return finish(&c_, err);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	ENTER(cudaEventElapsedTime_v12080, CTX);
	if (!err && !ms)
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_event_elapsed(ms, start, end);
	return finish(&c_, err);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	ENTER(cudaEventDestroy_v3020, CTX);
	if (!err)
		err = simgpu_event_destroy(event);
	return finish(&c_, err);
}

/* ---------------------------------------------------------------- functions and occupancy */

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
	ENTER(cudaFuncGetAttributes_v3020, CTX);
	struct sg_kernel *k = kernel_lookup(func);
	if (!err && !attr)
		err = cudaErrorInvalidValue;
	if (!err && !k)
		err = cudaErrorInvalidDeviceFunction;
	if (!err) {
		memset(attr, 0, sizeof(*attr));
		attr->maxThreadsPerBlock = 1024;
		attr->numRegs = k->regs;
		attr->ptxVersion = 90;
		attr->binaryVersion = 90;
		attr->maxDynamicSharedSizeBytes = 49152;
		attr->preferredShmemCarveout = -1;
	}
	return finish(&c_, err);
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
	(void)attr, (void)value;
	ENTER(cudaFuncSetAttribute_v9000, CTX);
	if (!err && !kernel_lookup(func))
		err = cudaErrorInvalidDeviceFunction;
	return finish(&c_, err);
}

static int occupancy(int *numBlocks, const void *func, int blockSize, size_t smem)
{
	struct sg_kernel *k = kernel_lookup(func);
	if (!numBlocks || blockSize <= 0 || blockSize > 1024)
		return cudaErrorInvalidValue;
	if (!k)
		return cudaErrorInvalidDeviceFunction;
	int warps = (blockSize + 31) / 32;
	int by_threads = 64 / warps;                        /* 2048 threads = 64 warps per SM */
	int by_regs = 65536 / (k->regs * warps * 32);
	int by_smem = smem ? (int)(233472 / (smem + 1024)) : 32;
	int n = 32;
	if (by_threads < n)
		n = by_threads;
	if (by_regs < n)
		n = by_regs;
	if (by_smem < n)
		n = by_smem;
	*numBlocks = n;
	simgpu_spin(cfg()->occupancy_ns);
	return 0;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
							  size_t dynamicSMemSize)
{
	ENTER(cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000, CTX);
	if (!err)
		err = occupancy(numBlocks, func, blockSize, dynamicSMemSize);
	return finish(&c_, err);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func, int blockSize,
								   size_t dynamicSMemSize, unsigned int flags)
{
	(void)flags;
	ENTER(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000, CTX);
	if (!err)
		err = occupancy(numBlocks, func, blockSize, dynamicSMemSize);
	return finish(&c_, err);
}

/* ---------------------------------------------------------------- what PyTorch and NVIDIA's samples need */

static cudaError_t entry_point(uint32_t cbid, const char *symbol, void **funcPtr, unsigned version,
			       enum cudaDriverEntryPointQueryResult *status)
{
	struct simgpu_call c;
	int err = simgpu_api_enter(&c, cbid, DRV, NULL);
	int found = 0;
	if (!err && (!symbol || !funcPtr))
		err = cudaErrorInvalidValue;
	if (!err)
		found = simgpu_driver_entry(symbol, (int)version, funcPtr);
	if (status)
		*status = err ? cudaDriverEntryPointSymbolNotFound
			      : found ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
	return finish(&c, err);
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
				    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	(void)flags;
	return entry_point(CBID(cudaGetDriverEntryPoint_v11030), symbol, funcPtr, CUDART_VERSION, driverStatus);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
					     unsigned long long flags, enum cudaDriverEntryPointQueryResult *driverStatus)
{
	(void)flags;
	return entry_point(CBID(cudaGetDriverEntryPointByVersion_v12050), symbol, funcPtr, cudaVersion, driverStatus);
}

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
	(void)flags;
	ENTER(cudaSetDeviceFlags_v3020, DRV);
	return finish(&c_, err);
}

cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
	ENTER(cudaGetDeviceFlags_v7000, DRV);
	if (!err && !flags)
		err = cudaErrorInvalidValue;
	if (!err)
		*flags = 0;
	return finish(&c_, err);
}

/* The real runtime's cudaProfilerStart/Stop call the driver's cuProfilerStart/Stop through the entry point
 * cuGetProcAddress_v2 handed it (a DRIVER record inside the RUNTIME one): so does this one, found once. */
static cudaError_t driver_profiler(_Atomic(void *) *slot, const char *symbol)
{
	void *f = atomic_load(slot);

	if (f == NULL) {
		if (!simgpu_driver_entry(symbol, CUDART_VERSION, &f) || f == NULL)
			return cudaErrorUnknown;
		atomic_store(slot, f);
	}
	return ((int (*)(void))f)() == 0 ? cudaSuccess : cudaErrorUnknown;
}

cudaError_t cudaProfilerStart(void)
{
	static _Atomic(void *) drv;

	ENTER(cudaProfilerStart_v4000, CTX);
	if (!err)
		err = driver_profiler(&drv, "cuProfilerStart");
	return finish(&c_, err);
}

cudaError_t cudaProfilerStop(void)
{
	static _Atomic(void *) drv;

	ENTER(cudaProfilerStop_v4000, CTX);
	if (!err)
		err = driver_profiler(&drv, "cuProfilerStop");
	return finish(&c_, err);
}

cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
	ENTER(cudaDeviceCanAccessPeer_v4000, DRV);
	if (!err && !canAccessPeer)
		err = cudaErrorInvalidValue;
	if (!err)
		err = check_device(device);
	if (!err && peerDevice != device)
		err = check_device(peerDevice);
	if (!err)
		*canAccessPeer = 0;
	return finish(&c_, err);
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
	struct simgpu_stream *s;
	ENTER(cudaStreamGetPriority_v5050, CTX);
	if (!err && !priority)
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_stream_resolve(hStream, 0, &s);
	if (!err)
		*priority = 0;
	return finish(&c_, err);
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
	(void)flags;
	ENTER(cudaEventRecordWithFlags_v11010, CTX);
	if (!err)
		err = event_record(event, stream, 0);
	return finish(&c_, err);
}

/* Managed memory is host memory here, as every allocation is: the host and the "device" see the same bytes. */
cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	ENTER(cudaMallocManaged_v6000, CTX);
	if (!err && (!devPtr || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)))
		err = cudaErrorInvalidValue;
	if (!err) {
		simgpu_spin(cfg()->malloc_ns);
		err = simgpu_mem_alloc(devPtr, size, SIMGPU_MEM_DEVICE);
	}
	return finish(&c_, err);
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	(void)flags;
	ENTER(cudaHostRegister_v4000, CTX);
	if (!err && (!ptr || !size))
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_mem_register(ptr, size);
	return finish(&c_, err);
}

cudaError_t cudaHostUnregister(void *ptr)
{
	ENTER(cudaHostUnregister_v4000, CTX);
	if (!err && !ptr)
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_mem_unregister(ptr);
	return finish(&c_, err);
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
	ENTER(cudaHostGetDevicePointer_v3020, CTX);
	if (!err && (!pDevice || !pHost || flags))
		err = cudaErrorInvalidValue;
	if (!err)
		*pDevice = pHost;
	return finish(&c_, err);
}

/* Host work queued on a stream: a host function or a stream callback. */
struct host_fn_call {
	cudaHostFn_t fn;
	cudaStreamCallback_t cb;
	void *data;
};

/* It runs once the stream's earlier work has finished, here on the calling thread. */
static int host_call(cudaStream_t stream, const struct host_fn_call *h)
{
	struct simgpu_stream *s;
	int err = simgpu_stream_resolve(stream, 0, &s);
	if (err)
		return err;
	simgpu_wait_until(simgpu_stream_tail(s));
	if (h->fn)
		h->fn(h->data);
	else
		h->cb(stream, cudaSuccess, h->data);
	return 0;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	struct host_fn_call h = { .fn = fn, .data = userData };
	ENTER(cudaLaunchHostFunc_v10000, CTX);
	if (!err && !fn)
		err = cudaErrorInvalidValue;
	if (!err)
		err = host_call(stream, &h);
	return finish(&c_, err);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
				  unsigned int flags)
{
	struct host_fn_call h = { .cb = callback, .data = userData };
	ENTER(cudaStreamAddCallback_v5000, CTX);
	if (!err && (!callback || flags))
		err = cudaErrorInvalidValue;
	if (!err)
		err = host_call(stream, &h);
	return finish(&c_, err);
}

/* ---------------------------------------------------------------- graphs */

static __thread enum cudaStreamCaptureMode t_capture_mode = cudaStreamCaptureModeGlobal;

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	struct simgpu_stream *s;
	ENTER(cudaStreamBeginCapture_v10000, CTX);
	if (!err && (!stream || stream == cudaStreamLegacy))
		err = cudaErrorStreamCaptureUnsupported;
	if (!err)
		err = simgpu_stream_resolve(stream, 0, &s);
	if (!err)
		err = simgpu_capture_begin(s);
	(void)mode;
	return finish(&c_, err);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	struct simgpu_stream *s;
	struct simgpu_graph *g = NULL;
	ENTER(cudaStreamEndCapture_v10000, CTX);
	if (!err && !pGraph)
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_stream_resolve(stream, 0, &s);
	if (!err)
		err = simgpu_capture_end(s, &g);
	if (!err)
		*pGraph = (cudaGraph_t)(void *)g;
	return finish(&c_, err);
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
	struct simgpu_stream *s;
	ENTER(cudaStreamIsCapturing_v10000, CTX);
	if (!err && !pCaptureStatus)
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_stream_resolve(stream, 0, &s);
	if (!err)
		*pCaptureStatus = simgpu_capture_status(s, NULL, NULL) ? cudaStreamCaptureStatusActive
								       : cudaStreamCaptureStatusNone;
	return finish(&c_, err);
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
				     unsigned long long *id_out, cudaGraph_t *graph_out,
				     const cudaGraphNode_t **dependencies_out, const cudaGraphEdgeData **edgeData_out,
				     size_t *numDependencies_out)
{
	struct simgpu_stream *s;
	struct simgpu_graph *g = NULL;
	uint64_t id = 0;
	ENTER(cudaStreamGetCaptureInfo_v12030, CTX);
	if (!err && !captureStatus_out)
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_stream_resolve(stream, 0, &s);
	if (!err) {
		int on = simgpu_capture_status(s, &id, &g);
		*captureStatus_out = on ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
		if (id_out)
			*id_out = id;
		if (graph_out)
			*graph_out = (cudaGraph_t)(void *)g;
		/* Nodes are kept in launch order: there is no dependency set to report. */
		if (dependencies_out)
			*dependencies_out = NULL;
		if (edgeData_out)
			*edgeData_out = NULL;
		if (numDependencies_out)
			*numDependencies_out = 0;
	}
	return finish(&c_, err);
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	ENTER(cudaThreadExchangeStreamCaptureMode_v10010, 0);
	if (!err && !mode)
		err = cudaErrorInvalidValue;
	if (!err) {
		enum cudaStreamCaptureMode old = t_capture_mode;
		t_capture_mode = *mode;
		*mode = old;
	}
	return finish(&c_, err);
}

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
	struct simgpu_graph *g = NULL;
	ENTER(cudaGraphCreate_v10000, CTX);
	if (!err && (!pGraph || flags))
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_graph_create(&g);
	if (!err)
		*pGraph = (cudaGraph_t)(void *)g;
	return finish(&c_, err);
}

/* Nodes run in the order they were added: a graph built node by node must add them in a valid order. */
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
				   const cudaGraphNode_t *pDependencies, size_t numDependencies,
				   const struct cudaKernelNodeParams *p)
{
	struct simgpu_graph *g = (struct simgpu_graph *)(void *)graph;
	struct sg_kernel *k = NULL;
	uint64_t node = 0;
	(void)pDependencies, (void)numDependencies;
	ENTER(cudaGraphAddKernelNode_v10000, CTX);
	if (!err && (!pGraphNode || !simgpu_graph_valid(g, 0) || !p))
		err = cudaErrorInvalidValue;
	if (!err && !(k = kernel_lookup(p->func)))
		err = cudaErrorInvalidDeviceFunction;
	if (!err) {
		struct simgpu_launch l = {
			.name = k->name,
			.grid = { p->gridDim.x, p->gridDim.y, p->gridDim.z },
			.block = { p->blockDim.x, p->blockDim.y, p->blockDim.z },
			.dyn_smem = p->sharedMemBytes,
			.regs = k->regs,
		};
		l.duration_ns = simgpu_kernel_cost(l.grid, l.block);
		err = simgpu_graph_add_kernel(g, &l, &node);
	}
	if (!err)
		*pGraphNode = (cudaGraphNode_t)(uintptr_t)node;
	return finish(&c_, err);
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
	struct simgpu_graph *g = (struct simgpu_graph *)(void *)graph;
	ENTER(cudaGraphGetNodes_v10000, CTX);
	if (!err && (!simgpu_graph_valid(g, 0) || !numNodes || nodes))
		err = cudaErrorInvalidValue;
	if (!err)
		*numNodes = simgpu_graph_nodes(g);
	return finish(&c_, err);
}

static cudaError_t instantiate(uint32_t cbid, cudaGraphExec_t *pGraphExec, cudaGraph_t graph)
{
	struct simgpu_graph *g = (struct simgpu_graph *)(void *)graph, *e = NULL;
	struct simgpu_call c;
	int err = simgpu_api_enter(&c, cbid, CTX, NULL);
	if (!err && (!pGraphExec || !simgpu_graph_valid(g, 0)))
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_graph_instantiate(g, &e);
	if (!err)
		*pGraphExec = (cudaGraphExec_t)(void *)e;
	return finish(&c, err);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
	(void)flags;
	return instantiate(CBID(cudaGraphInstantiate_v12000), pGraphExec, graph);
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
	(void)flags;
	return instantiate(CBID(cudaGraphInstantiateWithFlags_v11040), pGraphExec, graph);
}

cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	struct simgpu_stream *s;
	ENTER(cudaGraphUpload_v10000, CTX);
	if (!err && !simgpu_graph_valid((struct simgpu_graph *)(void *)graphExec, 1))
		err = cudaErrorInvalidValue;
	if (!err)
		err = simgpu_stream_resolve(stream, 0, &s);
	return finish(&c_, err);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	struct simgpu_graph *e = (struct simgpu_graph *)(void *)graphExec;
	ENTER(cudaGraphExecDestroy_v10000, CTX);
	if (!err && !simgpu_graph_valid(e, 1))
		err = cudaErrorInvalidValue;
	if (!err)
		simgpu_graph_destroy(e);
	return finish(&c_, err);
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	struct simgpu_graph *g = (struct simgpu_graph *)(void *)graph;
	ENTER(cudaGraphDestroy_v10000, CTX);
	if (!err && !simgpu_graph_valid(g, 0))
		err = cudaErrorInvalidValue;
	if (!err)
		simgpu_graph_destroy(g);
	return finish(&c_, err);
}
