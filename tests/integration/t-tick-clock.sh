# The hooks' clock (preload/tick.c): where the kernel keeps time with the TSC the hooks read it, and the
# flusher maps ticks to CLOCK_REALTIME ns by the line through the two anchors around each round. Checked
# against the simulated CUPTI's runtime records (CLOCK_REALTIME, read inside the real call): each hooked
# launch must contain its own runtime record, to within 50 ns (two clock reads' worth), in 100,000 launches
# over 1 s, as with CPROF_TSC=0 (CLOCK_REALTIME in the hooks); and the hooks' span of the run must be CUPTI's
# to within 1 ms. The map's rules (anchors, steps of the wall clock, a wide anchor) are unit-tested
# (test_tick_*).
# Simulated GPU only (the records' clock is the host's there).
. "$(dirname "$0")/lib.sh"
need_sim
src=/sys/devices/system/clocksource/clocksource0/current_clocksource
[ "$(cat $src 2>/dev/null)" = tsc ] || skip "the kernel's clocksource is $(cat $src 2>/dev/null || echo unknown), not tsc: the hooks read CLOCK_REALTIME"
contain() { # DB: calls, calls whose runtime record starts over 50 ns before them, ends over 50 ns after them
	q "$1" "SELECT count(*), sum(r.start < a.start - 50), sum(r.end > a.end + 50) FROM CPROF_API a
		JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.processId = a.processId AND e.externalKind = 5
		 AND e.externalId = a.correlationId
		JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.processId = a.processId AND r.correlationId = e.correlationId"
}
for tsc in 1 0; do
	CPROF_TSC=$tsc CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o c$tsc.db -- "$WL/scenarios" rate-paced 100000 1 1 \
		> out$tsc.txt 2> err$tsc.txt || fail "cprof-run (CPROF_TSC=$tsc) failed: $(tail -3 err$tsc.txt)"
done
grep -q "the hooks read the TSC" err1.txt || fail "with clocksource tsc the hooks did not read the TSC"
grep -q "the hooks read CLOCK_REALTIME" err0.txt || fail "CPROF_TSC=0 did not keep CLOCK_REALTIME"
r1=$(contain c1.db)
r0=$(contain c0.db)
echo "TSC: calls, starting before, ending after: $r1; CLOCK_REALTIME: $r0"
IFS='|' read -r n before after <<< "$r1"
[ "$n" -ge 100000 ] || fail "only $n hooked launches joined to their runtime records"
assert_eq "$before|$after" "0|0" "TSC: hooked launches not containing their runtime record (+-50 ns)"
IFS='|' read -r n before after <<< "$r0"
assert_eq "$before|$after" "0|0" "CLOCK_REALTIME: hooked launches not containing their runtime record (+-50 ns)"
# the run's span from the hooks' times is the one the records give, to within a millisecond
span=$(q c1.db "SELECT (SELECT max(end) - min(start) FROM CPROF_API) - (SELECT max(end) - min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME)")
[ "${span#-}" -lt 1000000 ] || fail "the hooks' span differs from CUPTI's by $span ns"
echo ok
