#!/bin/bash
# Seed corpora for the fuzz targets, from real runs on the simulated GPU: usage seeds.sh BUILD OUTDIR.
# OUTDIR/wire: FIFO byte streams and single frames libcprof.so wrote; OUTDIR/profile: profiles cprofd
# wrote, and damaged and hostile variants of one (tests/fuzz/corrupt.py).
set -eu
BUILD=$1 OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$BUILD/simgpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf "$OUT" && mkdir -p "$OUT/wire" "$OUT/profile"
LIB=$BUILD/lib/libcprof.so
python3 "$HERE/capture.py" "$OUT/wire" threads "$LIB" "$BUILD/tests/scenarios" threads 60 > /dev/null
python3 "$HERE/capture.py" "$OUT/wire" fork "$LIB" "$BUILD/tests/scenarios" fork 3 4 _exit > /dev/null
python3 "$HERE/capture.py" "$OUT/wire" sweep "$LIB" "$BUILD/tests/matmul_sweep" --sizes 64 --steps 2 --warmup 1 > /dev/null
python3 "$HERE/capture.py" "$OUT/wire" exec "$LIB" "$BUILD/tests/scenarios" exec > /dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BUILD/bin/cprof-run" -q -o "$tmp/threads.db" -- "$BUILD/tests/scenarios" threads 20 > /dev/null
"$BUILD/bin/cprof-run" -q -o "$tmp/sweep.db" -- "$BUILD/tests/matmul_sweep" --sizes 64 --steps 2 --warmup 1 > /dev/null
cp "$tmp/threads.db" "$tmp/sweep.db" "$OUT/profile/"
python3 "$HERE/corrupt.py" "$tmp/threads.db" "$tmp/corrupt" 4
# a handful of each kind is enough to start from; the fuzzer finds the rest
ls "$tmp/corrupt" | grep -E '^(empty|text|trunc-(100|4096|8192)|flip-[0-3]-|smash-|future|trigger|view-|table-is|long|odd)' |
	while read -r f; do cp "$tmp/corrupt/$f" "$OUT/profile/"; done
echo "seeds: $(ls "$OUT/wire" | wc -l) wire, $(ls "$OUT/profile" | wc -l) profile"
