# Issue 11 / must show 2: ten NVTX "step" ranges are the steps: the report counts 10, gives each one's time,
# flags the first as a cold start when the program makes it slower (and keeps it out of the verdict), and
# does not when it is not; --step-range chooses other ranges; no NVTX, no steps.
. "$(dirname "$0")/lib.sh"
need_sim
sim "$BIN/cprof-run" -o cold.db -- "$WL/nvtx_demo" steps 10 > /dev/null 2> run.txt || fail "nvtx_demo (cold)"
# cprof-run's summary counts CUDA calls and annotations apart
grep -q "$("$BIN/cprof" report cold.db --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"]["api_calls"])') CUDA API calls ([^)]*), $(q cold.db "SELECT value FROM META WHERE key = 'nvtx_events'") NVTX annotations" run.txt \
	|| fail "summary line: $(grep 'process(es)' run.txt)"
# warm: kernels launched once before the steps; stacks off, because the default sampling unwinds the first
# calls of every call site, which lengthens a 30 us first step by as much as the steps themselves take
NVTX_DEMO_WARM=1 sim "$BIN/cprof-run" -q --stacks off -o warm.db -- "$WL/nvtx_demo" steps 10 > /dev/null || fail "nvtx_demo (warm)"
js() { "$BIN/cprof" report "$1" --format json ${3:-} > r.json || fail "report json $1"; python3 -c "import json; d=json.load(open('r.json')); $2"; }

assert_eq "$(js cold.db "print(len(d['steps']))")" 10 "steps counted"
# each step's time is its range's, straight from the profile
assert_eq "$(js cold.db "print(' '.join(str(s['dur_ns']) for s in d['steps']))")" \
	"$(q cold.db "SELECT group_concat(d, ' ') FROM (SELECT n.end - n.start AS d FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE s.value = 'step' ORDER BY n.start)")" "per-step times"
assert_eq "$(js cold.db "print([s['cold'] for s in d['steps']].count(True), d['steps'][0]['cold'])")" "1 True" "first step is the cold one"
assert_eq "$(js cold.db "print(all(s['verdict'] in ('overhead-bound','compute-bound','mixed') for s in d['steps']))")" True "per-step verdicts"
js cold.db "f=[x for x in d['findings'] if x['id']=='cold-start']; assert f and 'first step (NVTX range \"step\")' in f[0]['evidence'], f" || fail "cold-start finding names the first step"
# the cold step is out of the verdict: the phases start at the second step
assert_eq "$(js cold.db "print(d['phases'][0]['start_ns'] >= d['steps'][1]['start_ns'])")" True "phases begin after the cold step"
# the phases are cut at the steps: every phase boundary is a step start
js cold.db "b={s['start_ns'] for s in d['steps']}; assert all(p['start_ns'] in b for p in d['phases']), d['phases']" || fail "phase boundaries at step starts"
# warm first step: 10 steps, no cold flag, the first step is in the verdict
assert_eq "$(js warm.db "print(len(d['steps']), [s['cold'] for s in d['steps']].count(True))")" "10 0" "warm run: no cold step"
assert_eq "$(js warm.db "print(d['phases'][0]['start_ns'] == d['steps'][0]['start_ns'])")" True "warm run: phases begin at step 1"
js warm.db "f=[x for x in d['findings'] if x['id']=='cold-start']; assert not f or 'first step' not in f[0]['evidence'], f" || fail "warm run: no step in the cold-start finding"
# text: the steps section with per-step times
"$BIN/cprof" report cold.db > r.txt || fail "text report"
grep -q "^Steps: 10 NVTX ranges" r.txt || fail "steps section"
grep -Eq "^ +1  step .*cold start$" r.txt || fail "step 1 marked cold in the text"
# the HTML page lists the steps, the first marked cold
"$BIN/cprof" html cold.db -o page.html || fail "cprof html"
grep -q 'id="t-steps"' page.html || fail "html steps table"
grep -q '1 (cold)' page.html || fail "html cold step"
grep -q 'id="t-ranges"' page.html || fail "html NVTX ranges table"
grep -q 'class="lane host nvtx"' page.html || fail "html NVTX lane in the timeline"
# the page with its NVTX lane still runs its script to the end in a browser
if command -v chromium > /dev/null; then
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/chrome" \
		--dump-dom "file://$T/page.html" > dom.html 2> /dev/null || fail "chromium --dump-dom"
	grep -q '<html lang="en" data-js="ok"' dom.html || fail "the page's script did not run to its end"
	! grep -q '<html[^>]*data-js-errors=' dom.html || fail "the page's script raised an error"
fi
grep -q '>step/forward<' page.html || fail "html nested range path"
# --step-range: the forward ranges (nested in the steps) are steps of their own when chosen
assert_eq "$(js cold.db "print(len(d['steps']), d['step_pattern'])" "--step-range ^forward$")" "10 ^forward$" "--step-range"
assert_eq "$(js cold.db "print(len(d['steps']))" "--step-range ^nothing$")" 0 "--step-range matching nothing"
"$BIN/cprof" report cold.db --step-range '(' > /dev/null 2> err.txt; rc=$?
assert_eq "$rc" 2 "bad --step-range exit status"
grep -q "step-range" err.txt || fail "bad --step-range message"
# the gate and diff compare the median step (cold step left out): 1 ms steps against 30 us ones fail,
# the other way round pass
"$BIN/cprof" check warm.db --baseline cold.db > gate.txt; rc=$?
assert_eq "$rc" 1 "slower steps fail the gate"
grep -q "^FAIL warm.db: median step time" gate.txt || fail "gate names the step time: $(cat gate.txt)"
"$BIN/cprof" check cold.db --baseline warm.db > gate.txt || fail "faster steps pass the gate: $(cat gate.txt)"
"$BIN/cprof" diff cold.db warm.db | grep -q "median step .* (\(+[0-9.]*%\|x[0-9.]*\); 10 -> 10 NVTX steps)" || fail "diff median step"
# a range name that an escape straddles the column's end in: cut in its middle, never inside the escape (until
# 2026-12-06 a %-24.24s of the escaped text ended the cell in "\x1")
cp warm.db evil.db
q evil.db "UPDATE StringIds SET value = 'step_aaaaaaaaaaaaaaaa' || char(27) || 'tailtailtailtail' WHERE value = 'step'"
"$BIN/cprof" report evil.db --step-range 'step_' > evil.txt || fail "report evil.db"
row=$(grep -a "^ *1  step_" evil.txt) || fail "no step row: $(grep -a -A4 '^Steps:' evil.txt)"
case $row in *"..."*) ;; *) fail "the long range name is not cut in the middle: $row" ;; esac
echo "$row" | grep -q '\\x[0-9a-f]\?  ' && fail "an escape cut at the column: $row"
# a profile without NVTX ranges: no steps, phases inferred as before
sim "$BIN/cprof-run" -q -o plain.db -- "$WL/nvtx_demo" plain 10 > /dev/null || fail "nvtx_demo plain"
assert_eq "$(js plain.db "print(len(d['steps']))")" 0 "no NVTX, no steps"
"$BIN/cprof" report plain.db | grep -q "^Steps:" && fail "steps section without NVTX"
echo ok
