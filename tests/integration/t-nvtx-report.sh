# Issue 11: NVTX ranges in `cprof report --by range` (JSON, CSV, text) and in the trace (user_annotation spans on
# their thread, gpu_user_annotation spans on the GPU lanes, named thread and stream lanes), checked against SQL
# written here independently of cprof: exact counts, nesting, the calls inside each range, and GPU time landing in
# the range that launched it (nvtx_demo's forward ranges launch only forward(), its backward ranges only backward()).
. "$(dirname "$0")/lib.sh"
need_sim
[ -x "$WL/nvtx_demo" ] || fail "$WL/nvtx_demo not built"
N=10
sim "$BIN/cprof-run" -q -o prof.db -- "$WL/nvtx_demo" steps $N > out.txt 2>err.txt || fail "run failed: $(cat err.txt)"
"$BIN/cprof" report prof.db --by range --range-tree --format json > r.json 2>err.txt || fail "report json: $(cat err.txt)"
"$BIN/cprof" report prof.db --by range --range-tree --format csv > r.csv 2>err.txt || fail "report csv: $(cat err.txt)"
"$BIN/cprof" report prof.db --by range --range-tree > r.txt 2>err.txt || fail "report text: $(cat err.txt)"
"$BIN/cprof" report prof.db --top 2 > all.txt 2>err.txt || fail "report: $(cat err.txt)"
"$BIN/cprof" trace -q prof.db -o trace.json 2>err.txt || fail "trace: $(cat err.txt)"
[ -s err.txt ] && fail "trace printed: $(cat err.txt)"

cat > check.py <<'EOF'
import collections, csv, json, sqlite3, sys

N = int(sys.argv[1])
db = sqlite3.connect("prof.db")
bad = []
def check(cond, msg):
    if not cond:
        bad.append(msg)
def q(sql, *a):
    return db.execute(sql, a).fetchall()

# ---- the report's table, JSON ----
rep = json.load(open("r.json"))
rows = {(r["path"], r["type"]): r for r in rep["ranges"]}
check(len(rows) == len(rep["ranges"]) == 6, "range rows: %r" % sorted(rows))
want_counts = {("step", "range"): N, ("step/forward", "range"): N, ("step/backward", "range"): N,
               ("demo.io:load batch", "range"): 1, ("wide \u00fcn\u00efcode \u2713", "range"): 1,
               ("async io", "startend"): 1}
check({k: r["count"] for k, r in rows.items()} == want_counts, "counts %r" % {k: r["count"] for k, r in rows.items()})
check(rep["nvtx"] == {"ranges": 3 * N + 3, "open_ranges": 0, "marks": 1}, "nvtx summary %r" % rep["nvtx"])
check([r["path"] for r in rep["ranges"][:3]] == ["step", "step/forward", "step/backward"],
      "ordered by GPU time: %r" % [r["path"] for r in rep["ranges"]])

# SQL of its own: a range's path from its parent's text, the calls that start inside it on its thread
ranges = "(SELECT e.*, coalesce(pt.value || '/', '') || t.value AS path FROM NVTX_EVENTS e" \
         " JOIN StringIds t ON t.id = e.textId LEFT JOIN NVTX_EVENTS p ON p.id = e.parentId" \
         " LEFT JOIN StringIds pt ON pt.id = p.textId WHERE e.eventType != 'mark')"
inside = ranges + " r JOIN CPROF_API a ON a.processId = r.processId AND a.tid = r.tid" \
         " AND a.start >= r.start AND a.start <= r.end"
for path in ("step", "step/forward", "step/backward"):
    r = rows[(path, "range")]
    cnt, cpu, mn, mx = q("SELECT count(*), sum(end - start), min(end - start), max(end - start) FROM " + ranges
                         + " WHERE path = ?", path)[0]
    check((r["count"], r["cpu_ns"], r["min_ns"], r["max_ns"]) == (cnt, cpu, mn, mx),
          "%s: count/cpu/min/max %r vs SQL %r" % (path, (r["count"], r["cpu_ns"], r["min_ns"], r["max_ns"]),
                                                  (cnt, cpu, mn, mx)))
    calls, api = q("SELECT count(*), coalesce(sum(a.end - a.start), 0) FROM " + inside
                   + " WHERE r.path = ? AND a.nested = 0", path)[0]
    check((r["calls"], r["api_ns"]) == (calls, api), "%s: calls/api %r vs SQL %r" % (path, (r["calls"], r["api_ns"]),
                                                                                    (calls, api)))
    gpu, ops = q("SELECT coalesce(sum(g.end - g.start), 0), count(g.apiId) FROM " + inside
                 + " JOIN API_GPU g ON g.apiId = a.id WHERE r.path = ?", path)[0]
    check((r["gpu_ns"], r["gpu_ops"]) == (gpu, ops), "%s: gpu %r vs SQL %r" % (path, (r["gpu_ns"], r["gpu_ops"]),
                                                                               (gpu, ops)))
