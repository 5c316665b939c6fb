// Launches kernels before, inside and after a cudaProfilerStart/Stop pair, then inside an NVTX range named
// "measure": cprof-run --capture-range must record only the calls (and GPU work) of the range it was given.
// Prints how many launches it made in each part.
#include <cstdio>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void tick(int *p)
{
	if (p)
		p[threadIdx.x] += 1;
}

static int launch(int n)
{
	for (int i = 0; i < n; i++)
		tick<<<1, 32>>>(nullptr);
	return n;
}

int main()
{
	int before = launch(4);
	cudaProfilerStart();
	int inside = launch(10);
	cudaDeviceSynchronize();
	cudaProfilerStop();
	int after = launch(3);
	nvtxRangePushA("setup");
	nvtxRangePop();
	nvtxRangePushA("measure");
	nvtxRangePushA("inner");
	int in_range = launch(7);
	nvtxRangePop();
	cudaDeviceSynchronize();
	nvtxRangePop();
	int tail = launch(2);
	cudaDeviceSynchronize();
	printf("before %d inside %d after %d measure %d tail %d\n", before, inside, after, in_range, tail);
	return 0;
}
