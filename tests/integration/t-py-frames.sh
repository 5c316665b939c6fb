# Issues 5 and 19: preload/python.c alone reads the right Python frames with the GIL held (PyDLL) and,
# read from memory, with it released (CDLL), none without Python or for a thread Python never saw, keeps
# a pending exception and reference counts intact, checks its frame layout before trusting it and turns
# off once with a message when the check fails, on every CPython 3.9+ found here; and the Python
# call-site workload runs bare on the simulated GPU.
. "$(dirname "$0")/lib.sh"
need_sim

CC=${CC:-cc}
FLAGS="-std=gnu11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -fPIC -fvisibility=hidden -I$ROOT -I$BUILD/gen -I/usr/local/cuda/include"
SRCS="$ROOT/preload/python.c $ROOT/common/log.c $ROOT/common/textsafe.c $ROOT/tests/workloads/pyframes_probe.c"
$CC $FLAGS -shared -o probe.so $SRCS -ldl -lpthread || fail "probe.so does not build"
$CC $FLAGS -DPROBE_MAIN -o nopython $SRCS -ldl -lpthread || fail "nopython does not build"
assert_eq "$(./nopython)" "no python: ok" "a process without Python"

cat > frames.py <<'EOF'
import ctypes, os, sys, threading

so = sys.argv[1]
ME = __file__
LINE = {l.split("# PROBE ")[1].strip(): n for n, l in enumerate(open(ME), 1) if "# PROBE " in l}
QUAL = sys.version_info >= (3, 11)
P = ctypes.PyDLL(so)  # the GIL stays held during the call: frames can be read
C = ctypes.CDLL(so)   # the GIL is released during the call: frames are read from memory
for lib in (P, C):
    lib.probe.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.probe_pending.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.probe_site.restype = ctypes.c_uint64
    lib.probe_interns.restype = ctypes.c_ulong
BUF = ctypes.create_string_buffer(1 << 17)
failed = []


def check(ok, what):
    if not ok:
        failed.append(what)
        print("FAIL:", what)


def fr(tag, func):
    return "%s:%d %s" % (ME, LINE[tag], func)


def grab(lib=P):
    n = lib.probe(BUF, len(BUF))  # PROBE grab
    out = BUF.value.decode().splitlines() if n > 0 else []
    check(len(out) == n, "one line per frame")
    return out


class K:
    def method(self):
        return grab()  # PROBE method


def outer():
    return K().method()  # PROBE outer


check(P.probe_available() == 1, "CPython found")
got = outer()  # PROBE module
want = [fr("grab", "grab"), fr("method", "K.method" if QUAL else "method"), fr("outer", "outer"),
        fr("module", "<module>")]
check(got == want, "frames innermost first: %s" % got)



def cgrab():
    return grab(C)  # PROBE cgrab


got = cgrab()  # PROBE cmodule
check(got == [fr("grab", "grab"), fr("cgrab", "cgrab"), fr("cmodule", "<module>")],
      "frames without the GIL (CDLL): %s" % got)


# names read from memory, never looked up through CPython: Latin-1, UCS-2 and UCS-4 identifiers
def grüße():
    return grab(C)  # PROBE latin1


def 函数():
    return grab(C)  # PROBE ucs2


def 𠀀():
    return grab(C)  # PROBE ucs4


for fn, tag in ((grüße, "latin1"), (函数, "ucs2"), (𠀀, "ucs4")):
    got = fn()
    check(got[1:2] == [fr(tag, fn.__name__)], "a %s name without the GIL: %s" % (tag, got[1:2]))
both = [lib.probe_site() for lib in (P, C)]  # PROBE both
check(both[0] != 0 and both[0] == both[1], "one site key with and without the GIL: %s" % both)
check(P.probe_cthread() == 0, "no frames for a thread Python never saw")

ks = []
for _ in range(3):
    ks.append(P.probe_site())  # PROBE site1
k2 = P.probe_site()  # PROBE site2
check(ks[0] != 0 and ks.count(ks[0]) == 3, "one site key per line: %s" % ks)
check(k2 not in (0, ks[0]), "another line, another key")


def in_except():
    try:
        raise KeyError("handled marker")
    except KeyError as e:
        out = grab()  # PROBE except
        check(sys.exc_info()[1] is e, "the exception being handled is intact")
        return out


got = in_except()
check(got[1:2] == [fr("except", "in_except")], "frames inside except: %s" % got)


def pend():
    return P.probe_pending(BUF, len(BUF))  # PROBE pending


