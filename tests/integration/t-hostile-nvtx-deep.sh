# Issue 21 item 4: 16 roots x 255 nested NVTX ranges with 4000-byte names (a 2.8 MB profile) made range
# paths grow quadratically with depth: report --format json wrote 2.1 GB with 2 GB of memory. A path now
# keeps at most 512 bytes of each name and 4096 bytes in all ("…" where it was cut), so output and memory
# stay linear in the input; the rows are still there, one per path.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > prog.py <<'PYEOF'
import ctypes
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
PYEOF
sim "$BIN/cprof-run" -q -o deep.db -- "$PY" prog.py > /dev/null 2>&1 || fail "cprof-run failed"
"$PY" - deep.db <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
proc, pid, t0 = db.execute("SELECT id, pid, startNs FROM PROCESSES LIMIT 1").fetchone()
sid = db.execute("INSERT INTO StringIds(value) VALUES (?)", ("n" * 3990 + "\u00e9\u00e9\u00e9\u00e9\u00e9",)).lastrowid
for root in range(16):
    parent = None
    for d in range(255):
        s = t0 + 1000 + root * 10**6 + d; e = t0 + 1000 + root * 10**6 + 10**5 - d
        parent = db.execute("INSERT INTO NVTX_EVENTS(processId,pid,tid,start,end,eventType,textId,depth,parentId)"
                            " VALUES (?,?,?,?,?,'range',?,?,?)", (proc, pid, pid, s, e, sid, d, parent)).lastrowid
db.commit()
PYEOF
[ $? -eq 0 ] || fail "could not build the deep profile"
"$BIN/cprof" report deep.db --format json --top 1000 --range-tree > r.json 2> err.txt || fail "report failed: $(cat err.txt)"
size=$(stat -c %s r.json)
[ "$size" -lt $((64 * 1024 * 1024)) ] || fail "report --format json wrote $size bytes for a $(stat -c %s deep.db)-byte profile"
"$PY" - r.json <<'PYEOF' || fail "the JSON report's ranges are wrong"
import json, sys
r = json.load(open(sys.argv[1]))["ranges"]
paths = [x["path"] for x in r]
assert len(paths) == 255, len(paths)          # one row per depth: the 16 roots share their paths
assert max(len(p.encode()) for p in paths) <= 4096, max(len(p.encode()) for p in paths)
assert sum(x["count"] for x in r) == 16 * 255
assert any("\u2026" in p for p in paths)      # cut where it was too long, said so
assert all(p.endswith("\u00e9") for p in paths)  # never inside a UTF-8 character: the tail is kept whole
PYEOF
"$BIN/cprof" report deep.db --by range --range-tree > r.txt 2> err.txt || fail "text report failed: $(cat err.txt)"
"$BIN/cprof" report deep.db --by range --range-tree --format csv > r.csv 2> err.txt || fail "csv report failed: $(cat err.txt)"
"$BIN/cprof" report deep.db --by range --format json > n.json 2> err.txt || fail "report by name failed: $(cat err.txt)"
[ "$(stat -c %s n.json)" -lt $((64 * 1024 * 1024)) ] || fail "by name: $(stat -c %s n.json) bytes"
[ "$(stat -c %s r.csv)" -lt $((16 * 1024 * 1024)) ] || fail "csv: $(stat -c %s r.csv) bytes"
echo OK
