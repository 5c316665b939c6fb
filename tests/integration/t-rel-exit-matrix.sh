# Issue 7 scenario 19: cprof-run is indistinguishable from the bare command: exit codes 0, 1, 2, 255; death
# by each common signal (128+N, as the shell reports the bare command), and the signal dispositions the
# caller set (SIGPIPE ignored stays ignored); stdin passed through untouched;
# stdout and stderr the target's only (with -q); a target on a terminal sees a terminal on 0, 1 and 2, and
# a Ctrl-C typed there reaches it exactly once (cprof-run does not forward what the terminal already sent).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
same() { # same NAME CMD...: status, stdout and stderr of CMD bare and under cprof-run -q
	local name=$1
	shift
	{ "$@" > b.out 2> b.err < in.txt; } 2>/dev/null; b=$? # (without bash's "Hangup" lines)
	{ "$BIN/cprof-run" -q -f -o m.db -- "$@" > r.out 2> r.err < in.txt; } 2>/dev/null; r=$?
	assert_eq "$r" "$b" "status ($name)"
	cmp -s b.out r.out || fail "stdout differs ($name): $(cat r.out)"
	cmp -s b.err r.err || fail "stderr differs ($name): $(cat r.err)"
}
printf 'first line\nsecond line\n' > in.txt
for c in 0 1 2 255; do
	same "exit $c" sh -c "exit $c"
done
for s in HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM; do
	same "SIG$s" sh -c "kill -$s \$\$"
	[ "$r" -gt 128 ] && [ "$(kill -l $((r - 128)))" = "$s" ] || fail "SIG$s: status $r"
done
# a caller that ignores SIGPIPE (as Python's subprocess callers or a shell's trap '' PIPE may): the target
# inherits that, not cprof-run's own disposition
( trap '' PIPE && same "SIGPIPE ignored by the caller" sh -c 'kill -PIPE $$; echo survived' ) || exit 1
same "stdin" cat
same "stdin read by a line" sh -c 'read a; read b; echo "got $b, then $a"; echo err >&2'
assert_eq "$(cat r.out)" "got second line, then first line" "stdin content"
# a terminal: the Python pty module runs each side on a fresh pseudo-terminal and types Ctrl-C once the
# target says it is ready
cat > pty_run.py <<'PYEOF'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out, sent, t0 = b"", False, time.monotonic()
while time.monotonic() - t0 < 20:
    # the whole line first: a Ctrl-C flushes the terminal's output queue (ISIG), which could eat its end
    if not sent and b"ready" in out and b"\n" in out.split(b"ready", 1)[1]:
        os.write(fd, b"\x03")
        sent = True
    if select.select([fd], [], [], 0.1)[0]:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
_, status = os.waitpid(pid, 0)
print(out.decode(errors="replace").replace("\r", "").replace("^C", "").strip().splitlines()[-1], os.waitstatus_to_exitcode(status))
PYEOF
cat > target.py <<'PYEOF'
import os, signal, time
n = 0
def on_int(sig, frame):
    global n
    n += 1
signal.signal(signal.SIGINT, on_int)
print("ready", all(os.isatty(f) for f in (0, 1, 2)), flush=True)
time.sleep(1.5)
print("terminal", all(os.isatty(f) for f in (0, 1, 2)), "sigint", n, flush=True)
PYEOF
bare=$("$PY" pty_run.py "$PY" target.py) || fail "pty run (bare)"
prof=$("$PY" pty_run.py "$BIN/cprof-run" -q -f -o tty.db -- "$PY" target.py) || fail "pty run (profiled)"
echo "bare: $bare / under cprof-run: $prof"
assert_eq "$bare" "terminal True sigint 1 0" "bare target on a terminal"
assert_eq "$prof" "$bare" "target on a terminal under cprof-run"
echo ok
