# The hooked calls joined to CUPTI's API records by thread and time (preload/link.c) instead of an external id
# pushed around every call: the join must be the one the pushed ids give (CPROF_LINK=push), row for row, for
# launches from two threads, cuBLAS calls (whose records come from inside them) and a PyTorch-shaped loop;
# the pushed ids of one call in 64 are checked and agree; and where CUPTI's clock is not the hooks' (the
# simulator's SIMGPU_CUPTI_API_SKEW_NS) the checks disagree and every call pushes its id again.
# Simulated GPU only (its CUPTI reads the host's clock, as CUPTI does on Linux).
. "$(dirname "$0")/lib.sh"
need_sim
joined() { # DB: the calls, by name, with the API records and the kernels joined to them through cprof's ids
	q "$1" "SELECT s.value, count(*), count(DISTINCT a.correlationId), sum(coalesce(kc.n, 0))
		FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId
		JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = a.processId AND e.externalKind = 5
		 AND e.externalId = a.correlationId
		JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.processId = a.processId AND r.correlationId = e.correlationId
		LEFT JOIN (SELECT processId, correlationId, count(*) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1, 2) kc
		 ON kc.processId = r.processId AND kc.correlationId = r.correlationId
		GROUP BY s.value ORDER BY s.value"
}
# single-threaded: the same calls are joined in both runs (with two threads the first launch of the second can
# miss its external id in either mode: a race at CUPTI's start, docs/testing.md)
for wl in "gemm-only 3000" "torch-shaped 3000"; do
	name=${wl%% *}
	CPROF_LINK=push sim "$BIN/cprof-run" -q -o push-$name.db -- "$WL/scenarios" $wl > /dev/null 2> err-push-$name.txt ||
		fail "cprof-run (CPROF_LINK=push) $wl failed: $(tail -3 err-push-$name.txt)"
	CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o time-$name.db -- "$WL/scenarios" $wl > /dev/null 2> err-time-$name.txt ||
		fail "cprof-run $wl failed: $(tail -3 err-time-$name.txt)"
	want=$(joined push-$name.db)
	got=$(joined time-$name.db)
	echo "$name: by pushed ids: $(echo $want) / by times: $(echo $got)"
	[ -n "$want" ] || fail "$name: nothing joined with every call's id pushed"
	assert_eq "$got" "$want" "$name: calls, API records and kernels joined by time"
	assert_eq "$(q time-$name.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION")" \
		"$(q push-$name.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION")" "$name: external id rows"
	line=$(grep "links:" err-time-$name.txt | tail -1)
	assert_match "$line" " [1-9][0-9]* pushed ids checked, 0 disagreed" "$name: the checks of the pushed ids"
	assert_match "$line" "one call in 64 pushes its id" "$name: the mode"
done
# two threads: each launch joined to its record and kernel by the times, the checks agreeing
CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o threads.db -- "$WL/scenarios" threads 20000 > /dev/null 2> err-threads.txt ||
	fail "cprof-run threads failed: $(tail -3 err-threads.txt)"
got=$(joined threads.db | grep __cudaLaunchKernel)
echo "threads: by times: $got"
IFS='|' read -r _ rows calls kernels <<< "$got"
assert_ge "$calls" 19999 "threads: launches joined by time"
assert_eq "$rows|$kernels" "$calls|$calls" "threads: one record and one kernel a launch"
assert_match "$(grep "links:" err-threads.txt | tail -1)" " [1-9][0-9]* pushed ids checked, 0 disagreed" "threads: the checks"
# CUPTI 50 us off the hooks' clock: no call holds its records; the checks see it and every call pushes again
SIMGPU_CUPTI_API_SKEW_NS=50000 CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o skew.db -- "$WL/scenarios" threads 20000 \
	> /dev/null 2> err-skew.txt || fail "cprof-run with a skewed CUPTI failed: $(tail -3 err-skew.txt)"
grep -q "do not hold CUPTI's records" err-skew.txt || fail "a skewed CUPTI clock was not noticed: $(grep links: err-skew.txt)"
assert_match "$(grep "links:" err-skew.txt | tail -1)" "every call pushes its id" "the mode after the checks disagreed"
n=$(q skew.db "SELECT count(*) FROM CPROF_API a JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = a.processId
	AND e.externalKind = 5 AND e.externalId = a.correlationId WHERE a.nameId IN (SELECT id FROM StringIds WHERE value LIKE '%LaunchKernel%')")
echo "skewed: $n of 20000 launches joined"
assert_ge "$n" 19000 "launches joined once every call pushed its id"
echo ok
