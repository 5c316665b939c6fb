# Issue 21 item 7: times used in arithmetic are validated whatever the profile's size. A profile up to
# 16 MiB is checked whole when opened (NVTX_EVENTS included now: start = INT64_MIN overflowed in the range
# table and the trace); in a bigger one the event tables are checked row by row as they are read, and the
# small tables (processes, threads, NVTX) whole. A bad time is a damaged profile: one line naming the
# table, exit 2, never a negative CPU total or "run: 7427292357 s" with exit 0.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > prog.py <<'PYEOF'
import ctypes
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
g = ctypes.CDLL(None)
p = ctypes.c_void_p()
for _ in range(20):
    g.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
    g.cudaFree(p)
PYEOF
sim "$BIN/cprof-run" -q -o ok.db -- "$PY" prog.py > /dev/null 2>&1 || fail "cprof-run failed"
"$BIN/cprof" report ok.db > /dev/null || fail "the good profile is refused"

# every command that reads times refuses the profile in one line, exit 2
refused() { # $1: profile, $2: table named
	for cmd in report "report --by range" "report --format json" "trace -o t.json -f" "html -o r.html -f" check; do
		# shellcheck disable=SC2086
		"$BIN/cprof" $cmd "$1" > out.txt 2> err.txt
		rc=$?
		[ "$cmd" = check ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && rc=2 # check: a gate failure is 1, not this
		[ "$cmd" = check ] && [ "$rc" -eq 1 ] && fail "cprof check $1 judged a damaged profile"
		[ "$rc" -ne 0 ] || fail "cprof $cmd $1 accepted a time out of range: $(head -c 300 out.txt)"
		grep -q "$2 has values out of range" err.txt || fail "cprof $cmd $1 did not name $2: $(cat err.txt)"
		grep -q "CPU total -\|run: [0-9]\{7,\}" out.txt && fail "cprof $cmd $1 printed overflowed times"
	done
	return 0
}
nvtx_row() { # $1 profile, $2 start
	q "$1" "INSERT INTO NVTX_EVENTS(processId, pid, tid, start, end, eventType, textId, depth)
	        VALUES (1, 1, 1, $2, 0, 'range', (SELECT min(id) FROM StringIds), 0)"
}
cp ok.db small-nvtx.db
nvtx_row small-nvtx.db -9223372036854775808
refused small-nvtx.db NVTX_EVENTS

# past 16 MiB: a blob in a table cprof does not read pads the file
pad() { q "$1" "CREATE TABLE pad(b BLOB); INSERT INTO pad VALUES (zeroblob(17 * 1024 * 1024))"; }
cp ok.db big-api.db
pad big-api.db
q big-api.db "UPDATE CPROF_API SET start = -4611686018427387904 WHERE id = (SELECT min(id) FROM CPROF_API)"
[ "$(stat -c %s big-api.db)" -gt $((16 * 1024 * 1024)) ] || fail "the padded profile is not past 16 MiB"
refused big-api.db CPROF_API
cp ok.db big-nvtx.db
pad big-nvtx.db
nvtx_row big-nvtx.db -4611686018427387904
refused big-nvtx.db NVTX_EVENTS
# and a big profile with good times is still read
cp ok.db big-ok.db
pad big-ok.db
"$BIN/cprof" report big-ok.db > /dev/null 2> err.txt || fail "a padded good profile is refused: $(cat err.txt)"
echo OK
