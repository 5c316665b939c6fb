# Helpers sourced by every integration test: paths, a private temp dir, assertions, profile queries.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=$BUILD/bin
WL=$BUILD/tests
SIMLIB=$BUILD/simgpu/lib
T=$(mktemp -d /tmp/cprof-it-XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T"

fail() { echo "FAIL: $*" >&2; exit 1; }
q() { sqlite3 "$1" "$2" || fail "query failed: $2"; }
assert_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"; }
assert_ge() { [ "$1" -ge "$2" ] || fail "$3: got $1, want >= $2"; }
assert_match() { printf '%s' "$1" | grep -Eq -- "$2" || fail "$3: '$1' does not match /$2/"; }
# Runs a command on the simulated GPU.
sim() { LD_LIBRARY_PATH=$SIMLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"; }
need_sim() { [ -f "$SIMLIB/libcudart.so.13" ] || fail "simulated GPU not built ($SIMLIB)"; }
# Every core taken by a `yes` (their pids in yes_pids, for the caller to kill), so that /proc/pressure/cpu shows
# tasks waiting: the flusher defers CUPTI's records then.
busy_cores() {
	yes_pids=()
	for _ in $(seq 1 "$(nproc)"); do
		yes > /dev/null &
		yes_pids+=($!)
	done
	sleep 0.3
}
# The flusher's count of rounds it deferred CUPTI's records in, from its debug log (CPROF_DEBUG=3) at the exit
deferred_rounds() { sed -n "s/.*CUPTI's records deferred in \([0-9]*\) rounds.*/\1/p" "$1" | tail -1; }
# A test that cannot run here exits 77 with its reason; run.sh prints SKIP, never PASS.
skip() { echo "SKIP: $*" >&2; exit 77; }
# A virtualenv tests/integration/setup-venvs made before the tests (make check runs it): SKIP with its
# reason when PyPI could not be reached, FAIL when it is missing for another reason.
need_venv() {
	[ -f "$1/.cprof-ready" ] && return 0
	[ -f "$1.skip" ] && skip "$(cat "$1.skip")"
	[ -f "$1.log" ] && fail "no virtualenv at $1: its install failed: $(tail -3 "$1.log")"
	fail "no virtualenv at $1: run tests/integration/setup-venvs (make check does)"
}
# PyTorch from PyPI, the version in tests/integration/torch-version (CPROF_TORCH_VENV names a virtualenv made
# elsewhere). Sets TORCH_PY and TORCH_LIB (the wheel's CUDA libraries).
need_torch() {
	local v=${CPROF_TORCH_VENV:-$BUILD/venv-torch} want
	want=$(cat "$ROOT/tests/integration/torch-version")
	[ -n "${CPROF_TORCH_VENV:-}" ] || need_venv "$v"
	TORCH_PY=$v/bin/python
	"$TORCH_PY" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$want')" 2>/dev/null ||
		fail "no torch $want in $v (make check runs tests/integration/setup-venvs; CPROF_TORCH_VENV=DIR)"
	TORCH_LIB=$("$TORCH_PY" -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))') ||
		fail "the torch virtualenv has no nvidia/cu13 libraries"
}
