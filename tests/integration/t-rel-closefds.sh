# Issue 7 scenario 10: the target closes every descriptor above stderr (close_range) and opens files that
# reuse the numbers -> not one cprof byte lands in the target's files, and profiling goes on. By default
# the flusher thread has a descriptor table of its own (unshare(CLONE_FILES)), so the target's table never
# holds cprof's FIFO at all; with CPROF_PRIVATE_FDS=0 (what happens where seccomp forbids unshare) the
# flusher checks before every write that the descriptor is still its FIFO, and reopens it by path.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
mkdir bare && sim "$WL/scenarios" closefds "$T/bare" > bare.out || fail "bare run"
for private in 1 0; do
	rm -rf files && mkdir files
	out=$(CPROF_PRIVATE_FDS=$private sim "$BIN/cprof-run" -q -f -o prof.db -- "$WL/scenarios" closefds "$T/files" 2> err.txt) ||
		fail "run failed (private=$private): $out $(cat err.txt)"
	assert_eq "$out" "$(cat bare.out)" "the target got the same descriptor numbers (private=$private)"
	for i in 0 1 2 3 4 5 6 7; do
		cmp -s "files/f$i" "bare/f$i" || fail "file f$i holds more than the target wrote (private=$private): $(od -c "files/f$i" | head -3)"
	done
	# here cprof reconnects either way (with private tables it never lost the FIFO): every launch is there
	assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" 200 "launches (private=$private)"
	assert_eq "$(meta prof.db complete)" 1 "complete (private=$private)"
	assert_eq "$(cat err.txt)" "" "no warning (private=$private)"
done
# the FIFO is in the flusher thread's table only, not in the one the target's threads share
LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o live.db -- "$WL/scenarios" loop 1.5 > /dev/null &
run=$!
collector_of $run > /dev/null || fail "no collector"
for i in $(seq 250); do # the flusher runs once events reach the profile
	[ "$(sqlite3 live.db "SELECT count(*) FROM CPROF_API" 2>/dev/null)" -gt 0 ] 2>/dev/null && break
	sleep 0.02
done
tpid=$(pgrep -P $run -x scenarios) || fail "target not found"
in_main=$(ls -l /proc/$tpid/fd 2>/dev/null | grep -c events.fifo)
in_tasks=$(for t in /proc/$tpid/task/*; do ls -l $t/fd 2>/dev/null | grep -q events.fifo && echo $t; done | wc -l)
echo "FIFO in the main table: $in_main; threads whose table has it: $in_tasks"
assert_eq "$in_main" 0 "the target's own table holds no cprof descriptor"
assert_eq "$in_tasks" 1 "one thread (the flusher) holds the FIFO"
wait $run
echo ok
