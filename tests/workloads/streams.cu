// A small CUDA program written for a real GPU, not for the simulator: streams, events, async copies,
// cuBLAS on a stream. Prints only what does not depend on timing; exits nonzero on any CUDA error.
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CK(call)                                                                       \
	do {                                                                           \
		cudaError_t e_ = (call);                                               \
		if (e_ != cudaSuccess) {                                               \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,    \
				cudaGetErrorString(e_));                               \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

__global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void fill(float *p, float v, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		p[i] = v;
}

int main()
{
	const int n = 1 << 20, nstreams = 3, rounds = 4;
	int devs = 0;
	CK(cudaGetDeviceCount(&devs));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	printf("devices %d\n", devs > 0);
	float *x, *y, *h;
	CK(cudaMalloc(&x, n * sizeof(float)));
	CK(cudaMalloc(&y, n * sizeof(float)));
	CK(cudaMallocHost(&h, n * sizeof(float)));
	for (int i = 0; i < n; i++)
		h[i] = 1.0f;
	cudaStream_t s[nstreams];
	cudaEvent_t start, stop, done[nstreams];
	for (int i = 0; i < nstreams; i++) {
		CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
		CK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
	}
	CK(cudaEventCreate(&start));
	CK(cudaEventCreate(&stop));
	CK(cudaEventRecord(start, s[0]));
	int chunk = n / nstreams, launches = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < nstreams; i++) {
			CK(cudaMemcpyAsync(x + i * chunk, h + i * chunk, chunk * sizeof(float), cudaMemcpyHostToDevice, s[i]));
			fill<<<64, 256, 0, s[i]>>>(y + i * chunk, 2.0f, chunk);
			saxpy<<<(chunk + 255) / 256, 256, 0, s[i]>>>(chunk, 3.0f, x + i * chunk, y + i * chunk);
			launches += 2;
			CK(cudaEventRecord(done[i], s[i]));
		}
		for (int i = 1; i < nstreams; i++)
			CK(cudaStreamWaitEvent(s[0], done[i], 0));
	}
	CK(cudaMemsetAsync(x, 0, 4096, s[1]));
	cublasHandle_t handle;
	if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS || cublasSetStream(handle, s[2]) != CUBLAS_STATUS_SUCCESS)
		return 1;
	float alpha = 1.0f, beta = 0.0f;
	for (int i = 0; i < 3; i++)
		if (cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, 256, 256, 256, &alpha, x, 256, y, 256, &beta, y, 256) !=
		    CUBLAS_STATUS_SUCCESS)
			return 1;
	CK(cudaEventRecord(stop, s[0]));
	CK(cudaEventSynchronize(stop));
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, start, stop));
	for (int i = 0; i < nstreams; i++)
		CK(cudaStreamSynchronize(s[i]));
	CK(cudaMemcpy(h, y, 16 * sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaDeviceSynchronize());
	cublasDestroy(handle);
	for (int i = 0; i < nstreams; i++) {
		CK(cudaEventDestroy(done[i]));
		CK(cudaStreamDestroy(s[i]));
	}
	CK(cudaFreeHost(h));
	CK(cudaFree(x));
	CK(cudaFree(y));
	CK(cudaGetLastError());
	printf("launches %d gemms 3 elapsed_positive %d\n", launches, ms >= 0.0f);
	return 0;
}
