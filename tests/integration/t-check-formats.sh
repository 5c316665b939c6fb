# Issue 30: cprof check's results as CI systems show them (JUnit XML validated against the reporters' schema
# with xmlschema and read back by junitparser, JSON, Markdown), -o, usage errors; cprof diff's formats,
# --top, --max-regression exit codes and a Change column that fits. Timings are the simulated GPU's.
. "$(dirname "$0")/lib.sh"
need_sim
need_venv "$BUILD/venv-ci"
PY=$BUILD/venv-ci/bin/python
XSD=$ROOT/tests/integration/junit.xsd
export SIMGPU_COPY_DATA=0
sim "$BIN/cprof-run" -q -o small.db -- "$WL/matmul_sweep" --sizes 64 --steps 20 > /dev/null
sim "$BIN/cprof-run" -q -o more.db -- "$WL/matmul_sweep" --sizes 64 --steps 40 > /dev/null
sim "$BIN/cprof-run" -q -o big.db -- "$WL/matmul_sweep" --sizes 64,1024 --steps 20 > /dev/null
# a kernel name that would break XML, Markdown tables and terminals
cp more.db evil.db
q evil.db "UPDATE StringIds SET value = 'bias_add</testcase><x a=\"1\">&amp;''|*_\`' || char(27) || '[31m' || char(1) || 'end' WHERE value = '_Z8bias_addPfPKfxi'"

# the schema check, and junitparser's reading: tests, failures, and which cases failed
junit_check() { # FILE TESTS FAILURES ERRORS
	"$PY" - "$1" "$XSD" "$2" "$3" "$4" <<'PYEOF' || fail "JUnit XML $1 rejected: $(cat "$1")"
import sys, xmlschema, junitparser
path, xsd, tests, failures, errors = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
xmlschema.XMLSchema(xsd).validate(path)
xml = junitparser.JUnitXml.fromfile(path)
suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
assert len(suites) == 1, suites
s = suites[0]
cases = list(s)
assert s.tests == tests == len(cases), (s.tests, tests, len(cases))
failed = [c for c in cases if any(isinstance(r, junitparser.Failure) for r in c.result)]
errs = [c for c in cases if any(isinstance(r, junitparser.Error) for r in c.result)]
assert s.failures == failures == len(failed), (s.failures, failures, len(failed))
assert s.errors == errors == len(errs), (s.errors, errors, len(errs))
for c in failed:
    print("failed:", c.name)
PYEOF
}

# JUnit: every condition a test case; the text lines still on stdout with -o FILE
"$BIN/cprof" check more.db --baseline small.db --expect compute-bound --max-gpu-idle 99 --format junit -o j.xml > out.txt
assert_eq $? 1 "junit gate exit status"
grep -q "^FAIL more.db: verdict: " out.txt || fail "text lines on stdout with -o: $(cat out.txt)"
ngates=$("$BIN/cprof" check more.db --baseline small.db --expect compute-bound --max-gpu-idle 99 --format json |
	python3 -c "import json,sys; d=json.load(sys.stdin); print(len(d['gates']), sum(not g['passed'] for g in d['gates']))")
set -- $ngates
assert_ge "$1" 5 "gates: verdict, idle, kernel time, launches, kernels"
junit_check j.xml "$1" "$2" 0 > cases.txt
grep -q "^failed: verdict$" cases.txt || fail "verdict case not failed: $(cat cases.txt)"
grep -q "^failed: GPU idle$" cases.txt && fail "the GPU idle case (99% allowed) failed"
grep -q "^failed: kernel launches$" cases.txt || fail "launches case not failed"
# a passing gate: no failures; existing file refused without -f, replaced with it
"$BIN/cprof" check small.db --baseline small.db --expect overhead-bound --format junit -o j.xml > /dev/null 2> err.txt
assert_eq $? 2 "existing -o file refused"
grep -q "exists" err.txt || fail "no reason for the refusal: $(cat err.txt)"
"$BIN/cprof" check small.db --baseline small.db --expect overhead-bound --format junit -o j.xml -f > out.txt
assert_eq $? 0 "passing gate"
grep -q "^PASS small.db" out.txt || fail "PASS line: $(cat out.txt)"
n=$(python3 -c "import xml.dom.minidom as m; print(len(m.parse('j.xml').getElementsByTagName('testcase')))")
junit_check j.xml "$n" 0 0 > /dev/null
# hostile kernel name: still valid XML, the name kept (escaped), no raw control byte
"$BIN/cprof" check evil.db --baseline evil.db --max-regression 0 --format junit -o - > evil.xml
n=$(python3 -c "import xml.dom.minidom as m; print(len(m.parse('evil.xml').getElementsByTagName('testcase')))")
junit_check evil.xml "$n" 0 0 > /dev/null
grep -q "</testcase><x" evil.xml && fail "a kernel name closed an XML element"
grep -qP '[\x01\x1b]' evil.xml && fail "control bytes in the XML"
grep -qi 'bias_add&lt;/testcase&gt;&lt;x a=&quot;1&quot;&gt;&amp;amp;&apos;|\*_`\\x1B\[31m\\x01end' evil.xml ||
	fail "the hostile name is not kept, escaped: $(grep bias evil.xml | head -2)"
