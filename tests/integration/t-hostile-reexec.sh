# Issue 21 item 2: a pid that says HELLO twice without BYE (a program re-executing itself through
# syscall(SYS_execve), which the exec hooks never see; or a pid reused after SIGKILL) no longer leaves a
# profile every command refuses: the first instance ends at its last event, "replaced by a new HELLO",
# and info, report, trace and html read the profile. An old profile with endNs = 0 is read too.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > reexec.py <<'PYEOF'
import ctypes, os, sys
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
for _ in range(3):
    g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
if len(sys.argv) == 1:
    # the raw system call: the exec hooks never see it, so no BYE before the new image's HELLO
    libc = ctypes.CDLL(None, use_errno=True)
    argv = (ctypes.c_char_p * 4)(sys.executable.encode(), b"reexec.py", b"again", None)
    env = [f"{k}={v}".encode() for k, v in os.environ.items()]
    envp = (ctypes.c_char_p * (len(env) + 1))(*env, None)
    libc.syscall(59, sys.executable.encode(), argv, envp)
    sys.exit(9)
PYEOF
sim "$BIN/cprof-run" -q -o re.db -- "$PY" reexec.py > out.txt 2> err.txt
assert_eq "$?" 0 "cprof-run returns the re-executed program's status ($(cat err.txt))"
pid=$(q re.db "SELECT pid FROM PROCESSES ORDER BY id LIMIT 1")
assert_eq "$(q re.db "SELECT count(*) FROM PROCESSES WHERE pid=$pid")" 2 "both images of the pid"
assert_eq "$(q re.db "SELECT byeReason FROM PROCESSES ORDER BY id LIMIT 1")" replaced "the first one's end"
# (its events still in the rings at the raw exec are lost: its last known time may be its start)
assert_eq "$(q re.db "SELECT endNs >= startNs AND endNs >= coalesce((SELECT max(end) FROM CPROF_API a WHERE a.processId = p.id), 0)
                      FROM PROCESSES p ORDER BY id LIMIT 1")" 1 "it ends at its last event, not at 0"
assert_match "$(q re.db "SELECT ending FROM PROCESSES ORDER BY id LIMIT 1")" "^replaced by a new HELLO" "how it ended"
assert_eq "$(meta re.db processes_replaced)" 1 "counted"
assert_eq "$(meta re.db complete)" 0 "the first image's last events may be missing"
assert_match "$(meta re.db incomplete_reason)" "replaced by a new HELLO" "why"
for cmd in info report "report --format json" "trace -o t.json" "html -o r.html"; do
	# shellcheck disable=SC2086
	"$BIN/cprof" $cmd re.db > /dev/null 2> cmd.txt
	assert_eq "$?" 0 "cprof $cmd reads the profile ($(cat cmd.txt))"
done
"$BIN/cprof" info re.db | grep -q "replaced by a new HELLO" || fail "info does not say how the first image ended"

# a profile an older cprofd wrote: the replaced process ended at 0; readers take it as an unknown end
cp re.db old.db
q old.db "UPDATE PROCESSES SET endNs = 0, byeReason = 'exec', ending = 'exec' WHERE id = (SELECT min(id) FROM PROCESSES)"
for cmd in info report "trace -o t2.json"; do
	# shellcheck disable=SC2086
	"$BIN/cprof" $cmd old.db > /dev/null 2> cmd.txt
	assert_eq "$?" 0 "cprof $cmd reads an older profile with endNs = 0 ($(cat cmd.txt))"
done
echo OK
