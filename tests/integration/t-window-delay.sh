# Issue 31 item 1: cprof-run --delay S --duration S records only the launches made inside the window, every
# one of them (window_loop logs each launch's own time; windows_check.py compares), the window is in
# CPROF_WINDOWS and in the report (text and JSON), and the verdict covers only the window.
. "$(dirname "$0")/lib.sh"
need_sim
P=$WL/window_loop
CHECK=$ROOT/tests/integration/windows_check.py
sim "$BIN/cprof-run" -q -o d.db --delay 0.6 --duration 0.8 -- "$P" --seconds 2 --log d.log > d.out 2> d.err ||
	fail "delay run: exit $? ($(cat d.err))"
assert_match "$(cat d.out)" "^launches [0-9]+$" "the program's output"
python3 "$CHECK" d.db d.log 1 || fail "delay: the profile's launches are not those made inside the window"
assert_eq "$(q d.db "SELECT why || '|' || endWhy FROM CPROF_WINDOWS")" "--delay 0.600 --duration 0.800|window ended" "the window's reasons"
# the window lasts what was asked (the preload's own thread flips it at the boundary: its start a few ms late on a busy machine, its end before CUPTI's flush: 200 ms short or 50 ms long allowed)
dur=$(q d.db "SELECT (end - start) / 1000000 FROM CPROF_WINDOWS")
[ "$dur" -ge 600 ] && [ "$dur" -le 850 ] || fail "window of ${dur} ms for --duration 0.8"
made=$(wc -l < d.log)
kept=$(q d.db "SELECT count(*) FROM CPROF_API WHERE class = 'launch'")
[ "$kept" -lt "$((made / 2))" ] || fail "$kept of $made launches kept: not a window"
"$BIN/cprof" report d.db > d.txt || fail "report"
grep -q "^Recorded windows: 1 " d.txt || fail "the report does not show the window: $(head -8 d.txt)"
grep -q -- "--delay 0.600 --duration 0.800; window ended" d.txt || fail "the window's reasons in the report"
"$BIN/cprof" report d.db --format json > d.json || fail "report json"
python3 - d.json <<'PY' || fail "JSON windows"
import json, sys
d = json.load(open(sys.argv[1]))
w = d["windows"]
assert len(w) == 1 and w[0]["number"] == 1 and w[0]["why"].startswith("--delay"), w
assert w[0]["end_ns"] - w[0]["start_ns"] == w[0]["duration_ns"]
# the verdict's window is the recorded one (with the GPU's drain), not the run
assert d["window_ns"] <= w[0]["duration_ns"] + 50_000_000, (d["window_ns"], w[0]["duration_ns"])
PY

# --duration alone: from the start
sim "$BIN/cprof-run" -q -o u.db --duration 0.5 -- "$P" --seconds 1.2 --log u.log > /dev/null 2>&1 || fail "duration run"
python3 "$CHECK" u.db u.log 1 || fail "duration: launches"
# --delay alone: to the end (the window closes with the process)
sim "$BIN/cprof-run" -q -o l.db --delay 0.7 -- "$P" --seconds 1.2 --log l.log > /dev/null 2>&1 || fail "delay-only run"
python3 "$CHECK" l.db l.log 1 || fail "delay only: launches"
assert_eq "$(q l.db "SELECT endWhy FROM CPROF_WINDOWS")" "process ended" "an open window ends with its process"

# launches back to back: the window's edges fall among launches, and so do CUPTI's switches beside them (CI
# 2026-12-07: a launch made after the stop's flip, while CUPTI flushed, lay inside the window then, unrecorded;
# 875 of them in one run here, when the window's bounds were the outer stamps). Each launch takes the simulator
# 20 us: ~45k a second, the rings' 16,384 events a third of a second (unpaced, 170k a second, a run lost 1,656 to
# a full ring on this 2-core VM), 100-190 launches made during the switches in 3 runs of 4
SIMGPU_LAUNCH_NS=20000 sim "$BIN/cprof-run" -q -o b.db --delay 0.3 --duration 0.3 -- "$P" --seconds 0.8 --period-us 0 --log b.log > /dev/null 2>&1 ||
	fail "back-to-back run"
assert_eq "$(q b.db "SELECT value FROM META WHERE key = 'lost_events'")" 0 "lost (back to back)"
python3 "$CHECK" b.db b.log 1 || fail "back to back: launches"

# usage errors: one line, exit 2, nothing run
for bad in "--duration 0" "--delay -1" "--delay x" "--on-demand --delay 1" "--capture-range cudaProfilerApi --duration 1"; do
	# shellcheck disable=SC2086
	"$BIN/cprof-run" -q -o bad.db $bad -- true 2> bad.err; rc=$?
	assert_eq "$rc" 2 "cprof-run $bad"
	assert_eq "$(wc -l < bad.err)" 1 "one line for $bad"
	[ ! -e bad.db ] || fail "$bad made a profile"
done
echo "delay/duration: $kept of $made launches kept, window ${dur} ms"