# incomplete with --require-complete: one error case, exit 3
cp small.db lossy.db
q lossy.db "UPDATE META SET value = '0' WHERE key = 'complete'; INSERT OR REPLACE INTO META (key, value) VALUES ('incomplete_reason', '12 events were lost')"
"$BIN/cprof" check lossy.db --require-complete --format junit > lossy.xml; assert_eq $? 3 "incomplete"
junit_check lossy.xml 1 0 1 > /dev/null

# JSON: measured value, limit, baseline and result of each condition
"$BIN/cprof" check more.db --baseline small.db --format json > c.json; assert_eq $? 1 "json gate"
python3 - <<'PYEOF' || fail "check JSON: $(cat c.json)"
import json
d = json.load(open("c.json"))
assert d["schema"] == "cprof.check/1" and d["result"] == "fail" and d["exit_status"] == 1 and d["simulated_gpu"]
g = {x["id"]: x for x in d["gates"] if x["id"] != "kernel"}
assert g["kernel_launches"]["value"] == 90 and g["kernel_launches"]["baseline"] == 50, g
assert abs(g["kernel_launches"]["limit"] - 55) < 1e-9 and not g["kernel_launches"]["passed"]
assert d["changes"] and d["changes"][0]["kind"] == "kernel", d["changes"][:2]
PYEOF

# Markdown: a heading with the result, the gate table, the top changes against the baseline
"$BIN/cprof" check evil.db --baseline small.db --expect compute-bound --format markdown --top 3 > c.md
assert_eq $? 1 "markdown gate"
head -1 c.md | grep -q "^## cprof check: .*FAIL .*evil.db" || fail "markdown heading: $(head -1 c.md)"
grep -q "^\*\*Verdict:\*\* overhead-bound" c.md || fail "markdown verdict"
grep -q "simulated GPU" c.md || fail "markdown does not say the GPU was simulated"
grep -q "^| verdict | overhead-bound | compute-bound |  | .* fail |$" c.md || fail "markdown verdict row: $(cat c.md)"
grep -q "^### Top changes against the baseline \`small.db\`" c.md || fail "markdown changes section"
assert_eq "$(sed -n '/^### Top changes/,$p' c.md | grep -c '^| GPU\|^| host')" 3 "--top 3 changes"
# the hostile name cannot open a cell, a link or emphasis, nor carry HTML or a control byte
grep 'bias' c.md | grep -q "<x\\|[^\\\\]|\\*\\|$(printf '\033')" && fail "markdown not escaped: $(grep bias c.md)"
grep -qi 'bias\\_add&lt;/testcase&gt;&lt;x a="1"&gt;&amp;amp;'"'"'\\|\\\*\\_\\`\\\\x1B\\\[31m' c.md ||
	fail "markdown hostile name: $(grep bias c.md | head -1)"
python3 -c "
import re
for l in open('c.md'):
    if l.startswith(('| GPU', '| host')):
        assert len(re.findall(r'(?<!\\\\)\\|', l)) == 7, l" || fail "a markdown row has the wrong cell count"
"$BIN/cprof" check small.db --format markdown > c.md; assert_eq $? 0 "markdown without conditions"
grep -q "Top changes" c.md && fail "changes without a baseline"

