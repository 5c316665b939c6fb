// A program that uses CUPTI itself, as torch.profiler (Kineto) does: after some work it registers its
// own activity callbacks and enables kernel records. It must keep working under cprof and get the same
// records. "nobuf": its buffer callback gives CUPTI no buffer, so it gets no records (cprof counts them).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cupti.h>
#include <cuda_runtime.h>

__global__ void work(int *p) { if (p) p[0] = 1; }

static int records, buffers, nobuf;

static void CUPTIAPI req(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 1 << 20;
	*buf = nobuf ? nullptr : (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI done(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid)
{
	CUpti_Activity *r = nullptr;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		records += r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	buffers++;
	free(buf);
}

int main(int argc, char **argv)
{
	nobuf = argc > 1 && strcmp(argv[1], "nobuf") == 0;
	for (int i = 0; i < 10; i++)
		work<<<1, 1>>>(nullptr);
	cudaDeviceSynchronize();
	CUptiResult r1 = cuptiActivityRegisterCallbacks(req, done);
	CUptiResult r2 = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	for (int i = 0; i < 5; i++)
		work<<<1, 1>>>(nullptr);
	cudaDeviceSynchronize();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	CUptiResult r3 = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	for (int i = 0; i < 3; i++)
		work<<<1, 1>>>(nullptr);
	cudaDeviceSynchronize();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	printf("register %d enable %d disable %d own kernel records %d\n", (int)r1, (int)r2, (int)r3, records);
	return r1 == CUPTI_SUCCESS && records == (nobuf ? 0 : 5) ? 0 : 1;
}
