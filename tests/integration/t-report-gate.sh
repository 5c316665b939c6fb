# Issue 4 / must show 4: cprof check's exit codes 0, 1, 2 and 3, each produced here; cprof diff on two
# profiles of different sizes names the kernels that changed; cprof-run --check.
. "$(dirname "$0")/lib.sh"
need_sim
export SIMGPU_COPY_DATA=0
sim "$BIN/cprof-run" -q -o small.db -- "$WL/matmul_sweep" --sizes 64 --steps 20 > /dev/null
sim "$BIN/cprof-run" -q -o big.db -- "$WL/matmul_sweep" --sizes 64,1024 --steps 20 > /dev/null
sim "$BIN/cprof-run" -q -o more.db -- "$WL/matmul_sweep" --sizes 64 --steps 40 > /dev/null
# 0: the expectation holds
"$BIN/cprof" check small.db --expect overhead-bound --require-complete > out.txt; assert_eq $? 0 "expected verdict"
grep -q "^PASS" out.txt || fail "no PASS line"
# 1: wrong expectation, too much idle, regression against a baseline: one line each, both numbers
"$BIN/cprof" check small.db --expect compute-bound --max-gpu-idle 10 > out.txt; assert_eq $? 1 "failed gate"
assert_eq "$(grep -c '^FAIL' out.txt)" 2 "one line per failed condition"
grep -q "^FAIL small.db: verdict: overhead-bound .* expected compute-bound" out.txt || fail "verdict line: $(cat out.txt)"
grep -Eq "^FAIL small.db: GPU idle: [0-9.]+% of the window, allowed 10.0%" out.txt || fail "idle line: $(cat out.txt)"
"$BIN/cprof" check more.db --baseline small.db --max-regression 10 > out.txt; assert_eq $? 1 "regression"
grep -Eq "^FAIL more.db: kernel launches: 90 vs baseline 50" out.txt || fail "launch count line: $(cat out.txt)"
grep -q "^FAIL more.db: total GPU kernel time" out.txt || fail "GPU time line: $(cat out.txt)"
"$BIN/cprof" check small.db --baseline small.db --max-regression 0 > out.txt; assert_eq $? 0 "no regression against itself"
# 2: usage or unreadable input
"$BIN/cprof" check small.db --expect fast 2> err.txt; assert_eq $? 2 "bad --expect"
"$BIN/cprof" check missing.db 2> err.txt; assert_eq $? 2 "missing profile"
assert_eq "$(wc -l < err.txt)" 1 "one line"
"$BIN/cprof" check small.db --baseline missing.db 2> /dev/null; assert_eq $? 2 "missing baseline"
# 3: incomplete profile with --require-complete: the stored losses of a run that lost events (how a run loses
# them, and that it counts them, is t-rel-burst's: 300,000 launches racing the flusher here lost some on a
# busy machine and none on a quiet one)
cp small.db lossy.db
q lossy.db "UPDATE META SET value = '2613' WHERE key = 'lost_events'; UPDATE META SET value = '0' WHERE key = 'complete'; INSERT OR REPLACE INTO META(key, value) VALUES ('incomplete_reason', 'events were lost'); UPDATE PROCESSES SET lostEvents = 2613" > /dev/null
assert_ge "$(q lossy.db "SELECT value FROM META WHERE key='lost_events'")" 1 "events lost"
"$BIN/cprof" check lossy.db --require-complete > out.txt; assert_eq $? 3 "incomplete"
grep -q "^INCOMPLETE .*events were lost" out.txt || fail "incomplete line: $(cat out.txt)"
"$BIN/cprof" check lossy.db > /dev/null; assert_eq $? 0 "incomplete is fine without --require-complete"
# diff names what changed
"$BIN/cprof" diff small.db big.db > diff.txt; assert_eq $? 0 "diff"
grep -q "kernel .* new .*sm90_xmma_gemm\|kernel .*new" diff.txt || fail "diff does not name the new 1024 GEMM kernel: $(cat diff.txt)"
grep -Eq "kernel .*bias_add" diff.txt || fail "diff does not name bias_add"
grep -Eq "kernels +50 -> 100" diff.txt || fail "diff kernel count line: $(cat diff.txt)"
# cprof-run --check: the target's status when the gate passes, 1 when it fails
sim "$BIN/cprof-run" -q -o g1.db --check '--expect overhead-bound' -- "$WL/matmul_sweep" --sizes 64 --steps 20 > /dev/null 2>&1
assert_eq $? 0 "cprof-run --check passing"
sim "$BIN/cprof-run" -q -o g2.db --check '--expect compute-bound' -- "$WL/matmul_sweep" --sizes 64 --steps 20 > /dev/null 2> err.txt
assert_eq $? 1 "cprof-run --check failing"
grep -q "FAIL .*g2.db: verdict" err.txt || fail "gate output not on stderr"
# cprof-run --check with options cprof check refuses: exit 2 (usage, not 1: no gate ran) with one line, before
# CMD or the collector starts (cprof check --validate-only, the one parser of the options)
for bad in '--expct compute-bound' '--expect fast' '--max-regression 5' '--baseline missing.db' '--top' '-h' '--help' \
	"--expect mixed $(printf 'stray\033[2J')"; do
	rm -f ran
	sim "$BIN/cprof-run" -o g3.db --check "$bad" -- sh -c 'touch ran' > out.txt 2> err.txt
	assert_eq $? 2 "cprof-run --check '$bad'"
	[ ! -e ran ] || fail "--check '$bad': the command ran before its gate options were refused"
	[ ! -e g3.db ] || fail "--check '$bad': a profile was written"
	assert_eq "$(wc -l < err.txt)" 1 "--check '$bad': one line ($(cat err.txt))"
	grep -q "^cprof-run: --check: .*; nothing was run$" err.txt || fail "--check '$bad': $(cat err.txt)"
	! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' err.txt || fail "--check '$bad': control bytes in $(od -c err.txt)"
	[ ! -s out.txt ] || fail "--check '$bad' wrote to stdout: $(cat out.txt)"
done
grep -qF "'stray\\x1b[2J' is not an option" err.txt || fail "the stray argument, escaped: $(cat err.txt)"
"$BIN/cprof" check small.db --expct 2> err.txt; assert_eq $? 2 "cprof check, an unknown option"
grep -q "^cprof check: unknown or ambiguous option '--expct'" err.txt || fail "cprof check's line: $(head -1 err.txt)"
echo ok
