# Issue 22: make dist's tarball, unpacked and moved, runs with the source tree hidden, an empty environment and no
# sqlite3 program; its binaries take no SQLite/libelf/libunwind from the system; the wheel and make install work too.
. "$(dirname "$0")/lib.sh"
need_sim
VERSION=$(sed -n 's/^#define CPROF_VERSION *"\(.*\)"/\1/p' "$ROOT/common/version.h")
TAR=$BUILD/dist/cprof-$VERSION-linux-x86_64.tar.gz
[ -f "$TAR" ] || fail "$TAR missing: run make dist"
size=$(stat -c %s "$TAR")
[ "$size" -le $((32 * 1024 * 1024)) ] || fail "tarball is $size bytes, over 32 MiB"
echo "tarball: $size bytes"

# one top folder, cprof-VERSION/
tops=$(tar tzf "$TAR" | cut -d/ -f1 | sort -u)
assert_eq "$tops" "cprof-$VERSION" "the tarball's top folders"
mkdir -p "$T/unpack" "$T/else/where"
tar -C "$T/unpack" -xzf "$TAR" || fail "cannot unpack"
# relocation: the bundle runs from wherever it is moved to
mv "$T/unpack/cprof-$VERSION" "$T/else/where/moved"
B=$T/else/where/moved
for f in bin/cprof-run bin/cprof bin/cprof-gpu-check; do [ -x "$B/$f" ] || fail "$f missing"; done

# ldd: no SQLite, libelf, libunwind (or zlib, libstdc++) from the system; libunwind's liblzma from the bundle
for f in "$B"/bin/cprof-run "$B"/bin/cprof "$B"/bin/cprofd "$B"/lib/libcprof.so; do
	deps=$(ldd "$f") || fail "ldd $f"
	if printf '%s\n' "$deps" | grep -E 'libsqlite3|libelf|libunwind|libz\.|libstdc\+\+|not found'; then
		fail "$f needs a library outside glibc"
	fi
