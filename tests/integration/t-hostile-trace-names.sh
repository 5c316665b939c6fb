# Issue 32 item 4 (cprof fails to run): kernel names were not capped in the trace: a 100 KB name on every
# kernel made a trace of hundreds of MB (each name is written with its kernel and its launch). Names over
# 1 KiB are cut at a character boundary and say their length; the rest of the trace is unchanged.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
sim "$BIN/cprof-run" -q -o p.db -- "$WL/scenarios" steady 200 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
cp p.db long.db
# 100,000 bytes of a two-byte character: the cut must not split one
q long.db "UPDATE StringIds SET value = replace(hex(zeroblob(50000)), '00', char(233)) || 'end'
	WHERE id IN (SELECT nameId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT kernelNameId FROM CPROF_API)"
assert_ge "$(q long.db "SELECT max(length(CAST(value AS BLOB))) FROM StringIds")" 100000 "long names in place"
"$BIN/cprof" trace long.db -o long.json 2> err.txt || fail "trace: $(cat err.txt)"
"$BIN/cprof" trace p.db -o short.json 2> err.txt || fail "trace: $(cat err.txt)"
size=$(stat -c %s long.json)
base=$(stat -c %s short.json)
[ "$size" -lt $((base + 1500 * 800)) ] || fail "trace of 200 kernels with 100 KB names: $size bytes (short names: $base)"
"$PY" - long.json <<'PY' || fail "the trace does not parse, or a name is not cut as promised"
import json, sys
ev = json.load(open(sys.argv[1], encoding="utf-8"))["traceEvents"]
names = [e["name"] for e in ev if e.get("cat") == "kernel"]
assert len(names) >= 200, len(names)
for n in names:
    assert n.endswith("... (100003 bytes)"), n[-40:]
    assert len(n.encode()) <= 1024 + 48, len(n.encode())
    assert set(n[: -len("... (100003 bytes)")]) == {"\u00e9"}, "a character was split"
PY
echo OK
