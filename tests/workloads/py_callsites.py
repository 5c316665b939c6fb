# CUDA calls from known Python lines (python3 + ctypes, no torch), for tests of Python call sites.
# usage: py_callsites.py [N_GEMM [N_MEMSET]]   (defaults 7 and 5)
# Each calling line ends in a marker comment (hash, CALLSITE, a name): a test finds its line number with grep.
# Runs on a real GPU or on the simulated one (LD_LIBRARY_PATH=build/simgpu/lib).
import ctypes
import sys

# PyDLL: the GIL stays held during each call, so CPython's own functions read the frames (CDLL, which
# releases it, is py_ctypes_nogil.py's case). The libraries are loaded RTLD_GLOBAL and their functions
# looked up in the global scope (handle None, as the calls of a library linked against them would be,
# e.g. PyTorch's); a lookup on the library's own handle is answered by cprof's dlsym hook.
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
ctypes.CDLL("libcublas.so.13", mode=ctypes.RTLD_GLOBAL)
cudart = cublas = ctypes.PyDLL(None)

N = 64  # square matrices, float32
CUBLAS_OP_N = 0


def check(what, rc):
    if rc != 0:
        sys.stderr.write("%s failed: %d\n" % (what, rc))
        sys.exit(1)


def dmalloc(nbytes):
    p = ctypes.c_void_p()
    check("cudaMalloc", cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(nbytes)))
    return p


def gemm_step(handle, a, b, c, count):
    one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
    for _ in range(count):
        rc = cublas.cublasSgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, ctypes.byref(one), a, N, b, N, ctypes.byref(zero), c, N)  # CALLSITE gemm
        check("cublasSgemm_v2", rc)


def clear(p, nbytes, count):
    for _ in range(count):
        rc = cudart.cudaMemset(p, 0, ctypes.c_size_t(nbytes))  # CALLSITE clear
        check("cudaMemset", rc)


def main():
    n_gemm = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    n_memset = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    nbytes = N * N * 4
    a, b, c = dmalloc(nbytes), dmalloc(nbytes), dmalloc(nbytes)
    handle = ctypes.c_void_p()
    check("cublasCreate_v2", cublas.cublasCreate_v2(ctypes.byref(handle)))
    gemm_step(handle, a, b, c, n_gemm)
    clear(c, nbytes, n_memset)
    return handle, a, b, c, nbytes, n_gemm, n_memset


handle, a, b, c, nbytes, n_gemm, n_memset = main()
check("cudaMemsetAsync", cudart.cudaMemsetAsync(a, 0, ctypes.c_size_t(nbytes), None))  # CALLSITE module
check("cudaDeviceSynchronize", cudart.cudaDeviceSynchronize())
check("cublasDestroy_v2", cublas.cublasDestroy_v2(handle))
for p in (a, b, c):
    check("cudaFree", cudart.cudaFree(p))
print("gemm %d memset %d memsetasync 1" % (n_gemm, n_memset))
