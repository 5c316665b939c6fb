# Issue 26: a process's frames go through a shared-memory ring (a sealed memfd cprofd maps by /proc) with a
# KICK a round on the FIFO. The same run three ways -- rings, the FIFO alone in the processes
# (CPROF_RING_KB=0), rings the collector refuses (CPROF_SPOOL_NO_RINGS) -- stores every child's launches with
# no gap in any frame sequence (with rings, children that end before the collector reads their RING stay on
# the FIFO: a mix of both); a paced process, alive long enough, is on its ring; an exec while the collector is
# stopped puts the new image's HELLO right behind the old image's KICK in the pipe, and the old image's frames
# (in its ring) are still stored as its own, before the new image's; a forged RING (a pipe, an
# unsealed memfd, a missing descriptor, another process's pid) is refused with one warning and harms nothing.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
P=8 N=2000
export CPROF_EXIT_TIMEOUT_MS=10000
check() { # db label rings
	assert_eq "$(meta "$1" bad_frames)" 0 "$2: malformed frames"
	assert_eq "$(q "$1" "SELECT sum(seqGaps) FROM PROCESSES")" 0 "$2: gaps in a frame sequence"
	assert_eq "$(q "$1" "SELECT count(*) FROM (SELECT l.processId FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId
		WHERE p.forked = 1 AND l.kernelName = '_Z6kern_bPi' GROUP BY l.processId HAVING count(*) = $N)")" $P "$2: every child's launches"
	assert_eq "$(q "$1" "SELECT count(*) FROM PROCESSES WHERE eventsRecorded + lostEvents != eventsEmitted")" 0 "$2: recorded + lost = emitted"
	assert_eq "$(meta "$1" complete)" 1 "$2: complete"
	# the transport's own frames (RING, a KICK a round) are not frames of any process
	assert_eq "$(meta "$1" frames)" "$(q "$1" "SELECT sum(frames) FROM PROCESSES")" "$2: META frames = the processes' frames"
	assert_ge "$(meta "$1" ring_processes)" "$3" "$2: processes on a ring"
	assert_ge "$4" "$(meta "$1" ring_processes)" "$2: processes on a ring, at most"
}
out=$(sim "$BIN/cprof-run" -q -o ring.db -- "$WL/scenarios" multi $P $N) || fail "run failed: $out"
check ring.db rings 0 $((P + 1))
out=$(sim "$BIN/cprof-run" -q -o paced.db -- "$WL/scenarios" paced 3000 100 0 0) || fail "run failed: $out"
assert_eq "$(meta paced.db ring_processes)" 1 "a paced process on its ring"
assert_ge "$(meta paced.db ring_bytes)" $((3000 * 100)) "its bytes through the ring"
assert_eq "$(q paced.db "SELECT count(*) FROM LAUNCHES")" 3000 "its launches"
assert_eq "$(q paced.db "SELECT sum(seqGaps) FROM PROCESSES")" 0 "no gap in its frames"
out=$(CPROF_RING_KB=0 sim "$BIN/cprof-run" -q -o fifo.db -- "$WL/scenarios" multi $P $N) || fail "run failed: $out"
check fifo.db "FIFO only" 0 0
assert_eq "$(meta fifo.db ring_bytes)" 0 "no bytes through a ring"
out=$(CPROF_SPOOL_NO_RINGS=1 sim "$BIN/cprof-run" -q -o refused.db -- "$WL/scenarios" multi $P $N 2> refused.err) \
	|| fail "run failed: $out"
check refused.db refused 0 0
assert_eq "$(grep -c "shared-memory ring is refused" refused.err)" 1 "said once"

# an exec read in one go with the new image: the old ring's frames go in at the old image's KICK
cat > execer.py <<'PYEOF'
import ctypes, os, sys, time
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
image = sys.argv[1]
for i in range(300 if image == "old" else 200):
    g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
    if image == "old":
        time.sleep(0.001)  # alive long enough for the collector to map its ring
