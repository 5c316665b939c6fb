/* Self-test injection library: loaded by cuInit through CUDA_INJECTION64_PATH, checks DRIVER records at exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

int InitializeInjection(void);

#define MAXREC 4096

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_launch_corr[MAXREC], g_kernel_corr[MAXREC];
static size_t g_nlaunch, g_nkernel, g_ndriver, g_nmemcpy, g_bad;

static void CUPTIAPI request(uint8_t **buffer, size_t *size, size_t *max)
{
	*size = 1 << 20;
	*buffer = aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	(void)ctx, (void)stream, (void)size;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&g_lock);
	while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
			CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r;
			g_ndriver++;
			if (a->cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx && g_nlaunch < MAXREC)
				g_launch_corr[g_nlaunch++] = a->correlationId;
			g_bad += a->start > a->end;
		} else if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
			if (g_nkernel < MAXREC)
				g_kernel_corr[g_nkernel++] = k->correlationId;
			g_bad += k->start > k->end || !k->name || k->name[0] != 't';
		} else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
			g_nmemcpy++;
		} else {
			g_bad++;
		}
	}
	pthread_mutex_unlock(&g_lock);
	free(buffer);
}

static void report(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	size_t joined = 0;
	pthread_mutex_lock(&g_lock);
	for (size_t i = 0; i < g_nkernel; i++)
		for (size_t j = 0; j < g_nlaunch; j++)
			if (g_kernel_corr[i] == g_launch_corr[j]) {
				joined++;
				break;
			}
	fprintf(stderr, "selftest_inject: driver=%zu launches=%zu kernels=%zu joined=%zu memcpys=%zu bad=%zu\n",
		g_ndriver, g_nlaunch, g_nkernel, joined, g_nmemcpy, g_bad);
	pthread_mutex_unlock(&g_lock);
}

int InitializeInjection(void)
{
	if (cuptiActivityRegisterCallbacks(request, complete) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS)
		return 0;
	atexit(report);
	return 1;
}
