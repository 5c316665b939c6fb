# Holistic Trace Analysis (PyPI HolisticTraceAnalysis) loads cprof's trace of matmul_sweep (simulated GPU) and
# its temporal breakdown's idle share agrees with cprof's within 1 percentage point.
# cprof's number: the key hta_idle_pct of `cprof report --format json` when the report has it; until then the
# same quantity computed here from the profile with SQL, as HTA defines it (hta/analyzers/breakdown_analysis.py,
# get_temporal_breakdown, HTA 0.5):
#   ops    every trace event whose args carry a GPU stream (kernel, gpu_memcpy, gpu_memset), all streams and
#          devices of the rank together;
#   times  ns-precision times rounded inward to whole microseconds first (hta/common/trace_parser.py,
#          round_down_time_stamps): start = ceil(ts), end = floor(ts + dur);
#   window first op start to last op end; busy = length of the union of the ops (touching intervals merge);
#   idle % = 100 * (window - busy) / window.
# The virtualenv is made once under $BUILD/venv-hta by tests/integration/setup-venvs (make check runs it).
. "$(dirname "$0")/lib.sh"
need_sim
need_venv "$BUILD/venv-hta"
V=$BUILD/venv-hta
sim "$BIN/cprof-run" -q -o prof.db -- "$WL/matmul_sweep" --sizes 256,1024 --steps 20 --warmup 2 --variant both > out.txt \
	|| fail "matmul_sweep failed: $(cat out.txt)"
mkdir traces
# HTA reads every *.json in the directory and takes the rank from '"rank": N' inside it
"$BIN/cprof" trace prof.db -o traces/rank-0.json || fail "export failed"

"$V/bin/python" - traces > hta.txt 2> hta.log <<'EOF' || fail "HTA failed: $(tail -5 hta.log)"
import sys
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
assert list(a.t.traces) == [0], "ranks %r" % list(a.t.traces)
df = a.get_temporal_breakdown(visualize=False)
r = df.iloc[0]
print("%.4f %d %d" % (100.0 * r["idle_time(us)"] / r["kernel_time(us)"], r["idle_time(us)"], r["kernel_time(us)"]))
EOF
read -r hta hta_idle hta_window < hta.txt
[ -n "$hta" ] || fail "no result from HTA: $(tail -5 hta.log)"

cprof=$("$BIN/cprof" report prof.db --format json 2>/dev/null \
	| python3 -c 'import json, sys; v = json.load(sys.stdin).get("hta_idle_pct"); print("" if v is None else v)' 2>/dev/null)
src="cprof report --format json: hta_idle_pct"
if [ -z "$cprof" ]; then
	src="SQL over the profile (cprof report has no hta_idle_pct yet)"
	base=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["baseTimeNanoseconds"])' traces/rank-0.json)
	cprof=$(q prof.db "
		WITH ops AS (
		  SELECT (start - $base + 999) / 1000 AS s, (end - $base) / 1000 AS e FROM CUPTI_ACTIVITY_KIND_KERNEL
		  UNION ALL SELECT (start - $base + 999) / 1000, (end - $base) / 1000 FROM CUPTI_ACTIVITY_KIND_MEMCPY
		  UNION ALL SELECT (start - $base + 999) / 1000, (end - $base) / 1000 FROM CUPTI_ACTIVITY_KIND_MEMSET),
		brk AS (SELECT s, e, CASE WHEN s > max(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
		        THEN 1 ELSE 0 END AS b FROM ops),
		grp AS (SELECT s, e, sum(b) OVER (ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS g FROM brk),
		merged AS (SELECT min(s) AS s, max(e) AS e FROM grp GROUP BY g),
		w AS (SELECT (SELECT e FROM merged ORDER BY s DESC LIMIT 1) - (SELECT s FROM merged ORDER BY s LIMIT 1) AS span)
		SELECT printf('%.4f', 100.0 * (span - (SELECT sum(e - s) FROM merged)) / span) FROM w")
fi
echo "HTA idle share: $hta % (idle $hta_idle us of $hta_window us); cprof: $cprof % ($src)"
awk -v a="$hta" -v b="$cprof" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && a < 100 && d <= 1.0) }' \
	|| fail "idle share: HTA $hta %, cprof $cprof % ($src)"
echo ok
