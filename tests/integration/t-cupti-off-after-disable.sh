# Issue 26 (never harm the host): when cprof switches itself off (its collector killed), CUPTI's kinds go off and
# its buffers are dropped, else CUPTI records every later call into buffers no flusher drains and the program's
# memory grows (~5 MB/s at 130k calls/s before 2026-12-06). Read from the simulated CUPTI's own log
# (SIMGPU_VERBOSE; CPROF_PRIVATE_FDS=0, else the flusher's switches log into its own descriptor table): each kind's
# last switch is "disabled". 1: a window open then (the flusher's orphan step or the window's cudaProfilerStop,
# whichever comes first); 2: a run recorded whole, and the program's RSS stays flat; 3: the collector gone before
# CUPTI started (no window yet), then the program registers its own CUPTI client: cprof's session never starts, the
# program gets CUPTI to itself, and the RSS stays flat; 4: cprof preloaded and not profiling, the same; 5: cprof
# switched off by a ring it could not map, its collector alive.
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
SIMGPU_VERBOSE=1 CPROF_PRIVATE_FDS=0 LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o stop.db --capture-range cudaProfilerApi -- "$PY" stop.py \
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
# each of the kinds the window turned on: its last switch is off, by the end of cudaProfilerStop
kinds=$(grep -o 'activity kind [0-9]* enabled' stop.err | awk '{print $3}' | sort -un)
[ -n "$kinds" ] || fail "the simulated CUPTI logged no kind enabled: $(head -5 stop.err)"
for k in $kinds; do
	last=$(grep -n "activity kind $k \(enabled\|disabled\)\|^STOPPED" stop.err |
		awk -F: '/STOPPED/ {s = 1; next} !s {w = $0 ~ /disabled/ ? "off" : "on"} END {print w}')
	assert_eq "$last" "off" "kind $k's last switch before the end of cudaProfilerStop"
done
echo "kinds off by the window's stop: $(echo $kinds)"

write_cudalib_py
cat > whole.py <<'PYEOF'
import os
from cudalib import calls, rss
calls(30, lambda: os.path.exists("killed-whole"))
calls(1.0)  # the flusher finds the FIFO gone
r0 = rss()
n = calls(3.0)
print("calls", n, "rss_kib", r0, rss(), flush=True)
PYEOF
SIMGPU_VERBOSE=1 CPROF_PRIVATE_FDS=0 LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o whole.db -- "$PY" whole.py > whole.out 2> whole.err &
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
kinds=$(grep -o 'activity kind [0-9]* enabled' whole.err | awk '{print $3}' | sort -un)
[ -n "$kinds" ] || fail "whole run: the simulated CUPTI logged no kind enabled"
for k in $kinds; do
	last=$(grep "activity kind $k \(enabled\|disabled\)" whole.err | tail -1 | awk '{print $NF}')
	assert_eq "$last" disabled "whole run: kind $k's last switch"
done
# each call pair left ~80 bytes in CUPTI's buffers while the kinds stayed on: 15 MB over these 3 s
assert_ge "$n" 10000 "whole run: calls after the collector was gone"
[ $((r1 - r0)) -lt 4096 ] || fail "whole run: the program's RSS grew $((r1 - r0)) KiB over $n calls after cprof stopped"

# 3: no window yet (CUPTI not started) when the collector goes; then the program's own profiler (one static buffer,
# reused) registers with CUPTI and enables the runtime kind (a review's case, 2026-12-06: cprof's whole session
# started for it then, with no flusher, and the RSS grew 12 MB in 3 s)
cat > late.py <<'PYEOF'
import os, sys
from cudalib import calls, cupti_client, rss
calls(30, lambda: os.path.exists("killed-late"))
calls(1.0)
got = cupti_client(5)
print("registered", file=sys.stderr, flush=True)
calls(0.5)
r0 = rss()
n = calls(3.0)
print("calls", n, "rss_kib", r0, rss(), flush=True)
PYEOF
SIMGPU_VERBOSE=1 CPROF_PRIVATE_FDS=0 LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o late.db --capture-range cudaProfilerApi -- \
	"$PY" late.py > late.out 2> late.err &
run=$!
cd_pid=$(collector_of $run) || { touch killed-late; fail "collector not found (late)"; }
for i in $(seq 100); do
	[ -n "$(sqlite3 late.db "SELECT 1 FROM PROCESSES LIMIT 1" 2>/dev/null)" ] && break
	sleep 0.05
done
kill -KILL "$cd_pid"
touch killed-late
wait $run
read -r _ n _ r0 r1 < late.out || fail "late: no result: $(grep -v simgpu late.err | head -5)"
echo "late: $n calls in 3 s with the program's own CUPTI client, RSS $r0 -> $r1 KiB; $(grep -c 'activity kind [0-9]* enabled' late.err) kinds enabled"
assert_eq "$(grep -o 'activity kind [0-9]* enabled' late.err | awk '{print $3}' | sort -un | tr '\n' ' ')" "5 " \
	"late: the kinds enabled (only the program's)"
