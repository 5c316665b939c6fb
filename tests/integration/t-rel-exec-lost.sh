# An exec whose drain runs out of time (every core busy, CPROF_EXIT_TIMEOUT_MS a few ms): what CUPTI and the rings still
# held is counted lost in the exec's BYE, as at an exit. Until 2026-12-07 it went uncounted after a successful exec
# (scenarios exec 40000 beside two `yes`, an 8 ms exec: 13,559-23,881 of 40,000 kernels stored, lost_events 0). An exec
# that fails goes on with the same instance: what its BYE counted lost is then dropped, never sent as well (emitted
# stays what a run with nothing lost emits). The drain may also finish in time on a fast machine: then nothing is lost
# and the bound holds trivially (the test says which).
. "$(dirname "$0")/lib.sh"
need_sim
yes_pids=()
trap 'kill "${yes_pids[@]}" 2> /dev/null; rm -rf "$T"' EXIT
N=40000
busy_cores
CPROF_EXIT_TIMEOUT_MS=8 CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o ok.db -- "$WL/scenarios" exec $N > ok.out 2> ok.err
rc=$?
kill "${yes_pids[@]}" 2> /dev/null
assert_eq "$rc" 0 "cprof-run's status (exec)"
assert_eq "$(cat ok.out)" "after exec" "the target's output"
p=$(q ok.db "SELECT id FROM PROCESSES ORDER BY id LIMIT 1")
bye=$(q ok.db "SELECT byeReason FROM PROCESSES WHERE id = $p")
kernels=$(q ok.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE processId = $p")
launches=$(q ok.db "SELECT count(*) FROM LAUNCHES WHERE processId = $p")
lost=$(q ok.db "SELECT lostEvents FROM PROCESSES WHERE id = $p")
echo "before exec: BYE '$bye', kernels $kernels of $N, hooked launches $launches of $N, lost $lost;" \
	"$(grep -o 'the drain for the exec.*' ok.err)"
if [ "$bye" = exec ]; then
	assert_eq "$(q ok.db "SELECT eventsEmitted = eventsRecorded + lostEvents FROM PROCESSES WHERE id = $p")" 1 \
		"emitted = recorded + lost (before exec)"
	assert_ge "$lost" $(( 2 * N - kernels - launches )) "events counted lost, at least the kernels and launches not stored"
else
	# its BYE did not come in time (the exec's 8 ms): the collector ends it at the new image's HELLO, its loss unknown
	assert_eq "$bye" replaced "how the image before exec ended without its BYE"
	echo "the BYE did not come in time: the bound was not checked in this run"
fi
assert_eq "$(q ok.db "SELECT count(*) FROM PROCESSES")" 2 "process instances (before and after exec)"

# a failed exec: the same instance goes on, its exit BYE last; what the exec counted is never stored as well
N=40000 M=5000
sim "$BIN/cprof-run" -q -o calm.db -- "$WL/scenarios" exec-fail $N $M > calm.out 2> /dev/null ||
	fail "exec-fail without a competitor: $(cat calm.out)"
assert_eq "$(q calm.db "SELECT lostEvents FROM PROCESSES")" 0 "lost with a drain that has its time"
want=$(q calm.db "SELECT eventsEmitted FROM PROCESSES")
busy_cores
CPROF_EXIT_TIMEOUT_MS=8 CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o fail.db -- "$WL/scenarios" exec-fail $N $M \
	> fail.out 2> fail.err
rc=$?
kill "${yes_pids[@]}" 2> /dev/null
assert_eq "$rc" 0 "cprof-run's status (exec-fail)"
assert_match "$(cat fail.out)" "^exec failed" "the target's output"
assert_eq "$(q fail.db "SELECT count(*) FROM PROCESSES")" 1 "process instances (a failed exec)"
read -r bye emitted recorded lost <<< "$(q fail.db "SELECT byeReason, eventsEmitted, eventsRecorded, lostEvents FROM PROCESSES" | tr '|' ' ')"
echo "failed exec: BYE '$bye', emitted $emitted (with nothing lost: $want), recorded $recorded, lost $lost;" \
	"$(grep -o 'the drain for the exec.*' fail.err)"
if [ "$bye" = exit ]; then
	assert_eq "$emitted" $(( recorded + lost )) "emitted = recorded + lost (a failed exec)"
	# sent and counted lost both: emitted over what the program makes by what the exec counted (thousands; CUPTI's
	# overhead records and cprof's own rows vary by a few from run to run: 75,012-75,014 here)
	[ "$emitted" -le $(( want + 64 )) ] || fail "emitted $emitted, over the $want a run with nothing lost emits:" \
		"what the exec counted lost was sent too"
	assert_ge "$emitted" $(( want - want / 10 )) "emitted (what was lost counted, the rest estimated)"
else
	echo "the exit's BYE did not come in time (8 ms): emitted not checked in this run"
fi
echo OK
