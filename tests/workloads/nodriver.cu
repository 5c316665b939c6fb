// Calls cudart and cuBLAS the way a small program does and prints every return code: run on the real
// libraries with no driver (codes like 35) or on a GPU (0), its output must not change under cprof-run.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void scale(float *a, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] *= s;
}

__global__ void shift(float *a, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] += s;
}

int main()
{
	const int n = 1024;
	float *d = nullptr, h[16] = { 0 };
	cudaError_t e;

	e = cudaMalloc(&d, n * sizeof(float));
	printf("cudaMalloc %d\n", (int)e);
	printf("cudaMemset %d\n", (int)cudaMemset(d, 0, n * sizeof(float)));
	printf("cudaMemcpy %d\n", (int)cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
	for (int i = 0; i < 3; i++) {
		scale<<<n / 256, 256>>>(d, 2.0f, n);
		printf("scale<<<>>> %d\n", (int)cudaGetLastError());
	}
	shift<<<dim3(2, 2), dim3(64, 4), 128>>>(d, 1.0f, n);
	printf("shift<<<>>> %d\n", (int)cudaGetLastError());
	{
		float s = 3.0f;
		int nn = n;
		void *args[] = { &d, &s, &nn };
		printf("cudaLaunchKernel %d\n", (int)cudaLaunchKernel((const void *)scale, dim3(4), dim3(256), args, 0, 0));
	}
	cublasHandle_t handle = nullptr;
	printf("cublasCreate %d\n", (int)cublasCreate(&handle));
	float alpha = 1.0f, beta = 0.0f;
	printf("cublasSgemm %d\n", (int)cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &alpha, d, 16, d,
						       16, &beta, d, 16));
	printf("cudaDeviceSynchronize %d\n", (int)cudaDeviceSynchronize());
	printf("cudaMemcpy %d\n", (int)cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	printf("cudaFree %d\n", (int)cudaFree(d));
	return 0;
}
