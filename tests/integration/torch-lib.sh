# Shared by the torch tests (t-torch-*.sh): the pinned torch's python, or SKIP (exit 77) with the reason.
TORCH_VENV=${CPROF_TORCH_VENV:-$BUILD/venv-torch}
need_torch() {
	if [ -f "$BUILD/venv-torch.skip" ]; then
		echo "torch not installed: $(cat "$BUILD/venv-torch.skip")"
		exit 77
	fi
	[ -x "$TORCH_VENV/bin/python" ] || { echo "torch not installed: no $TORCH_VENV (run make check)"; exit 77; }
	PY=$TORCH_VENV/bin/python
	SIMRUN=$BUILD/simgpu/simgpu-run
	[ -x "$SIMRUN" ] || fail "no $SIMRUN (make simgpu)"
	TW=$ROOT/tests/workloads/torch_sim.py
}
