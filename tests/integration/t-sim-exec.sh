# Issue 2 / must show 3: a process that execs is profiled before and after (the env carries cprof over).
. "$(dirname "$0")/lib.sh"
need_sim
out=$(sim "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" exec) || fail "run failed: $out"
assert_eq "$out" "after exec" "stdout"
assert_eq "$(q prof.db "SELECT count(*) FROM PROCESSES")" 2 "process instances (before and after exec)"
assert_eq "$(q prof.db "SELECT count(DISTINCT pid) FROM PROCESSES")" 1 "exec keeps the pid"
assert_match "$(q prof.db "SELECT argv FROM PROCESSES ORDER BY id DESC LIMIT 1")" "after-exec" "argv after exec"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES WHERE kernelName='_Z6kern_bPi'")" 3 "launches after exec"
echo ok
