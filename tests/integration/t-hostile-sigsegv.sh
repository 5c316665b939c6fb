# Issue 32 item 4 (cosmetic): a program whose own handler takes SIGSEGV and goes on to a clean exit got a
# "crash" finding. Its ending now says the handler took the signal and it went on; no crash finding. A
# handler that ends the program with a failure is still a crash.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > segv.py <<'PYEOF'
import ctypes, os, signal, sys
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
took = []
signal.signal(signal.SIGSEGV, lambda s, f: took.append(s))
g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
os.kill(os.getpid(), signal.SIGSEGV)
g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
assert took == [signal.SIGSEGV]
sys.exit(int(sys.argv[1]))
PYEOF
sim "$BIN/cprof-run" -q -o ok.db -- "$PY" segv.py 0 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
assert_eq "$(q ok.db "SELECT count(*) FROM CPROF_CRASH")" 1 "the signal is recorded"
assert_match "$(q ok.db "SELECT ending FROM PROCESSES")" "^exit, status 0 \(its own handler took signal 11" "the ending"
"$BIN/cprof" report ok.db > rep.txt 2>&1 || fail "report: $(cat rep.txt)"
grep -q "crash" rep.txt && fail "a crash finding for a program that went on: $(grep crash rep.txt)"
sim "$BIN/cprof-run" -q -o bad.db -- "$PY" segv.py 3 > /dev/null 2> err.txt
assert_eq "$?" 3 "the program's status"
"$BIN/cprof" report bad.db > rep.txt 2>&1 || fail "report: $(cat rep.txt)"
grep -q "crash" rep.txt || fail "no crash finding for a handled signal followed by a failing exit: $(cat rep.txt)"
echo OK
