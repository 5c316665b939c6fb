# Issue 21 item 13: the rule for processes CMD leaves running. cprof-run waits for CMD itself, then at
# most --grace seconds (default 10) for their events; a setsid'd grandchild that keeps calling CUDA after
# its parent exited no longer holds cprof-run for as long as it lives (it was up to 600 s): cprof-run
# returns CMD's status, says so in one line, and the profile keeps the survivor without an end, marked
# incomplete. A child that ends within the grace period is waited for: the profile is complete.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > gc.py <<'PYEOF'
import ctypes, os, sys, time
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
secs = float(sys.argv[1])
g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
pid = os.fork()
if pid == 0:
    os.setsid()
    with open("child.pid", "w") as f:
        f.write(str(os.getpid()))
    t0 = time.monotonic()
    while time.monotonic() - t0 < secs:
        g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
        g.cudaFree(p)
    os._exit(0)
while not os.path.exists("child.pid"):
    time.sleep(0.01)
time.sleep(0.3)
sys.exit(4)
PYEOF
cleanup_child() { [ -f child.pid ] && kill "$(cat child.pid)" 2>/dev/null; rm -f child.pid; }
trap 'cleanup_child; rm -rf "$T"' EXIT

# a survivor that would run 60 s: cprof-run is back after the grace period and the final drain
start=$(date +%s)
sim "$BIN/cprof-run" --grace 1 -o g.db -- "$PY" gc.py 60 > /dev/null 2> err.txt
rc=$?
took=$(( $(date +%s) - start ))
assert_eq "$rc" 4 "cprof-run returns CMD's status"
[ "$took" -le 12 ] || fail "cprof-run took $took s with a 1 s grace period"
kill -0 "$(cat child.pid)" 2>/dev/null || fail "the survivor should still be running (test set-up)"
# the collector keeps reading while a process without goodbye lives; cprof-run ends that, in one line
assert_eq "$(grep -c '^cprof-run:' err.txt)" 1 "cprof-run's lines: $(cat err.txt)"
grep -q "^cprof-run: events still arrive 1 s after the command ended" err.txt || fail "no word about the survivor: $(cat err.txt)"
grep -q "INCOMPLETE: .*still running" err.txt || fail "the summary does not say incomplete: $(cat err.txt)"
cleanup_child
assert_eq "$(meta g.db complete)" 0 "a profile with a survivor is incomplete"
assert_match "$(meta g.db incomplete_reason)" "still running" "why"
assert_eq "$(q g.db "SELECT count(*) FROM PROCESSES")" 2 "parent and survivor"
assert_eq "$(q g.db "SELECT count(*) FROM PROCESSES WHERE endNs IS NULL AND byeReason IS NULL")" 1 "the survivor has no end"
assert_ge "$(q g.db "SELECT count(*) FROM CPROF_API a JOIN PROCESSES p ON p.id = a.processId WHERE p.byeReason IS NULL")" 10 \
	"the survivor's calls until then are kept"
"$BIN/cprof" report g.db > /dev/null 2>&1 || fail "the profile reads"

# a child that ends within the grace period is waited for
sim "$BIN/cprof-run" -q -o w.db -- "$PY" gc.py 1 > /dev/null 2> err.txt
assert_eq $? 4 "status"
assert_eq "$(cat err.txt)" "" "no warning"
assert_eq "$(meta w.db complete)" 1 "complete: the child ended within the grace period"
assert_eq "$(q w.db "SELECT count(*) FROM PROCESSES WHERE byeReason IS NOT NULL")" 2 "both said goodbye"
"$BIN/cprof-run" --grace x -- true 2> err.txt
assert_eq $? 2 "--grace x"
echo ok
