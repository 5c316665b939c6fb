# Issue 21 item 6: a process of the job that writes a RUN_END frame into $CPROF_FIFO no longer ends the
# run: cprofd takes the run's end only from cprof-run, as a queued signal whose sender the kernel names
# (si_pid = its parent). The forged frame is refused, said in DIAGNOSTICS and META, and the profile keeps
# the true exit status; the run is marked incomplete (a process of it forged frames). A HELLO claiming a
# pid that is not a process of the run (here 1, init) is kept but marked suspect: /proc is the only
# evidence, as the FIFO names no writer (the process's user, and cprof-run among its ancestors).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > forge.py <<'PYEOF'
import ctypes, os, struct, sys, time
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
fd = os.open(os.environ["CPROF_FIFO"], os.O_WRONLY)
payload = struct.pack("<QiI", time.time_ns(), 0, 0)
def hello(pid):
    exe, host, argv = b"/forged\0", b"h\0", b"forged\0"
    body = struct.pack("<IIQIIiiiIHHHH", pid, 1, time.time_ns(), 1, 2, -1, -1, -1, 1, len(exe), len(host), len(argv), 0)
    body += exe + host + argv
    return struct.pack("<IHHIIII", 0x46525043, 2, 1, 24 + len(body), pid, 0, 1) + body
os.write(fd, hello(1))  # a HELLO for init: not a process of this run
# a RUN_END as cprof-run used to send it, even claiming cprof-run's pid (our parent)
os.write(fd, struct.pack("<IHHIIII", 0x46525043, 2, 6, 24 + len(payload), os.getppid(), 0, 1) + payload)
time.sleep(0.5)
g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
sys.exit(7)
PYEOF
start=$(date +%s)
sim "$BIN/cprof-run" -q --grace 30 -o forge.db -- "$PY" forge.py > /dev/null 2> err.txt
assert_eq "$?" 7 "cprof-run returns the program's status"
# a suspect HELLO is not waited for as a process left running (init would hold it the whole grace period)
took=$(( $(date +%s) - start ))
[ "$took" -lt 25 ] || fail "cprof-run waited $took s for a forged process: $(cat err.txt)"
assert_eq "$(meta forge.db exit_status)" 7 "the profile keeps cprof-run's truth"
assert_eq "$(meta forge.db forged_run_ends)" 1 "the forged frame is counted"
assert_eq "$(meta forge.db complete)" 0 "a run with forged frames is not complete"
assert_match "$(meta forge.db incomplete_reason)" "forged RUN_END" "why"
assert_eq "$(q forge.db "SELECT count(*) FROM DIAGNOSTICS WHERE message LIKE '%RUN_END%not from cprof-run%'")" 1 "said"
# the program's calls after the forgery are all there (the run did not end early)
assert_eq "$(q forge.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaMalloc'")" 2 \
	"both cudaMalloc calls"
assert_match "$(q forge.db "SELECT ending FROM PROCESSES WHERE pid != 1")" "status 7" "how the process ended"
assert_eq "$(q forge.db "SELECT count(*) FROM PROCESSES WHERE pid = 1")" 1 "the forged HELLO is kept (test set-up: it is well-formed)"
assert_eq "$(meta forge.db suspect_hellos)" 1 "one suspect HELLO: init's pid"
assert_eq "$(q forge.db "SELECT count(*) FROM DIAGNOSTICS WHERE pid = 1 AND message LIKE 'suspect HELLO%'")" 1 "said, with the pid"
echo OK
