# Issue 5 / must show 2: a plain Python script (ctypes, no torch) issuing cuBLAS GEMMs and memsets from known
# lines on the simulated GPU: --by callsite names exactly those file:line pairs with the right counts, with
# the GPU time of the work they launched; the trace carries python_function spans and the call site.
. "$(dirname "$0")/lib.sh"
need_sim
SCRIPT=$ROOT/tests/workloads/py_callsites.py
line() { grep -n "# CALLSITE $1\$" "$SCRIPT" | cut -d: -f1; }
G=9 M=6
for mode in sampled all; do
	sim "$BIN/cprof-run" -q --stacks $mode -o $mode.db -- python3 "$SCRIPT" $G $M > out.txt || fail "py_callsites ($mode)"
	assert_eq "$(cat out.txt)" "gemm $G memset $M memsetasync 1" "workload output"
	"$BIN/cprof" report $mode.db --by callsite --format csv > sites.csv || fail "report --by callsite ($mode)"
	row() { grep -F ",$SCRIPT:$1 $2" sites.csv | cut -d, -f1; }
	assert_eq "$(row "$(line gemm)" gemm_step)" $G "GEMM call site ($mode)"
	assert_eq "$(row "$(line clear)" clear)" $M "memset call site ($mode)"
	assert_eq "$(row "$(line module)" '<module>')" 1 "module-level call site ($mode)"
	# the GPU time of each site is that of the GPU work its calls launched
	gpu=$(grep -F ",$SCRIPT:$(line gemm) gemm_step" sites.csv | cut -d, -f4)
	assert_eq "$gpu" "$(q $mode.db "SELECT sum(end - start) FROM KERNELS")" "GEMM site's CUDA time = kernel time ($mode)"
	gpu=$(grep -F ",$SCRIPT:$(line clear) clear" sites.csv | cut -d, -f4)
	assert_eq "$gpu" "$(q $mode.db "SELECT sum(m.end - m.start) FROM CUPTI_ACTIVITY_KIND_MEMSET m JOIN API_GPU g ON g.start = m.start AND g.gpuKind = 'memset' JOIN CPROF_API a ON a.id = g.apiId JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaMemset'")" "memset site's CUDA time ($mode)"
done
# the whole Python stack is stored, innermost first: gemm_step <- main <- <module>
assert_eq "$(q all.db "SELECT group_concat(fu.value || ':' || f.line, ' ') FROM (SELECT * FROM CPROF_STACK_FRAMES WHERE kind = 'python' AND stackId = (SELECT a.stackId FROM GEMMS g JOIN CPROF_API a ON a.id = g.id LIMIT 1) ORDER BY level) f JOIN StringIds fu ON fu.id = f.funcId")" \
	"gemm_step:$(line gemm) main:$(grep -n '    gemm_step(handle' "$SCRIPT" | cut -d: -f1) <module>:$(grep -n '^handle, a, b, c' "$SCRIPT" | cut -d: -f1)" "Python stack of a GEMM"
# the text table names the sites too
"$BIN/cprof" report all.db --by callsite | grep -qF "py_callsites.py:$(line gemm) gemm_step" || fail "text --by callsite"
# trace: launch events carry the call site, python_function spans cover them (Kineto's category and naming)
"$BIN/cprof" trace all.db -o t.json || fail "trace"
python3 - "$SCRIPT" "$(line gemm)" <<'PY' || fail "trace python_function events"
import json, sys
script, gline = sys.argv[1], int(sys.argv[2])
ev = json.load(open("t.json"))["traceEvents"]
gemms = [e for e in ev if e.get("name") == "cublasSgemm_v2"]
assert gemms and all(e["args"].get("call site") == "%s:%d gemm_step" % (script, gline) for e in gemms), gemms[:1]
py = [e for e in ev if e.get("cat") == "python_function"]
names = {e["name"] for e in py}
assert "%s(%d): gemm_step" % (script, gline) in names, names
# each GEMM lies inside a gemm_step span on its thread, and that span inside main's
inner = [e for e in py if e["name"] == "%s(%d): gemm_step" % (script, gline)]
for g in gemms:
    assert any(s["tid"] == g["tid"] and s["ts"] <= g["ts"] and g["ts"] + g["dur"] <= s["ts"] + s["dur"] + 1e-3 for s in inner), g
ids = {e["args"]["Python id"]: e for e in py}
for s in inner:
    parent = ids[s["args"]["Python parent id"]]
    assert parent["name"].endswith(": main") and parent["ts"] <= s["ts"], parent
PY
# no libunwind: one warning, the program runs unchanged, the Python call sites are still there, and the
# profile says why the stacks have no native frames
CPROF_LIBUNWIND=/nonexistent/libunwind.so.8 sim "$BIN/cprof-run" -q -o nounw.db -- python3 "$SCRIPT" 3 2 > out.txt 2> err.txt \
	|| fail "py_callsites without libunwind"
assert_eq "$(cat out.txt)" "gemm 3 memset 2 memsetasync 1" "output without libunwind"
assert_eq "$(grep -c 'no native call stacks' err.txt)" 1 "one warning without libunwind"
assert_eq "$(q nounw.db "SELECT count(*) FROM CPROF_STATUS WHERE code = 'stacks-native-missing'")" 1 "status recorded"
assert_eq "$(q nounw.db "SELECT count(*) FROM CPROF_STACK_FRAMES WHERE kind = 'native'")" 0 "no native frames"
"$BIN/cprof" report nounw.db --by callsite --format csv | grep -qF ",$SCRIPT:$(line gemm) gemm_step" || fail "call site without libunwind"
echo ok
