/* Driver-API-only workload (what Triton / torch.compile do): cuModuleLoadData + cuLaunchKernelEx, no cudart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "driver_kernels_ptx.h"

#define CK(call)                                                                                               \
	do {                                                                                                   \
		CUresult r_ = (call);                                                                          \
		if (r_ != CUDA_SUCCESS) {                                                                      \
			const char *n_ = NULL;                                                                 \
			cuGetErrorName(r_, &n_);                                                               \
			fprintf(stderr, "driver_launch: %s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, \
				n_ ? n_ : "?", (int)r_);                                                       \
			exit(1);                                                                               \
		}                                                                                              \
	} while (0)

static void launch(CUfunction f, unsigned grid, unsigned block, CUstream s, void **args)
{
	CUlaunchConfig cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = grid;
	cfg.gridDimY = 1;
	cfg.gridDimZ = 1;
	cfg.blockDimX = block;
	cfg.blockDimY = 1;
	cfg.blockDimZ = 1;
	cfg.hStream = s;
	CK(cuLaunchKernelEx(&cfg, f, args, NULL));
}

int main(int argc, char **argv)
{
	int steps = 50, n = 1 << 16;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--steps"))
			steps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--n"))
			n = atoi(argv[i + 1]);
	}
	if (steps < 1 || n < 1 || argc % 2 == 0) {
		fprintf(stderr, "usage: driver_launch [--steps N] [--n ELEMENTS]\n");
		return 2;
	}
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction add, mul;
	CUstream s;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, driver_kernels_ptx));
	CK(cuModuleGetFunction(&add, mod, "triton_poi_fused_add_0"));
	CK(cuModuleGetFunction(&mul, mod, "triton_poi_fused_mul_relu_1"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

	size_t bytes = (size_t)n * sizeof(float);
	float *host = malloc(bytes);
	if (!host)
		return 1;
	for (int i = 0; i < n; i++)
		host[i] = (float)(i % 17);
	CUdeviceptr a, b, out;
	CK(cuMemAlloc(&a, bytes));
	CK(cuMemAlloc(&b, bytes));
	CK(cuMemAlloc(&out, bytes));
	CK(cuMemcpyHtoD(a, host, bytes));
	CK(cuMemcpyHtoD(b, host, bytes));
	unsigned block = 256, grid = (unsigned)((n + block - 1) / block);
	long launches = 0;
	for (int step = 0; step < steps; step++) {
		void *add_args[] = { &out, &a, &b, &n };
		void *mul_args[] = { &a, &out, &n };
		launch(add, grid, block, s, add_args);
		launch(mul, grid, block, s, mul_args);
		launches += 2;
	}
	CK(cuStreamSynchronize(s));
	CK(cuMemcpyDtoH(host, out, bytes));
	CK(cuMemFree(a));
	CK(cuMemFree(b));
	CK(cuMemFree(out));
	CK(cuStreamDestroy(s));
	CK(cuModuleUnload(mod));
	CK(cuDevicePrimaryCtxRelease(dev));
	free(host);
	printf("driver_launch: n=%d steps=%d launches=%ld\n", n, steps, launches);
	return 0;
}
