# Issue 26: CPROF_DEFER_MB (default 8; 64 until 2026-12-07). On a machine with no spare core (one `yes` per core beside the program,
# so that /proc/pressure/cpu shows tasks waiting) the flusher leaves CUPTI's completed buffers unconverted, up
# to the cap, and says so in its debug log; every kernel still reaches the profile (the cap reached, then the
# exit's drain converts the rest), nothing is lost, and the program's output and status are its own. It does
# so by default, and never with CPROF_DEFER_MB=0. Without PSI (no /proc/pressure/cpu) it never defers: SKIP.
# The exit's drain gets 30 s here, not the default 1 s: in a CI run (2026-12-07) it ran out of its second with two
# buffers to convert (10,554 of 20,010 kernels stored; 4-6 ms on this VM beside two `yes`, 194 ms beside eight), the
# flusher starved by a loaded machine. What is left when it runs out is counted lost (t-hostile-stopped); this test is
# about deferring, which must lose nothing when the exit has time.
. "$(dirname "$0")/lib.sh"
need_sim
cat /proc/pressure/cpu > /dev/null 2>&1 || skip "no /proc/pressure/cpu (a kernel without PSI): CPROF_DEFER_MB never defers here"
STEPS=40000
export CPROF_EXIT_TIMEOUT_MS=30000
yes_pids=()
trap 'kill "${yes_pids[@]}" 2> /dev/null; rm -rf "$T"' EXIT
busy_cores
sim "$WL/matmul_sweep" --sizes 64 --steps $STEPS > bare.out 2> /dev/null || fail "bare matmul_sweep"
CPROF_DEFER_MB=8 CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o prof.db -- "$WL/matmul_sweep" --sizes 64 --steps $STEPS \
	> out.txt 2> err.txt
rc=$?
kill "${yes_pids[@]}" 2> /dev/null
assert_eq "$rc" 0 "cprof-run's status"
assert_eq "$(cat out.txt)" "$(cat bare.out)" "the target's output"
rounds=$(deferred_rounds err.txt)
[ -n "$rounds" ] || fail "no deferral line in the debug log: $(grep -i defer err.txt | head -3)"
echo "deferred rounds: $rounds"
assert_ge "$rounds" 1 "rounds deferred with every core taken"
# every GEMM and bias launch of the warm-up and the steps has its kernel
want=$(( 2 * (STEPS + 5) ))
# on a loss, its causes go with the failure (2026-12-06: 39,401 lost once in a CI run beside an ASAN build, not
# reproduced since): the collector's (META) and the target's own (its last CPROF_COST row)
lost=$(q prof.db "SELECT value FROM META WHERE key = 'lost_events'")
[ "$lost" = 0 ] || echo "lost by cause: META $(q prof.db "SELECT group_concat(key || '=' || value, ' ') FROM META
	WHERE key IN ('lost_producers', 'lost_spool_full', 'lost_unstored', 'spool_peak_lag_bytes', 'ring_bytes')");" \
	"target $(q prof.db "SELECT 'ring_full=' || lostRingFull || ' cupti=' || lostCupti || ' pipe=' || lostPipe ||
	' nested=' || lostNested FROM CPROF_COST ORDER BY timeNs DESC LIMIT 1")"
grep 'the drain for the exit' err.txt
kernels=$(q prof.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
assert_eq "$kernels" "$want" "kernels stored"
assert_eq "$lost" 0 "lost events"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key = 'complete'")" 1 "complete"
# by default (no CPROF_DEFER_MB) it defers too; with 0 it never does
for cap in default 0; do
	busy_cores
	if [ "$cap" = default ]; then set_cap=(-u CPROF_DEFER_MB); else set_cap=(CPROF_DEFER_MB=0); fi
	sim env "${set_cap[@]}" CPROF_DEBUG=3 "$BIN/cprof-run" -q -f -o prof2.db -- "$WL/matmul_sweep" --sizes 64 \
		--steps 10000 > /dev/null 2> err2.txt
	rc=$?
	kill "${yes_pids[@]}" 2> /dev/null
	assert_eq "$rc" 0 "cprof-run's status (CPROF_DEFER_MB $cap)"
	rounds=$(deferred_rounds err2.txt)
	[ -n "$rounds" ] || fail "no deferral line in the debug log (CPROF_DEFER_MB $cap): $(grep -i defer err2.txt | head -3)"
	if [ "$cap" = default ]; then
		assert_ge "$rounds" 1 "rounds deferred by default with every core taken"
	else
		assert_eq "$rounds" 0 "rounds deferred with CPROF_DEFER_MB=0"
	fi
	kernels=$(q prof2.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
	[ "$kernels" = $(( 2 * (10000 + 5) )) ] || echo "lost: $(q prof2.db "SELECT value FROM META WHERE key = 'lost_events'");" \
		"$(grep 'the drain for the exit' err2.txt)"
	assert_eq "$kernels" $(( 2 * (10000 + 5) )) "kernels stored (CPROF_DEFER_MB $cap)"
done
echo PASS
