# The library with no collector (stale FIFO, missing FIFO, no CPROF_FIFO): the target runs normally,
# at most one warning, nothing on stdout.
. "$(dirname "$0")/lib.sh"
LIB=$BUILD/lib/libcprof.so
"$WL/nodriver" > bare.out
mkfifo stale.fifo
for fifo in "$T/stale.fifo" "$T/missing.fifo" ""; do
	CPROF_FIFO=$fifo LD_PRELOAD=$LIB timeout 20 "$WL/nodriver" > out.txt 2> err.txt; rc=$?
	assert_eq "$rc" 0 "exit status (CPROF_FIFO='$fifo')"
	cmp -s bare.out out.txt || fail "stdout changed (CPROF_FIFO='$fifo')"
	[ "$(wc -l < err.txt)" -le 1 ] || fail "more than one warning: $(cat err.txt)"
done
# a C++ program throwing through 20 frames 100 times, profiled: exceptions stay the target's
out=$("$BIN/cprof-run" -q -o x.db -- "$WL/scenarios" throw) || fail "throw scenario failed: $out"
assert_eq "$out" "caught 100" "exceptions caught"
echo ok
