# Issue 2 / must show 3 (and issue 7 scenario 1): SIGKILL of cprofd mid-run -> the target finishes
# with its own output and status; the profile stays readable and says it is incomplete.
. "$(dirname "$0")/lib.sh"
need_sim
LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" loop 2 > out.txt 2> err.txt &
run=$!
for i in $(seq 100); do
	cd_pid=$(pgrep -P $run -x cprofd) && [ -f prof.db ] && break
	sleep 0.05
done
[ -n "${cd_pid:-}" ] || fail "collector not found"
sleep 0.7
kill -KILL "$cd_pid"
wait $run; rc=$?
assert_eq "$rc" 7 "target's exit status"
assert_eq "$(cat out.txt)" "loop done" "target's stdout"
grep -q "collector gone" err.txt || fail "no warning about the collector: $(cat err.txt)"
[ "$(grep -c 'collector gone' err.txt)" -eq 1 ] || fail "warned more than once"
"$BIN/cprof" report prof.db > report.txt || fail "report of a killed profile: $(cat report.txt)"
grep -q INCOMPLETE report.txt || fail "report does not say incomplete"
assert_ge "$(q prof.db "SELECT count(*) FROM CPROF_API")" 1 "events stored before the kill"
echo ok
