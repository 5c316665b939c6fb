# Issue 3 / must show 4, issue 27 item 5: a second CUPTI user (registers its own activity callbacks mid-run,
# as Kineto does). cprof keeps CUPTI and hands the program copies of the records it enabled: the program
# gets the same records as alone, cprof keeps all of its own, and what the program did not get is counted.
. "$(dirname "$0")/lib.sh"
need_sim
sim "$WL/cupti_user" > bare.out || fail "bare run failed"
assert_eq "$(cat bare.out)" "register 0 enable 0 disable 0 own kernel records 5" "bare run"
sim "$BIN/cprof-run" -q -o prof.db -- "$WL/cupti_user" > prof.out 2> err.txt; rc=$?
assert_eq "$rc" 0 "exit status"
cmp -s bare.out prof.out || fail "output differs: $(cat prof.out)"
assert_eq "$(q prof.db "SELECT group_concat(code) FROM (SELECT code FROM CPROF_STATUS ORDER BY timeNs)")" "cupti-started,cupti-shared,cupti-shared" "statuses"
assert_eq "$(q prof.db "SELECT count(*) FROM KERNELS")" 18 "kernels (all of them: cprof ceded none)"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" 18 "launch calls (all of them)"
grep -q "cuptiActivityRegisterCallbacks" err.txt || fail "no warning"
"$BIN/cprof" info prof.db > info.txt || fail "cprof info"
grep -q "CUPTI shared with the program's own profiler: 5 records handed to it (5 kernels), 0 it enabled and did not get;" info.txt || fail "cprof info: $(grep shared info.txt)"

# its buffer callback gives no buffer: it gets nothing, and cprof says exactly how many it did not get
sim "$WL/cupti_user" nobuf > bare.out || fail "bare nobuf run failed"
sim "$BIN/cprof-run" -q -o nobuf.db -- "$WL/cupti_user" nobuf > prof.out 2> err.txt; rc=$?
assert_eq "$rc" 0 "nobuf: exit status"
cmp -s bare.out prof.out || fail "nobuf: output differs: $(cat prof.out)"
assert_eq "$(q nobuf.db "SELECT count(*) FROM KERNELS")" 18 "nobuf: kernels"
"$BIN/cprof" report --format json nobuf.db > r.json || fail "report json"
python3 - r.json <<'PY' || fail "nobuf: JSON cupti_shared"
import json, sys
s = json.load(open(sys.argv[1]))["cupti_shared"]
assert s == {"processes": 1, "records_handed": 0, "kernels_handed": 0, "records_not_handed": 5, "records_pending": 0}, s
PY
"$BIN/cprof" report nobuf.db > r.txt || fail "report"
grep -q "^GPU records: CUPTI shared with the program's profiler: 0 records handed to it (0 kernels), 5 it enabled and did not get" r.txt || fail "report: $(grep 'GPU records' r.txt)"
echo ok
