# The injected library never deadlocks its host from a signal handler: 8 threads push NVTX ranges with new messages
# (cprof interns each under its string table's lock) and allocate in malloc's arena while the main thread signals
# each of them every millisecond; each handler pushes and pops two ranges with messages new to cprof, in a domain
# past the 31 a thread's fixed level slots hold (a thread's first event, and with it its ring, may be a handler's). Until 2026-12-06 the handler took the string table's lock again on the
# thread that held it (4 hangs in 4 runs of this test), and a domain's level slot past the 30th was grown with
# realloc there. Now such a handler's new message is not kept (its range has no text) and its level slot comes from
# a page of its own. The run ends, the program's output is its own, and the handler's ranges are in the profile.
. "$(dirname "$0")/lib.sh"
need_sim
for round in 1 2 3; do
	sim timeout 60 "$BIN/cprof-run" -q -f -o sig.db -- "$WL/nvtx_demo" signal 300 > out.txt 2> err.txt
	rc=$?
	[ "$rc" -ne 124 ] || fail "round $round: the program hung under cprof-run (timeout): $(tail -3 err.txt)"
	assert_eq "$rc" 0 "round $round: exit status ($(tail -3 err.txt))"
	assert_eq "$(cat out.txt)" "signal 300" "round $round: the program's output"
	read -r ranges texts < <(q sig.db "SELECT count(*), count(nullif(textId, 0)) FROM NVTX_EVENTS n JOIN StringIds d ON d.id = n.domainId
		WHERE d.value = 'late'" | tr '|' ' ')
	echo "round $round: $ranges handler ranges in the profile, $texts with their text"
	assert_ge "$ranges" 1 "round $round: the handlers' ranges in the profile"
done
echo PASS