for attempt in ("names looked up", "names cached"):
    try:
        pend()
        check(False, "pending exception kept (%s): none raised" % attempt)
    except ValueError as e:
        check(str(e) == "pending marker", "pending exception kept (%s): %r" % (attempt, e))
    out = BUF.value.decode().splitlines()
    check(out[:1] == [fr("pending", "pend")] and out[-1] == "site=1",
          "frames with an exception pending (%s): %s" % (attempt, out[:2]))


def rec(k):
    if k == 0:
        return grab()  # PROBE rec-base
    return rec(k - 1)  # PROBE rec


P.probe_set_max(48)
got = rec(100)
check(len(got) == 48 and got[:2] == [fr("grab", "grab"), fr("rec-base", "rec")] and
      set(got[2:]) == {fr("rec", "rec")}, "deep recursion cut at max: %d frames" % len(got))
P.probe_set_max(1)
check(rec(3) == [fr("grab", "grab")], "max 1")
P.probe_set_max(600)
sys.setrecursionlimit(2000)
check(len(rec(400)) == 128, "no more than 128 frames however large max is")
P.probe_set_max(48)


def tmain(res):
    res.append(grab())  # PROBE thread
    res.append(grab(C))  # PROBE thread-c


res = []
t = threading.Thread(target=tmain, args=(res,))
t.start()
t.join()
check(res[0][1:2] == [fr("thread", "tmain")], "frames of another Python thread: %s" % res[0][:3])
check(res[1][1:2] == [fr("thread-c", "tmain")], "frames of another thread without the GIL: %s" % res[1][:3])


def fresh():
    return grab()


r0 = sys.getrefcount(fresh.__code__)
fresh()
r1 = sys.getrefcount(fresh.__code__)
for _ in range(50):
    fresh()
r2 = sys.getrefcount(fresh.__code__)
check(r1 == r0 + 1 and r2 == r1, "code object pinned once: %d %d %d" % (r0, r1, r2))
f = sys._getframe()
r0 = sys.getrefcount(f)
grab()
grab()
check(sys.getrefcount(f) == r0, "frame reference counts unchanged")
del f

seen = []
for k in range(3):
    if k == 2:
        P.probe_fork_gen()
    n0 = P.probe_interns()
    seen.append((grab(), P.probe_interns() - n0))
check(seen[0][0] == seen[1][0] == seen[2][0], "same frames after fork")
check(seen[1][1] == 0 and seen[2][1] > 0, "names interned again after fork only: %s" % [s[1] for s in seen])

pid = os.fork()
if pid == 0:
    P.probe_fork_gen()  # what libcprof.so's fork handler does
    os._exit(0 if grab()[1:] == [fr("fork", "<module>")] else 1)  # PROBE fork
check(os.waitpid(pid, 0)[1] == 0, "frames in a fork child")

# Sub-interpreters: up to 3.11 PyGILState_Check says yes to any thread once one exists, and the current
# thread state is the GIL holder's, so a foreign thread must still read nothing. Frames inside one are
# read from 3.12 on (the thread state is per thread), not before (told apart from another thread's).
def sub_interpreter():
    try:
        import _xxsubinterpreters as m
        return m, m.create(isolated=False) if sys.version_info >= (3, 12) else m.create()
    except ImportError:
        import _interpreters as m
        return m, m.create("legacy")


try:
    subi, sub = sub_interpreter()
except Exception as e:
    subi = None
    print("sub-interpreters skipped:", e)
if subi is not None:
    res = "%s.sub" % so
    subi.run_string(sub, "import ctypes\nL = ctypes.PyDLL(%r)\nL.probe.argtypes = [ctypes.c_char_p, ctypes.c_int]\n"
                    "b = ctypes.create_string_buffer(4096)\nopen(%r, 'w').write(str(L.probe(b, 4096)))\n" % (so, res))
    subi.destroy(sub)
    n = int(open(res).read())
    # 3.12+: the sub-interpreter's own frame; before, the main interpreter's frame that called run_string
    check(n == 1, "frames in a sub-interpreter: %d" % n)
    check(P.probe_cthread() == 0, "no frames for a foreign thread with sub-interpreters")
    check(len(grab()) == 2, "frames again in the main interpreter")


def deep(k, fn):
    return deep(k - 1, fn) if k else fn()