assert_ge "$n" 10000 "late: calls after the collector was gone"
[ $((r1 - r0)) -lt 4096 ] || fail "late: the program's RSS grew $((r1 - r0)) KiB over $n calls"

# 4: cprof preloaded but not profiling (no CPROF_FIFO: never started), the program's own CUPTI client first, then
# calls: cprof's session is not started for it, the program gets its records, its RSS stays as without cprof (a
# review, 2026-12-06: 11 MB more per 100k call pairs, buffers queued for a flusher that never was)
cat > off.py <<'PYEOF'
import resource, sys
from cudalib import calls, cupti_client, lib
got = cupti_client(5)
for i in range(int(sys.argv[1]) // 20000):
    calls(3600, lambda c=[0]: c.__setitem__(0, c[0] + 1) or c[0] > 20000)
    lib.cuptiActivityFlushAll(0)
print("bytes", got[0], "maxrss_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
PYEOF
read -r _ b0 _ m0 < <(env -u CPROF_FIFO LD_LIBRARY_PATH=$SIMLIB "$PY" off.py 200000) || fail "off.py bare"
read -r _ b1 _ m1 < <(env -u CPROF_FIFO LD_PRELOAD=$BUILD/lib/libcprof.so LD_LIBRARY_PATH=$SIMLIB "$PY" off.py 200000 2> off.err) ||
	fail "off.py with cprof preloaded: $(cat off.err)"
echo "not profiling, the program's CUPTI client: record bytes $b0 / $b1, max RSS $m0 / $m1 KiB (bare / cprof preloaded)"
assert_ge "$b1" 1 "the program got its CUPTI records with cprof preloaded"
[ "$m1" -lt $((m0 + 4096)) ] || fail "not profiling: the program's max RSS $m1 KiB against $m0 without cprof"
[ -s off.err ] && fail "not profiling: cprof said something: $(cat off.err)"

# 5: cprof switches itself off with its collector alive (a thread's ring cannot be mapped: its first call under an
# address-space limit), a run recorded whole: the records so far are kept, CUPTI's kinds go off, and the program's
# later memsets are not recorded (a review, 2026-12-06: the kinds stayed on, the flusher converting and sending every
# later record of a "disabled" cprof)
cat > ringfail.py <<'PYEOF'
import ctypes, resource, sys, threading, time
from cudalib import lib
p = ctypes.c_void_p()
lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20))
for i in range(100):
    lib.cudaMemset(p, 0, ctypes.c_size_t(256))
lib.cudaDeviceSynchronize()
go, done = threading.Event(), threading.Event()
def worker():
    go.wait()
    q = ctypes.c_void_p()
    lib.cudaMalloc(ctypes.byref(q), ctypes.c_size_t(256))  # its first call: its ring is mapped now
    done.set()
t = threading.Thread(target=worker)
t.start()
with open("/proc/self/status") as f:
    vm = int(next(l for l in f if l.startswith("VmSize")).split()[1])
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, ((vm + 256) * 1024, hard))
go.set()
done.wait()
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
t.join()
time.sleep(0.5)  # the flusher's next rounds
print("DISABLED", file=sys.stderr, flush=True)
for i in range(2000):
    lib.cudaMemset(p, 0, ctypes.c_size_t(256))
lib.cudaDeviceSynchronize()
print("done", flush=True)
PYEOF
SIMGPU_VERBOSE=1 CPROF_PRIVATE_FDS=0 LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o ringfail.db -- "$PY" ringfail.py \
	> ringfail.out 2> ringfail.err || fail "ringfail.py: $(grep -v simgpu ringfail.err | head -5)"
assert_eq "$(cat ringfail.out)" "done" "ring failure: the program's stdout"
[ "$(grep -c 'profiling disabled' ringfail.err)" -eq 1 ] ||
	fail "ring failure: not exactly one 'profiling disabled' warning: $(grep -v simgpu ringfail.err | head -5)"
kinds=$(grep -o 'activity kind [0-9]* enabled' ringfail.err | awk '{print $3}' | sort -un)
[ -n "$kinds" ] || fail "ring failure: the simulated CUPTI logged no kind enabled"
for k in $kinds; do
	last=$(grep -n "activity kind $k \(enabled\|disabled\)\|^DISABLED" ringfail.err |
		awk -F: '/DISABLED/ {s = 1; next} !s {w = $0 ~ /disabled/ ? "off" : "on"} END {print w}')
	assert_eq "$last" "off" "ring failure: kind $k's last switch before the later memsets"
done
n=$(q ringfail.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET")
echo "ring failure: $n memsets stored of 100 before and 2000 after cprof switched itself off"
assert_ge "$n" 100 "ring failure: the memsets before"
[ "$n" -lt 200 ] || fail "ring failure: $n memsets stored: the later ones were recorded"
echo ok
