# Issue 26 (never harm the host): a window open when cprof switches itself off (its collector killed) still turns
# CUPTI's kinds off at its stop, else CUPTI records every later call into buffers no flusher drains. Read from the
# simulated CUPTI's own log (SIMGPU_VERBOSE): each kind's last switch is "disabled", made inside cudaProfilerStop.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > stop.py <<'PYEOF'
import ctypes, os, sys, time
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
lib = ctypes.CDLL(None)
p = ctypes.c_void_p()
def calls(secs, until=lambda: False):
    t0 = time.monotonic()
    while not until() and time.monotonic() - t0 < secs:
        lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
        lib.cudaFree(p)
lib.cudaProfilerStart()
calls(30, lambda: os.path.exists("killed"))
calls(1.0)  # the flusher finds the FIFO gone and cprof switches itself off
print("STOPPING", file=sys.stderr, flush=True)
lib.cudaProfilerStop()
print("STOPPED", file=sys.stderr, flush=True)
calls(0.2)
print("done", flush=True)
PYEOF
SIMGPU_VERBOSE=1 LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o stop.db --capture-range cudaProfilerApi -- "$PY" stop.py \
	> stop.out 2> stop.err &
run=$!
cd_pid=$(collector_of $run) || { touch killed; fail "collector not found"; }
for i in $(seq 250); do
	[ "$(sqlite3 stop.db "SELECT count(*) FROM CPROF_API" 2>/dev/null)" -gt 0 ] 2>/dev/null && break
	sleep 0.02
done
kill -KILL "$cd_pid"
touch killed
wait $run
assert_eq "$(cat stop.out)" "done" "the program's stdout"
[ "$(grep -c 'collector gone' stop.err)" -eq 1 ] || fail "not exactly one 'collector gone' warning: $(grep -v 'simgpu' stop.err | head -5)"
# each of the kinds the window turned on: its last switch is off, and it came between STOPPING and STOPPED
kinds=$(grep -o 'activity kind [0-9]* enabled' stop.err | awk '{print $3}' | sort -un)
[ -n "$kinds" ] || fail "the simulated CUPTI logged no kind enabled: $(head -5 stop.err)"
for k in $kinds; do
	last=$(grep -n "activity kind $k \(enabled\|disabled\)\|^STOPPING\|^STOPPED" stop.err |
		awk -F: -v k="$k" '/STOPPING/ {s = 1; next} /STOPPED/ {s = 2; next} {w = $0 ~ /disabled/ ? "off" : "on"; at = s} END {print w, at}')
	assert_eq "$last" "off 1" "kind $k's last switch (off or on, and 1: inside cudaProfilerStop)"
done
echo "kinds turned off at the stop: $(echo $kinds)"
echo ok
