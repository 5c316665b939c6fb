# Issue 21 item 11: cprof trace --per-rank wrote 4096 files for 5001 ranks, exit 0, without a word, and
# ran the profile's whole-file checks again for every rank. Now every rank gets its file, and the checks
# run once per process for an unchanged file. Slow: each rank's export still reads the profile (about
# 18 ms of CPU per rank, 5 min for 5001 ranks at load 8), so it runs only when asked.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
[ "${CPROF_SLOW_TESTS:-0}" = 1 ] || skip "5001 ranks take about 5 minutes (each rank's export reads the profile); CPROF_SLOW_TESTS=1 runs it"
need_sim
cat > prog.py <<'PYEOF'
import ctypes
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
PYEOF
RANK=0 WORLD_SIZE=1 sim "$BIN/cprof-run" -q -o r.db -- "$PY" prog.py > /dev/null 2>&1 || fail "cprof-run failed"
assert_eq "$(q r.db "SELECT count(*) FROM PROCESSES WHERE rank = 0")" 1 "the run's process has rank 0"
# 5000 more processes, one per rank, each with the first one's calls
q r.db "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
        INSERT INTO PROCESSES(pid, ppid, host, exe, argv, rank, localRank, worldSize, startNs, endNs, clock, byeReason)
        SELECT 100000 + i, 1, host, exe, argv, i, 0, 5001, startNs, endNs, clock, byeReason FROM PROCESSES, n WHERE rank = 0"
assert_eq "$(q r.db "SELECT count(DISTINCT rank) FROM PROCESSES")" 5001 "ranks"
"$BIN/cprof" trace r.db --per-rank out > o.txt 2> err.txt || fail "trace --per-rank failed: $(cat err.txt)"
assert_eq "$(find out -name 'rank-*.json' | wc -l)" 5001 "one file per rank"
[ -s out/rank-5000.json ] || fail "the last rank's file is missing"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["distributedInfo"]["rank"] == 4999, d["distributedInfo"]' \
	out/rank-4999.json || fail "rank-4999.json is not rank 4999's trace"
echo OK
