# Device queries that make no GPU work (cudaGetDevice) are only counted by the hook once CUPTI is on, and
# CUPTI makes no record of them (cprof switches them off, as Kineto does): no event in the rings, no CUPTI
# record, the count in CPROF_API_COUNTS and the report's counted_calls. Without CUPTI they are hooked calls.
. "$(dirname "$0")/lib.sh"
need_sim
N=5000
out=$(sim "$BIN/cprof-run" -o on.db -- "$WL/scenarios" queries $N 2> err.txt) || fail "run failed: $out $(cat err.txt)"
assert_eq "$out" "queries $N settings $((N / 10)) errors 3" "stdout with CUPTI"
hooked=$(q on.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaGetDevice'")
cupti=$(q on.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaGetDevice\_v%' ESCAPE '\\'")
echo "with CUPTI: hooked $hooked, CUPTI records $cupti"
# the first query brings the driver and CUPTI up inside its hook: a hooked call (CUPTI's record of it, made
# before the switch, carries our external id); every later one is counted
[ "$hooked" -le 1 ] || fail "queries recorded by the hook once CUPTI is on: got $hooked, want <= 1"
[ "$cupti" -le 1 ] || fail "CUPTI recorded $cupti of the queries: cprof did not switch their records off"
counted=$(q on.db "SELECT max(c.calls) FROM CPROF_API_COUNTS c JOIN StringIds s ON s.id = c.nameId WHERE s.value = 'cudaGetDevice'")
# the main thread's N and a thread's N/10, which made no other CUDA call
assert_eq "$((counted + hooked))" "$((N + N / 10))" "counted + hooked queries"
"$BIN/cprof" report on.db --format json > on.json || fail "report failed"
n=$(python3 -c 'import json,sys; d=json.load(open("on.json")); print(sum(a["calls"] for a in d["counted_calls"] if a["name"] == "cudaGetDevice"))')
assert_eq "$n" "$counted" "the report's counted cudaGetDevice calls"
"$BIN/cprof" report on.db > on.txt || fail "report failed"
grep -q "counted, not timed .*cudaGetDevice $counted" on.txt || fail "the text report does not show the count: $(grep -i counted on.txt)"
# cuBLAS's handle settings make no GPU work: counted, never recorded, with or without CUPTI
settings() { # DB: the hook events of the settings that succeeded and the counts of the three, one line
	for s in cublasSetStream_v2 cublasSetMathMode cublasSetWorkspace_v2; do
		printf '%s %s %s ' "$s" "$(q "$1" "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = '$s' AND a.returnValue = 0")" \
			"$(q "$1" "SELECT max(c.calls) FROM CPROF_API_COUNTS c JOIN StringIds s ON s.id = c.nameId WHERE s.value = '$s'")"
	done
}
want="cublasSetStream_v2 0 $((N / 10 + 1)) cublasSetMathMode 0 $((N / 10)) cublasSetWorkspace_v2 0 $((N / 10)) "
assert_eq "$(settings on.db)" "$want" "cuBLAS settings with CUPTI (name, hook events, counted)"
# the error checks: counted, no CUPTI record, and the one that reported an error recorded with its code
errors() { # DB: counted cudaGetLastError, its hook events, their codes, CUPTI's records of it
	printf '%s %s %s %s' "$(q "$1" "SELECT max(c.calls) FROM CPROF_API_COUNTS c JOIN StringIds s ON s.id = c.nameId WHERE s.value = 'cudaGetLastError'")" \
		"$(q "$1" "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaGetLastError'")" \
		"$(q "$1" "SELECT group_concat(a.returnValue) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaGetLastError'")" \
		"$(q "$1" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaGetLastError%'")"
}
assert_eq "$(errors on.db)" "$((N / 10)) 1 9 0" "error checks with CUPTI (counted, recorded, their codes, CUPTI records)"
# a query and a cuBLAS setting that failed: recorded with their codes (101: no such device; 1: no handle)
failed() { # DB: name=code of each failed counted call the hooks recorded
	q "$1" "SELECT group_concat(x, ' ') FROM (SELECT s.value || '=' || a.returnValue AS x FROM CPROF_API a
		JOIN StringIds s ON s.id = a.nameId WHERE s.value IN ('cudaDeviceGetAttribute', 'cublasSetStream_v2')
		AND a.returnValue != 0 ORDER BY s.value)"
}
assert_eq "$(failed on.db)" "cublasSetStream_v2=1 cudaDeviceGetAttribute=101" "failed counted calls with CUPTI"
# a crash after the queries: the counts reach the profile without the exit's last COST
sim "$BIN/cprof-run" -o crash.db -- "$WL/scenarios" queries $N segv > crash.out 2> crash.err
assert_eq "$(head -1 crash.out)" "queries $N settings $((N / 10)) errors 3" "stdout of the crashing run"
assert_eq "$(q crash.db "SELECT count(*) FROM CPROF_CRASH")" 1 "the crash recorded"
c=$(q crash.db "SELECT max(c.calls) FROM CPROF_API_COUNTS c JOIN StringIds s ON s.id = c.nameId WHERE s.value = 'cudaGetDevice'")
h=$(q crash.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaGetDevice'")
assert_eq "$((c + h))" "$((N + N / 10))" "counted + hooked queries of the crashing run"
out=$(CPROF_NO_CUPTI=1 sim "$BIN/cprof-run" -o off.db -- "$WL/scenarios" queries $N 2> err.txt) || fail "run failed: $out $(cat err.txt)"
assert_eq "$(q off.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaGetDevice'")" \
	"$((N + N / 10))" "without CUPTI every query is a hooked call (the thread's too)"
assert_eq "$(failed off.db)" "cublasSetStream_v2=1 cudaDeviceGetAttribute=101" "failed calls without CUPTI"
assert_eq "$(settings off.db)" "$want" "cuBLAS settings without CUPTI (name, hook events, counted)"
assert_eq "$(errors off.db)" "$((N / 10)) 1 9 0" "error checks without CUPTI (counted, recorded, their codes, CUPTI records)"
echo ok
