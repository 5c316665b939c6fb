# Shared by the torch tests (t-torch-*.sh): the pinned torch's python; SKIP (exit 77) only when the test set-up
# could not install it (tests/setup-torch-venv.sh wrote why), FAIL when the set-up did not run or the venv is wrong.
TORCH_VENV=${CPROF_TORCH_VENV:-$BUILD/venv-torch}
need_torch() {
	if [ -f "$BUILD/venv-torch.skip" ]; then
		echo "torch not installed: $(cat "$BUILD/venv-torch.skip")"
		exit 77
	fi
	PY=$TORCH_VENV/bin/python
	"$PY" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '2.15.0')" 2>/dev/null ||
		fail "no torch 2.15.0 in $TORCH_VENV (make check runs tests/setup-torch-venv.sh; CPROF_TORCH_VENV=DIR)"
	SIMRUN=$BUILD/simgpu/simgpu-run
	[ -x "$SIMRUN" ] || fail "no $SIMRUN (make simgpu)"
	TW=$ROOT/tests/workloads/torch_sim.py
}
