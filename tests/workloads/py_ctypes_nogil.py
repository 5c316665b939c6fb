# CUDA calls through ctypes.CDLL, which releases the GIL around every call, from known Python lines.
# usage: py_ctypes_nogil.py handle|global|thread [N_GEMM [N_MEMSET]]   (defaults 20 and 5)
#   handle: functions looked up on each library's own handle (dlsym(handle, name)), as ctypes.CDLL("lib")
#   global: the libraries loaded RTLD_GLOBAL, functions looked up in the global scope (CDLL(None))
#   thread: as handle, from a second Python thread
# Each calling line ends in a marker comment (hash, CALLSITE, a name): a test finds its line with grep.
# Runs on a real GPU or on the simulated one (LD_LIBRARY_PATH=build/simgpu/lib).
import ctypes
import sys
import threading

mode = sys.argv[1] if len(sys.argv) > 1 else "handle"
n_gemm = int(sys.argv[2]) if len(sys.argv) > 2 else 20
n_memset = int(sys.argv[3]) if len(sys.argv) > 3 else 5
if mode in ("handle", "thread"):
    cudart = ctypes.CDLL("libcudart.so.13")
    cublas = ctypes.CDLL("libcublas.so.13")
else:
    ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
    ctypes.CDLL("libcublas.so.13", mode=ctypes.RTLD_GLOBAL)
    cudart = cublas = ctypes.CDLL(None)
N = 64
one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)


def check(what, rc):
    if rc != 0:
        sys.stderr.write("%s failed: %d\n" % (what, rc))
        sys.exit(1)


def run():
    p = ctypes.c_void_p()
    nbytes = ctypes.c_size_t(3 * N * N * 4)
    check("cudaMalloc", cudart.cudaMalloc(ctypes.byref(p), nbytes))
    a, b, c = p.value, p.value + N * N * 4, p.value + 2 * N * N * 4
    h = ctypes.c_void_p()
    check("cublasCreate_v2", cublas.cublasCreate_v2(ctypes.byref(h)))
    for _ in range(n_gemm):
        check("sgemm", cublas.cublasSgemm_v2(h, 0, 0, N, N, N, ctypes.byref(one), ctypes.c_void_p(a), N, ctypes.c_void_p(b), N, ctypes.byref(zero), ctypes.c_void_p(c), N))  # CALLSITE gemm
    for _ in range(n_memset):
        check("memset", cudart.cudaMemset(p, 0, nbytes))  # CALLSITE memset
    check("cudaDeviceSynchronize", cudart.cudaDeviceSynchronize())
    check("cublasDestroy_v2", cublas.cublasDestroy_v2(h))
    check("cudaFree", cudart.cudaFree(p))


if mode == "thread":
    t = threading.Thread(target=run)
    t.start()
    t.join()
else:
    run()
print("%s: gemm %d memset %d" % (mode, n_gemm, n_memset))
