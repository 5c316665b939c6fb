#!/bin/sh
# Test set-up: the pinned PyTorch wheel in a virtualenv for the torch tests (build/venv-torch, made once).
# CPROF_TORCH_VENV=DIR uses an existing virtualenv instead. When the install fails (PyPI unreachable) the torch
# tests SKIP with the reason written to BUILD/venv-torch.skip; that is the only reason they skip.
# $1: BUILD directory.
set -u
build=$1
pin=2.15.0
venv=${CPROF_TORCH_VENV:-$build/venv-torch}
skip=$build/venv-torch.skip
rm -f "$skip"
has_torch() { "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$pin')" 2>/dev/null; }
if has_torch; then
	echo "torch venv: $venv (torch $pin)"
	exit 0
fi
if [ -n "${CPROF_TORCH_VENV:-}" ]; then
	# a set-up mistake, not a reason to skip: the torch tests will fail and say so
	echo "torch venv: CPROF_TORCH_VENV=$venv has no torch $pin" >&2
	exit 0
fi
echo "torch venv: installing torch==$pin into $venv (a few minutes, once)"
start=$(date +%s)
rm -rf "$venv"
if ! python3 -m venv "$venv" > "$build/venv-torch.log" 2>&1; then
	echo "python3 -m venv failed (see $build/venv-torch.log)" > "$skip"
elif ! "$venv/bin/pip" install -q "torch==$pin" >> "$build/venv-torch.log" 2>&1; then
	echo "pip install torch==$pin failed, PyPI unreachable? ($(tail -1 "$build/venv-torch.log"))" > "$skip"
fi
if [ -f "$skip" ]; then
	rm -rf "$venv"
	cat "$skip"
else
	echo "torch venv: ready in $(($(date +%s) - start)) s"
fi
exit 0
