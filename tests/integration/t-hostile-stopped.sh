# Issue 32 item 4 (data lost d): cprofd stopped (SIGSTOP, a starved VM) while the program exits. The FIFO
# stays full past the exit's 1 s bound, so the BYE with the process's end and its count of what it lost
# used to be dropped too: no BYE, drops uncounted, a short "run:", a false crash finding. The process now
# leaves its BYE in cprof-run's run directory, which cprofd reads at the finish.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
sim "$BIN/cprof-run" -o s.db -- "$WL/scenarios" steady 40000 > /dev/null 2> err.txt &
run=$!
c=
for _ in $(seq 100); do
	c=$(pgrep -f -- "--db $T/s.db") && break
	sleep 0.02
done
[ -n "$c" ] || fail "no cprofd under cprof-run"
sleep 0.2
kill -STOP "$c"
sleep 4
kill -CONT "$c"
wait $run || fail "run: $(cat err.txt)"
assert_eq "$(q s.db "SELECT byeReason FROM PROCESSES")" exit "how the process ended"
assert_eq "$(q s.db "SELECT eventsEmitted = eventsRecorded + lostEvents FROM PROCESSES")" 1 "emitted = recorded + lost"
assert_match "$(q s.db "SELECT ending FROM PROCESSES")" "status 0" "the ending"
# every kernel is stored or counted lost: CUPTI's records not yet converted or sent when the exit's time ran out went
# uncounted until 2026-12-07 (t-rel-defer's CI run stored 10,554 of 20,010 kernels with lost_events 0)
# (with the hooked launches the rings could not send: the bound holds only if both are counted)
kernels=$(q s.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
launches=$(q s.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value LIKE '%cudaLaunchKernel'")
lost=$(q s.db "SELECT lostEvents FROM PROCESSES")
echo "kernels stored: $kernels of 40000, hooked launches: $launches of 40000, events lost: $lost"
assert_ge "$lost" $(( 80000 - kernels - launches )) "events counted lost, at least the kernels and launches not stored"
"$BIN/cprof" report s.db > rep.txt 2>&1 || fail "report: $(cat rep.txt)"
grep -qi "crash" rep.txt && fail "a crash finding for a process that exited: $(grep -i crash rep.txt)"
late=$(meta s.db late_byes)
echo "BYE from the run directory: $late (1 when the FIFO was still full at the exit)"
ls "${TMPDIR:-/tmp}"/cprof-run-* 2>/dev/null | grep -q "bye\." && fail "a BYE file was left behind"
echo OK
