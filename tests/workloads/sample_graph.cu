// CUDA graphs as NVIDIA's samples build them: node by node, and by stream capture; each instantiated and launched.
#include <cstdio>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorName(e_)); return 1; } } while (0)

__global__ void stage_a(float *p) { p[threadIdx.x] += 1.0f; }
__global__ void stage_b(float *p) { p[threadIdx.x] *= 2.0f; }

int main()
{
	const int built_launches = 4, captured_launches = 3;
	float *d;
	CK(cudaMalloc(&d, 256 * sizeof(float)));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	// node by node: a -> b
	cudaGraph_t g;
	CK(cudaGraphCreate(&g, 0));
	cudaGraphNode_t a, b;
	void *args[] = { &d };
	cudaKernelNodeParams p = {};
	p.func = (void *)stage_a;
	p.gridDim = dim3(1);
	p.blockDim = dim3(256);
	p.kernelParams = args;
	CK(cudaGraphAddKernelNode(&a, g, nullptr, 0, &p));
	p.func = (void *)stage_b;
	CK(cudaGraphAddKernelNode(&b, g, &a, 1, &p));
	size_t nodes = 0;
	CK(cudaGraphGetNodes(g, nullptr, &nodes));
	cudaGraphExec_t ge;
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int i = 0; i < built_launches; i++)
		CK(cudaGraphLaunch(ge, s));

	// by stream capture: a, b, a
	cudaGraph_t cg;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	stage_a<<<1, 256, 0, s>>>(d);
	stage_b<<<1, 256, 0, s>>>(d);
	stage_a<<<1, 256, 0, s>>>(d);
	CK(cudaStreamEndCapture(s, &cg));
	size_t cnodes = 0;
	CK(cudaGraphGetNodes(cg, nullptr, &cnodes));
	cudaGraphExec_t cge;
	CK(cudaGraphInstantiateWithFlags(&cge, cg, 0));
	for (int i = 0; i < captured_launches; i++)
		CK(cudaGraphLaunch(cge, s));
	CK(cudaStreamSynchronize(s));
	printf("built nodes=%zu launches=%d captured nodes=%zu launches=%d graph_kernels=%zu\n", nodes, built_launches,
	       cnodes, captured_launches, nodes * built_launches + cnodes * captured_launches);
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphExecDestroy(cge));
	CK(cudaGraphDestroy(g));
	CK(cudaGraphDestroy(cg));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(d));
	return 0;
}
