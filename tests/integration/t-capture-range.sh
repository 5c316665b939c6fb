# Issue 18 item 11: cudaProfilerStart/Stop are recorded, and cprof-run --capture-range records only inside
# the range it names (cudaProfilerApi: the runtime's or the driver's profiler start/stop; or nvtx:NAME), as nsys
# does; outside it calls pass through unrecorded.
. "$(dirname "$0")/lib.sh"
P=$WL/capture_demo
runs() { # label, options...: the program's output is unchanged, and the profile is complete
	local label=$1; shift
	"$BIN/cprof-run" -q -o "$label.db" "$@" -- "$P" > "$label.out" 2> "$label.err" || fail "$label: exit status $?"
	cmp -s bare.out "$label.out" || fail "$label: output differs"
}
launches() { q "$1" "SELECT count(*) FROM API_CALLS WHERE class = 'launch'"; }
"$P" > bare.out || fail "bare run"
assert_eq "$(cat bare.out)" "before 4 inside 10 after 3 measure 7 tail 2" "the program's own count"

runs all
assert_eq "$(launches all.db)" 26 "without a capture range every launch is recorded"
assert_eq "$(q all.db "SELECT count(*) FROM API_CALLS WHERE name IN ('cudaProfilerStart', 'cudaProfilerStop')")" 2 "profiler calls recorded"

runs api --capture-range cudaProfilerApi
assert_eq "$(launches api.db)" 10 "cudaProfilerApi: the launches between start and stop"
assert_eq "$(q api.db "SELECT group_concat(name) FROM (SELECT name FROM API_CALLS WHERE class != 'launch' ORDER BY start)")" \
	"cudaProfilerStart,cudaDeviceSynchronize,cudaProfilerStop" "cudaProfilerApi: the window's own calls"
assert_eq "$(q api.db "SELECT group_concat(code) FROM (SELECT code FROM CPROF_STATUS WHERE code LIKE 'capture%' ORDER BY timeNs)")" \
	"capture-start,capture-on,capture-off,capture-stop" "the window is in the profile (its bounds, then its inner bounds)"
assert_eq "$(q api.db "SELECT count(*) FROM NVTX_EVENTS")" 0 "no annotation outside the window"

runs nvtx --capture-range nvtx:measure
assert_eq "$(launches nvtx.db)" 7 "nvtx:measure: the launches inside the range"
assert_eq "$(q nvtx.db "SELECT count(*) FROM API_CALLS WHERE name LIKE 'cudaProfiler%'")" 0 "nvtx: the profiler calls were outside"
assert_eq "$(q nvtx.db "SELECT count(*) FROM NVTX_EVENTS")" 2 "nvtx: the range and the one nested in it"

