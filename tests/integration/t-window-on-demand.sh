# Issue 31 item 3: a job started with cprof-run --on-demand records nothing until cprof capture asks; two
# captures (by cprof-run's pid, by the run directory) are two numbered windows whose launches are exactly
# those made inside them; another user cannot open one (refused by cprof capture, and by the directory's
# permissions themselves); a job that exits during a capture keeps what the capture had recorded.
. "$(dirname "$0")/lib.sh"
need_sim
P=$WL/window_loop
CHECK=$ROOT/tests/integration/windows_check.py
run_bg() { # db log seconds: starts the job in the background, sets RUN (cprof-run's pid) and DIR
	LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -o "$1" --on-demand -- "$P" --seconds "$3" --log "$2" > "$1.out" 2> "$1.err" &
	RUN=$!
	for _ in $(seq 50); do grep -q "recording on demand" "$1.err" && break; sleep 0.1; done
	DIR=$(sed -n 's/.*(or cprof capture \(.*\) \.\.\.)$/\1/p' "$1.err")
	[ -d "$DIR" ] || fail "no run directory announced: $(cat "$1.err")"
}
run_bg od.db od.log 5
sleep 0.5
"$BIN/cprof" capture "$RUN" --duration 1 2> c1.err || fail "capture 1 by pid: exit $? ($(cat c1.err))"
grep -q "window 1: done" c1.err || fail "capture 1 output: $(cat c1.err)"
sleep 0.4
# another user: refused by cprof capture (the process and the directory are not theirs) ...
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && id nobody > /dev/null 2>&1; then
	as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
	as_nobody "$BIN/cprof" capture "$RUN" --duration 1 2> n1.err; assert_eq $? 4 "another user's capture by pid"
	grep -q "not yours" n1.err || fail "refusal message: $(cat n1.err)"
	as_nobody "$BIN/cprof" capture "$DIR" --duration 1 2> n2.err; assert_eq $? 4 "another user's capture by directory"
	# ... and by the kernel, whatever program they use: the directory is 0700
	as_nobody sh -c "echo '9 1 0 forged' > '$DIR/windows'" 2> /dev/null && fail "another user could write the schedule"
	as_nobody sh -c "cat '$DIR/windows'" > /dev/null 2>&1 && fail "another user could read the schedule"
	nobody_checked=1
else
	nobody_checked=0
fi
"$BIN/cprof" capture "$DIR" --duration 1 --no-wait 2> c2.err || fail "capture 2 by directory: exit $? ($(cat c2.err))"
"$BIN/cprof" capture "$DIR" --duration 1 2> c3.err; assert_eq $? 6 "a capture while one is open"
wait "$RUN" || fail "the job's status: $?"
python3 "$CHECK" od.db od.log 2 || fail "on demand: the profile's launches are not those made inside the captures"
assert_eq "$(q od.db "SELECT group_concat(number) FROM (SELECT number FROM CPROF_WINDOWS ORDER BY start)")" "1,2" "numbered windows"
assert_match "$(q od.db "SELECT why FROM CPROF_WINDOWS WHERE number = 2")" "^cprof capture --duration 1.000" "the second window's reason"
"$BIN/cprof" report od.db > od.txt || fail "report"
grep -q "^Recorded windows: 2 " od.txt || fail "the report does not show both windows"
grep -q "^cprof: recorded in 2 window(s)" od.db.err || fail "cprof-run's summary does not say the run was windowed"
# the verdict covers the two windows, not the unrecorded time between them (at least 0.4 s)
"$BIN/cprof" report od.db --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
rec = sum(w["duration_ns"] for w in d["windows"])
assert d["window_ns"] <= rec + 50_000_000, (d["window_ns"], rec)
assert d["window_ns"] < d["run_window_ns"] - 300_000_000, (d["window_ns"], d["run_window_ns"])' ||
	fail "the verdict does not cover only the recorded windows"
"$BIN/cprof" html od.db -o od.html || fail "html"
grep -q "<b>Recorded windows:</b> 2 " od.html || fail "the HTML page does not show the windows"
"$BIN/cprof" trace od.db -o od.trace.json || fail "trace"
python3 - od.trace.json <<'PY' || fail "the trace does not show the windows"
import json, sys
d = json.load(open(sys.argv[1]))
w = d["cprof"]["windows"]
spans = [e for e in d["traceEvents"] if e.get("cat") == "cprof_window"]
assert [x["number"] for x in w] == [1, 2], w
assert len(spans) == 2 and spans[0]["args"]["number"] == 1, spans
# every event of the program's lanes lies inside a window (the GPU's drain aside: API calls only)
base = d["baseTimeNanoseconds"]
n = 0
for e in d["traceEvents"]:
    if e.get("cat") == "cuda_runtime" and "LaunchKernel" in e.get("name", ""):
        t = base + e["ts"] * 1000
        assert any(x["start_ns"] - 1000 <= t <= x["end_ns"] + 1000 for x in w), e
        n += 1
assert n > 100, n
PY
[ ! -e "$DIR" ] || fail "the run directory outlived the run"
"$BIN/cprof" capture "$DIR" --duration 1 2> gone.err; assert_eq $? 5 "a capture of an ended run"

# the job exits in the middle of a capture: the window ends with the process, its launches are kept
run_bg mid.db mid.log 1.2
sleep 0.5
"$BIN/cprof" capture "$RUN" --duration 5 2> mid.err || fail "capture of a job that ends: exit $?"
grep -q "the job ended during it" mid.err || fail "cprof capture did not see the end: $(cat mid.err)"
wait "$RUN" || fail "the job's status"
python3 "$CHECK" mid.db mid.log 1 || fail "mid-capture exit: launches"
assert_eq "$(q mid.db "SELECT endWhy FROM CPROF_WINDOWS")" "process ended" "the window closed by the exit"
[ "$nobody_checked" = 1 ] || skip "another user's capture not checked: needs root, setpriv and a nobody user"
