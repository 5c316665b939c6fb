# Issue 3 / must show 3: CUPTI missing (the loader pointed at nothing) -> the target is unaffected,
# API events are still recorded, and the profile says why there are no GPU records.
. "$(dirname "$0")/lib.sh"
need_sim
sim "$WL/streams" > bare.out
CPROF_CUPTI_PATH=$T/nothing/libcupti.so.13 sim "$BIN/cprof-run" -q -o prof.db -- "$WL/streams" > prof.out 2> err.txt; rc=$?
assert_eq "$rc" 0 "exit status"
cmp -s bare.out prof.out || fail "output differs"
assert_eq "$(grep -c 'CUPTI' err.txt)" 1 "one line on stderr about CUPTI"
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" 24 "launches still recorded"
assert_eq "$(q prof.db "SELECT count(*) FROM KERNELS")" 0 "no GPU records"
assert_eq "$(q prof.db "SELECT code FROM CPROF_STATUS")" cupti-missing "status"
assert_match "$(q prof.db "SELECT value FROM META WHERE key='gpu_records_note'")" "nothing" "the reason names the path"
"$BIN/cprof" report prof.db | grep -q "GPU records:" || fail "report does not explain the missing GPU lane"
# and CUPTI that refuses (the real one, with no driver): also one line, same target behaviour
if ! nvidia-smi >/dev/null 2>&1; then
	"$BIN/cprof-run" -q -o real.db -- "$WL/nodriver" > real.out 2> real.err || fail "nodriver under cprof"
	# no driver answers: CUPTI is never loaded (the 13.2 wheels' CUPTI crashes when started without one)
	assert_eq "$(q real.db "SELECT code FROM CPROF_STATUS")" cupti-no-driver "no driver: CUPTI left alone"
	assert_le() { [ "$1" -le "$2" ] || fail "$3: $1 > $2"; }
	assert_le "$(grep -c CUPTI real.err)" 1 "CUPTI lines"
fi
echo ok
