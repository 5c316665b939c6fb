# Issue 32: every call's stack names its own Python file, function and line when each call site is new
# (strings never sent before), from one thread and from two at once over the same sites. On main before
# the fix 7 runs in 8 lost names: the flusher took the queued stacks after the strings it had just sent,
# so a stack queued in between reached cprofd before its names (stored as "?:2 ?"); a second thread
# could find a string marked queued before it was; and two sites' stacks could share one hash.
# Simulated GPU.
. "$(dirname "$0")/lib.sh"
need_sim
N=3000
for threads in 1 2; do
	sim "$BIN/cprof-run" -q -f --stacks all -o p.db -- python3 "$ROOT/tests/workloads/py_fresh_sites.py" $N $threads > out.txt ||
		fail "py_fresh_sites.py ($threads threads)"
	assert_eq "$(cat out.txt)" "sites $N threads $threads" "workload output"
	assert_eq "$(q p.db "SELECT count(*) FROM CPROF_API a JOIN StringIds n ON n.id = a.nameId WHERE n.value = 'cudaMemset'")" \
		$((N * threads)) "cudaMemset calls recorded ($threads threads)"
	assert_eq "$(q p.db "SELECT count(*) FROM CPROF_STACK_FRAMES WHERE (kind = 'python' AND (fileId IS NULL OR funcId IS NULL)) OR (kind = 'native' AND moduleId IS NULL)")" \
		0 "frames whose strings never reached the profile ($threads threads)"
	# each call's innermost Python frame is its own site: site_<i> in /fresh/site_<i>.py, line 2
	assert_eq "$(q p.db "SELECT count(*) FROM CPROF_API a JOIN StringIds n ON n.id = a.nameId
		LEFT JOIN CPROF_STACK_FRAMES f ON f.stackId = a.stackId AND f.kind = 'python' AND f.level = 0
		LEFT JOIN StringIds fs ON fs.id = f.fileId LEFT JOIN StringIds fu ON fu.id = f.funcId
		WHERE n.value = 'cudaMemset' AND (fs.value IS NULL OR fu.value IS NULL OR f.line != 2
		OR fs.value != '/fresh/' || fu.value || '.py')")" 0 "calls without their own site's frame ($threads threads)"
done
echo ok
