# cprof trace on matmul_sweep (simulated GPU): a JSON document in Kineto's layout; every hooked launch and GEMM
# that reached a kernel has exactly one ac2g flow pair, from its own span to its own kernel; kernels carry
# correlation and stream; every ts/dur has exactly 3 decimals; nothing is lost or duplicated on the way.
. "$(dirname "$0")/lib.sh"
need_sim
sim "$BIN/cprof-run" -q -o prof.db -- "$WL/matmul_sweep" --sizes 64,256 --steps 10 --warmup 2 --variant both > out.txt \
	|| fail "matmul_sweep failed: $(cat out.txt)"
"$BIN/cprof" trace prof.db -o trace.json 2>err.txt || fail "export failed: $(cat err.txt)"
grep -qvE '^cprof trace: wrote [^ ]+ \([0-9]+ events, [0-9]+ (bytes|kB|MB)\)$' err.txt && fail "export printed: $(cat err.txt)"
grep -qE '^cprof trace: wrote [^ ]+ \([0-9]+ events' err.txt || fail "export did not say what it wrote: $(cat err.txt)"
assert_ge "$(q prof.db "SELECT count(*) FROM API_GPU WHERE gpuKind='kernel'")" 96 "hooked calls joined to kernels"

cat > check.py <<'EOF'
import collections, json, re, sqlite3, sys

db = sqlite3.connect(sys.argv[1])
raw = open(sys.argv[2], encoding="utf-8").read()
d = json.loads(raw)
bad = []
def check(cond, msg):
    if not cond:
        bad.append(msg)
def q(sql):
    return db.execute(sql).fetchall()
