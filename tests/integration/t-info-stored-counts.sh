# Issue 32 item 5 (scale): cprof-run's closing summary (cprof info) took 332 s and 2 GB on a 28.6M-record
# profile, loading every row for its call totals. cprofd now counts them as the rows go in and stores them at
# the finish (META calls_by_program, calls_inside_libraries, calls_seen_only_by_cupti) where it can count
# them exactly; cprof info then reads no row of the big tables (checked with CPROF_SQL_TRACE, which prints
# every statement cprof runs), and its totals are the report's. Where cprofd cannot (CUPTI's driver-API
# records: driver_launch), it stores none and info counts from the rows as before. Simulated GPU.
. "$(dirname "$0")/lib.sh"
need_sim
split() { "$BIN/cprof" report "$1" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin)["calls"]
print("%d CUDA API calls (%d by the program, %d inside libraries, %d seen only by CUPTI)" % (d["total"], d["by_program"], d["inside_libraries"], d["seen_only_by_cupti"]))'; }
# the statements cprof info ran that read a table of rows (hooked calls, CUPTI's records, NVTX)
row_reads() { CPROF_SQL_TRACE=1 "$BIN/cprof" info "$1" 2>&1 >/dev/null | grep '^sql' | grep -E 'CPROF_API|CUPTI_ACTIVITY_KIND_|NVTX_EVENTS'; }
same_as_report() {
	local want
	want=$(split "$1") || fail "$1: report"
	"$BIN/cprof" info "$1" > info.txt || fail "$1: info failed"
	grep -qF "process(es), $want," info.txt || fail "$1: info says $(grep 'process(es)' info.txt), report $want"
}

# one thread, four threads, NVTX, CUDA graphs (calls only CUPTI saw) and cuBLAS (the runtime calls it makes
# are shown inside it)
sim "$BIN/cprof-run" -q -o one.db -- "$WL/scenarios" rate 3000 > /dev/null 2>&1 || fail "rate"
sim "$BIN/cprof-run" -q -o four.db -- "$WL/scenarios" threads 4 > /dev/null 2>&1 || fail "threads"
sim "$BIN/cprof-run" -q -o nvtx.db -- "$WL/nvtx_demo" steps 10 > /dev/null 2>&1 || fail "nvtx_demo"
sim "$BIN/cprof-run" -q -o graph.db -- "$WL/sample_graph" > /dev/null 2>&1 || fail "sample_graph"
sim "$BIN/cprof-run" -q -o blas.db -- "$WL/matmul_sweep" --sizes 64,256 --steps 10 > /dev/null 2>&1 || fail "matmul_sweep"
for p in one four nvtx graph blas; do
	assert_eq "$(q $p.db "SELECT count(*) FROM META WHERE key IN ('calls_by_program', 'calls_inside_libraries', 'calls_seen_only_by_cupti')")" 3 "$p: stored totals"
	same_as_report $p.db
	reads=$(row_reads $p.db)
	[ -z "$reads" ] || fail "$p: cprof info read the rows: $(echo "$reads" | head -3)"
done
[ "$(q graph.db "SELECT value FROM META WHERE key = 'calls_seen_only_by_cupti'")" -gt 0 ] || fail "graph: no call seen only by CUPTI"
[ "$(q blas.db "SELECT value FROM META WHERE key = 'calls_inside_libraries'")" -gt 0 ] || fail "cuBLAS: no call inside a library"
# cprof-run's own summary is that line too
sim "$BIN/cprof-run" -o run.db -- "$WL/scenarios" rate 1000 > /dev/null 2> run.txt || fail "rate, summary"
grep -qF "process(es), $(split run.db)," run.txt || fail "cprof-run's summary: $(grep 'process(es)' run.txt)"

# the driver API's records: the report keeps those outside every hooked call, a join by thread and time
# cprofd does not make: no stored totals, info counts the rows
sim "$BIN/cprof-run" -q -o drv.db -- "$WL/driver_launch" > /dev/null 2>&1 || fail "driver_launch"
assert_eq "$(q drv.db "SELECT count(*) FROM META WHERE key LIKE 'calls\_%' ESCAPE '\\'")" 0 "driver API: stored totals"
same_as_report drv.db
[ -n "$(row_reads drv.db)" ] || fail "driver API: info did not count the rows"

# merged profiles: the totals add up when every part has them, and are dropped when one part has none
"$BIN/cprof" merge one.db four.db -o m1.db 2> /dev/null || fail "merge one four"
assert_eq "$(q m1.db "SELECT value FROM META WHERE key = 'calls_by_program'")" \
	"$(( $(q one.db "SELECT value FROM META WHERE key = 'calls_by_program'") + $(q four.db "SELECT value FROM META WHERE key = 'calls_by_program'") ))" "merged totals"
same_as_report m1.db
"$BIN/cprof" merge one.db drv.db -o m2.db 2> /dev/null || fail "merge one drv"
assert_eq "$(q m2.db "SELECT count(*) FROM META WHERE key LIKE 'calls\_%' ESCAPE '\\'")" 0 "merged with a part without totals"
same_as_report m2.db
echo OK
