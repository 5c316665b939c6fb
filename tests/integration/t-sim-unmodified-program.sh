# Issue 3 / must show 2: a program written for a real GPU (streams, events, async copies, cuBLAS on a
# stream) runs unchanged on the simulator under cprof-run, with the same output as without cprof.
. "$(dirname "$0")/lib.sh"
need_sim
sim "$WL/streams" > bare.out || fail "bare run failed"
sim "$BIN/cprof-run" -q -o prof.db -- "$WL/streams" > prof.out || fail "profiled run failed"
cmp -s bare.out prof.out || fail "output differs: $(diff bare.out prof.out)"
assert_eq "$(q prof.db "SELECT count(*) FROM KERNELS")" 27 "kernels (24 launches + 3 GEMMs)"
assert_eq "$(q prof.db "SELECT count(DISTINCT streamId) FROM KERNELS")" 3 "streams used"
assert_eq "$(q prof.db "SELECT count(*) FROM API_GPU WHERE gpuKind='kernel'")" 27 "every kernel joined to its call"
assert_eq "$(q prof.db "SELECT count(*) FROM API_GPU WHERE api='cublasSgemm_v2'")" 3 "GEMMs joined"
assert_eq "$(q prof.db "SELECT count(*) FROM API_CALLS WHERE name='cudaStreamWaitEvent'")" 8 "stream waits"
assert_eq "$(q prof.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")" 13 "copies"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='complete'")" 1 "complete"
echo ok
