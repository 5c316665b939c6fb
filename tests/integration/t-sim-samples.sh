# Issue 15: programs in the style of NVIDIA's samples (device query + driver context, streams with callbacks
# and host functions + managed/registered memory, graphs built node by node and by capture, cuBLAS vectors +
# level-2 BLAS) run under cprof-run
# on the simulated GPU with the output of the plain run, and their kernels are counted.
. "$(dirname "$0")/lib.sh"
need_sim
run() { # program
	sim "$WL/$1" > plain.out 2> plain.err; prc=$?
	sim "$BIN/cprof-run" -q -o "$1.db" -- "$WL/$1" > prof.out 2> prof.err; rc=$?
	assert_eq "$prc" 0 "$1 plain exit status ($(cat plain.out))"
	assert_eq "$rc" 0 "$1 exit status under cprof-run"
	cmp -s plain.out prof.out || fail "$1 output differs: $(cat prof.out) vs $(cat plain.out)"
	grep -q "is not simulated" prof.err && fail "$1 reached a simulator stub: $(grep 'is not simulated' prof.err)"
	assert_eq "$(q "$1.db" "SELECT value FROM META WHERE key='lost_events'")" 0 "$1 lost"
}
run sample_device
assert_eq "$(head -1 prof.out)" "devices=1 driver>=13000:1 runtime>=13000:1" "device query"
assert_eq "$(q sample_device.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%touch%'")" 3 "device sample kernels"
assert_eq "$(q sample_device.db "SELECT count(*) FROM LAUNCHES")" 3 "device sample launches hooked"

run sample_streams
assert_eq "$(cat prof.out)" "streams=4 kernels=8 callbacks=4 host_fns=4 managed_readable=1 copied_back=1" "streams output"
assert_eq "$(q sample_streams.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%scale%'")" 8 "stream kernels"
assert_eq "$(q sample_streams.db "SELECT count(DISTINCT streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 4 "kernels on four streams"
assert_eq "$(q sample_streams.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")" 5 "copies (4 async + 1 back)"
# the host buffer is cudaHostRegister'd: its copies are pinned copies, as CUPTI records them on a GPU (the
# simulator called them pageable, and the report told the program to pin its buffers: s21 hunt, simpleStreams)
assert_eq "$(q sample_streams.db "SELECT group_concat(srcKind) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1")" "2,2,2,2" \
	"registered host memory copied from as pinned (CUPTI_ACTIVITY_MEMORY_KIND_PINNED)"

run sample_graph
assert_eq "$(cat prof.out)" "built nodes=2 launches=4 captured nodes=3 launches=3 graph_kernels=17" "graph output"
assert_eq "$(q sample_graph.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId > 0")" 17 "graph kernels (once per launch)"
assert_eq "$(q sample_graph.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId = 0")" 0 "captured kernels did not run at capture"
assert_eq "$(q sample_graph.db "SELECT count(DISTINCT graphNodeId) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 5 "graph nodes"
assert_eq "$(q sample_graph.db "SELECT count(DISTINCT graphId) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 2 "two executable graphs"

run sample_blas
assert_eq "$(cat prof.out)" "gemv calls=5 vector round trip=1" "blas output"
assert_eq "$(q sample_blas.db "SELECT count(*) FROM KERNELS WHERE name LIKE '%gemv2%'")" 5 "gemv kernels"
assert_eq "$(q sample_blas.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")" 4 "cuBLAS vector/matrix copies"
assert_eq "$(q sample_blas.db "SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY")" $(((256 * 128 + 128 + 256 + 128) * 4)) "bytes copied"
echo ok
