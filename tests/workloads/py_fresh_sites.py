# CUDA calls from N Python call sites, each its own freshly compiled file and function, so that every
# call's stack names strings never sent before: from 1 thread, or from T at once over the same sites.
# usage: py_fresh_sites.py N [T]   (site i: function site_<i> in "/fresh/site_<i>.py", its line 2)
# Runs on a real GPU or on the simulated one (LD_LIBRARY_PATH=build/simgpu/lib).
import ctypes
import sys
import threading

n = int(sys.argv[1])
nthreads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
cudart = ctypes.CDLL("libcudart.so.13")  # releases the GIL in each call: threads meet inside the hooks
p = ctypes.c_void_p()
if cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096)) != 0:
    sys.exit("cudaMalloc failed")
sites = {}
lock = threading.Lock()
bad = []


def site(i):
    # compiled by the first thread that needs it, just before its first call: the threads meet its
    # strings fresh, while the profiler's flusher may be sending the previous ones
    with lock:
        if i not in sites:
            ns = {"cudart": cudart, "p": p}
            src = "def site_%d():\n    return cudart.cudaMemset(p, 0, 4096)\n" % i
            exec(compile(src, "/fresh/site_%d.py" % i, "exec"), ns)
            sites[i] = ns["site_%d" % i]
        return sites[i]


def run():
    for i in range(n):
        if site(i)() != 0:
            bad.append(i)


threads = [threading.Thread(target=run) for _ in range(nthreads)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if bad:
    sys.exit("cudaMemset failed in %d calls" % len(bad))
print("sites %d threads %d" % (n, nthreads))
