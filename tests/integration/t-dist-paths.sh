# Issue 32: the bundle, the wheel and make install PREFIX= under a path with a space, a colon, non-ASCII
# text and a 200-byte component, and -o there too. LD_PRELOAD splits at spaces and colons: on main before
# the fix such a bundle's cprof-run loaded nothing and wrote an empty profile marked complete, exit 0.
# Now the library goes through a link in the private run directory, or cprof-run refuses in one line
# (exit 125) when that directory's path has one too. Simulated GPU (--simulated-gpu).
# cprof-test-timeout: 300
. "$(dirname "$0")/lib.sh"
need_sim
VERSION=$(sed -n 's/^#define CPROF_VERSION *"\(.*\)"/\1/p' "$ROOT/common/version.h")
TAR=$BUILD/dist/cprof-$VERSION-linux-x86_64.tar.gz
WHL=$(ls "$BUILD"/dist/cprof-"$VERSION"-py3-none-manylinux_2_*_x86_64.whl 2> /dev/null | head -1)
[ -f "$TAR" ] && [ -n "$WHL" ] || fail "no tarball or wheel in $BUILD/dist: run make dist"
LONG=$(printf 'l%.0s' $(seq 200))
ODD="$T/odd dir:ü/$LONG"
mkdir -p "$ODD" "$T/out dir:é" || fail "mkdir"
tar -C "$ODD" -xzf "$TAR" || fail "cannot unpack"
B=$ODD/cprof-$VERSION
kernels() { q "$1" "SELECT count(*) FROM KERNELS"; }
calls() { q "$1" "SELECT count(*) FROM CPROF_API"; }
# (run BIN OUT LABEL): matmul_sweep profiled, 2 kernels a step, 5 warm-up steps; complete
run_ok() {
	"$@" > run.out 2> run.err || fail "$LABEL: exit $?: $(cat run.err)"
	grep -q "cannot be preloaded" run.err && fail "$LABEL: ld.so split the path: $(cat run.err)"
	assert_eq "$(kernels "$DB")" 30 "$LABEL: kernels"
	assert_ge "$(calls "$DB")" 30 "$LABEL: CUDA calls"
	assert_eq "$(meta "$DB" complete)" 1 "$LABEL: complete"
}
meta() { q "$1" "SELECT value FROM META WHERE key = '$2'"; }
# (readme_try README DIR CPROF): runs the README's "Try it" commands in DIR as written, in one shell; each
# exits 0, or 1 where its comment says "exits 1"; the profile they made says simulated GPU
readme_try() {
	local line n=0 want=""
	: > try.sh
	while IFS= read -r line; do
		case $line in *"exits 1"*) want="$want 1" ;; *) want="$want 0" ;; esac
		printf '%s\necho "@rc $?" >&3\n' "${line%%#*}" >> try.sh
		n=$((n + 1))
	done < <(awk '/^## Try it/ { t = 1 } t && /^```/ { if (b) exit; b = 1; next } b' "$1")
	assert_ge "$n" 4 "$1: commands in its Try it block"
	got=$(cd "$2" && bash "$T/try.sh" 3>&1 > "$T/try.out" 2>&1 | sed -n 's/^@rc //p' | tr '\n' ' ')
	assert_eq "$got" "${want# } " "$1: exit status of each Try it command ($(tail -3 "$T/try.out"))"
	assert_match "$(cd "$2" && "$3" info try.db 2>&1)" "simulated GPU" "$1: the tried profile says simulated GPU"
}
W=$B/libexec/cprof/workloads/matmul_sweep

# 1. the bundle: its cprof-run with the simulated GPU the user puts on LD_LIBRARY_PATH (a clean path), and
# with --simulated-gpu (the bundle's own, under the odd path); the profile under an odd path too
DB="$T/out dir:é/run 1:ü.db" LABEL="bundle, LD_LIBRARY_PATH"
run_ok env LD_LIBRARY_PATH="$SIMLIB" "$B/bin/cprof-run" -q -o "$DB" -- "$W" --sizes 64 --steps 10
DB="$T/out dir:é/run 2:ü.db" LABEL="bundle, --simulated-gpu"
run_ok "$B/bin/cprof-run" -o "$DB" --simulated-gpu -- "$W" --sizes 64 --steps 10
grep -q "runs on the simulated GPU" run.err || fail "--simulated-gpu does not say so: $(cat run.err)"
grep -q "(simulated GPU)" run.err || fail "the summary does not say simulated GPU: $(cat run.err)"
assert_match "$("$B/bin/cprof" report "$DB")" "^Verdict: " "the bundle's cprof report on an odd path"
# a CI gate, tried without a GPU: the 64x64 sweep is overhead-bound on the simulated GPU
DB="$T/out dir:é/gate.db"
"$B/bin/cprof-run" -q -o "$DB" --simulated-gpu --check '--expect compute-bound' -- "$W" --sizes 64 --steps 10 > /dev/null 2>&1
assert_eq "$?" 1 "a failing gate under --simulated-gpu"
# --torch-ops: PYTHONPATH splits at colons; python finds cprof's sitecustomize.py through the link
got=$("$B/bin/cprof-run" -q -o "$T/py.db" --torch-ops -- python3 -c 'import os, sitecustomize; print(os.path.realpath(sitecustomize.__file__))') ||
	fail "--torch-ops from the odd bundle"