# forward ranges launch 3 forward() per step (4 more in the cold first), backward ranges 2 backward(): the GPU time
# of each is exactly the time of its kernels, found by kernel name, not by time
kern = dict(q("SELECT CASE WHEN name LIKE 'forward%' OR name LIKE '_Z7forward%' THEN 'f' ELSE 'b' END,"
              " sum(end - start) FROM KERNELS GROUP BY 1"))
check(rows[("step/forward", "range")]["gpu_ns"] == kern["f"] and rows[("step/forward", "range")]["gpu_ops"] == 3 * N + 4,
      "forward GPU time %r vs its kernels %r" % (rows[("step/forward", "range")]["gpu_ns"], kern))
check(rows[("step/backward", "range")]["gpu_ns"] == kern["b"] and rows[("step/backward", "range")]["gpu_ops"] == 2 * N,
      "backward GPU time %r vs its kernels %r" % (rows[("step/backward", "range")]["gpu_ns"], kern))
check(rows[("step", "range")]["gpu_ns"] == kern["f"] + kern["b"], "step GPU time = forward + backward")
check(rows[("step", "range")]["calls"] > rows[("step/forward", "range")]["calls"] + rows[("step/backward", "range")]["calls"],
      "a step holds its children's calls and its own (the stream sync)")
# Self CPU: a step minus its forward and backward
st = rows[("step", "range")]
child = q("SELECT sum(c.end - c.start) FROM NVTX_EVENTS c JOIN NVTX_EVENTS p ON p.id = c.parentId"
          " JOIN StringIds t ON t.id = p.textId WHERE t.value = 'step'")[0][0]
check(st["self_cpu_ns"] == st["cpu_ns"] - child, "step self CPU %r vs %r" % (st["self_cpu_ns"], st["cpu_ns"] - child))
check(rows[("step/forward", "range")]["self_cpu_ns"] == rows[("step/forward", "range")]["cpu_ns"], "leaf self = total")
# nothing is launched in the domain range, the wide one or the start/end one
for k in (("demo.io:load batch", "range"), ("async io", "startend")):
    check(rows[k]["calls"] == 0 and rows[k]["gpu_ns"] == 0, "%r: %r" % (k, rows[k]))

# ---- CSV: the same rows ----
cs = list(csv.DictReader(open("r.csv", encoding="utf-8")))
check({(r["path"], r["type"]): (int(r["count"]), int(r["calls"]), int(r["gpu_ns"]), int(r["self_cpu_ns"])) for r in cs}
      == {k: (r["count"], r["calls"], r["gpu_ns"], r["self_cpu_ns"]) for k, r in rows.items()}, "CSV differs from JSON")

# ---- text ----
txt = open("r.txt", encoding="utf-8").read().splitlines()
line = {l.split()[0]: l.split() for l in txt if l.startswith(" step")}
check(set(line) == {"step", "step/forward", "step/backward"}, "text rows %r" % sorted(line))
check(all(line[p][1] == str(N) for p in line), "text counts %r" % {p: line[p][1] for p in line})
check(line.get("step/forward", [""] * 12)[-1] == str(3 * N + 4), "text GPU ops of step/forward")
check(any(l.startswith(" async io~") for l in txt), "start/end range marked in text")
check(any(l.strip() == "%d ranges, 1 mark; ~ start/end range (nvtxRangeStart/End: not nested)" % (3 * N + 3) for l in txt),
      "text summary line")
alltxt = open("all.txt", encoding="utf-8").read()
check("\nNVTX ranges by name" in alltxt and " (4 more; --top 0 shows all)" in alltxt, "ranges (top 2, by name) in the default report")

# ---- trace ----
d = json.load(open("trace.json", encoding="utf-8"))
ev = d["traceEvents"]
ua = [e for e in ev if e.get("cat") == "user_annotation" and e["ph"] == "X"]
marks = [e for e in ev if e.get("cat") == "user_annotation" and e["ph"] == "i"]
gua = [e for e in ev if e.get("cat") == "gpu_user_annotation"]
def ns(us):  # the trace's times are us with three decimals
    return round(us * 1000)
