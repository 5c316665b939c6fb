# Issue 7 scenario 8: fork without exec. Python multiprocessing with the fork start method: each child's
# events carry the child's pid and its parent, the parent's events are not duplicated into the children.
# Then 1000 forks while another thread is inside hooked calls the whole time: no deadlock (each child
# launches once and exits; the run is bounded by a timeout), every child profiled with its one launch.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > mp.py <<'PYEOF'
import ctypes, multiprocessing as mp, os, sys
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)  # the default scope: calls reach libcprof.so's hooks (see rel.sh)
def calls(n):
    p = ctypes.c_void_p()
    for _ in range(n):
        g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
        g.cudaFree(p)
def child(n):
    calls(n)
    # one write(2): the two children's prints, two writes each, interleaved in a CI run (2026-12-07)
    os.write(1, f"child {os.getpid()} {os.getppid()}\n".encode())
if __name__ == "__main__":
    calls(5)
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=child, args=(7,)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    calls(3)
    print("parent", os.getpid(), "exitcodes", *[p.exitcode for p in procs], flush=True)
PYEOF
out=$(sim timeout 60 "$BIN/cprof-run" -q -o mp.db -- "$PY" mp.py) || fail "multiprocessing run failed: $out"
echo "$out"
parent=$(printf '%s\n' "$out" | awk '$1 == "parent" { print $2 }')
assert_match "$out" "exitcodes 0 0" "children's status"
assert_eq "$(q mp.db "SELECT count(*) FROM PROCESSES")" 3 "processes"
assert_eq "$(q mp.db "SELECT count(*) FROM CPROF_API WHERE pid=$parent")" 16 "parent's calls (5 + 3 pairs), none duplicated"
for c in $(printf '%s\n' "$out" | awk '$1 == "child" { print $2 }'); do
	assert_eq "$(q mp.db "SELECT ppid || ' ' || forked FROM PROCESSES WHERE pid=$c")" "$parent 1" "child $c's parent"
	assert_eq "$(q mp.db "SELECT count(*) FROM CPROF_API WHERE pid=$c")" 14 "child $c's calls: its own 7 pairs only"
	assert_eq "$(q mp.db "SELECT byeReason FROM PROCESSES WHERE pid=$c")" _exit "child $c ends with os._exit"
done
assert_eq "$(meta mp.db complete)" 1 "complete"

# 1000 forks, a thread inside hooks all the time (launches that take 50 us each on the simulated GPU)
R=1000
out=$(SIMGPU_LAUNCH_NS=50000 sim timeout 60 "$BIN/cprof-run" -q -o fs.db -- "$WL/scenarios" forkstress $R); rc=$?
[ $rc -ne 124 ] || fail "fork stress timed out: deadlock?"
assert_eq "$rc" 0 "fork stress status ($out)"
assert_eq "$out" "forks $R bad 0" "fork stress"
assert_eq "$(q fs.db "SELECT count(*) FROM PROCESSES WHERE forked = 1")" $R "children profiled"
parent=$(q fs.db "SELECT pid FROM PROCESSES WHERE forked = 0")
assert_eq "$(q fs.db "SELECT count(*) FROM PROCESSES WHERE forked = 1 AND ppid != $parent")" 0 "children's parent"
# each child: exactly its one launch (and its one __cudaGetKernel: the kernel handle cache is per process)
assert_eq "$(q fs.db "SELECT count(*) FROM (SELECT l.processId FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId
	WHERE p.forked = 1 GROUP BY l.processId HAVING count(*) = 1)")" $R "one launch in each child"
assert_eq "$(q fs.db "SELECT count(*) FROM PROCESSES WHERE eventsRecorded + lostEvents != eventsEmitted")" 0 "recorded + lost = emitted"
assert_eq "$(meta fs.db bad_frames)" 0 "bad frames"
echo ok
