# Issue 2 / must show 3: a forked child (no exec) is profiled under its own pid, and the parent's
# events are not duplicated into it; both exit() and _exit() children keep their events.
. "$(dirname "$0")/lib.sh"
need_sim
for how in exit _exit; do
	out=$(sim "$BIN/cprof-run" -q -f -o prof.db -- "$WL/scenarios" fork 7 11 $how) || fail "run failed ($how): $out"
	child=$(printf '%s\n' "$out" | awk '$1 == "CHILDPID" { print $2 }')
	parent=$(q prof.db "SELECT pid FROM PROCESSES WHERE forked = 0")
	[ -n "$child" ] && [ -n "$parent" ] || fail "pids not found ($how): $out"
	assert_eq "$(q prof.db "SELECT count(*) FROM PROCESSES")" 2 "processes ($how)"
	assert_eq "$(q prof.db "SELECT ppid FROM PROCESSES WHERE pid=$child")" "$parent" "child's parent ($how)"
	assert_eq "$(q prof.db "SELECT forked FROM PROCESSES WHERE pid=$child")" 1 "child marked forked ($how)"
	assert_eq "$(q prof.db "SELECT count(*) FROM CPROF_API WHERE pid=$child AND class='launch'")" 11 "child launches ($how)"
	assert_eq "$(q prof.db "SELECT count(*) FROM CPROF_API WHERE pid=$parent AND class='launch'")" 7 "parent launches ($how)"
	assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId WHERE p.pid=$child AND kernelName='_Z6kern_bPi'")" 11 "child kernel names ($how)"
	want=$([ $how = exit ] && echo exit || echo _exit)
	assert_eq "$(q prof.db "SELECT byeReason FROM PROCESSES WHERE pid=$child")" "$want" "child's end ($how)"
	assert_eq "$(q prof.db "SELECT value FROM META WHERE key='complete'")" 1 "complete ($how)"
done
echo ok
