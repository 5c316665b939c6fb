# Shared by the torch tests (t-torch-*.sh): the pinned torch (lib.sh's need_torch: SKIP only when PyPI could not be
# reached by the test set-up, FAIL when the virtualenv is missing or wrong) and the simulated GPU's launcher.
need_torch_sim() {
	need_torch
	PY=$TORCH_PY
	SIMRUN=$BUILD/simgpu/simgpu-run
	[ -x "$SIMRUN" ] || fail "no $SIMRUN (make simgpu)"
	TW=$ROOT/tests/workloads/torch_sim.py
}
