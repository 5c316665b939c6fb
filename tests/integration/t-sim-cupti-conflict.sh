# Issue 3 / must show 4: a second CUPTI user (registers its own activity callbacks mid-run, as Kineto
# does) -> cprof records the conflict and backs off; the target finishes normally and gets its records.
. "$(dirname "$0")/lib.sh"
need_sim
sim "$WL/cupti_user" > bare.out || fail "bare run failed"
sim "$BIN/cprof-run" -q -o prof.db -- "$WL/cupti_user" > prof.out 2> err.txt; rc=$?
assert_eq "$rc" 0 "exit status"
cmp -s bare.out prof.out || fail "output differs: $(cat prof.out)"
assert_eq "$(q prof.db "SELECT group_concat(code) FROM (SELECT code FROM CPROF_STATUS ORDER BY timeNs)")" "cupti-started,cupti-conflict" "statuses"
assert_eq "$(q prof.db "SELECT count(*) FROM KERNELS")" 10 "kernels before the other tool took over"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" 15 "launch calls (all of them)"
grep -q "cuptiActivityRegisterCallbacks" err.txt || fail "no warning"
echo ok
