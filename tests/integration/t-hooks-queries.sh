# Device queries that make no GPU work (cudaGetDevice) pass straight through the hook once CUPTI is on:
# CUPTI's runtime records carry them (count, thread, time), so the profile has them once each, and the
# rings and the flusher carry none. Without CUPTI they are hooked calls as before.
. "$(dirname "$0")/lib.sh"
need_sim
N=5000
out=$(sim "$BIN/cprof-run" -o on.db -- "$WL/scenarios" queries $N 2> err.txt) || fail "run failed: $out $(cat err.txt)"
assert_eq "$out" "queries $N" "stdout with CUPTI"
hooked=$(q on.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaGetDevice'")
cupti=$(q on.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaGetDevice\_v%' ESCAPE '\\'")
echo "with CUPTI: hooked $hooked, CUPTI records $cupti"
# the first query brings the driver and CUPTI up inside its hook: a hooked call, and CUPTI's record of it
# carries our external id, so the report counts it once
[ "$hooked" -le 1 ] || fail "queries recorded by the hook once CUPTI is on: got $hooked, want <= 1"
assert_eq "$cupti" "$N" "CUPTI's runtime records of the queries"
"$BIN/cprof" report on.db --format json > on.json || fail "report failed"
n=$(python3 -c 'import json,sys; d=json.load(open("on.json")); print(sum(a["calls"] for a in d["apis"] if a["name"] == "cudaGetDevice"))')
assert_eq "$n" "$N" "the report's cudaGetDevice calls"
out=$(CPROF_NO_CUPTI=1 sim "$BIN/cprof-run" -o off.db -- "$WL/scenarios" queries $N 2> err.txt) || fail "run failed: $out $(cat err.txt)"
assert_eq "$(q off.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cudaGetDevice'")" \
	"$N" "without CUPTI every query is a hooked call"
echo ok
