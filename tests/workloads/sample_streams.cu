// Streams with host callbacks and host functions, managed memory and registered host memory, as NVIDIA's samples use them.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorName(e_)); return 1; } } while (0)

__global__ void scale(float *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= 2.0f; }

static int callbacks, host_fns;
static void CUDART_CB on_done(cudaStream_t, cudaError_t status, void *) { callbacks += status == cudaSuccess; }
static void CUDART_CB host_fn(void *arg) { host_fns += *(int *)arg; }

int main()
{
	const int n = 4096, nstreams = 4;
	cudaStream_t s[nstreams];
	float *managed, *dev;
	float *host = (float *)malloc(n * sizeof(float));
	for (int i = 0; i < n; i++)
		host[i] = (float)i;
	CK(cudaHostRegister(host, n * sizeof(float), cudaHostRegisterDefault));
	CK(cudaMallocManaged(&managed, n * sizeof(float)));
	CK(cudaMalloc(&dev, n * sizeof(float)));
	for (int i = 0; i < n; i++)
		managed[i] = 1.0f;
	int one = 1;
	for (int k = 0; k < nstreams; k++) {
		CK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
		int chunk = n / nstreams;
		CK(cudaMemcpyAsync(dev + k * chunk, host + k * chunk, chunk * sizeof(float), cudaMemcpyHostToDevice, s[k]));
		scale<<<chunk / 256, 256, 0, s[k]>>>(dev + k * chunk, chunk);
		scale<<<chunk / 256, 256, 0, s[k]>>>(managed + k * chunk, chunk);
		CK(cudaStreamAddCallback(s[k], on_done, nullptr, 0));
		CK(cudaLaunchHostFunc(s[k], host_fn, &one));
	}
	CK(cudaDeviceSynchronize());
	float *back = (float *)malloc(n * sizeof(float));
	CK(cudaMemcpy(back, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += managed[i];
	printf("streams=%d kernels=%d callbacks=%d host_fns=%d managed_readable=%d copied_back=%d\n", nstreams,
	       2 * nstreams, callbacks, host_fns, sum > 0, back[n - 1] != 0.0f);
	for (int k = 0; k < nstreams; k++)
		CK(cudaStreamDestroy(s[k]));
	CK(cudaHostUnregister(host));
	CK(cudaFree(managed));
	CK(cudaFree(dev));
	free(host), free(back);
	return 0;
}
