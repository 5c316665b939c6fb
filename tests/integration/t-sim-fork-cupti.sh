# A fork child whose parent never brought CUDA up gets GPU records like any process (its own CUPTI session, its
# kernels under its pid, call stacks); a child of a parent that had started CUPTI records API calls only, as CUDA
# itself does not work there. Until 2026-12-06 every fork child was left without CUPTI (verdict: "no GPU records:
# CUPTI did not report any"), multiprocessing workers that alone used CUDA too.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
kernels() { q "$1" "SELECT count(*) FROM KERNELS k JOIN PROCESSES p ON p.id = k.processId WHERE p.pid = $2"; }

# the parent forks before any CUDA call; the child launches 5 kernels
out=$(sim "$BIN/cprof-run" -q -o fresh.db -- "$WL/scenarios" fork 0 5) || fail "fork 0 5: $out"
child=$(printf '%s\n' "$out" | awk '$1 == "CHILDPID" { print $2 }')
[ -n "$child" ] || fail "no child pid: $out"
assert_eq "$(q fresh.db "SELECT forked FROM PROCESSES WHERE pid = $child")" 1 "the child is marked forked"
assert_eq "$(kernels fresh.db "$child")" 5 "the child's kernels, from CUPTI, under its pid"
assert_eq "$(q fresh.db "SELECT count(*) FROM CPROF_STATUS WHERE pid = $child AND code = 'cupti-started'")" 1 \
	"the child started its own CUPTI session"
assert_eq "$(q fresh.db "SELECT count(*) FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId
	JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = l.processId AND e.externalId = l.correlationId
	JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.processId = e.processId AND k.correlationId = e.correlationId
	WHERE p.pid = $child")" 5 \
	"each launch joined to its kernel"
assert_ge "$(q fresh.db "SELECT count(*) FROM CPROF_API a JOIN PROCESSES p ON p.id = a.processId
	WHERE p.pid = $child AND a.stackId IS NOT NULL")" 1 "the child's calls have call stacks"
"$BIN/cprof" report fresh.db > fresh.txt || fail "report of fresh.db"
v=$(grep '^Verdict:' fresh.txt)
case $v in *"no-gpu-activity"* | *"CUPTI did not report"*) fail "the child's GPU work is missing from the verdict: $v" ;; esac
assert_eq "$(meta fresh.db complete)" 1 "complete"

# the parent launched first (its CUPTI session started): the child records its calls only, as before
out=$(sim "$BIN/cprof-run" -q -o used.db -- "$WL/scenarios" fork 3 5) || fail "fork 3 5: $out"
child=$(printf '%s\n' "$out" | awk '$1 == "CHILDPID" { print $2 }')
parent=$(q used.db "SELECT pid FROM PROCESSES WHERE forked = 0")
[ -n "$child" ] && [ -n "$parent" ] || fail "pids not found: $out"
assert_eq "$(kernels used.db "$parent")" 3 "the parent's kernels"
assert_eq "$(kernels used.db "$child")" 0 "no CUPTI in the child of a parent whose session started"
assert_eq "$(q used.db "SELECT count(*) FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId WHERE p.pid = $child")" 5 \
	"the child's launches are recorded"
assert_eq "$(q used.db "SELECT count(*) FROM CPROF_STATUS WHERE pid = $child AND code LIKE 'cupti%'")" 0 \
	"the child says nothing of CUPTI"

# Python multiprocessing (fork start method): the parent is profiled (cudaDriverGetVersion starts cprof and
# needs no driver initialisation) but brings CUDA up only after its workers ended; each worker allocates and
# sets memory, its GPU records under its own pid; the parent's memsets are its own
cat > mp.py <<'PYEOF'
import ctypes, multiprocessing as mp, os
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)  # the default scope: calls reach libcprof.so's hooks (see rel.sh)
def work(n):
    p = ctypes.c_void_p()
    g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096))
    for _ in range(n):
        g.cudaMemset(p, 0, ctypes.c_size_t(4096))
    g.cudaDeviceSynchronize()
    g.cudaFree(p)
