# Issue 21 item 12: cprof info (and cprof-run's summary, which is info) counted processes and calls from
# META, written only when the collector finishes: after cprofd was killed it said "0 process(es), 0 CUDA
# API calls" while report found the process and its calls. Without the final META, info counts the
# tables and says the collector did not finish.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > prog.py <<'PYEOF'
import ctypes
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
for _ in range(7):
    g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
PYEOF
sim "$BIN/cprof-run" -q -o ok.db -- "$PY" prog.py > /dev/null 2>&1 || fail "cprof-run failed"
calls=$(q ok.db "SELECT count(*) FROM CPROF_API")
[ "$calls" -ge 7 ] || fail "the run stored $calls calls"
# every call the report counts, hooked or only seen by CUPTI (issue 29 item 2: one total everywhere)
calls=$("$BIN/cprof" report ok.db --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"]["api_calls"])')
"$BIN/cprof" info ok.db > info.txt || fail "info failed"
grep -q "1 process(es), $calls CUDA API calls (" info.txt || fail "finished profile: $(cat info.txt)"
grep -q "did not finish" info.txt && fail "a finished profile said unfinished: $(cat info.txt)"

# what a killed collector leaves: rows committed, none of the final META
cp ok.db killed.db
q killed.db "DELETE FROM META WHERE key NOT IN ('schema', 'clock', 'cprof_version', 'created_ns', 'wire_version', 'command', 'collector_pid', 'simulated_gpu')"
"$BIN/cprof" info killed.db > info.txt 2>&1 || fail "info failed: $(cat info.txt)"
grep -q "1 process(es), $calls CUDA API calls (" info.txt || fail "killed collector: counts not from the tables: $(cat info.txt)"
grep -q "collector did not finish" info.txt || fail "info does not say the collector did not finish: $(cat info.txt)"
echo OK