check(collections.Counter(e["name"] for e in ua) == collections.Counter(
      {"step": N, "forward": N, "backward": N, "load batch": 1, "wide \u00fcn\u00efcode \u2713": 1, "async io": 1}),
      "user_annotation spans %r" % collections.Counter(e["name"] for e in ua))
check(len(marks) == 1 and marks[0]["name"] == "checkpoint" and marks[0].get("s") == "t", "mark %r" % marks)
pid, tid = q("SELECT p.pid, e.tid FROM NVTX_EVENTS e JOIN PROCESSES p ON p.id = e.processId LIMIT 1")[0]
check(all((e["pid"], e["tid"]) == (pid, tid) for e in ua + marks), "annotations on the main thread's lane")
base = d["baseTimeNanoseconds"]
by_id = {e["args"]["External id"]: e for e in ua}
db_rows = q("SELECT id, start, end, parentId FROM NVTX_EVENTS WHERE eventType != 'mark'")
check(set(by_id) == {r[0] for r in db_rows}, "one span per range, External id = its id")
for i, s, e, parent in db_rows:
    sp = by_id.get(i)
    if sp is None:
        continue
    if ns(sp["ts"]) != s - base or ns(sp["dur"]) != e - s:
        bad.append("span %d times %r vs %r" % (i, (sp["ts"], sp["dur"]), (s - base, e - s)))
    if parent is not None:
        pa = by_id[parent]
        if not ((pa["pid"], pa["tid"]) == (sp["pid"], sp["tid"]) and pa["ts"] <= sp["ts"]
                and ns(sp["ts"]) + ns(sp["dur"]) <= ns(pa["ts"]) + ns(pa["dur"]) and pa["name"] == "step"):
            bad.append("span %d not inside its parent %d" % (i, parent))
nested = sum(1 for r in db_rows if r[3] is not None)
check(nested == 2 * N, "forward and backward have parents: %d" % nested)

# gpu_user_annotation: one per range per stream, from the first to the last GPU op its calls launched
gl = q("SELECT r.id, k.deviceId, k.streamId, min(k.start), max(k.end) FROM NVTX_EVENTS r JOIN CPROF_API a"
       " ON a.processId = r.processId AND a.tid = r.tid AND a.start >= r.start AND a.start <= r.end"
       " JOIN API_GPU g ON g.apiId = a.id JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION x"
       " ON x.processId = a.processId AND x.externalKind = 5 AND x.externalId = a.correlationId"
       " JOIN GPU_OPS k ON k.processId = x.processId AND k.correlationId = x.correlationId"
       " WHERE r.eventType != 'mark' GROUP BY 1, 2, 3")
got = {(e["args"]["External id"], e["pid"], e["tid"]): (ns(e["ts"]) + base, ns(e["ts"]) + ns(e["dur"]) + base) for e in gua}
check(got == {(r[0], r[1], r[2]): (r[3], r[4]) for r in gl}, "gpu_user_annotation spans differ from SQL (%d vs %d)"
      % (len(got), len(gl)))
check(collections.Counter(e["name"] for e in gua) == collections.Counter({"step": N, "forward": N, "backward": N}),
      "gpu_user_annotation names %r" % collections.Counter(e["name"] for e in gua))
# every kernel sits in a GPU span of its own range's name, on its own lane, and in no span of the other
for k in (e for e in ev if e.get("cat") == "kernel"):
    kind = "forward" if k["name"].startswith("forward") else "backward"
    other = "backward" if kind == "forward" else "forward"
    ks, ke = ns(k["ts"]), ns(k["ts"]) + ns(k["dur"])
    def holds(g):
        return (g["pid"], g["tid"]) == (k["pid"], k["tid"]) and ns(g["ts"]) <= ks and ke <= ns(g["ts"]) + ns(g["dur"])
    if not any(holds(g) for g in gua if g["name"] == kind) or any(holds(g) for g in gua if g["name"] == other):
        bad.append("kernel %s at %s not in its own range's GPU span" % (k["name"], k["ts"]))
        break

# named lanes
meta = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
check(meta.get((pid, tid)) == "main thread", "main thread lane %r" % meta.get((pid, tid)))
streams = q("SELECT DISTINCT deviceId, streamId FROM KERNELS")
check(len(streams) == 1 and meta.get(streams[0]) == "stream %d compute stream" % streams[0][1],
      "compute stream lane %r" % [meta.get(s) for s in streams])
check(sum("compute stream" in v for v in meta.values()) == 1, "only one lane named compute stream")
if bad:
    print("\n".join(bad[:10]))
    sys.exit(1)
EOF
python3 check.py $N || fail "checks above"

