# Issue 19: Python call sites under PyTorch 2.15 (PyPI) on the simulated GPU. torch releases the GIL around
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
profile() { # mode stacks db: run, check, and write db.csv (--by callsite)
	"$BIN/cprof-run" -q -f --stacks "$2" -o "$3" -- "$SIMRUN" "$PY" "$W" "$1" $S > out.txt 2> err.txt ||
		fail "cprof-run $1 ($2): $(tail -3 err.txt)"
	grep -q "is not simulated" err.txt && fail "reached a simulator stub: $(grep "is not simulated" err.txt)"
	assert_match "$(cat out.txt)" "^$1 steps=$S shape=" "workload output ($1, $2)"
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
AUTOGRAD_GEMM='void at::cuda::blas::gemm_internal_cublas<...>(...) (libtorch_cuda.so)'
for st in sampled all; do
	# the seed: one line, one GEMM and one add per step
	profile seed $st seed-$st.db
	assert_eq "$(row seed-$st.db.csv "$(site seed seed)")" "$((2 * S)),$((2 * S))" "seed line ($st): $(head -4 seed-$st.db.csv)"
	assert_eq "$(at_line seed-$st.db "$(line seed)" "a.class = 'gemm'")" $S "GEMMs on the seed line ($st)"
	assert_eq "$(at_line seed-$st.db "$(line seed)" "a.class = 'launch'")" $S "add launches on the seed line ($st)"
	# every stacked call of the seed was named by a line of the workload (one thread, all Python)
	assert_eq "$(tail -n +2 seed-$st.db.csv | grep -vcF ",$W:")" 0 "seed call sites outside the workload ($st): $(cat seed-$st.db.csv)"
	# the two ops on two lines
	profile split $st split-$st.db
	assert_eq "$(row split-$st.db.csv "$(site matmul split)")" "$S,$S" "matmul line ($st): $(head -4 split-$st.db.csv)"
	assert_eq "$(row split-$st.db.csv "$(site add split)")" "$S,$S" "add line ($st)"
	assert_eq "$(at_line split-$st.db "$(line matmul)" "a.class = 'gemm'")" $S "GEMMs on the matmul line ($st)"
	# nn.Linear: the forward from forward(), the backward's GEMM on the autograd thread
	profile linear $st lin-$st.db
	assert_eq "$(row lin-$st.db.csv "$(site forward forward)")" "$S,$S" "forward line ($st): $(head -6 lin-$st.db.csv)"
	assert_eq "$(at_line lin-$st.db "$(line forward)" "s.value = 'cublasLtMatmul'")" $S "forward GEMMs on the forward line ($st)"
	assert_eq "$(row lin-$st.db.csv "$(site sum linear)")" "$S,$S" "sum line ($st)"
	assert_eq "$(row lin-$st.db.csv "$(site backward linear)")" "$S,$S" "backward line (the seed gradient, on the calling thread) ($st)"
	assert_eq "$(row lin-$st.db.csv "$AUTOGRAD_GEMM")" "$S,$S" "backward GEMMs named by their native caller ($st)"
	fwd_tid=$(q lin-$st.db "SELECT DISTINCT tid FROM GEMMS WHERE api = 'cublasLtMatmul'")
	ag_tid=$(q lin-$st.db "SELECT DISTINCT tid FROM GEMMS WHERE api = 'cublasGemmEx'")
	assert_eq "$(q lin-$st.db "SELECT count(*) FROM GEMMS WHERE api = 'cublasGemmEx' AND nested = 0 AND tid = $ag_tid AND tid != $fwd_tid")" $S "backward GEMMs on the autograd thread ($st)"
	assert_eq "$(q lin-$st.db "SELECT count(*) FROM CPROF_API a JOIN CPROF_STACK_FRAMES f ON f.processId = a.processId AND f.stackId = a.stackId WHERE a.tid = $ag_tid AND f.kind = 'python'")" 0 "no Python frame on the autograd thread ($st)"
	assert_eq "$(q lin-$st.db "SELECT count(*) FROM CPROF_API WHERE tid = $ag_tid AND nested = 0 AND stackId IS NULL AND class = 'gemm'")" 0 "every autograd GEMM has a stack ($st)"
done
# sampled stacks did reuse stacks: the reuse kept each call on its own line
assert_match "$(q split-sampled.db "SELECT count(*) FROM CPROF_API WHERE stackInherited = 1")" "^[1-9]" "sampled stacks reused"
assert_eq "$(q split-all.db "SELECT count(*) FROM CPROF_API WHERE stackInherited = 1")" 0 "--stacks all reused none"
# frames only with the GIL held: torch released it, so matmul and add lose their lines to libtorch_cuda.so
CPROF_PY_NOGIL=0 profile split sampled gil.db
assert_eq "$(row gil.db.csv "$(site matmul split)")" "" "matmul line with frames only under the GIL: $(cat gil.db.csv)"
assert_eq "$(row gil.db.csv "$(site add split)")" "" "add line with frames only under the GIL"
assert_eq "$(row gil.db.csv "$AUTOGRAD_GEMM")" "$S,$S" "matmul named by its native caller with frames only under the GIL"
echo ok
