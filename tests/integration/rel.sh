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