# a range never ended (here: the last step, made so) counts up to the end of its process, in the report and the trace
cp prof.db open.db
q open.db "UPDATE NVTX_EVENTS SET end = NULL WHERE id = (SELECT max(e.id) FROM NVTX_EVENTS e JOIN StringIds t
	ON t.id = e.textId WHERE t.value = 'step')" > /dev/null
pend=$(q open.db "SELECT max(coalesce(p.endNs, 0), (SELECT max(end) FROM CPROF_API), (SELECT max(coalesce(end, start))
	FROM NVTX_EVENTS)) FROM PROCESSES p")
want=$(q open.db "SELECT sum(coalesce(e.end, $pend) - e.start) FROM NVTX_EVENTS e JOIN StringIds t ON t.id = e.textId
	WHERE t.value = 'step'")
dur=$(q open.db "SELECT $pend - start FROM NVTX_EVENTS WHERE end IS NULL")
"$BIN/cprof" report open.db --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
step = [r for r in d["ranges"] if r["path"] == "step"][0]
assert d["nvtx"]["open_ranges"] == 1 and step["count"] == int(sys.argv[1]) and step["cpu_ns"] == int(sys.argv[2]), (d["nvtx"], step)
' $N "$want" || fail "open range in the report (want the steps to sum to $want ns)"
"$BIN/cprof" trace open.db -o open.json || fail "trace of the open range"
python3 -c '
import json, sys
ev = [e for e in json.load(open("open.json"))["traceEvents"] if e.get("cat") == "user_annotation" and e["args"].get("never ended")]
assert len(ev) == 1 and ev[0]["name"] == "step" and round(ev[0]["dur"] * 1000) == int(sys.argv[1]), ev
' "$dur" || fail "open range in the trace"

# --per-rank keeps the annotations of the rank's processes
cp prof.db ranked.db
q ranked.db "UPDATE PROCESSES SET rank = 0, worldSize = 1" > /dev/null
"$BIN/cprof" trace ranked.db --per-rank ranks || fail "--per-rank"
assert_eq "$(python3 -c '
import json
ev = json.load(open("ranks/rank-0.json"))["traceEvents"]
print(sum(e.get("cat") == "user_annotation" for e in ev), sum(e.get("cat") == "gpu_user_annotation" for e in ev))')" \
	"$((3 * N + 4)) $((3 * N))" "per-rank annotations"

# a profile from before NVTX (no NVTX_EVENTS, no CPROF_NAMES) reports and exports as before
cp prof.db old.db
q old.db "DROP TABLE NVTX_EVENTS; DROP TABLE CPROF_NAMES" > /dev/null
assert_eq "$("$BIN/cprof" report old.db --format json | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["ranges"], d["nvtx"]["ranges"])')" \
	"[] 0" "old profile: no ranges"
"$BIN/cprof" report old.db --by range > old.txt || fail "old profile --by range"
grep -q "no NVTX range in this profile" old.txt || fail "old profile --by range text: $(tail -3 old.txt)"
"$BIN/cprof" trace old.db -o old.json 2>err.txt || fail "old profile trace: $(cat err.txt)"
assert_eq "$(grep -c user_annotation old.json)" 0 "old profile: no annotations in the trace"

# Holistic Trace Analysis (when t-trace-hta.sh has made its virtualenv) puts each kernel under its own range
if [ -f "$BUILD/venv-hta/.cprof-ready" ]; then
	mkdir hta && cp trace.json hta/rank-0.json
	"$BUILD/venv-hta/bin/python" - hta > hta.txt 2> hta.log <<'EOF' || fail "HTA: $(tail -5 hta.log)"
import sys
from hta.trace_analysis import TraceAnalysis
k = TraceAnalysis(trace_dir=sys.argv[1]).get_gpu_kernels_with_user_annotations(rank=0, expand_names=True)
k = k[k["s_name"].str.startswith("forward") | k["s_name"].str.startswith("backward")]
# HTA rounds times inward to whole microseconds: a kernel shorter than that can come out with no length
# and under no annotation (seen once in three CI runs). Those are HTA's to place, not ours; the rest must
# all sit under their own range, and almost all kernels are longer than a microsecond.
z = int((k["dur"] <= 0).sum())
assert z <= 3, z
k = k[k["dur"] > 0]
print(len(k) + z, int((k["s_name"].str.split("(").str[0] == k["s_user_annotation"]).sum()) + z)
EOF
	assert_eq "$(cat hta.txt)" "$((5 * N + 4)) $((5 * N + 4))" "HTA: kernels under their own range"
fi
echo ok
