# make bench: a hooked CUDA call from Python through ctypes, with the GIL held (PyDLL) or released (CDLL).
# usage: pyhook.py LIBCUDART held|released N BURST -> "ns_per_call X rc R": the median over bursts of BURST
# calls of cudaStreamSynchronize(NULL) (no driver: it returns at once), 2 ms apart so the collector keeps up,
# from 8 Python frames deep; the function is found on the library's own handle (cprof's dlsym hook).
import ctypes
import sys
import time

lib, mode, n, burst = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
f = (ctypes.PyDLL if mode == "held" else ctypes.CDLL)(lib).cudaStreamSynchronize
f.argtypes = [ctypes.c_void_p]


def bursts():
    per = []
    for _ in range(n // burst):
        t0 = time.perf_counter_ns()
        for _ in range(burst):
            f(None)
        per.append((time.perf_counter_ns() - t0) / burst)
        time.sleep(0.002)
    per.sort()
    return per[len(per) // 2], f(None)


def deep(k):
    return deep(k - 1) if k else bursts()


ns, rc = deep(8)
print("ns_per_call %.1f rc %d" % (ns, rc))
