# Issue 2 / must show 3 and issue 7 scenario 1: SIGKILL of cprofd mid-run -> the target finishes with
# the stdout and exit status of a bare run (a C target with the default SIGPIPE disposition, and a
# Python target calling cudart through ctypes); one warning; the profile stays readable up to the kill
# and says it is incomplete.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
write_cu_py
# killed NAME CMD... SECS: runs CMD for 0.1 s bare (its output does not depend on how long it runs)
# and for SECS under cprof-run, killing the collector once it has stored some events
killed() {
	local name=$1 run cd_pid rc bare_rc
	shift
	sim "${@:1:$#-1}" 0.1 > "bare-$name.out" 2>/dev/null; bare_rc=$?
	LD_LIBRARY_PATH=$SIMLIB "$BIN/cprof-run" -q -o "$name.db" -- "$@" > "$name.out" 2> "$name.err" &
	run=$!
	cd_pid=$(collector_of $run) || fail "collector not found ($name)"
	# killed once something is committed (the store commits every 200 ms), so that there is a "before"
	for i in $(seq 250); do
		[ "$(sqlite3 "$name.db" "SELECT count(*) FROM CPROF_API" 2>/dev/null)" -gt 0 ] 2>/dev/null && break
		sleep 0.02
	done
	# SIGPIPE not ignored in the target (bit 13 of SigIgn): a SIGPIPE reaching it would kill it
	tpid=$(pgrep -P $run | grep -vx "$cd_pid" | head -1)
	[ -n "$tpid" ] && sigign=$(awk '/^SigIgn/ {print $2}' /proc/$tpid/status 2>/dev/null) &&
		echo "$name: target SigIgn $sigign" &&
		{ [ "$name" != c ] || [ $(( 0x$sigign & 0x1000 )) -eq 0 ] || fail "C target ignores SIGPIPE"; }
	kill -KILL "$cd_pid"
	wait $run; rc=$?
	assert_eq "$rc" "$bare_rc" "exit status with the collector killed ($name)"
	cmp -s "bare-$name.out" "$name.out" || fail "stdout differs from the bare run ($name): $(cat "$name.out")"
	[ "$(grep -c 'collector gone' "$name.err")" -eq 1 ] || fail "not exactly one warning ($name): $(cat "$name.err")"
	"$BIN/cprof" report "$name.db" > "report-$name.txt" || fail "report of a killed profile ($name)"
	grep -q INCOMPLETE "report-$name.txt" || fail "report does not say incomplete ($name)"
	assert_eq "$(meta "$name.db" complete)" 0 "complete ($name)"
	assert_eq "$(meta "$name.db" finalised)" 0 "finalised ($name)"
	assert_ge "$(q "$name.db" "SELECT count(*) FROM CPROF_API")" 1 "events stored before the kill ($name)"
	# no index to build at the finish (issue 32: cprofd makes none), so a killed collector's profile lacks
	# nothing a reader looks up by; every reader reads it (0, or 3: incomplete)
	assert_eq "$(q "$name.db" "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'")" 0 \
		"indexes in the killed profile ($name)"
	for c in "report --format json" "trace -f -o killed.json" "html -f -o killed.html" "info" "check" "stacks"; do
		"$BIN/cprof" $c "$name.db" > /dev/null 2> "reader.err"; rc=$?
		[ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "cprof $c of a killed profile ($name): exit $rc: $(cat reader.err)"
	done
}
killed c "$WL/scenarios" loop 1
assert_eq "$(cat c.out)" "loop done" "C target's stdout"
# 4 s: the kill waits for the first committed rows, which come 0.5-1.3 s after a Python target starts
# (interpreter, CUDA and CUPTI start-up); a 1 s loop was often over by then, and with it the calls that
# would have printed the warning
killed py "$PY" cu.py 1 sys.exit 4
assert_eq "$(cat py.out)" "python calls many" "Python target's stdout"
assert_ge "$(q py.db "SELECT count(*) FROM CPROF_API WHERE nameId IN (SELECT id FROM StringIds WHERE value='cudaMalloc')")" 1 "Python's cudaMalloc calls recorded"
echo ok