# usage errors: one line, exit 2
"$BIN/cprof" check small.db --max-regression 5 > out.txt 2> err.txt; assert_eq $? 2 "--max-regression without --baseline"
assert_eq "$(wc -l < err.txt)" 1 "one line"
grep -q "needs --baseline" err.txt || fail "reason: $(cat err.txt)"
[ -s out.txt ] && fail "a usage error printed a result"
"$BIN/cprof" check small.db --format xml 2> err.txt; assert_eq $? 2 "bad --format"

# cprof diff: exit 0 without a limit, 1 past --max-regression, 0 within it
"$BIN/cprof" diff small.db more.db > d.txt; assert_eq $? 0 "diff without a limit"
"$BIN/cprof" diff small.db more.db --max-regression 10 > d.txt; assert_eq $? 1 "diff past --max-regression"
grep -q "^  --max-regression 10.0%: exceeded" d.txt || fail "diff says it was exceeded: $(cat d.txt)"
grep -q "^  FAIL kernel launches: 90 vs baseline 50" d.txt || fail "diff names the regression"
"$BIN/cprof" diff small.db more.db --max-regression 100 > d.txt; assert_eq $? 0 "diff within --max-regression"
"$BIN/cprof" diff more.db small.db --max-regression 0 > d.txt; assert_eq $? 0 "faster is no regression"
"$BIN/cprof" diff small.db more.db --max-regression x 2> /dev/null; assert_eq $? 2 "bad --max-regression"
# the verdict change first; kernels (GPU time) before calls; --top; a Change column of at most 8
"$BIN/cprof" diff small.db big.db --top 3 > d.txt; assert_eq $? 0 "diff small big"
# the verdicts come from the simulated GPU's timing, which this machine's load moves: read them, then check
# that the text says what they are, and "(changed)" exactly when they differ
set -- $("$BIN/cprof" diff small.db big.db --format json | python3 -c "import json,sys; v=json.load(sys.stdin)['verdict']; print(v['old'], v['new'], v['changed'])")
vold=$1 vnew=$2 vchanged=$3
if [ "$vold" != "$vnew" ]; then
	assert_eq "$vchanged" True "JSON verdict.changed"
	sed -n 2p d.txt | grep -q "^  verdict      $vold *-> $vnew   (changed)$" || fail "verdict change first: $(cat d.txt)"
else
	assert_eq "$vchanged" False "JSON verdict.changed"
	sed -n 2p d.txt | grep -q "^  verdict      $vold *-> $vnew$" || fail "verdict first: $(cat d.txt)"
fi
assert_eq "$(sed -n '/^  Kind/,/more;/p' d.txt | grep -c '^  \(kernel\|api\) ')" 3 "--top 3 rows"
sed -n '/^  Kind/{n;p}' d.txt | grep -q "^  kernel .*new .*sm90_xmma_gemm" || fail "first row: the new GEMM kernel: $(cat d.txt)"
"$BIN/cprof" diff small.db big.db --top 0 | awk '/^  Kind/ { t = 1; next } t && /^  (kernel|api) / { c = substr($0, 39, 8); if (c !~ /^ *[-+x0-9.%a-z]+$/ || substr($0, 47, 2) != "  ") exit 1 }' ||
	fail "a Change cell overflows its column"
# a factor past +1000%: xN, not a percentage
"$BIN/cprof" diff small.db big.db --format json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['schema'] == 'cprof.diff/1' and d['rows'] >= len(d['changes'])
big = [c for c in d['changes'] if c['change_pct'] is not None and c['change_pct'] > 1000]
assert big, d['changes']
print(big[0]['name'])" > bigname.txt || fail "diff JSON"
grep -Eq "x[0-9.]+ .*$(head -c 12 bigname.txt)" d.txt || "$BIN/cprof" diff small.db big.db --top 0 | grep -Eq " x[0-9.]+ " ||
	fail "no xN for a change past 1000%"
"$BIN/cprof" diff small.db big.db --format markdown > d.md
if [ "$vold" != "$vnew" ]; then want="$vold → $vnew (\*\*changed\*\*)"; else want="$vold → $vnew (unchanged)"; fi
grep -q "^\*\*Verdict:\*\* $want$" d.md || fail "diff markdown verdict: $(head -5 d.md)"
"$BIN/cprof" diff small.db big.db --format markdown -o d2.md > out.txt && [ ! -s out.txt ] && cmp -s d.md d2.md ||
	fail "diff -o FILE"
echo ok