# on the simulated GPU the GPU records follow the window too: CUPTI's kinds are off outside it
need_sim
sim "$P" > bare.out || fail "bare simulated run"
for mode in cudaProfilerApi:10 nvtx:measure:7; do
	range=${mode%:*} want=${mode##*:}
	sim "$BIN/cprof-run" -q -o "sim-$want.db" --capture-range "$range" -- "$P" > sim.out 2> sim.err || fail "simulated $range"
	cmp -s bare.out sim.out || fail "simulated $range: output differs"
	assert_eq "$(launches "sim-$want.db")" "$want" "simulated $range: launches"
	assert_eq "$(q "sim-$want.db" "SELECT count(*) FROM KERNELS")" "$want" "simulated $range: kernels"
done
# nvtx:NAME matches a range whose message is a registered string (nsys's default form), in any domain, or with
# @DOMAIN in that one only (@*: any); a pop of another domain at the same level does not end it; a name holding
# '@' still matches whole (2026-12-06: a registered string opened nothing, @DOMAIN never matched). nvtx_demo
# domain 5: default "measure" 1 backward, "user@host" 2 backward, mydom's "measure" 10 forward, 1 backward outside
for r in nvtx:measure:10/1 nvtx:measure@mydom:10/0 nvtx:measure@other:0/0 'nvtx:measure@*:10/1' nvtx:user@host:0/2; do
	range=${r%:*} want=${r##*:}
	sim "$BIN/cprof-run" -q -f -o dom.db --capture-range "$range" -- "$WL/nvtx_demo" domain 5 > dom.out 2> dom.err ||
		fail "nvtx_demo domain under $range: $(cat dom.err)"
	assert_eq "$(q dom.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%forward%'")/$(q dom.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%backward%'")" \
		"$want" "$range: the forward / backward kernels recorded"
done
# a domain past the 31 a thread's fixed level slots hold counts its own levels: its window closes at its own pop
# while a range of another such domain stays open, and the levels returned are each domain's (2026-12-06: domains
# past the 30th shared one count, the window stayed open and nvtxDomainRangePushEx returned 1 for a first range)
sim "$BIN/cprof-run" -q -f -o doms.db --capture-range nvtx:measure@late -- "$WL/nvtx_demo" domains 5 > doms.out 2> doms.err ||
	fail "nvtx_demo domains: $(cat doms.err)"
assert_eq "$(q doms.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%forward%'")/$(q doms.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%backward%'")" \
	"10/0" "nvtx:measure@late (a 42nd domain): the forward / backward kernels recorded"
sim "$BIN/cprof-run" -q -o sim-all.db -- "$P" > /dev/null 2>&1 || fail "simulated, no range"
assert_eq "$(q sim-all.db "SELECT count(*) FROM KERNELS")" 26 "simulated, no range: every kernel"

# cudaProfilerStart as the program's first CUDA call: cprof starts inside it and reads the mode first (its window was
# missed whole, an empty profile, until 2026-12-06)
cat > first.py <<'PYEOF'
import ctypes
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
lib, p = ctypes.CDLL(None), ctypes.c_void_p()
lib.cudaProfilerStart()
for i in range(5):
    lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
lib.cudaProfilerStop()
lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
PYEOF
sim "$BIN/cprof-run" -q -o first.db --capture-range cudaProfilerApi -- python3 first.py > /dev/null 2> first.err ||
	fail "cudaProfilerStart first: $(cat first.err)"
assert_eq "$(q first.db "SELECT group_concat(name) FROM (SELECT name FROM API_CALLS ORDER BY start)")" \
	"cudaProfilerStart,cudaMalloc,cudaMalloc,cudaMalloc,cudaMalloc,cudaMalloc,cudaProfilerStop" \
	"cudaProfilerStart as the first CUDA call: the window's calls"

# the driver's cuProfilerStart/Stop open and close the window as the runtime's do (nsys treats both alike; they opened
# nothing until 2026-12-06): called by name (dlsym on libcuda's handle) and through the entry points cuGetProcAddress
# hands out. The runtime's cudaProfilerStart/Stop call the driver's through such an entry point (the real cudart
# does, the simulated one too: a DRIVER record inside each): one switch each, no second call recorded.
cat > drv.py <<'PYEOF'
import ctypes
from ctypes import byref, c_int, c_size_t, c_uint64, c_void_p, CFUNCTYPE
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g, drv = ctypes.CDLL(None), ctypes.CDLL("libcuda.so.1")
p = c_void_p()
def memsets(n):
    for _ in range(n):
        g.cudaMemset(p, 1, c_size_t(4096))
def window(start, stop, n):
    assert start() == 0
    memsets(n)
    g.cudaDeviceSynchronize()
    assert stop() == 0
    memsets(1)  # outside
g.cudaMalloc(byref(p), c_size_t(4096))
memsets(1)
window(drv.cuProfilerStart, drv.cuProfilerStop, 3)
ep = {}
for name in ("cuProfilerStart", "cuProfilerStop"):
    f, st = c_void_p(), c_int()
    assert drv.cuGetProcAddress_v2(name.encode(), byref(f), 13000, c_uint64(0), byref(st)) == 0
    ep[name] = CFUNCTYPE(c_int)(f.value)
window(ep["cuProfilerStart"], ep["cuProfilerStop"], 2)
window(g.cudaProfilerStart, g.cudaProfilerStop, 1)
PYEOF
sim "$BIN/cprof-run" -q -o drv.db --capture-range cudaProfilerApi -- python3 drv.py > /dev/null 2> drv.err ||
	fail "cuProfilerStart/Stop: $(cat drv.err)"
want=cuProfilerStart,cudaMemset,cudaMemset,cudaMemset,cudaDeviceSynchronize,cuProfilerStop
want=$want,cuProfilerStart,cudaMemset,cudaMemset,cudaDeviceSynchronize,cuProfilerStop
want=$want,cudaProfilerStart,cudaMemset,cudaDeviceSynchronize,cudaProfilerStop
assert_eq "$(q drv.db "SELECT group_concat(name) FROM (SELECT name FROM API_CALLS ORDER BY start)")" "$want" \
	"cuProfilerStart/Stop: the windows' calls"
assert_eq "$(q drv.db "SELECT group_concat(message, ' ') FROM (SELECT message FROM CPROF_STATUS WHERE code IN ('capture-start', 'capture-stop') ORDER BY timeNs)")" \
	"cuProfilerStart cuProfilerStop cuProfilerStart cuProfilerStop cudaProfilerStart cudaProfilerStop" \
	"each window opened and closed by its own call, once"
assert_eq "$(q drv.db "SELECT count(*) FROM CPROF_WINDOWS w JOIN API_CALLS a ON a.processId = w.processId
	AND a.name = 'cuProfilerStart' AND w.start <= a.start AND a.start < w.end")" 2 "each window opens at its cuProfilerStart"
assert_eq "$(q drv.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET")" 6 "the GPU records of the windows' memsets only"

# the program's own CUPTI client (torch.profiler outside the range) starts cprof's CUPTI session while cprof waits
# for its range: cprof's kinds stay off, the program's records reach it, and nothing is stored (before 2026-12-06
# cprof's kinds went on with the session and a profile whose range never opened held torch.profiler's kernels)
. "$ROOT/tests/integration/rel.sh"
write_cudalib_py
cat > own.py <<'PYEOF'
from cudalib import calls, cupti_client, lib
got = cupti_client(5)  # the runtime API's records
calls(3600, lambda c=[0]: c.__setitem__(0, c[0] + 1) or c[0] > 25)
lib.cuptiActivityFlushAll(0)
print("program's record bytes", got[0])
PYEOF
sim "$BIN/cprof-run" -q -o own.db --capture-range cudaProfilerApi -- python3 own.py > own.out 2> own.err ||
	fail "the program's own CUPTI client outside the range: $(cat own.err)"
read -r _ _ _ bytes < own.out
assert_ge "${bytes:-0}" 1 "the program got its CUPTI records"
assert_eq "$(q own.db "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + (SELECT count(*) FROM CPROF_API)")" 0 \
	"nothing stored when the range never opened (the program's own CUPTI client on)"
# and the report says so, instead of "the program made no CUDA call"
assert_eq "$(q own.db "SELECT value FROM META WHERE key = 'recording'")" "--capture-range cudaProfilerApi" "META recording"
"$BIN/cprof" report own.db > own.txt || fail "report of a profile whose range never opened"
grep -q "^Verdict: no-gpu-activity: nothing was recorded: the program never called cudaProfilerStart or cuProfilerStart (--capture-range cudaProfilerApi)" own.txt ||
	fail "the report does not say the window never opened: $(grep Verdict own.txt)"
assert_eq "$(q all.db "SELECT count(*) FROM META WHERE key = 'recording'")" 0 "no META recording for a run recorded whole"
# recorded whole, the same program: its CUPTI client came before cprof's first hooked call, and cprof's kinds stay on
sim "$BIN/cprof-run" -q -o own-all.db -- python3 own.py > own-all.out 2> own-all.err || fail "own.py whole: $(cat own-all.err)"
assert_eq "$(q own-all.db "SELECT count(*) FROM CPROF_API")/$(q own-all.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME")" \
	"50/50" "recorded whole with the program's CUPTI client first: the calls and CUPTI's records of them"

# a merged profile keeps META recording only when its parts had the same
runs api2 --capture-range cudaProfilerApi
"$BIN/cprof" merge api.db api2.db -o merged-same.db > /dev/null 2>&1 || fail "merge api.db api2.db"
"$BIN/cprof" merge api.db all.db -o merged-mixed.db > /dev/null 2>&1 || fail "merge api.db all.db"
assert_eq "$(q merged-same.db "SELECT group_concat(value) FROM META WHERE key = 'recording'")" "--capture-range cudaProfilerApi" \
	"META recording of two parts that had the same"
assert_eq "$(q merged-mixed.db "SELECT count(*) FROM META WHERE key = 'recording'")" 0 "META recording of a windowed part and a whole one"

"$BIN/cprof-run" -q -o bad.db --capture-range nvtx: -- "$P" > /dev/null 2> bad.err; rc=$?
assert_eq "$rc" 2 "an empty NVTX name is a usage error"
[ -e bad.db ] && fail "a usage error left a profile"
echo ok