done
deps=$(ldd "$B/lib/cprof/libunwind.so.8")
printf '%s\n' "$deps" | grep -q "liblzma.so.5 => $B/lib/cprof/liblzma.so.5" || fail "bundled libunwind does not find its liblzma: $deps"
# the simulated GPU is reached by no binary's search path
for f in "$B"/bin/* "$B"/lib/libcprof.so; do
	[ "$(head -c 4 "$f" | tail -c 3)" = ELF ] || continue
	objdump -p "$f" | grep -E 'R(UN)?PATH' && fail "$f has a search path"
done
assert_eq "$("$B/bin/cprof-run" --version)" "cprof-run $VERSION" "cprof-run --version"
assert_eq "$("$B/bin/cprof" --version)" "cprof $VERSION" "cprof --version"

# the source tree hidden, libelf and libunwind of the system hidden, no sqlite3 program, an empty environment
hide=""
for f in /usr/bin/sqlite3 /usr/lib/x86_64-linux-gnu/libunwind.so.8 /usr/lib/x86_64-linux-gnu/libelf.so.1; do
	[ -e "$f" ] && hide="$hide $(readlink -f "$f")"
done
cat > "$T/inside.sh" <<EOF
set -u
mount -t tmpfs none "$ROOT" || exit 90
for f in $hide; do mount --bind /dev/null "\$f" || exit 91; done
[ -e "$ROOT/Makefile" ] && exit 92
sqlite3 -version > /dev/null 2>&1 && exit 93
W=$B/libexec/cprof/workloads
LD_LIBRARY_PATH=$B/lib/cprof/simgpu/lib "$B/bin/cprof-run" -q -o "$T/sweep.db" -- "\$W/matmul_sweep" --sizes 64 --steps 20 || exit 94
"$B/bin/cprof" report "$T/sweep.db" > "$T/sweep.txt" || exit 95
exec "$B/bin/cprof-gpu-check" --simulated --out "$T/gc"
EOF
# a mount namespace: as root, or in a user namespace (-r) otherwise
NS=""
for opts in "-m" "-r -m"; do
	unshare $opts --propagation private true 2> /dev/null && { NS="unshare $opts --propagation private"; break; }
done
if [ -n "$NS" ]; then
	env -i PATH=/usr/bin:/bin HOME="$T" TMPDIR="$T" $NS bash "$T/inside.sh" > "$T/gc.out" 2>&1
	rc=$?
	# 90-95: the hiding or the first run failed (see inside.sh)
	tail -20 "$T/gc.out"
	assert_eq "$rc" 0 "cprof-gpu-check --simulated from the bundle, source tree hidden"
else
	echo "SKIPPED (the hiding only): no mount namespace here (unshare -m, unshare -r -m); the bundle runs with the source tree visible"
	sed -i -e '/^mount /d' -e '/^for f in .*mount/d' -e '/exit 92$/d' -e '/exit 93$/d' "$T/inside.sh"
	env -i PATH=/usr/bin:/bin HOME="$T" TMPDIR="$T" bash "$T/inside.sh" > "$T/gc.out" 2>&1 || { cat "$T/gc.out"; fail "gpu-check from the bundle"; }
fi
grep -q '^Verdict: ' "$T/sweep.txt" || fail "bundle's cprof report gives no verdict: $(head -5 "$T/sweep.txt")"
grep -q "SIMULATED GPU" "$T/gc.out" || fail "does not say simulated GPU"
assert_eq "$(grep -c ' FAIL ' "$T/gc/results.txt")" 0 "no failed check"
assert_eq "$(grep -c '^[1567] .* pass ' "$T/gc/results.txt")" 9 "checks that pass on the simulated GPU"
# the dispatch chain needs native stacks: with the system's libunwind hidden, the bundle's was used
grep -q '^8 .* pass ' "$T/gc/results.txt" || fail "no dispatch chain: the bundled libunwind was not loaded"

# the wheel: a fresh virtualenv, pip offline, its cprof-run profiles a program and its cprof reports it
WHL=$(ls "$BUILD"/dist/cprof-"$VERSION"-py3-none-manylinux_2_*_x86_64.whl 2> /dev/null | head -1)
[ -n "$WHL" ] || fail "no wheel in $BUILD/dist"
echo "wheel: $(basename "$WHL"), $(stat -c %s "$WHL") bytes"
want=$(cat "$B/lib/cprof/glibc-min")
case $WHL in *manylinux_${want/./_}_x86_64.whl) ;; *) fail "wheel tag does not match glibc $want the binaries need" ;; esac
python3 -m venv "$T/venv" || fail "python3 -m venv"
"$T/venv/bin/pip" install -q --no-index --no-cache-dir "$WHL" || fail "pip install the wheel"
assert_eq "$("$T/venv/bin/cprof-run" --version)" "cprof-run $VERSION" "wheel's cprof-run --version"
VB=$("$T/venv/bin/python" -c 'import cprof, os; print(os.path.join(os.path.dirname(cprof.__file__), "bundle"))')
(PATH=$T/venv/bin:/usr/bin:/bin; LD_LIBRARY_PATH=$VB/lib/cprof/simgpu/lib \
	cprof-run -q -o "$T/venv.db" -- "$VB/libexec/cprof/workloads/matmul_sweep" --sizes 4096 --steps 10) || fail "wheel's cprof-run"
# 10 steps and 5 warm-up ones, a GEMM and a bias kernel each (the verdict depends on this machine's load)
assert_eq "$(q "$T/venv.db" "SELECT count(*) FROM KERNELS")" 30 "kernels in the wheel's profile"
assert_match "$(PATH=$T/venv/bin:/usr/bin:/bin cprof report "$T/venv.db")" "^Verdict: " "wheel's cprof report"

# make install PREFIX=...: the same layout
make -s -C "$ROOT" --no-print-directory BUILD="$BUILD" PREFIX="$T/prefix" install > "$T/install.out" 2>&1 || { cat "$T/install.out"; fail "make install"; }
assert_eq "$("$T/prefix/bin/cprof" --version)" "cprof $VERSION" "installed cprof --version"
LD_LIBRARY_PATH=$T/prefix/lib/cprof/simgpu/lib "$T/prefix/bin/cprof-run" -q -o "$T/inst.db" -- "$T/prefix/libexec/cprof/workloads/driver_launch" \
	|| fail "installed cprof-run"
assert_ge "$(q "$T/inst.db" "SELECT count(*) FROM KERNELS")" 1 "kernels profiled by the installed cprof-run"

# man pages (help2man, from the programs' --help) in the tarball, the wheel's environment and make install's prefix
man_ok() { # DIR WHERE: cprof.1 documents every command and the options of check; cprof-run.1 its options
	[ -f "$1/man1/cprof.1" ] && [ -f "$1/man1/cprof-run.1" ] || fail "$2: no man pages in $1/man1"
	for c in $("$B/bin/cprof" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
		grep -q "^\.SS \"cprof $c\"" "$1/man1/cprof.1" || fail "$2: cprof.1 has no section for cprof $c"
	done
	grep -q 'junit' "$1/man1/cprof.1" || fail "$2: cprof.1 does not carry check's --help"
	grep -q 'capture\\-range' "$1/man1/cprof-run.1" || fail "$2: cprof-run.1 does not carry cprof-run's --help"
	if command -v man > /dev/null; then
		MANPATH=$1 MANWIDTH=120 man cprof 2> /dev/null | grep -q "cprof stacks" || fail "$2: man cprof"
	fi
}
man_ok "$B/share/man" "tarball"
man_ok "$T/venv/share/man" "wheel"
man_ok "$T/prefix/share/man" "make install"
echo ok