def child(n):
    work(n)
    os.write(1, b"child %d\n" % os.getpid())  # one write: the workers' lines do not interleave
if __name__ == "__main__":
    v = ctypes.c_int()
    g.cudaDriverGetVersion(ctypes.byref(v))
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=child, args=(4,)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    work(2)
    print("parent", os.getpid(), "exitcodes", *[p.exitcode for p in procs], flush=True)
PYEOF
out=$(sim timeout 60 "$BIN/cprof-run" -q -o mp.db -- "$PY" mp.py) || fail "multiprocessing run failed: $out"
parent=$(printf '%s\n' "$out" | awk '$1 == "parent" { print $2 }')
assert_match "$out" "exitcodes 0 0" "the workers' status"
memsets() { q mp.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET m JOIN PROCESSES p ON p.id = m.processId WHERE p.pid = $1"; }
assert_eq "$(q mp.db "SELECT count(*) FROM PROCESSES WHERE pid = $parent AND startNs < (SELECT min(startNs) FROM PROCESSES WHERE forked = 1)")" 1 \
	"the parent was profiled before it forked"
assert_eq "$(memsets "$parent")" 2 "the parent's memsets"
n=0
for c in $(printf '%s\n' "$out" | awk '$1 == "child" { print $2 }'); do
	assert_eq "$(q mp.db "SELECT ppid || ' ' || forked FROM PROCESSES WHERE pid = $c")" "$parent 1" "worker $c's parent"
	assert_eq "$(memsets "$c")" 4 "worker $c's memsets, from CUPTI, under its pid"
	n=$((n + 1))
done
assert_eq "$n" 2 "workers seen ($out)"
assert_eq "$(meta mp.db complete)" 1 "complete"
# the parent brought CUDA up outside its --capture-range window (CUPTI still pending: the hooks passed the calls
# through), then forked; the child opens a window of its own: its CUDA is the parent's, broken by the fork, so it
# records API calls only and never calls CUPTI (until the s21 review it started a session there)
cat > up.py <<'PYEOF'
import ctypes, os
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096))
g.cudaMemset(p, 0, ctypes.c_size_t(4096))
g.cudaDeviceSynchronize()
pid = os.fork()
if pid == 0:
    g.cudaProfilerStart()
    for _ in range(3):
        g.cudaMemset(p, 0, ctypes.c_size_t(4096))
    g.cudaProfilerStop()
    os.write(1, b"child %d\n" % os.getpid())
    os._exit(0)
os.waitpid(pid, 0)
PYEOF
out=$(sim timeout 60 "$BIN/cprof-run" -q --capture-range cudaProfilerApi -o up.db -- "$PY" up.py) ||
	fail "capture-range fork run failed: $out"
child=$(printf '%s\n' "$out" | awk '$1 == "child" { print $2 }')
[ -n "$child" ] || fail "no child pid: $out"
assert_eq "$(q up.db "SELECT count(*) FROM CPROF_STATUS WHERE pid = $child AND code = 'capture-on'")" 1 \
	"the child opened its window"
assert_eq "$(q up.db "SELECT count(*) FROM CPROF_STATUS WHERE pid = $child AND code LIKE 'cupti%'")" 0 \
	"no CUPTI session in the child of a parent whose CUDA was up"
assert_eq "$(q up.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET m JOIN PROCESSES p ON p.id = m.processId
	WHERE p.pid = $child")" 0 "no GPU records in that child"
assert_eq "$(q up.db "SELECT count(*) FROM CPROF_API a JOIN PROCESSES p ON p.id = a.processId JOIN StringIds s
	ON s.id = a.nameId WHERE p.pid = $child AND s.value = 'cudaMemset'")" 3 "its calls are recorded"
echo ok
