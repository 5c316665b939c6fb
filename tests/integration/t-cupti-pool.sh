# Issue 26 item 2: a CUPTI buffer a window asks for has its pages written ahead by cprof's flusher, also while the
# flusher defers CUPTI's records on a machine with no spare core (no buffer comes back to the pool then). Until
# 2026-12-07 each such window's first record cleared a fresh buffer's 2 MiB huge page on the program's thread, inside
# its cudaProfilerStart: 7-55 ms of a 60-140 ms PyTorch training block beside one `yes` (docs/bench.md, twenty-ninth
# session). The simulator logs each buffer CUPTI filled (SIMGPU_BUFFER_LOG: the bytes written, and how many of them
# lay on pages resident when cprof handed it over); the first, asked for at CUPTI's start before any flusher round,
# is the program's own to clear. Then a whole run that defers, where no buffer comes back while recording: the flusher
# writes the next one ahead on small pages, a step a round. Without PSI the flusher never defers: SKIP.
. "$(dirname "$0")/lib.sh"
need_sim
cat /proc/pressure/cpu > /dev/null 2>&1 || skip "no /proc/pressure/cpu (a kernel without PSI): the flusher never defers here"
yes_pids=()
trap 'kill "${yes_pids[@]}" 2> /dev/null; rm -rf "$T"' EXIT
# The bytes written past the pages resident when each buffer came, over the buffers after the first SKIP in FILE;
# fails when over 1/DENOM of those written
not_resident() { # FILE SKIP DENOM
	awk -v skip="$2" -v denom="$3" 'NR > skip { used += $2; if ($2 > $3) miss += $2 - $3 }
	     END { printf "written %d bytes after the first %d, %d of them on pages not resident\n", used, skip, miss
		   exit !(used > 0 && miss * denom <= used) }' "$1"
}
busy_cores
# six windows of 100 steps, 100 steps (>= 50 ms, a flusher period) apart; a cap that holds all six (the default,
# 8 MiB since 2026-12-07, converts after four and reuses those buffers: t-cupti-reuse)
SIMGPU_BUFFER_LOG=$PWD/buf.txt CPROF_DEFER_MB=64 CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o w.db --steps 1:100:every=200 -- \
	"$WL/window_loop" --steps 1200 --period-us 500 > /dev/null 2> err.txt || fail "run: $(tail -3 err.txt)"
kill "${yes_pids[@]}" 2> /dev/null
assert_eq "$(q w.db "SELECT count(*) FROM CPROF_WINDOWS")" 6 "windows"
rounds=$(deferred_rounds err.txt)
echo "deferred rounds: ${rounds:-none}; buffers (requested ns, bytes written, bytes on resident pages, address):"
cat buf.txt
assert_ge "${rounds:-0}" 1 "rounds deferred with every core taken"
# a buffer a window (after the first) wrote: each stop completes one
assert_ge "$(wc -l < buf.txt)" 6 "buffers CUPTI filled"
# held, not converted between the windows: no buffer came back to the pool, the case where only buffers written
# ahead keep the program's thread from clearing pages (when they come back, the old preload passed as well)
assert_ge "$(awk 'NR > 1 { print $4 }' buf.txt | sort -u | wc -l)" 4 "distinct buffers after the first (none came back)"
# the bytes written past the pages resident when it came, over every buffer but the first: the flusher writes ahead
# as far as CUPTI wrote lately and a quarter more, so only a window whose records grew past that faults any
not_resident buf.txt 1 10 || fail "the program's thread cleared over a tenth of its CUPTI buffers' pages (pages not written ahead)"
# A whole run that defers (no windows, no pause) holds every buffer too: the flusher writes the next ahead on small
# pages, a step a round (until 2026-12-07 every buffer after the first two was the program's thread's to clear: 9.4 and
# 10.1 MB of 13.6-14.3 MB on pages not resident in two runs; 0 in five after). The first three are left out: CUPTI's
# first request may come before the flusher's first fill, which writes its two only a quarter ahead.
busy_cores
SIMGPU_BUFFER_LOG=$PWD/whole.txt CPROF_DEBUG=3 sim "$BIN/cprof-run" -q -o whole.db -- "$WL/matmul_sweep" --sizes 64 \
	--steps 40000 > /dev/null 2> err2.txt || fail "whole run: $(tail -3 err2.txt)"
kill "${yes_pids[@]}" 2> /dev/null
rounds=$(deferred_rounds err2.txt)
echo "whole run: deferred rounds: ${rounds:-none}; buffers:"
cat whole.txt
assert_ge "${rounds:-0}" 1 "rounds deferred with every core taken (whole run)"
assert_ge "$(wc -l < whole.txt)" 5 "buffers CUPTI filled (whole run)"
not_resident whole.txt 3 3 || fail "the program's thread cleared over a third of its CUPTI buffers' pages in a whole run that deferred"
echo ok
