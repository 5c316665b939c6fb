# Helpers of the reliability tests (t-rel-*.sh, issue 7), sourced after lib.sh.
meta() { q "$1" "SELECT value FROM META WHERE key='$2'"; }
# The interpreter itself: a pyenv shim is a shell script, and a test should time Python, not the shim.
PY=$(python3 -c 'import sys; print(sys.executable)') || fail "python3 not found"
# Prints the pid of the collector cprof-run (pid $1) started, once it is there.
collector_of() {
	local i
	for i in $(seq 200); do
		pgrep -P "$1" -x cprofd && return 0
		sleep 0.05
	done
	return 1
}
# Writes cu.py: a Python target that calls the CUDA runtime through ctypes, N cudaMalloc/cudaFree
# pairs, then ends as asked (exit status 3). The calls go through ctypes.CDLL(None), i.e. dlsym on the
# default scope, which resolves to libcprof.so's hooks as a PLT call would; mode "handle" looks them up on
# libcudart's own handle (ctypes.CDLL("libcudart.so.13").cudaMalloc), which cprof's dlsym hook answers.
# cudart is loaded RTLD_GLOBAL so that the bare run finds it the same way.
write_cu_py() {
	cat > cu.py <<'PYEOF'
import ctypes, os, sys, time
cudart = ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
n, how = int(sys.argv[1]), sys.argv[2]
lib = cudart if how == "handle" else ctypes.CDLL(None)
p = ctypes.c_void_p()
secs = float(sys.argv[3]) if len(sys.argv) > 3 else 0
t0, calls = time.monotonic(), 0
while calls < 2 * n or time.monotonic() - t0 < secs:
    lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
    lib.cudaFree(p)
    calls += 2
print("python calls", "many" if secs else calls, flush=True)
if how == "os._exit":
    os._exit(3)
sys.exit(3)
PYEOF
}
# Writes cudalib.py: ctypes calls of the CUDA runtime for the tests' Python targets: calls(SECS, UNTIL) makes
# cudaMalloc/cudaFree pairs for SECS seconds or until UNTIL() (the calls made), rss() the process's RSS in KiB, and
# cupti_client(KIND) registers a CUPTI client of the program's own (one static 1 MiB buffer, reused) and enables
# KIND; the list it returns holds the record bytes delivered to it.
write_cudalib_py() {
	cat > cudalib.py <<'PYEOF'
import ctypes, time
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
ctypes.CDLL("libcupti.so.13", mode=ctypes.RTLD_GLOBAL)
lib = ctypes.CDLL(None)
_p = ctypes.c_void_p()
def rss():
    with open("/proc/self/status") as f:
        return int(next(l for l in f if l.startswith("VmRSS")).split()[1])
def calls(secs, until=lambda: False):
    t0, n = time.monotonic(), 0
    while not until() and time.monotonic() - t0 < secs:
        lib.cudaMalloc(ctypes.byref(_p), ctypes.c_size_t(256))
        lib.cudaFree(_p)
        n += 2
    return n
_BUF = ctypes.create_string_buffer(1 << 20)
_REQ = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t))
_DONE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
_keep = []
def cupti_client(kind):
    got = [0]
    def req(b, s, m):
        b[0] = ctypes.cast(_BUF, ctypes.c_void_p).value; s[0] = len(_BUF); m[0] = 0
    def done(ctx, st, b, s, v):
        got[0] += v
    _keep.extend([_REQ(req), _DONE(done)])
    assert lib.cuptiActivityRegisterCallbacks(_keep[-2], _keep[-1]) == 0
    assert lib.cuptiActivityEnable(kind) == 0
    return got
PYEOF
}

