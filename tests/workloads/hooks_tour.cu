// Calls one entry point of each kind the generated hooks cover (pinned, managed and registered memory, 2D and
// symbol copies, streams, events, host functions, graphs built by hand and by capture, the profiler range,
// cuBLAS handles, vectors and level-2 BLAS) and prints "name code" for each: the profile must hold each call
// with that code, on a GPU, on the simulated GPU or on the real libraries without a driver.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

__device__ float table[16];

static void CUDART_CB host_fn(void *) {}
static void CUDART_CB stream_cb(cudaStream_t, cudaError_t, void *) {}

#define CALL(name, expr) printf("%s %d\n", name, (int)(expr))

int main()
{
	float *pinned = nullptr, *managed = nullptr, *dev = nullptr, x[16] = { 1 }, y[16] = { 0 };
	static float reg[1024];
	size_t pitch = 0;
	cudaStream_t s = nullptr;
	cudaEvent_t e0 = nullptr, e1 = nullptr;
	cudaGraph_t g = nullptr, cg = nullptr;
	cudaGraphNode_t node = nullptr;
	cudaGraphExec_t ge = nullptr;
	cublasHandle_t h = nullptr;
	float alpha = 1.0f, beta = 0.0f, ms = 0;

	CALL("cudaProfilerStart", cudaProfilerStart());
	CALL("cudaHostAlloc", cudaHostAlloc((void **)&pinned, 4096, cudaHostAllocDefault));
	CALL("cudaMallocManaged", cudaMallocManaged((void **)&managed, 4096, cudaMemAttachGlobal));
	CALL("cudaHostRegister", cudaHostRegister(reg, sizeof(reg), cudaHostRegisterDefault));
	CALL("cudaMallocPitch", cudaMallocPitch((void **)&dev, &pitch, 64 * sizeof(float), 16));
	CALL("cudaMemcpy2D", cudaMemcpy2D(dev, pitch ? pitch : 256, reg, 256, 256, 4, cudaMemcpyHostToDevice));
	CALL("cudaMemcpyToSymbol", cudaMemcpyToSymbol(table, x, sizeof(x)));
	CALL("cudaMemcpyFromSymbol", cudaMemcpyFromSymbol(y, table, sizeof(y)));
	CALL("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CALL("cudaEventCreate", cudaEventCreate(&e0));
	CALL("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&e1, cudaEventDefault));
	CALL("cudaEventRecord", cudaEventRecord(e0, s));
	CALL("cudaLaunchHostFunc", cudaLaunchHostFunc(s, host_fn, nullptr));
	CALL("cudaStreamAddCallback", cudaStreamAddCallback(s, stream_cb, nullptr, 0));
	CALL("cudaEventRecord", cudaEventRecord(e1, s));
	CALL("cudaEventSynchronize", cudaEventSynchronize(e1));
	CALL("cudaEventElapsedTime", cudaEventElapsedTime(&ms, e0, e1));
	CALL("cudaGraphCreate", cudaGraphCreate(&g, 0));
	CALL("cudaGraphAddEmptyNode", cudaGraphAddEmptyNode(&node, g, nullptr, 0));
	CALL("cudaGraphInstantiate", cudaGraphInstantiate(&ge, g, 0));
	CALL("cudaGraphLaunch", cudaGraphLaunch(ge, s));
	CALL("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CALL("cudaStreamEndCapture", cudaStreamEndCapture(s, &cg));
	CALL("cudaGraphExecDestroy", cudaGraphExecDestroy(ge));
	CALL("cudaGraphDestroy", cudaGraphDestroy(g));
	CALL("cublasCreate_v2", cublasCreate(&h));
	CALL("cublasSetVector", cublasSetVector(16, sizeof(float), x, 1, dev, 1));
	CALL("cublasSgemv_v2", cublasSgemv(h, CUBLAS_OP_N, 4, 4, &alpha, dev, 4, dev, 1, &beta, dev, 1));
	CALL("cublasGetVector", cublasGetVector(16, sizeof(float), dev, 1, y, 1));
	CALL("cublasDestroy_v2", cublasDestroy(h));
	CALL("cudaHostUnregister", cudaHostUnregister(reg));
	CALL("cudaEventDestroy", cudaEventDestroy(e0));
	CALL("cudaStreamDestroy", cudaStreamDestroy(s));
	CALL("cudaProfilerStop", cudaProfilerStop());
	return 0;
}
