# Issue 7 scenarios 5 and 6: the target segfaults, aborts, or SIGKILLs itself after N launches ->
# cprof-run exits 128+signal like the bare command; the target sees SIGSEGV/SIGABRT at their default
# disposition (cprof's crash handler is behind its sigaction hook), and the core dump still happens; and every event
# recorded more than a flush period before the crash is in the profile (the guarantee; here the target
# pauses 200 ms, 20 flush periods, before it crashes), the process marked as ended without goodbye.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
N=300
cores=$(cat /proc/sys/kernel/core_pattern)
for how in segv:139 abort:134 kill9:137; do
	sig=${how%%:*} want=${how##*:}
	cd "$T" && mkdir "$sig" && cd "$sig" || fail "mkdir"
	ulimit -c unlimited 2>/dev/null
	sim "$WL/scenarios" crash 1 "$sig" > bare.out 2>/dev/null; bare=$?
	rm -f core core.*
	# (an ASan build of cprof-run would lower RLIMIT_CORE for itself and so for the target: not here)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}disable_coredump=0 \
		sim "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" crash $N "$sig" > out.txt 2> err.txt; rc=$?
	assert_eq "$rc" "$want" "cprof-run's status ($sig)"
	assert_eq "$rc" "$bare" "same status as the bare command ($sig)"
	assert_eq "$(cat out.txt)" "disposition default" "the target's disposition of the signal ($sig)"
	assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" $N "launches before the crash ($sig)"
	assert_eq "$(q prof.db "SELECT count(*) FROM PROCESSES WHERE byeReason IS NULL")" 1 "no goodbye ($sig)"
	assert_eq "$(meta prof.db term_signal)" "$((want - 128))" "term_signal ($sig)"
	assert_eq "$(meta prof.db complete)" 0 "complete ($sig)"
	"$BIN/cprof" report prof.db > /dev/null || fail "report ($sig)"
	if [ "$sig" != kill9 ]; then
		case $cores in
		core*) [ "$(ulimit -c)" = 0 ] && { echo "$sig: core dump not checked: ulimit -c is 0 here"; continue; }
			ls core* > /dev/null 2>&1 || fail "no core dump ($sig; core_pattern $cores, ulimit -c $(ulimit -c))"
			echo "$sig: core dumped" ;;
		*) echo "$sig: core dump not checked: core_pattern is '$cores', not a file in the working directory" ;;
		esac
	fi
done
echo ok
