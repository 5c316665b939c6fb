# Issue 11: NVTX v3 annotations reach the profile through NVTX_INJECTION64_PATH as nested ranges, marks and
# names, exactly; without cprof-run the program is unchanged, and a program without NVTX is unaffected.
. "$(dirname "$0")/lib.sh"
need_sim
[ -x "$WL/nvtx_demo" ] || fail "$WL/nvtx_demo not built"
N=10
# forward: 3 kernels, backward: 2, the first (cold) step 4 more
KERNELS=$((N * 5 + 4))
WANT="steps $N kernels $KERNELS"

# (1) annotated under cprof-run
out=$(sim "$BIN/cprof-run" -q -o prof.db -- "$WL/nvtx_demo" steps $N 2>err.txt) || fail "run failed: $(cat err.txt)"
assert_eq "$out" "$WANT" "stdout under cprof-run"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='lost_events'")" 0 "lost events"
nv() { q prof.db "SELECT $1 FROM NVTX_EVENTS e LEFT JOIN StringIds t ON t.id = e.textId
	LEFT JOIN StringIds d ON d.id = e.domainId ${2:+WHERE $2}"; }
# N steps, N forward, N backward, the domain range, the wide one, the start/end range, the mark
assert_eq "$(nv "count(*)")" $((3 * N + 4)) "NVTX events"
assert_eq "$(q prof.db "SELECT count(*) FROM CPROF_API WHERE class = 'nvtx'")" 0 "NVTX events are not API calls"
assert_eq "$(nv "count(*)" "e.end IS NULL OR e.start > e.end")" 0 "every event ends, not before it starts"
assert_eq "$(nv "count(*)" "t.value = 'step' AND e.eventType = 'range' AND e.depth = 0 AND e.parentId IS NULL
	AND e.domainId IS NULL AND e.endTid = e.tid")" $N "step ranges at depth 0"
assert_eq "$(q prof.db "SELECT count(*) FROM NVTX_EVENTS f JOIN StringIds t ON t.id = f.textId
	JOIN NVTX_EVENTS p ON p.id = f.parentId JOIN StringIds pt ON pt.id = p.textId
	WHERE t.value = 'forward' AND f.depth = 1 AND pt.value = 'step' AND p.tid = f.tid
	AND p.start <= f.start AND f.end <= p.end")" $N "forward ranges nested in steps"
assert_eq "$(q prof.db "SELECT count(DISTINCT f.parentId) FROM NVTX_EVENTS f JOIN StringIds t ON t.id = f.textId
	WHERE t.value IN ('forward', 'backward')")" $N "each step holds its own forward and backward"
assert_eq "$(nv "count(*)" "t.value = 'backward' AND e.depth = 1 AND e.color = 4278255360 AND e.categoryId = 7")" \
	$N "backward ranges with their colour and category"
assert_eq "$(nv "e.eventType || ' ' || d.value || ' ' || e.depth" "t.value = 'load batch'")" "range demo.io 0" \
	"registered string in a domain of its own, levels counted per domain"
assert_eq "$(nv "count(*)" "t.value = 'wide ünïcode ✓' AND e.depth = 0")" 1 "wide-character message as UTF-8"
assert_eq "$(nv "e.eventType || ' ' || (e.endTid != e.tid) || ' ' || (e.end > e.start)" "t.value = 'async io'")" \
	"startend 1 1" "start/end range ended on another thread"
assert_eq "$(nv "e.eventType || ' ' || (e.start = e.end) || ' ' || coalesce(e.depth, 'null')" "t.value = 'checkpoint'")" \
	"mark 1 null" "mark"
# names: the thread's key is the tid the ranges carry, the stream's the handle the launches carry
main_tid=$(nv "DISTINCT e.tid" "t.value = 'step'")
assert_eq "$(q prof.db "SELECT n.key FROM CPROF_NAMES n JOIN StringIds s ON s.id = n.nameId
	WHERE n.kind = 'thread' AND s.value = 'main thread'")" "$main_tid" "thread name"
assert_eq "$(q prof.db "SELECT count(*) FROM CPROF_NAMES n JOIN StringIds s ON s.id = n.nameId
	WHERE n.kind = 'stream' AND s.value = 'compute stream'
	AND n.key IN (SELECT DISTINCT stream FROM LAUNCHES)")" 1 "stream name"
# the launches made inside each range lie inside its span, on its thread
inside="SELECT count(*) FROM NVTX_EVENTS e JOIN StringIds t ON t.id = e.textId JOIN LAUNCHES l
	ON l.tid = e.tid AND l.start >= e.start AND l.end <= e.end"
assert_eq "$(q prof.db "$inside WHERE t.value = 'forward'")" $((N * 3 + 4)) "launches inside forward ranges"
assert_eq "$(q prof.db "$inside WHERE t.value = 'backward'")" $((N * 2)) "launches inside backward ranges"
assert_eq "$(q prof.db "$inside WHERE t.value = 'step'")" $KERNELS "launches inside step ranges"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" $KERNELS "all launches recorded"
# the first step is the cold one: longer than any later step
assert_eq "$(nv "e.end - e.start > (SELECT max(x.end - x.start) FROM NVTX_EVENTS x JOIN StringIds xt
	ON xt.id = x.textId WHERE xt.value = 'step' AND x.start > e.start)" \
	"t.value = 'step' ORDER BY e.start LIMIT 1")" 1 "first step slowest"
# the demo pops once more than it pushes: reported, not stored, and the levels it got were right (exit 0)
assert_match "$(q prof.db "SELECT message FROM DIAGNOSTICS WHERE message LIKE 'NVTX%'")" \
	"^NVTX annotations that did not pair: 1 nvtxRangePop without a push;" "unmatched pop diagnostic"

# (2) the same program without cprof-run, and with the injection variable but no collector: unchanged
out=$(sim "$WL/nvtx_demo" steps $N) || fail "plain run failed"
assert_eq "$out" "$WANT" "stdout without cprof-run"
out=$(NVTX_INJECTION64_PATH=$BUILD/lib/libcprof.so sim "$WL/nvtx_demo" steps $N 2>err.txt) ||
	fail "run with the injection but no collector failed: $(cat err.txt)"
assert_eq "$out" "$WANT" "stdout with the injection but no collector"

# (3) programs that never call NVTX: nothing NVTX in the profile, everything else as before
out=$(sim "$BIN/cprof-run" -q -o plain.db -- "$WL/nvtx_demo" plain $N) || fail "plain run under cprof-run failed"
assert_eq "$out" "$WANT" "stdout of the plain mode"
assert_eq "$(q plain.db "SELECT count(*) FROM NVTX_EVENTS") $(q plain.db "SELECT count(*) FROM CPROF_NAMES")" "0 0" \
	"no NVTX rows without NVTX calls"
assert_eq "$(q plain.db "SELECT count(*) FROM LAUNCHES")" $KERNELS "plain launches"
assert_eq "$(q plain.db "SELECT count(*) FROM DIAGNOSTICS")" 0 "plain diagnostics"
want=$(sim "$WL/scenarios" threads 200) || fail "scenarios without cprof-run failed"
out=$(sim "$BIN/cprof-run" -q -o other.db -- "$WL/scenarios" threads 200) || fail "scenarios under cprof-run failed"
assert_eq "$out" "$want" "scenarios stdout"
assert_eq "$(q other.db "SELECT count(*) FROM NVTX_EVENTS")" 0 "scenarios NVTX events"
assert_eq "$(q other.db "SELECT count(*) FROM LAUNCHES")" 200 "scenarios launches"

# (4) the user's own NVTX_INJECTION64_PATH stays, with a warning; the program runs, CUDA is still profiled
out=$(NVTX_INJECTION64_PATH=$T/no-such-tool.so sim "$BIN/cprof-run" -o user.db -- "$WL/nvtx_demo" steps $N 2>err.txt) ||
	fail "run with the user's NVTX_INJECTION64_PATH failed: $(cat err.txt)"
assert_eq "$out" "$WANT" "stdout with the user's injection"
grep -q "NVTX_INJECTION64_PATH=$T/no-such-tool.so kept" err.txt || fail "no warning about the user's NVTX_INJECTION64_PATH: $(cat err.txt)"
assert_eq "$(q user.db "SELECT count(*) FROM NVTX_EVENTS")" 0 "annotations went to the user's tool"
assert_eq "$(q user.db "SELECT count(*) FROM LAUNCHES")" $KERNELS "launches with the user's injection"
# more distinct messages than the string table keeps for NVTX (40960 of its 65536): every range is still
# there, the ones past the limit named by one placeholder, nothing is lost, and a kernel launched after
# them keeps its name (the one interner keeps room for kernel and API names)
sim "$BIN/cprof-run" -q -o many.db -- "$WL/nvtx_demo" many 52000 > many.txt || fail "nvtx_demo many"
assert_eq "$(q many.db "SELECT count(*) FROM NVTX_EVENTS")" 52000 "ranges kept past the string limit"
assert_ge "$(q many.db "SELECT count(*) FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE s.value = '(not kept: too many distinct strings)'")" 2848 "placeholder past the limit"
assert_eq "$(q many.db "SELECT count(*) FROM NVTX_EVENTS WHERE textId IS NULL")" 0 "no range without text"
assert_eq "$(q many.db "SELECT value FROM META WHERE key = 'lost_events'")" 0 "nothing lost"
assert_eq "$(q many.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.nameId WHERE s.value LIKE '%forward%'")" 1 "the kernel's name in its GPU record after the flood"
assert_eq "$(q many.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.kernelNameId JOIN StringIds c ON c.id = a.nameId WHERE s.value LIKE '%forward%' AND c.value = '__cudaLaunchKernel'")" 1 "the kernel's name in its launch after the flood"
echo ok
