// A program shaped like ATen's dispatcher (at::_ops::<op>::call -> ... -> launch), to test the dispatch chain.
// at::_ops::matmul::call -> at::_ops::mm::call -> mm_kernel<<<>>>            (MATMUL times)
// at::_ops::linear::call -> at::_ops::addmm::call -> cublasSgemm_v2          (LINEAR times)
// at::_ops::add_Tensor::call -> at::native::add_impl -> add_kernel<<<>>>     (ADD times)
// prints "matmul=N linear=N add=N" on stdout.
#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define NOINLINE __attribute__((noinline))

__global__ void mm_kernel(float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] += 1.0f;
}

__global__ void add_kernel(float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] *= 2.0f;
}

namespace at {
struct Tensor {
	float *data;
	int n;
};
static cublasHandle_t handle;
// a compiler must not merge or inline these frames away: each is a frame of the chain
volatile int sink;

namespace native {
NOINLINE void add_impl(const Tensor &t)
{
	add_kernel<<<(t.n + 127) / 128, 128>>>(t.data, t.n);
	sink++;
}
} // namespace native

namespace _ops {
struct mm {
	NOINLINE static void call(const Tensor &t)
	{
		mm_kernel<<<(t.n + 127) / 128, 128>>>(t.data, t.n);
		sink++;
	}
};
struct matmul {
	NOINLINE static void call(const Tensor &t)
	{
		mm::call(t);
		sink++;
	}
};
struct addmm {
	NOINLINE static void call(const Tensor &t)
	{
		const float one = 1.0f;

		cublasSgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, t.data, 16, t.data, 16, &one, t.data, 16);
		sink++;
	}
};
struct linear {
	NOINLINE static void call(const Tensor &t)
	{
		addmm::call(t);
		sink++;
	}
};
struct add_Tensor {
	NOINLINE static void call(const Tensor &t)
	{
		native::add_impl(t);
		sink++;
	}
};
} // namespace _ops
} // namespace at

int main(int argc, char **argv)
{
	int matmul = argc > 1 ? atoi(argv[1]) : 20, linear = argc > 2 ? atoi(argv[2]) : 10,
	    add = argc > 3 ? atoi(argv[3]) : 5;
	at::Tensor t = { nullptr, 256 };

	if (cudaMalloc(&t.data, t.n * sizeof(float)) != cudaSuccess || cublasCreate(&at::handle) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "aten_chain: no GPU\n");
		return 1;
	}
	for (int i = 0; i < matmul; i++)
		at::_ops::matmul::call(t);
	for (int i = 0; i < linear; i++)
		at::_ops::linear::call(t);
	for (int i = 0; i < add; i++)
		at::_ops::add_Tensor::call(t);
	cudaDeviceSynchronize();
	cublasDestroy(at::handle);
	cudaFree(t.data);
	printf("matmul=%d linear=%d add=%d\n", matmul, linear, add);
	return 0;
}
