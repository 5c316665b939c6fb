// cuBLAS in the style of NVIDIA's samples: cublasSetVector/SetMatrix, level-2 BLAS (gemv), cublasGetVector.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("%s: %d\n", #x, (int)s_); return 1; } } while (0)
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorName(e_)); return 1; } } while (0)

int main()
{
	const int m = 256, n = 128, calls = 5;
	static float A[m * n], x[2 * n], y[m], back[2 * n];
	for (int i = 0; i < m * n; i++)
		A[i] = (float)(i % 7);
	for (int i = 0; i < 2 * n; i++)
		x[i] = (float)i;
	float *dA, *dx, *dy;
	CK(cudaMalloc(&dA, sizeof(A)));
	CK(cudaMalloc(&dx, n * sizeof(float)));
	CK(cudaMalloc(&dy, m * sizeof(float)));
	cublasHandle_t h;
	CB(cublasCreate(&h));
	CB(cublasSetMatrix(m, n, sizeof(float), A, m, dA, m));
	CB(cublasSetVector(n, sizeof(float), x, 2, dx, 1)); // every other element of x
	CB(cublasSetVector(m, sizeof(float), y, 1, dy, 1));
	const float one = 1.0f, zero = 0.0f;
	for (int i = 0; i < calls; i++)
		CB(cublasSgemv(h, i % 2 ? CUBLAS_OP_T : CUBLAS_OP_N, i % 2 ? n : m, i % 2 ? m : n, &one, dA,
			       i % 2 ? n : m, dx, 1, &zero, dy, 1));
	CB(cublasGetVector(n, sizeof(float), dx, 1, back, 2)); // back into every other slot
	CK(cudaDeviceSynchronize());
	int same = 1;
	for (int i = 0; i < n; i++)
		same &= back[2 * i] == x[2 * i];
	printf("gemv calls=%d vector round trip=%d\n", calls, same);
	CB(cublasDestroy(h));
	CK(cudaFree(dA));
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	return 0;
}
