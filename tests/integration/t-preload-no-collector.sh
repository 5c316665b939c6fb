# The library with no collector (issue 7 scenario 4): a stale FIFO (no reader), a missing one, a path
# that is a regular file or another user's FIFO, no CPROF_FIFO at all -> the target runs normally
# (same stdout and status), exactly one warning (none without CPROF_FIFO), no wait (each run within
# 2 s of a bare one), and a file at the path never receives a byte.
. "$(dirname "$0")/lib.sh"
LIB=$BUILD/lib/libcprof.so
"$WL/nodriver" > bare.out
mkfifo stale.fifo
echo "the target's own file" > regular.file
mkfifo other.fifo && chown 65534 other.fifo
# a reader on the other user's FIFO, so that only the owner check can refuse it
sleep 30 <> other.fifo & reader=$!
for fifo in "$T/stale.fifo" "$T/missing.fifo" "$T/regular.file" "$T/other.fifo" ""; do
	start=$(date +%s%N)
	CPROF_FIFO=$fifo LD_PRELOAD=$LIB timeout 20 "$WL/nodriver" > out.txt 2> err.txt; rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	echo "CPROF_FIFO='$fifo': ${ms} ms, $(wc -l < err.txt) warning(s): $(cat err.txt)"
	assert_eq "$rc" 0 "exit status (CPROF_FIFO='$fifo')"
	cmp -s bare.out out.txt || fail "stdout changed (CPROF_FIFO='$fifo')"
	assert_eq "$(wc -l < err.txt)" "$([ -n "$fifo" ] && echo 1 || echo 0)" "warnings (CPROF_FIFO='$fifo')"
	[ "$ms" -lt 2000 ] || fail "the target waited ${ms} ms (CPROF_FIFO='$fifo')"
done
kill $reader
assert_eq "$(cat regular.file)" "the target's own file" "a regular file at CPROF_FIFO is untouched"
# a C++ program throwing through 20 frames 100 times, profiled: exceptions stay the target's
out=$("$BIN/cprof-run" -q -o x.db -- "$WL/scenarios" throw) || fail "throw scenario failed: $out"
assert_eq "$out" "caught 100" "exceptions caught"
# the same with a stack unwound (libunwind, loaded RTLD_LOCAL) at every launch inside the 20 frames
out=$("$BIN/cprof-run" -q --stacks all -o y.db -- "$WL/scenarios" throw) || fail "throw scenario with stacks failed: $out"
assert_eq "$out" "caught 100" "exceptions caught with --stacks all"
assert_eq "$(sqlite3 y.db "SELECT count(*) FROM LAUNCHES l JOIN CPROF_API a ON a.id = l.id WHERE a.stackId IS NULL")" 0 "every launch has a stack"
assert_ge "$(sqlite3 y.db "SELECT max(level) FROM CPROF_STACK_FRAMES")" 20 "stacks through the 20 frames"
echo ok
