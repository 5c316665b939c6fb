# Issue 28: cprof report, check and html take the same threshold options through one parser
# (report/cmd/thresholds.c): each accepts them, refuses a bad value with the same message and exit 2, and
# --step-range changes which NVTX ranges are steps in each (simulated GPU).
. "$(dirname "$0")/lib.sh"
need_sim
sim "$BIN/cprof-run" -q -o prof.db -- "$WL/nvtx_demo" steps 6 > /dev/null 2> run.err || fail "nvtx_demo: $(cat run.err)"
OPTS="--include-startup --compute-pct 70 --overhead-pct 40 --kernel-wait-us 10 --step-range step"
"$BIN/cprof" report prof.db $OPTS > /dev/null 2> r.err || fail "report took the options: $(cat r.err)"
"$BIN/cprof" check prof.db $OPTS > /dev/null 2> c.err || fail "check took the options: $(cat c.err)"
"$BIN/cprof" html prof.db -o page.html $OPTS 2> h.err || fail "html took the options: $(cat h.err)"
for o in "--compute-pct 101" "--kernel-wait-us x" "--step-range ([" "--overhead-pct -1"; do
	msgs=""
	for c in report check "html -o bad.html"; do
		"$BIN/cprof" $c prof.db $o > /dev/null 2> bad.err; rc=$?
		assert_eq "$rc" 2 "cprof $c $o: exit status"
		msgs="$msgs|$(sed 's/^cprof [a-z]*: //' bad.err)"
	done
	first=$(echo "$msgs" | cut -d'|' -f2)
	[ -n "$first" ] || fail "$o: no message"
	assert_eq "$msgs" "|$first|$first|$first" "$o: one message from all three"
done
[ ! -e bad.html ] || fail "html wrote a page for a bad option"
# a pattern no range matches: no steps in report's JSON, no steps table in the page; the default finds 6
n() { "$BIN/cprof" report prof.db --format json "$@" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["steps"]))'; }
assert_eq "$(n)" 6 "report: default steps"
assert_eq "$(n --step-range '^nomatch$')" 0 "report --step-range: steps"
"$BIN/cprof" html prof.db -o - -q > all.html || fail "html"
"$BIN/cprof" html prof.db -o - -q --step-range '^nomatch$' > none.html || fail "html --step-range"
grep -q 'id="t-steps"' all.html || fail "the page has no steps table by default"
grep -q 'id="t-steps"' none.html && fail "html --step-range: a steps table for a pattern nothing matches"
exit 0
