# Issue 20: the exit paths with other threads still launching (simulated GPU only). exit(3) while two
# threads launch without end: status 3, every launch of the exiting thread is in the profile, the
# process said goodbye, and what it says it emitted is what the profile holds or counts lost. exec with
# the same threads running: the image before says BYE(exec) with its launches, the image after is
# profiled. A signal the program ignores (set after cprof installed its crash handler) is still ignored
# in the image exec starts, as without cprof.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
N=500
for i in 1 2 3; do
	out=$(sim timeout 60 "$BIN/cprof-run" -q -f -o x$i.db -- "$WL/scenarios" exit-threads $N); rc=$?
	assert_eq "$rc" 3 "exit(3) with threads running: status (run $i)"
	assert_eq "$out" "exiting" "stdout (run $i)"
	assert_eq "$(q x$i.db "SELECT count(*) FROM LAUNCHES WHERE kernelName LIKE '%kern_a%'")" $N "the exiting thread's launches (run $i)"
	assert_ge "$(q x$i.db "SELECT count(*) FROM LAUNCHES WHERE kernelName LIKE '%kern_b%'")" 1 "the other threads' launches (run $i)"
	assert_eq "$(q x$i.db "SELECT byeReason || ' ' || ending FROM PROCESSES")" "exit exit, status 3" "goodbye (run $i)"
	assert_eq "$(q x$i.db "SELECT eventsEmitted = eventsRecorded + lostEvents FROM PROCESSES")" 1 "emitted = recorded + lost (run $i)"
done
out=$(sim timeout 60 "$BIN/cprof-run" -q -f -o e.db -- "$WL/scenarios" exit-threads $N exec); rc=$?
assert_eq "$rc" 0 "exec with threads running: status"
assert_eq "$out" "exiting
after exec" "stdout (exec)"
assert_eq "$(q e.db "SELECT group_concat(byeReason, ' ') FROM (SELECT byeReason FROM PROCESSES ORDER BY id)")" "exec exit" "goodbyes (exec)"
assert_eq "$(q e.db "SELECT count(*) FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId WHERE p.byeReason = 'exec' AND kernelName LIKE '%kern_a%'")" $N "launches before exec"
assert_eq "$(q e.db "SELECT count(*) FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId WHERE p.byeReason = 'exit'")" 3 "launches after exec"
assert_eq "$(q e.db "SELECT eventsEmitted = eventsRecorded + lostEvents FROM PROCESSES WHERE byeReason = 'exec'")" 1 "emitted = recorded + lost (exec)"
bare=$(sim "$WL/scenarios" sigign-exec)
out=$(sim "$BIN/cprof-run" -q -f -o ign.db -- "$WL/scenarios" sigign-exec) || fail "sigign-exec failed"
assert_eq "$bare" "SIGFPE ignored" "bare: an ignored signal stays ignored across exec"
assert_eq "$out" "$bare" "under cprof: an ignored signal stays ignored across exec"
echo ok
