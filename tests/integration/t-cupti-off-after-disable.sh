# Issue 26 (never harm the host): when cprof switches itself off (its collector killed), CUPTI's kinds go off, else
# CUPTI records every later call into buffers no flusher drains and the program's memory grows (~5 MB/s at 130k
# calls/s before 2026-12-06). Read from the simulated CUPTI's own log (SIMGPU_VERBOSE): each kind's last switch is
# "disabled". 1: a window open then turns them off at its cudaProfilerStop at the latest; 2: a run recorded whole
# (no window to close): the flusher turns them off when it finds the collector gone, and the program's RSS stays flat.
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

cat > whole.py <<'PYEOF'
import ctypes, os, sys, time
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
lib = ctypes.CDLL(None)
p = ctypes.c_void_p()
def rss():
    with open("/proc/self/status") as f:
        return int(next(l for l in f if l.startswith("VmRSS")).split()[1])
def calls(secs, until=lambda: False):
    t0, n = time.monotonic(), 0
    while not until() and time.monotonic() - t0 < secs:
        lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
        lib.cudaFree(p)
        n += 2
    return n
calls(30, lambda: os.path.exists("killed-whole"))
calls(1.0)  # the flusher finds the FIFO gone
r0 = rss()
n = calls(3.0)
print("calls", n, "rss_kib", r0, rss(), flush=True)
PYEOF
SIMGPU_VERBOSE=1 LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o whole.db -- "$PY" whole.py > whole.out 2> whole.err &
run=$!
cd_pid=$(collector_of $run) || { touch killed-whole; fail "collector not found (whole run)"; }
for i in $(seq 250); do
	[ "$(sqlite3 whole.db "SELECT count(*) FROM CPROF_API" 2>/dev/null)" -gt 0 ] 2>/dev/null && break
	sleep 0.02
done
kill -KILL "$cd_pid"
touch killed-whole
wait $run
read -r _ n _ r0 r1 < whole.out || fail "whole run: no result: $(grep -v simgpu whole.err | head -5)"
echo "whole run: $n calls in the 3 s after cprof stopped, RSS $r0 -> $r1 KiB"
[ "$(grep -c 'collector gone' whole.err)" -eq 1 ] || fail "whole run: not exactly one 'collector gone' warning"
# (the kinds go off on the flusher's thread, whose descriptor table is its own: the simulator's log of it does not
# reach the program's stderr, so the memory is what is read here)
# each call pair left ~80 bytes in CUPTI's buffers while the kinds stayed on: 15 MB over these 3 s
assert_ge "$n" 10000 "whole run: calls after the collector was gone"
[ $((r1 - r0)) -lt 4096 ] || fail "whole run: the program's RSS grew $((r1 - r0)) KiB over $n calls after cprof stopped"
echo ok
