# Issue 7 scenario 9: processes started without a plain fork. posix_spawn and vfork + execve with the
# environment inherited -> the child is profiled as its own process (its pid, its parent); a vfork child
# whose exec fails and which _exits leaves the parent's profiling untouched (that _exit is not the
# parent's); exec with an empty environment -> the new image is cleanly unprofiled and the old one said
# goodbye (reason exec), so the profile is complete. LD_PRELOAD without CPROF_FIFO -> the library stays
# off: no thread, no warning, same output.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
out=$(sim "$BIN/cprof-run" -q -o spawn.db -- "$WL/scenarios" spawn) || fail "spawn run failed: $out"
assert_eq "$(printf '%s\n' "$out" | tail -1)" "spawn 0 vfork 0 failed-exec 127" "children's status"
parent=$(q spawn.db "SELECT pid FROM PROCESSES WHERE id = 1")
assert_eq "$(q spawn.db "SELECT count(*) FROM PROCESSES")" 3 "processes: the parent and two exec'd children"
assert_eq "$(q spawn.db "SELECT count(*) FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId WHERE p.pid = $parent")" 5 \
	"parent's launches, before and after the failed exec in its vfork child"
assert_eq "$(q spawn.db "SELECT byeReason FROM PROCESSES WHERE pid = $parent")" exit "the parent's end"
assert_eq "$(q spawn.db "SELECT count(*) FROM PROCESSES WHERE ppid = $parent AND forked = 0 AND byeReason = 'exit'")" 2 "children's parent"
assert_eq "$(q spawn.db "SELECT count(*) FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId WHERE p.ppid = $parent AND kernelName = '_Z6kern_bPi'")" 6 "children's launches"
assert_eq "$(meta spawn.db complete)" 1 "complete"

out=$(sim "$BIN/cprof-run" -q -o empty.db -- "$WL/scenarios" exec-empty) || fail "exec-empty failed: $out"
assert_eq "$out" "empty-env:none:none" "the exec'd image runs without cprof's variables"
assert_eq "$(q empty.db "SELECT count(*) || ' ' || byeReason FROM PROCESSES")" "1 exec" "one profiled image, ended by exec"
assert_eq "$(q empty.db "SELECT count(*) FROM LAUNCHES")" 2 "launches before the exec"
assert_eq "$(meta empty.db complete)" 1 "complete"

# half an environment: the library loaded, no FIFO named -> off, silently, no thread started
cat > threads.py <<'PYEOF'
import ctypes, os
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
for _ in range(10):
    g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
print("threads", len(os.listdir("/proc/self/task")))
PYEOF
bare=$(sim "$PY" threads.py) || fail "bare python"
out=$(env -u CPROF_FIFO LD_PRELOAD="$BUILD/lib/libcprof.so" LD_LIBRARY_PATH=$SIMLIB "$PY" threads.py 2> err.txt) || fail "preloaded python"
assert_eq "$out" "$bare" "threads with the library loaded but no CPROF_FIFO"
assert_eq "$(cat err.txt)" "" "no warning without CPROF_FIFO"
echo ok
