# Issue 21 item 15: with call stacks on (the default), the program's descriptor numbers are what they are
# without cprof. libunwind opens a pipe on first use (its memory check); cprof has a short-lived thread
# with a descriptor table of its own take it, and checks libunwind's memory reads without a descriptor.
# The stacks must still be there (native frames recorded), or the test proves nothing.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > fd.py <<'PYEOF'
import ctypes, os
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
for _ in range(8):
    g.cudaMemset(p, 0, ctypes.c_size_t(256))
    g.cudaDeviceSynchronize()
fd = os.open("/dev/null", os.O_RDONLY)
print("next fd", fd, "table", sorted(int(x) for x in os.listdir("/proc/self/fd")))
PYEOF
bare=$(sim "$PY" fd.py) || fail "bare run"
for mode in sampled all; do
	out=$(sim "$BIN/cprof-run" -q -f -o s.db --stacks $mode -- "$PY" fd.py 2> err.txt) || fail "run ($mode): $(cat err.txt)"
	assert_eq "$out" "$bare" "descriptor numbers with --stacks $mode"
	assert_ge "$(q s.db "SELECT count(*) FROM CPROF_STACK_FRAMES WHERE kind = 'native'")" 1 "native frames recorded ($mode)"
	assert_eq "$(cat err.txt)" "" "no warning ($mode)"
done
echo ok
