# Issue 27 item 5: a script with its own torch.profiler schedule (wait/warmup/active, on_trace_ready writing its
# cprof-test-timeout: 600
# trace, as training frameworks' profiler callbacks do) under cprof-run. Its profiler counts the same kernels as
# without cprof (its events and its trace file), and cprof's profile has the same kernels as a run of the same
# loop with the profiler off: cprof keeps CUPTI and hands Kineto copies, so neither side loses records; the
# report, its JSON and cprof-run's stderr (cprof info) say how many records the program got and did not get.
# (Simulated GPU: kernels do not compute.)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
OP=$ROOT/tests/workloads/torch_own_profiler.py
S=12
mkdir -p bare prof off
"$SIMRUN" "$PY" "$OP" $S bare > bare.out 2> bare.err || fail "run without cprof ($(tail -3 bare.err))"
grep -q "is not simulated" bare.err && fail "reached a simulator stub: $(grep "is not simulated" bare.err)"
# 2 cycles of 3 active steps, 3 x (matmul, add, relu) a step: 27 kernels in each trace
assert_eq "$(grep -c 'trace_kernels=27$' bare.out)" 2 "kernels in the program's own traces without cprof ($(cat bare.out))"
"$BIN/cprof-run" -o prof.db -- "$SIMRUN" "$PY" "$OP" $S prof > prof.out 2> prof.err; rc=$?
assert_eq "$rc" 0 "exit status under cprof-run ($(tail -3 prof.err))"
cmp -s bare.out prof.out || fail "the program's own profiler counts differently under cprof-run: $(diff bare.out prof.out | head -6)"
"$BIN/cprof-run" -q -o off.db -- "$SIMRUN" "$PY" "$OP" $S off off > off.out 2> off.err || fail "profiler-off run ($(tail -3 off.err))"
off=$(q off.db "SELECT count(*) FROM KERNELS")
assert_ge "$off" 114 "kernels of the loop with the profiler off"
assert_eq "$(q prof.db "SELECT count(*) FROM KERNELS")" "$off" "cprof's kernels with the program's profiler on (as with it off)"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='lost_events'")" 0 "lost events"
assert_eq "$(q off.db "SELECT count(*) FROM CPROF_STATUS WHERE code = 'cupti-shared'")" 0 "profiler off: no sharing"
# the program got 2 cycles x (1 warm-up + 3 active steps) x 9 kernels and missed none
grep -q "^cprof: CUPTI shared with the program's own profiler: [0-9]* records handed to it (72 kernels), 0 it enabled and did not get;" prof.err ||
	fail "cprof-run's stderr does not say what the program's profiler got: $(grep -i cupti prof.err)"
"$BIN/cprof" report prof.db > r.txt || fail "report"
grep -q "^GPU records: CUPTI shared with the program's profiler: [0-9]* records handed to it (72 kernels), 0 it enabled and did not get, 0 in its current buffer" r.txt ||
	fail "report: $(grep 'GPU records' r.txt)"
"$BIN/cprof" report --format json prof.db > r.json || fail "report json"
python3 - r.json <<'PY' || fail "JSON cupti_shared"
import json, sys
s = json.load(open(sys.argv[1]))["cupti_shared"]
assert s["processes"] == 1 and s["kernels_handed"] == 72 and s["records_not_handed"] == 0 and s["records_pending"] == 0, s
assert s["records_handed"] > s["kernels_handed"], s
PY
echo ok
