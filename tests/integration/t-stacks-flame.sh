# Issue 30: cprof stacks --folded / --format speedscope: weights (ns) that add up to the profile's totals and
# to the report's call-site table, Python frames above the native ones they called, hostile names kept on
# one line, and both formats read by flameshow's parsers (a flame graph viewer from PyPI). Simulated GPU.
. "$(dirname "$0")/lib.sh"
need_sim
need_venv "$BUILD/venv-ci"
PY=$BUILD/venv-ci/bin/python
SCRIPT=$ROOT/tests/workloads/py_callsites.py
export SIMGPU_COPY_DATA=0
sim "$BIN/cprof-run" -q --stacks all -o py.db -- python3 "$SCRIPT" 9 6 > /dev/null || fail "py_callsites"
sim "$BIN/cprof-run" -q -o native.db -- "$WL/matmul_sweep" --sizes 64 --steps 20 > /dev/null || fail "matmul_sweep"
sum() { awk '{ s += $NF } END { printf "%d\n", s }' "$@"; }

for db in py native; do
	"$BIN/cprof" stacks $db.db > $db.cpu || fail "stacks $db"
	"$BIN/cprof" stacks $db.db --folded --weight gpu > $db.gpu || fail "stacks --weight gpu $db"
	# every line: frames, a space, an integer weight; no empty frame
	grep -vqE '^[^;]+(;[^;]+)* [0-9]+$' $db.cpu $db.gpu && fail "a folded line is malformed: $(grep -vE '^[^;]+(;[^;]+)* [0-9]+$' $db.cpu | head -2)"
	# host weight: every hooked call's time (a nested call's inside its outer one); GPU weight: every GPU op's
	assert_eq "$(sum $db.cpu)" "$(q $db.db "SELECT sum(end - start) FROM CPROF_API WHERE coalesce(nested, 0) = 0")" "$db: cpu weights"
	assert_eq "$(sum $db.gpu)" "$(q $db.db "SELECT sum(end - start) FROM GPU_OPS")" "$db: gpu weights"
	# the same totals as the report's GPU tables, and its call sites' Self CPU / Self CUDA for the stacks
	"$BIN/cprof" report $db.db --format json > r.json || fail "report json $db"
	python3 - $db "$(grep -v '^\[no stack recorded\]' $db.cpu | sum)" "$(grep -v '^\[no stack recorded\]' $db.gpu | sum)" "$(sum $db.gpu)" <<'PYEOF' || fail "$db: weights against the report"
import json, sys
db, cpu, gpu, allgpu = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
d = json.load(open("r.json"))
assert allgpu == sum(r["total_ns"] for r in d["kernels"]) + sum(r["total_ns"] for r in d["memops"]), (allgpu, d["kernels"], d["memops"])
sites = d["callsites"]
assert sites, "no call sites"
assert cpu == sum(r["self_cpu_ns"] for r in sites), (cpu, sites)
assert gpu == sum(r["self_cuda_ns"] for r in sites), (gpu, sites)
PYEOF
done
# Python frames outermost first, above the native frames they called, the CUDA call and kernel at the tip
line() { grep -n "# CALLSITE $1\$" "$SCRIPT" | cut -d: -f1; }
grep -q "^<module> ($SCRIPT:[0-9]*);main ($SCRIPT:[0-9]*);gemm_step ($SCRIPT:$(line gemm));.*;cublasSgemm_v2 [0-9]*$" py.cpu ||
	fail "Python stack of the GEMM: $(grep cublasSgemm py.cpu)"
grep -q "^<module> .*gemm_step ($SCRIPT:$(line gemm));.*;cublasSgemm_v2;[^;]*gemm[^;]* [0-9]*$" py.gpu || fail "kernel tip: $(head -3 py.gpu)"
grep -q "Py_RunMain\|_PyEval_EvalFrame\|PyEval_EvalCode" py.cpu && fail "interpreter frames outside the innermost Python call"
grep -q "^_start;.*;main;run(.*;cublasSgemm_v2 [0-9]*$" native.cpu || fail "native stack: $(head -3 native.cpu)"

# flameshow reads both formats, picks the right parser by itself, and its root carries the total
"$BIN/cprof" stacks py.db --format speedscope --weight gpu -o py.speedscope.json || fail "speedscope"
"$PY" - py.cpu py.speedscope.json "$(sum py.cpu)" "$(sum py.gpu)" <<'PYEOF' || fail "flameshow's parsers"
import json, sys
from flamegraph_textual.parsers import choose_parser, parse
from flamegraph_textual.parsers.stackcollapse_parser import StackCollapseParser
from flamegraph_textual.parsers.speedscope_parser import SpeedscopeParser
folded, ss, cpu, gpu = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for path, cls, total in ((folded, StackCollapseParser, cpu), (ss, SpeedscopeParser, gpu)):
    data = open(path, "rb").read()
    assert choose_parser(data) is cls, (path, choose_parser(data))
    p = parse(data, path)
    assert p.root_stack.values[0] == total, (path, p.root_stack.values, total)
    assert p.root_stack.children, path
d = json.load(open(ss))
assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
prof = d["profiles"][0]
assert prof["type"] == "sampled" and prof["unit"] == "nanoseconds" and prof["endValue"] == gpu == sum(prof["weights"])
assert len(prof["samples"]) == len(prof["weights"])
assert all(0 <= i < len(d["shared"]["frames"]) for s in prof["samples"] for i in s)
PYEOF

# a hostile kernel name (';' would split a frame, a newline start a line) stays one frame on one line
cp native.db evil.db
q evil.db "UPDATE StringIds SET value = 'evil;frame' || char(10) || 'forged;line 999' || char(27) || '[2J' WHERE value = '_Z8bias_addPfPKfxi'"
"$BIN/cprof" stacks evil.db --weight gpu > evil.gpu || fail "stacks evil"
assert_eq "$(wc -l < evil.gpu)" "$(wc -l < native.gpu)" "lines with a hostile name"
grep -q "^forged" evil.gpu && fail "a kernel name forged a line"
grep -q ';evil:frame\\nforged:line 999\\x1b\[2J [0-9]*$' evil.gpu || fail "hostile name not kept, escaped: $(grep evil evil.gpu)"
assert_eq "$(sum evil.gpu)" "$(sum native.gpu)" "weights with a hostile name"
# -o FILE, -o -, refusals
"$BIN/cprof" stacks py.db -o out.folded && cmp -s out.folded py.cpu || fail "-o FILE"
"$BIN/cprof" stacks py.db -o out.folded 2> err.txt; assert_eq $? 2 "existing file refused"
"$BIN/cprof" stacks py.db -o - | cmp -s - py.cpu || fail "-o -"
"$BIN/cprof" stacks py.db --weight wall 2> err.txt; assert_eq $? 2 "bad --weight"
assert_eq "$(wc -l < err.txt)" 1 "one line"
"$BIN/cprof" stacks missing.db 2> err.txt; assert_eq $? 2 "missing profile"
echo ok
