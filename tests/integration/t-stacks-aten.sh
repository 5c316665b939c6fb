# Issue 5 / must show 1: a C++ program shaped like ATen's dispatcher on the simulated GPU. The report's
# chain reads aten::matmul -> aten::mm -> <kernel>; --by op attributes Self/Total CUDA time to the ops;
# every mode (all, sampled, off) keeps the call counts, and the stacks are stored once, referenced by id.
. "$(dirname "$0")/lib.sh"
need_sim
M=12 L=7 A=5
run() { # mode db
	sim "$BIN/cprof-run" -q --stacks "$1" -o "$2" -- "$WL/aten_chain" $M $L $A > out.txt || fail "aten_chain --stacks $1"
	assert_eq "$(cat out.txt)" "matmul=$M linear=$L add=$A" "workload output ($1)"
}
run all all.db
run sampled sampled.db
run off off.db

# stacks are stored once per distinct stack and referenced by id; --stacks all: every launch has its own
assert_eq "$(q all.db "SELECT count(*) FROM LAUNCHES l JOIN CPROF_API a ON a.id = l.id WHERE a.stackId IS NULL")" 0 "every launch has a stack (all)"
assert_eq "$(q all.db "SELECT count(*) FROM CPROF_API WHERE stackInherited = 1")" 0 "nothing inherited in mode all"
nstacks=$(q all.db "SELECT count(DISTINCT stackId) FROM CPROF_STACK_FRAMES")
[ "$nstacks" -lt $((M + L + A)) ] || fail "stacks not deduplicated: $nstacks distinct for $((M + L + A)) calls"
assert_eq "$(q all.db "SELECT value FROM META WHERE key='stacks'")" "$nstacks" "META stacks"
# native frames were symbolised from the ELF symbol tables (static member functions are in .symtab only)
assert_ge "$(q all.db "SELECT count(*) FROM CPROF_STACK_FRAMES f JOIN StringIds s ON s.id = f.symbolId WHERE s.value = '_ZN2at4_ops2mm4callERKNS_6TensorE'")" 1 "at::_ops::mm::call symbolised"
assert_eq "$(q all.db "SELECT count(*) FROM CPROF_STACK_FRAMES f JOIN StringIds m ON m.id = f.moduleId WHERE m.value LIKE '%libcprof.so'")" 0 "cprof's own frames are not on the stacks"

for db in all.db sampled.db; do
	"$BIN/cprof" report "$db" --format json > r.json || fail "report json $db"
	py() { python3 -c "import json,sys; d=json.load(open('r.json')); $1"; }
	# the chain of each kernel, outermost first, ending in the hooked call
	assert_eq "$(py "print([c['chain'] for c in d['chains'] if 'mm_kernel' in c['kernel']])")" \
		"['aten::matmul → aten::mm → __cudaLaunchKernel']" "mm_kernel chain ($db)"
	assert_eq "$(py "print([c['chain'] for c in d['chains'] if 'add_kernel' in c['kernel']])")" \
		"['aten::add → __cudaLaunchKernel']" "add_kernel chain, overload dropped ($db)"
	assert_eq "$(py "print(sum(c['gpu_ops'] for c in d['chains'] if 'mm_kernel' in c['kernel']))")" $M "mm kernels attributed ($db)"
	assert_eq "$(py "print(sorted(c['chain'] for c in d['chains'] if 'mm_kernel' not in c['kernel'] and 'add_kernel' not in c['kernel']))")" \
		"['aten::linear → aten::addmm → cublasSgemm_v2']" "GEMM kernel chain ($db)"
	# by op: Self on the innermost op, Total on every op of the chain
	assert_eq "$(py "o={r['name']:r for r in d['ops']}; print(o['aten::mm']['calls'], o['aten::matmul']['calls'], o['aten::addmm']['calls'], o['aten::linear']['calls'], o['aten::add']['calls'])")" \
		"$M 0 $L 0 $A" "calls by op ($db)"
	assert_eq "$(py "o={r['name']:r for r in d['ops']}; print(o['aten::matmul']['cuda_total_ns'] == o['aten::mm']['self_cuda_ns'] > 0, o['aten::matmul']['self_cuda_ns'] == 0)")" \
		"True True" "matmul total = mm self ($db)"
	# the GPU time attributed to ops is the GPU time of the kernels they launched
	want=$(q "$db" "SELECT sum(end - start) FROM KERNELS")
	assert_eq "$(py "o={r['name']:r for r in d['ops']}; print(o['aten::mm']['self_cuda_ns'] + o['aten::addmm']['self_cuda_ns'] + o['aten::add']['self_cuda_ns'])")" "$want" "op CUDA time = kernel time ($db)"
done
# sampled: the first 4 calls of a site have their own stack, later ones reuse it and say so
assert_ge "$(q sampled.db "SELECT count(*) FROM CPROF_API WHERE stackInherited = 1")" 1 "sampled mode inherits"
"$BIN/cprof" report sampled.db --by op | grep -q "aten::matmul" || fail "text --by op"
"$BIN/cprof" report sampled.db | grep -q "aten::matmul → aten::mm → __cudaLaunchKernel" || fail "chain in the default report"
# the HTML page carries the same tables
"$BIN/cprof" html sampled.db -o page.html || fail "cprof html"
for id in t-chains t-ops t-callsites; do grep -q "id=\"$id\"" page.html || fail "html table $id"; done
grep -q "aten::matmul → aten::mm → __cudaLaunchKernel" page.html || fail "html chain"
# off: no stack anywhere, same calls, and the report says why there is no table
assert_eq "$(q off.db "SELECT count(*) FROM CPROF_STACK_FRAMES")" 0 "no stacks with --stacks off"
assert_eq "$(q off.db "SELECT count(*) FROM LAUNCHES")" "$(q all.db "SELECT count(*) FROM LAUNCHES")" "same launches with and without stacks"
"$BIN/cprof" report off.db --by op | grep -q "No call stacks" || fail "--by op without stacks"
# a bad mode is a usage error of cprof-run
sim "$BIN/cprof-run" -q --stacks bogus -o x.db -- true 2> err.txt; rc=$?
assert_eq "$rc" 2 "--stacks bogus exit status"
grep -q "expected off, sampled or all" err.txt || fail "--stacks bogus message"
echo ok