site_ns, cap_ns, depth = ctypes.c_double(), ctypes.c_double(), ctypes.c_int()
for name, lib in (("GIL held", P), ("GIL released", C)):
    deep(10, lambda: lib.probe_bench(200000, ctypes.byref(site_ns), ctypes.byref(cap_ns), ctypes.byref(depth)))
    print("python %d.%d %s: site %.0f ns, capture %.0f ns (%d frames)" % (sys.version_info[:2] + (name,
          site_ns.value, cap_ns.value, depth.value)))
print("failed" if failed else "ok")
sys.exit(1 if failed else 0)
EOF

# The layout check: the first read of a fresh process without the GIL, and a layout that does not fit
# (one offset moved, as another build's would be): no frames from memory, one message, the GIL-held
# frames unchanged.
cat > layout.py <<'EOF'
import ctypes, sys

so, mode = sys.argv[1], sys.argv[2]
P, C = ctypes.PyDLL(so), ctypes.CDLL(so)
for lib in (P, C):
    lib.probe.argtypes = [ctypes.c_char_p, ctypes.c_int]
BUF = ctypes.create_string_buffer(1 << 16)


def grab(lib):
    n = lib.probe(BUF, len(BUF))
    return [l.rsplit(" ", 1)[1] for l in BUF.value.decode().splitlines()] if n > 0 else []


def f(lib):
    return grab(lib)


# Python is found by the first call: without the GIL in released-first, so the check waits for a walk
assert (C if mode == "released-first" else P).probe_available() == 1
if mode == "released-first":
    print(f(C), f(P), f(C))
else:
    P.probe_skew_layout()
    first, second = (C, P) if mode == "skew-released" else (P, C)
    print(f(first), f(second), f(C), f(P))
EOF

# Interpreters to try: python3, and every other python3.N found (3.9+ must give frames, older none);
# one run per interpreter binary.
pys="python3"
for v in 8 9 10 11 12 13 14; do
	pys="$pys $(command -v python3.$v) /usr/bin/python3.$v $(ls /root/.pyenv/versions/3.$v.*/bin/python3.$v 2>/dev/null)"
done
tried=0 seen=" "
for py in $pys; do
	id=$("$py" -c 'import os, sys; print("%d.%d:%s" % (sys.version_info[:2] + (os.path.realpath(sys.executable),)))' 2>/dev/null) || continue
	case $seen in *" $id "*) continue ;; esac
	seen="$seen$id "
	ver=${id%%:*}
	if [ "${ver#3.}" -lt 9 ]; then
		out=$("$py" -c "import ctypes, sys; P = ctypes.PyDLL(sys.argv[1]); b = ctypes.create_string_buffer(4096)
print(P.probe_available(), P.probe(b, 4096), P.probe_site())" "$T/probe.so") || fail "$py: probe crashed"
		assert_eq "$out" "0 0 0" "$py: Python $ver is not read"
		echo "python $ver ($py): no frames, as it should"
		continue
	fi
	out=$("$py" "$T/frames.py" "$T/probe.so" 2>&1) || fail "$py ($ver): $out"
	echo "$out" | grep -E '^(python|sub-interpreters)' | sed "s|\$| ($py)|"
	three="['grab', 'f', '<module>']"
	out=$("$py" layout.py "$T/probe.so" released-first 2> err.txt) || fail "$py: layout.py released-first"
	assert_eq "$out" "$three $three $three" "$py: frames when the first read is without the GIL"
	assert_eq "$(cat err.txt)" "" "$py: no message when the layout fits"
	out=$("$py" layout.py "$T/probe.so" skew-released 2> err.txt) || fail "$py: layout.py skew-released"
	assert_eq "$out" "[] $three [] $three" "$py: a bad layout found without the GIL"
	assert_eq "$(grep -c 'frame layout check failed' err.txt)" 1 "$py: one message (without the GIL): $(cat err.txt)"
	out=$("$py" layout.py "$T/probe.so" skew-held 2> err.txt) || fail "$py: layout.py skew-held"
	assert_eq "$out" "$three [] [] $three" "$py: a bad layout found with the GIL held"
	assert_eq "$(grep -c 'frame layout check failed' err.txt)" 1 "$py: one message (GIL held): $(cat err.txt)"
	tried=$((tried + 1))
done
assert_ge "$tried" 1 "interpreters tried"

# The call-site workload runs bare on the simulated GPU.
assert_eq "$(sim python3 "$ROOT/tests/workloads/py_callsites.py" 3 2)" "gemm 3 memset 2 memsetasync 1" "py_callsites.py"
for m in gemm clear module; do
	grep -q "# CALLSITE $m\$" "$ROOT/tests/workloads/py_callsites.py" || fail "marker $m"
done
echo ok