def us(ns):  # the exact text Kineto writes for a ns time
    return "%d.%03d" % (ns // 1000, ns % 1000)

# top level, as Kineto's ChromeTraceLogger writes it
check(d.get("schemaVersion") == 1, "schemaVersion")
check(isinstance(d.get("deviceProperties"), list), "deviceProperties")
di = d.get("distributedInfo", {})
check(di.get("rank") == 0 and di.get("world_size") == 1 and di.get("backend") == "nccl", "distributedInfo %r" % di)
check(re.search(r'"rank":\s+(\d+)', raw) and re.search(r'"rank":\s+(\d+)', raw).group(1) == "0", "HTA's rank regex")
check(d.get("displayTimeUnit") == "ms", "displayTimeUnit")
base = d.get("baseTimeNanoseconds")
first = min(r[0] for r in q("SELECT min(start) FROM CPROF_API UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"
                            " UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
                            " UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_OVERHEAD") if r[0] is not None)
check(isinstance(base, int) and base % 1000000000 == 0 and 0 <= first - base < 1000000000, "baseTimeNanoseconds %r" % base)
c = d.get("cprof", {})
check(c.get("simulated_gpu") is True and c.get("complete") is True and c.get("lost_events") == 0
      and "matmul_sweep" in c.get("command", ""), "cprof metadata %r" % c)

# every ts and dur: an integer part and exactly three decimals
times = re.findall(r'"(?:ts|dur)": ([^,}]*)[,}]', raw)
nt = sum(1 for e in d["traceEvents"] for k in ("ts", "dur") if k in e)
check(len(times) == nt and nt > 0, "found %d ts/dur texts for %d values" % (len(times), nt))
check(all(re.fullmatch(r"\d+\.\d{3}", t) for t in times), "ts/dur without exactly 3 decimals: %r"
      % [t for t in times if not re.fullmatch(r"\d+\.\d{3}", t)][:5])

ev = d["traceEvents"]
X = [e for e in ev if e["ph"] == "X"]
by_cat = collections.Counter(e["cat"] for e in X)
meta = {(e["name"], e["pid"], e["tid"]): e["args"] for e in ev if e["ph"] == "M"}
check(meta.get(("process_name", 0, 0), {}).get("name") == "GPU 0 (simulated)", "GPU process name %r" % meta.get(("process_name", 0, 0)))
check(meta.get(("thread_name", 0, 7), {}).get("name", "").strip() == "stream 7", "stream lane name")

# GPU ops: one event per CUPTI record, on lane pid=device tid=stream, with Kineto's args
kernels = [e for e in X if e["cat"] == "kernel"]
check(len(kernels) == q("SELECT count(*) FROM KERNELS")[0][0], "kernel events %d" % len(kernels))
for k in kernels:
    a = k.get("args", {})
    if not (isinstance(a.get("correlation"), int) and isinstance(a.get("stream"), int) and a["stream"] == k["tid"]
            and a.get("device") == k["pid"] and len(a.get("grid", [])) == 3 and len(a.get("block", [])) == 3):
        bad.append("kernel args %r" % k)
        break
check(by_cat["gpu_memcpy"] == q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")[0][0], "memcpy events")
check(by_cat["gpu_memset"] == q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET")[0][0], "memset events")
check(any(e["name"] == "Memcpy HtoD (Pageable -> Device)" for e in X), "Kineto memcpy name")
check(by_cat["overhead"] == q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_OVERHEAD")[0][0], "overhead events")

# CPU: every hooked call once; a CUPTI runtime record that is the CUPTI side of a hooked call (same API, or the
# launch a hooked cuBLAS call made) not a second time; the records no hook saw (cuBLAS's internal occupancy
# queries and cudaMalloc, cudaGetLastError) once each, under Kineto's name (no _vNNNN suffix)
def api(n):
    return re.sub(r"_v\d+$", "", n).lstrip("_").replace("_ptsz", "")
want = collections.Counter(r[0] for r in q("SELECT s.value FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"))
for name, hname, to_gpu in q(
        "SELECT s.value, hs.value, EXISTS(SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.processId = r.processId"
        "  AND k.correlationId = r.correlationId) OR EXISTS(SELECT 1 FROM CUPTI_ACTIVITY_KIND_MEMCPY m"
        "  WHERE m.processId = r.processId AND m.correlationId = r.correlationId) OR EXISTS(SELECT 1"
        "  FROM CUPTI_ACTIVITY_KIND_MEMSET m WHERE m.processId = r.processId AND m.correlationId = r.correlationId)"
        " FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
        " LEFT JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = r.processId"
        "  AND e.correlationId = r.correlationId AND e.externalKind = 5"
        " LEFT JOIN CPROF_API a ON a.processId = e.processId AND a.correlationId = e.externalId"
        " LEFT JOIN StringIds hs ON hs.id = a.nameId"):
    if hname is None or not (to_gpu or api(name) == api(hname)):
        want[re.sub(r"_v\d+$", "", name)] += 1
rt = collections.Counter(e["name"] for e in X if e["cat"] == "cuda_runtime")
check(rt == want, "cuda_runtime events differ: %r" % {k: (rt[k], want[k]) for k in set(rt) | set(want) if rt[k] != want[k]})
check(rt["cudaLaunchKernel"] == 0, "CUPTI duplicates of hooked launches: %d" % rt["cudaLaunchKernel"])
check(rt["cudaMemcpy"] == q("SELECT count(*) FROM MEMOPS WHERE class = 'memcpy'")[0][0], "cudaMemcpy once per call")
occ = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
        " WHERE s.value LIKE 'cudaOccupancy%'")[0][0]
check(occ >= 1 and rt["cudaOccupancyMaxActiveBlocksPerMultiprocessor"] == occ, "occupancy queries %d of %d"
      % (rt["cudaOccupancyMaxActiveBlocksPerMultiprocessor"], occ))

# flows: every s has one f and the reverse
s = collections.defaultdict(list)
f = collections.defaultdict(list)
for e in ev:
    if e["ph"] in "sf":
        check(e.get("cat") == "ac2g" and e.get("name") == "ac2g", "flow cat/name %r" % e)
        (s if e["ph"] == "s" else f)[e["id"]].append(e)
check(all(len(v) == 1 for v in s.values()) and all(len(v) == 1 for v in f.values()) and set(s) == set(f),
      "unpaired flows: %d s ids, %d f ids" % (len(s), len(f)))
check(all(e.get("bp") == "e" for v in f.values() for e in v), "f without bp e")

# each hooked launch/GEMM with a kernel: its span (found by its name and External id, our id of the call; the
# CUPTI records of calls made inside it share that id) carries a correlation C; one s with id C leaves that span (same lane, same ts) and one f with id C lands on its kernel
span = {(e["args"]["External id"], e["name"]): e for e in X if e["cat"] == "cuda_runtime" and "External id" in e.get("args", {})}
gpu = {(e["pid"], e["tid"], e["ts"], e["args"]["correlation"]) for e in kernels}
rows = q("SELECT a.correlationId, g.api, a.pid, a.tid, a.start, k.deviceId, k.streamId, k.start FROM API_GPU g"
         " JOIN CPROF_API a ON a.id = g.apiId JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.processId = g.processId"
         " AND k.correlationId = g.cuptiCorrelationId WHERE g.gpuKind = 'kernel'")
check(len(rows) == len({r[0] for r in rows}) and len(rows) >= 24, "one kernel per hooked call (%d rows)" % len(rows))
for ext, name, pid, tid, astart, dev, stream, kstart in rows:
    sp = span.get((ext, name))
    if sp is None:
        bad.append("no span for hooked call %d" % ext)
        continue
    corr = sp["args"]["correlation"]
    ss, ff = s.get(corr, []), f.get(corr, [])
    if len(ss) != 1 or len(ff) != 1:
        bad.append("correlation %d: %d s, %d f" % (corr, len(ss), len(ff)))
        continue
    ts_cpu, ts_gpu = float(us(astart - base)), float(us(kstart - base))
    if (ss[0]["pid"], ss[0]["tid"], ss[0]["ts"]) != (pid, tid, ts_cpu) or (sp["pid"], sp["tid"], sp["ts"]) != (pid, tid, ts_cpu):
        bad.append("correlation %d: s %r not on its call" % (corr, ss[0]))
    if (ff[0]["pid"], ff[0]["tid"], ff[0]["ts"]) != (dev, stream, ts_gpu) or (dev, stream, ts_gpu, corr) not in gpu:
        bad.append("correlation %d: f %r not on its kernel" % (corr, ff[0]))
    if len(bad) > 10:
        break
for b in bad[:10]:
    print("FAIL:", b, file=sys.stderr)
print("checked %d events, %d kernels, %d flow pairs" % (len(ev), len(kernels), len(s)))
sys.exit(1 if bad else 0)
EOF
python3 check.py prof.db trace.json || fail "trace checks failed"

# two CUDA processes in one profile: CUPTI counts correlation ids from 1 in each, and the trace still pairs
# every launch with its own kernel only
sim "$BIN/cprof-run" -q -o two.db -- /bin/sh -c "$WL/matmul_sweep --sizes 64 --steps 6 --warmup 1 --variant gemm && \
	$WL/matmul_sweep --sizes 64 --steps 6 --warmup 1 --variant bmm" > out2.txt || fail "two runs failed: $(cat out2.txt)"
assert_ge "$(q two.db "SELECT count(DISTINCT processId) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 2 "processes with kernels"
"$BIN/cprof" trace two.db -o two.json || fail "export of two processes failed"
python3 check.py two.db two.json || fail "trace checks failed for two processes"
echo ok
