#!/bin/sh
# simgpu-run CMD [ARGS...]: runs CMD on the simulated GPU (build/simgpu/lib), whatever CUDA libraries CMD would find itself.
# The simulated libraries go on the loader path and are appended to LD_PRELOAD: a library already loaded under a
# soname satisfies every later request for that soname, so programs (PyTorch's wheel) that find their own CUDA
# libraries through RPATH/$ORIGIN get the simulated ones, while a profiler preloaded before us (cprof-run) stays first.
if [ $# -eq 0 ]; then
	echo "usage: simgpu-run CMD [ARGS...]  (runs CMD on the simulated GPU)" >&2
	exit 2
fi
lib=$(cd "$(dirname "$0")/lib" 2>/dev/null && pwd) || {
	echo "simgpu-run: no simulated libraries next to $0 (run make simgpu)" >&2
	exit 2
}
# both lists below split at colons (LD_PRELOAD at spaces too): such a path would load nothing
case $lib in *[\ :]*)
	echo "simgpu-run: $lib has a space or a colon, which LD_PRELOAD splits; use cprof-run --simulated-gpu" >&2
	exit 2 ;;
esac
sims="$lib/libcuda.so.1 $lib/libcudart.so.13 $lib/libcublasLt.so.13 $lib/libcublas.so.13 $lib/libcupti.so.13"
for f in $sims; do
	[ -e "$f" ] || { echo "simgpu-run: $f is missing (run make simgpu)" >&2; exit 2; }
done
LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
LD_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD }$sims
export LD_LIBRARY_PATH LD_PRELOAD
exec "$@"