assert_eq "$got" "$B/lib/cprof/python/sitecustomize.py" "sitecustomize found through the link"
# the bundle's README is its own, and its Try it commands work as written from the bundle's folder
grep -q "make demo\|make check" "$B/README.md" && fail "the bundle's README tells a bundle user to run make"
readme_try "$B/README.md" "$B" bin/cprof
# the run directory (TMPDIR) with a space too: refused in one line, before anything runs
mkdir "$T/tmp dir" && rm -f "$T/never"
TMPDIR="$T/tmp dir" "$B/bin/cprof-run" -q -o "$T/refused.db" --simulated-gpu -- touch "$T/never" 2> err.txt
assert_eq "$?" 125 "cprof-run refuses when TMPDIR has a space too"
assert_eq "$(wc -l < err.txt)" 1 "one line: $(cat err.txt)"
grep -q "set TMPDIR" err.txt || fail "the line says what to do: $(cat err.txt)"
[ -e "$T/never" ] && fail "the command ran anyway"
[ -e "$T/refused.db" ] && fail "a profile was written anyway"
assert_eq "$(ls "$T/tmp dir")" "" "run directory left in TMPDIR"
# refused before -f removes anything: the profile already there stays
echo precious > "$T/kept.db"
TMPDIR="$T/tmp dir" "$B/bin/cprof-run" -q -f -o "$T/kept.db" -- true 2> /dev/null
assert_eq "$?:$(cat "$T/kept.db")" "125:precious" "-f with the refused run keeps the old profile"
# every link cprof-run made is gone with its run directory
mkdir "$T/tmp2" && TMPDIR=$T/tmp2 "$B/bin/cprof-run" -q -o "$T/links.db" --simulated-gpu --torch-ops -- true || fail "run with links"
assert_eq "$(ls "$T/tmp2")" "" "run directory left in TMPDIR"
# cprof-gpu-check --simulated from the odd bundle, --out relative (LD_LIBRARY_PATH splits at colons)
(cd "$T/out dir:é" && "$B/bin/cprof-gpu-check" --simulated --out gc > gc.out 2>&1) || {
	tail -20 "$T/out dir:é/gc.out"
	fail "cprof-gpu-check --simulated from the odd bundle"
}
assert_eq "$(grep -c ' FAIL ' "$T/out dir:é/gc/results.txt")" 0 "no failed check"

# 2. the wheel into a virtualenv under an odd path (without the colon: python -m venv refuses one, PATH's
# separator)
V="$T/odd dir ü/$LONG/venv"
python3 -m venv "$V" || fail "python3 -m venv"
"$V/bin/pip" install -q --no-index --no-cache-dir "$WHL" || fail "pip install the wheel"
VB=$("$V/bin/python" -c 'import cprof, os; print(os.path.join(os.path.dirname(cprof.__file__), "bundle"))')
assert_eq "$("$V/bin/python" -m cprof workloads)" "$VB/libexec/cprof/workloads" "python -m cprof workloads"
DB="$T/out dir:é/wheel:ü.db" LABEL="wheel, --simulated-gpu"
run_ok "$V/bin/cprof-run" -q -o "$DB" --simulated-gpu -- "$("$V/bin/python" -m cprof workloads)/matmul_sweep" --sizes 64 --steps 10
# the wheel's README is its own: its commands on PATH, no bin/ or build/ paths
"$V/bin/python" -c 'import cprof, os; print(open(os.path.join(os.path.dirname(cprof.__file__), "README.md")).read())' > wreadme.md ||
	fail "the wheel's README"
grep -q -- "cprof-run --simulated-gpu" wreadme.md || fail "the wheel's README does not show --simulated-gpu"
(PATH=$V/bin:$PATH readme_try "$T/wreadme.md" "$T/out dir:é" cprof)
grep -En '(^|[ `(])(bin|build)/' wreadme.md | grep -v 'build/bin/\|build/simgpu/simgpu-run' && fail "the wheel's README names a folder it does not have"

# 3. make install PREFIX= under the odd path
make -s -C "$ROOT" --no-print-directory BUILD="$BUILD" PREFIX="$ODD/prefix" install > install.out 2>&1 || { cat install.out; fail "make install"; }
DB="$T/out dir:é/inst:ü.db" LABEL="make install, --simulated-gpu"
run_ok "$ODD/prefix/bin/cprof-run" -q -o "$DB" --simulated-gpu -- "$ODD/prefix/libexec/cprof/workloads/matmul_sweep" --sizes 64 --steps 10
[ -f "$ODD/prefix/share/doc/cprof/README.md" ] || fail "installed README"
echo ok
