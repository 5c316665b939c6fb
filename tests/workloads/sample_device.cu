// A device query in the style of NVIDIA's samples: flags, versions, properties, profiler start/stop, a driver context.
#include <cstdio>
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorName(e_)); return 1; } } while (0)

__global__ void touch(int *p) { p[threadIdx.x] += 1; }

typedef CUresult (*ctx_create_fn)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);
typedef CUresult (*ctx_get_device_fn)(CUdevice *);

int main()
{
	int n = 0, drv = 0, rt = 0;
	CK(cudaGetDeviceCount(&n));
	CK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
	CK(cudaDriverGetVersion(&drv));
	CK(cudaRuntimeGetVersion(&rt));
	printf("devices=%d driver>=13000:%d runtime>=13000:%d\n", n, drv >= 13000, rt >= 13000);
	for (int d = 0; d < n; d++) {
		cudaDeviceProp p;
		CK(cudaGetDeviceProperties(&p, d));
		printf("device %d: sm_%d%d warp=%d\n", d, p.major, p.minor, p.warpSize);
	}
	// the driver API through the runtime's entry point table (no -lcuda)
	void *fn = nullptr;
	cudaDriverEntryPointQueryResult q;
	CK(cudaGetDriverEntryPointByVersion("cuCtxCreate", &fn, 13000, cudaEnableDefault, &q));
	CUcontext ctx;
	if (q != cudaDriverEntryPointSuccess || ((ctx_create_fn)fn)(&ctx, nullptr, 0, 0) != CUDA_SUCCESS) {
		printf("cuCtxCreate failed\n");
		return 1;
	}
	CK(cudaGetDriverEntryPointByVersion("cuCtxGetDevice", &fn, 13000, cudaEnableDefault, &q));
	CUdevice dev = -1;
	if (((ctx_get_device_fn)fn)(&dev) != CUDA_SUCCESS)
		return 1;
	printf("context device=%d\n", (int)dev);
	int *d;
	CK(cudaMalloc(&d, 32 * sizeof(int)));
	CK(cudaProfilerStart());
	for (int i = 0; i < 3; i++)
		touch<<<1, 32>>>(d);
	CK(cudaProfilerStop());
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	printf("kernels=3\n");
	return 0;
}
