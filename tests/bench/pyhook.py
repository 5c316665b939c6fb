# make bench: a hooked CUDA call from Python through ctypes, with the GIL held (PyDLL) and released (CDLL).
# usage: pyhook.py LIBCUDART N BURST -> "held_ns X released_ns Y rc R": for each, the median over bursts of
# BURST calls of cudaStreamSynchronize(NULL) (no driver: it returns at once), 8 Python frames deep. The two
# ways alternate burst by burst in one process, so a busy machine slows both alike; bursts are 2 ms apart
# so the collector keeps up. The function is found on the library's own handle (cprof's dlsym hook).
import ctypes
import sys
import time

lib, n, burst = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fns = {"held": ctypes.PyDLL(lib).cudaStreamSynchronize, "released": ctypes.CDLL(lib).cudaStreamSynchronize}
for f in fns.values():
    f.argtypes = [ctypes.c_void_p]


def bursts():
    per = {k: [] for k in fns}
    for i in range(n // burst):
        for k in (("held", "released") if i % 2 == 0 else ("released", "held")):
            f = fns[k]
            t0 = time.perf_counter_ns()
            for _ in range(burst):
                f(None)
            per[k].append((time.perf_counter_ns() - t0) / burst)
            time.sleep(0.002)
    return {k: sorted(v)[len(v) // 2] for k, v in per.items()}, fns["held"](None)


def deep(k):
    return deep(k - 1) if k else bursts()


ns, rc = deep(8)
print("held_ns %.1f released_ns %.1f rc %d" % (ns["held"], ns["released"], rc))
