// Programs of the shapes issue 18 found misreported, one per --mode, written for a real GPU (they run
// unchanged on the simulated one). Each prints only what does not depend on timing.
//   errors       failed calls: an allocation too large, then a kernel that writes through a null pointer:
//                its illegal address (700) surfaces at the stream sync and in every call after it
//   launchbound  matrixMul's shape: 301 launches of a ~2.4 us kernel back to back, one sync at the end
//   copies       simpleMultiCopy's shape: large synchronous copies from pageable memory, a short kernel
//   coldstart    simpleCooperativeGroups' shape: device count, set device, one launch, one sync
//   nvtx         12 steps, each with forward and backward ranges
//   multigpu     one process, two devices: device 1 gets long kernels queued ahead (compute-bound), device 0
//                a launch-bound loop of tiny kernels (overhead-bound)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void scale(float *p, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] *= a;
}

// writes through p; the errors mode passes a null pointer: an illegal address on a real GPU
__global__ void scatter_oob(int *p)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		p[0] = 1;
}

static int errors(void)
{
	float *d = nullptr;
	cudaStream_t s;
	int i;

	// twice: one row, two calls
	printf("cudaMalloc(huge) %d\n", (int)cudaMalloc((void **)&d, (size_t)1 << 60));
	printf("cudaMalloc(huge) %d\n", (int)cudaMalloc((void **)&d, (size_t)1 << 60));
	if (cudaMalloc((void **)&d, 1 << 20) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess)
		return 1;
	for (i = 0; i < 4; i++)
		scale<<<256, 1024, 0, s>>>(d, 2.0f, 1 << 18);
	scatter_oob<<<1, 32, 0, s>>>(nullptr);
	printf("cudaStreamSynchronize %d\n", (int)cudaStreamSynchronize(s));
	printf("cudaMemcpy %d\n", (int)cudaMemcpy(d, d + 1, 4, cudaMemcpyDeviceToDevice));
	return 0;
}

static int launchbound(void)
{
	float *d;
	int i;

	if (cudaMalloc((void **)&d, 196 * 1024 * sizeof(float)) != cudaSuccess)
		return 1;
	for (i = 0; i < 301; i++)
		scale<<<196, 1024>>>(d, 1.0001f, 196 * 1024);
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	printf("launches 301\n");
	return 0;
}

static int copies(void)
{
	const size_t n = 4 << 20; // 16 MiB of floats
	float *h = (float *)malloc(n * sizeof(float)), *d;
	int i;

	if (h == NULL || cudaMalloc((void **)&d, n * sizeof(float)) != cudaSuccess)
		return 1;
	memset(h, 0, n * sizeof(float));
	for (i = 0; i < 10; i++) {
		if (cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
			return 1;
		scale<<<4, 256>>>(d, 2.0f, 1024);
		if (cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)
			return 1;
	}
	free(h);
	printf("copies 20\n");
	return 0;
}

static int coldstart(void)
{
	float *d;
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1 || cudaSetDevice(0) != cudaSuccess)
		return 1;
	if (cudaMalloc((void **)&d, 1024 * sizeof(float)) != cudaSuccess)
		return 1;
	scale<<<1, 1024>>>(d, 2.0f, 1024);
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	printf("devices >= 1, launches 1\n");
	return 0;
}

static int nvtx(void)
{
	float *d;
	char name[32];
	int i, j;

	if (cudaMalloc((void **)&d, 65536 * sizeof(float)) != cudaSuccess)
		return 1;
	for (i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "step %d", i);
		nvtxRangePushA(name);
		nvtxRangePushA("forward");
		for (j = 0; j < 4; j++)
			scale<<<64, 1024>>>(d, 1.01f, 65536);
		nvtxRangePop();
		nvtxRangePushA("backward");
		for (j = 0; j < 8; j++)
			scale<<<64, 1024>>>(d, 0.99f, 65536);
		nvtxRangePop();
		if (cudaDeviceSynchronize() != cudaSuccess)
			return 1;
		nvtxRangePop();
	}
	printf("steps 12\n");
	return 0;
}

static int multigpu(void)
{
	cudaStream_t s0, s1;
	float *d0, *d1;
	int n = 0, i;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
		fprintf(stderr, "multigpu: needs two devices\n");
		return 1;
	}
	if (cudaSetDevice(1) != cudaSuccess || cudaMalloc((void **)&d1, 1024 * sizeof(float)) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking) != cudaSuccess)
		return 1;
	if (cudaSetDevice(0) != cudaSuccess || cudaMalloc((void **)&d0, 196 * 1024 * sizeof(float)) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking) != cudaSuccess)
		return 1;
	// device 1: long kernels queued ahead of it (n stays within the buffer: they touch 1024 floats)
	if (cudaSetDevice(1) != cudaSuccess)
		return 1;
	for (i = 0; i < 20; i++)
		scale<<<655360, 1024, 0, s1>>>(d1, 1.0001f, 1024);
	// device 0: a launch-bound loop
	if (cudaSetDevice(0) != cudaSuccess)
		return 1;
	for (i = 0; i < 301; i++)
		scale<<<196, 1024, 0, s0>>>(d0, 1.0001f, 196 * 1024);
	if (cudaStreamSynchronize(s0) != cudaSuccess || cudaSetDevice(1) != cudaSuccess ||
	    cudaStreamSynchronize(s1) != cudaSuccess)
		return 1;
	printf("devices 2, launches 321\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 && !strcmp(argv[1], "--mode") ? argv[2] : "";

	if (!strcmp(mode, "errors"))
		return errors();
	if (!strcmp(mode, "launchbound"))
		return launchbound();
	if (!strcmp(mode, "copies"))
		return copies();
	if (!strcmp(mode, "coldstart"))
		return coldstart();
	if (!strcmp(mode, "nvtx"))
		return nvtx();
	if (!strcmp(mode, "multigpu"))
		return multigpu();
	fprintf(stderr, "usage: shapes --mode errors|launchbound|copies|coldstart|nvtx|multigpu\n");
	return 2;
}
