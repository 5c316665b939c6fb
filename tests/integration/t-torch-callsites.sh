# Issue 19: Python call sites under PyTorch 2.15 (PyPI) on the simulated GPU. torch releases the GIL around
# cprof-test-timeout: 600
# each op, so the frames are read from memory: --by callsite names the script's own lines with exact counts
# for the seed's loop (matmul and add on one line), the two ops on two lines, and an nn.Linear forward
# called from a user function; CPROF_PY_NOGIL=0 (frames only with the GIL held) loses those lines, which
# shows the GIL was released. The backward's calls run on torch's autograd thread, which has a thread
# state but no Python frames: their call site is the innermost native frame outside the CUDA libraries
# (libtorch_cuda.so). Under --stacks sampled and all. (Simulated GPU: kernels do not compute.)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
W=$ROOT/tests/workloads/torch_callsites.py
line() { grep -n "# CALLSITE $1\$" "$W" | cut -d: -f1; }
S=20
profile() { # mode stacks db output: run, check, and write db.csv (--by callsite)
	"$BIN/cprof-run" -q -f --stacks "$2" -o "$3" -- "$SIMRUN" "$PY" "$W" "$1" $S > out.txt 2> err.txt ||
		fail "cprof-run $1 ($2): $(tail -3 err.txt)"
	grep -q "is not simulated" err.txt && fail "reached a simulator stub: $(grep "is not simulated" err.txt)"
	assert_eq "$(cut -d' ' -f1,2 out.txt | tr '\n' ' ')" "$4" "workload output ($1, $2)"
	assert_eq "$(q "$3" "SELECT value FROM META WHERE key='lost_events'")" 0 "lost events ($1, $2)"
	"$BIN/cprof" report "$3" --by callsite --format csv > "$3.csv" || fail "report $3"
}
row() { # csv label: "calls,gpu_ops" of that call site
	awk -F, -v l="$2" '{ s = $0; for (i = 0; i < 6; i++) s = substr(s, index(s, ",") + 1); if (s == l) print $1 "," $2 }' "$1"
}
site() { echo "$W:$(line "$1") $2"; }
# calls (not nested) whose stack has a Python frame at that line of the workload, by API class or name
at_line() { # db line sql-condition-on-a
	q "$1" "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE a.nested = 0 AND ($3)
		AND EXISTS (SELECT 1 FROM CPROF_STACK_FRAMES f JOIN StringIds fi ON fi.id = f.fileId
		WHERE f.processId = a.processId AND f.stackId = a.stackId AND f.kind = 'python' AND fi.value = '$W'
		AND f.line = $2)"
}
TORCH_GEMM='void at::cuda::blas::gemm_internal_cublas<...>(...) (libtorch_cuda.so)'
for st in sampled all; do
	# seed, split and linear in one process: the main thread's calls all come from the workload's lines
	profile all $st $st.db "seed steps=$S split steps=$S linear steps=$S "
	c=$st.db.csv
	# the seed: one line, one GEMM and one add per step
	assert_eq "$(row $c "$(site seed seed)")" "$((2 * S)),$((2 * S))" "seed line ($st): $(head -4 $c)"
	assert_eq "$(at_line $st.db "$(line seed)" "a.class = 'gemm'")" $S "GEMMs on the seed line ($st)"
	assert_eq "$(at_line $st.db "$(line seed)" "a.class = 'launch'")" $S "add launches on the seed line ($st)"
	# the two ops on two lines
	assert_eq "$(row $c "$(site matmul split)")" "$S,$S" "matmul line ($st): $(cat $c)"
	assert_eq "$(row $c "$(site add split)")" "$S,$S" "add line ($st)"
	assert_eq "$(at_line $st.db "$(line matmul)" "a.class = 'gemm'")" $S "GEMMs on the matmul line ($st)"
	# nn.Linear: the forward from forward(), the backward's GEMM on the autograd thread
	assert_eq "$(row $c "$(site forward forward)")" "$S,$S" "forward line ($st)"
	assert_eq "$(at_line $st.db "$(line forward)" "s.value = 'cublasLtMatmul'")" $S "forward GEMMs on the forward line ($st)"
	assert_eq "$(row $c "$(site sum linear)")" "$S,$S" "sum line ($st)"
	assert_eq "$(row $c "$(site backward linear)")" "$S,$S" "backward line (the fill of the loss gradient, on the calling thread) ($st)"
	assert_eq "$(row $c "$TORCH_GEMM")" "$S,$S" "backward GEMMs named by their native caller ($st)"
	main_tid=$(q $st.db "SELECT DISTINCT tid FROM GEMMS WHERE api = 'cublasLtMatmul'")
	ag_tid=$(q $st.db "SELECT DISTINCT tid FROM GEMMS WHERE api = 'cublasGemmEx' AND tid != $main_tid")
	assert_eq "$(q $st.db "SELECT count(*) FROM GEMMS WHERE api = 'cublasGemmEx' AND nested = 0 AND tid = $ag_tid")" $S "backward GEMMs on the autograd thread ($st)"
	assert_eq "$(q $st.db "SELECT count(*) FROM CPROF_API a JOIN CPROF_STACK_FRAMES f ON f.processId = a.processId AND f.stackId = a.stackId WHERE a.tid = $ag_tid AND f.kind = 'python'")" 0 "no Python frame on the autograd thread ($st)"
	assert_eq "$(q $st.db "SELECT count(*) FROM CPROF_API WHERE tid = $ag_tid AND nested = 0 AND stackId IS NULL AND class = 'gemm'")" 0 "every autograd GEMM has a stack ($st)"
	# every stacked call of the main thread was named by a line of the workload
	assert_eq "$(q $st.db "SELECT count(*) FROM CPROF_API a WHERE a.tid = $main_tid AND a.stackId IS NOT NULL AND NOT EXISTS
		(SELECT 1 FROM CPROF_STACK_FRAMES f JOIN StringIds fi ON fi.id = f.fileId WHERE f.processId = a.processId
		AND f.stackId = a.stackId AND f.kind = 'python' AND fi.value = '$W')")" 0 "main-thread calls without a workload line ($st)"
done
# sampled stacks did reuse stacks: the reuse kept each call on its own line
assert_match "$(q sampled.db "SELECT count(*) FROM CPROF_API WHERE stackInherited = 1")" "^[1-9]" "sampled stacks reused"
assert_eq "$(q all.db "SELECT count(*) FROM CPROF_API WHERE stackInherited = 1")" 0 "--stacks all reused none"
# frames only with the GIL held: torch released it, so matmul and add lose their lines to libtorch_cuda.so
CPROF_PY_NOGIL=0 profile split sampled gil.db "split steps=$S "
assert_eq "$(row gil.db.csv "$(site matmul split)")" "" "matmul line with frames only under the GIL: $(cat gil.db.csv)"
assert_eq "$(row gil.db.csv "$(site add split)")" "" "add line with frames only under the GIL"
assert_eq "$(row gil.db.csv "$TORCH_GEMM")" "$S,$S" "matmul named by its native caller with frames only under the GIL"
echo ok