if image == "old":
    open("ready", "w").close()
    while not os.path.exists("go"):
        time.sleep(0.01)
    for i in range(500):  # still in the ring at the exec: its drain puts them there, then the KICK
        g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
    os.execv(sys.executable, [sys.executable, "execer.py", "new"])
open("done", "w").close()
PYEOF
sim "$BIN/cprof-run" -q -o exec.db -- "$PY" execer.py old 2> exec.err &
run=$!
for _ in $(seq 500); do [ -e ready ] && break; sleep 0.02; done
[ -e ready ] || fail "the old image never got ready: $(cat exec.err)"
c=$(pgrep -f -- "--db $T/exec.db") || fail "no cprofd"
kill -STOP "$c"
touch go
for _ in $(seq 500); do [ -e done ] && break; sleep 0.02; done
sleep 0.2
kill -CONT "$c"
wait $run || fail "run: $(cat exec.err)"
assert_eq "$(q exec.db "SELECT group_concat(n, ' ') FROM (SELECT count(a.id) AS n FROM PROCESSES p
	LEFT JOIN API_CALLS a ON a.processId = p.id AND a.name = 'cudaMalloc' GROUP BY p.id ORDER BY p.id)")" "800 200" \
	"each image's calls, the old one's first"
assert_eq "$(q exec.db "SELECT group_concat(byeReason, ' ') FROM (SELECT byeReason FROM PROCESSES ORDER BY id)")" "exec exit" "how each image ended"
assert_eq "$(q exec.db "SELECT sum(seqGaps) FROM PROCESSES")" 0 "no gap in either image's frames"
assert_ge "$(meta exec.db ring_processes)" 1 "the old image on its ring"

# forged RING frames: the forger says HELLO (its own pid) first, then names what is not a sealed ring
cat > forge.py <<'PYEOF'
import os, struct, sys, time
fd = os.open(os.environ["CPROF_FIFO"], os.O_WRONLY)
me = os.getpid()
def frame(t, pid, body, count=1):
    return struct.pack("<IHHIIII", 0x46525043, 2, t, 24 + len(body), pid, 0, count) + body
exe, host, argv = b"/forger\0", b"h\0", b"forger\0"
hello = struct.pack("<IIQIIiiiIHHHH", me, os.getppid(), time.time_ns(), 0, 2, -1, -1, -1, 1, len(exe), len(host), len(argv), 0)
os.write(fd, frame(1, me, hello + exe + host + argv))
r, w = os.pipe()
m = os.memfd_create("not-sealed")
os.ftruncate(m, 4096 + 65536)
os.pwrite(m, struct.pack("<II", 0x474e5243, 65536), 0)  # a ring's header, but shrinkable: never mapped
tid = me  # the main thread's table
for bad_fd, size in ((r, 65536), (m, 65536), (999, 65536), (m, 12345)):
    os.write(fd, frame(13, me, struct.pack("<IiII", tid, bad_fd, size, 0)))
os.write(fd, frame(13, 1, struct.pack("<IiII", 1, 0, 65536, 0)))  # init's, which said no HELLO
os.write(fd, frame(14, me, b"", 0))
bye = struct.pack("<QQQII", time.time_ns(), 0, 0, 1, 0)
os.write(fd, frame(5, me, bye))
time.sleep(0.3)
PYEOF
out=$(sim "$BIN/cprof-run" -q -o forged.db -- "$PY" -c '
import subprocess, sys
subprocess.run([sys.executable, "forge.py"], check=True)
import ctypes
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
for i in range(50):
    g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
print("done")' 2> forged.err) || fail "run failed: $out $(cat forged.err)"
assert_eq "$out" done "the program ran"
assert_eq "$(grep -c "shared-memory ring" forged.err)" 1 "one warning for all of them: $(cat forged.err)"
assert_eq "$(meta forged.db ring_processes)" 1 "only the program's own ring"
assert_eq "$(q forged.db "SELECT count(*) FROM API_CALLS WHERE name = 'cudaMalloc'")" 50 "the program's calls"
echo ok
