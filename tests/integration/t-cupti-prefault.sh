# Issue 26 item 2: once CUPTI has started, the flusher fills CUPTI's buffer pool with buffers whose pages it has
# written itself, so a thread of the program that CUPTI asks a buffer for does not clear them as CUPTI writes its
# records there (a training step's first window had ~10 ms of page clearing twice on the program's thread, right
# after the allocation, perf, 2026-12-07). window_loop --faults runs on 4 KiB pages, where a 4 MiB buffer is 1,024
# page faults on the thread that first writes it, and logs each thread's faults at its end. What this shows is that
# the flusher wrote the pool's pages; on the simulator the program's thread faults no less, because CUPTI asks for
# its first buffer at its start, before the flusher's round, and the window's records fill that one (perf,
# 2026-12-07); the pool serves the buffers CUPTI asks for later.
. "$(dirname "$0")/lib.sh"
need_sim
P=$WL/window_loop
sim "$BIN/cprof-run" -q -o w.db --steps 200:299 -- "$P" --steps 400 --period-us 1000 --faults f.txt > /dev/null 2> err.txt ||
	fail "run: $(cat err.txt)"
assert_ge "$(q w.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 400 "the window's kernels (CUPTI wrote its records)"
flusher=$(awk '$1 == "cprof-flusher" { print $2 }' f.txt)
echo "page faults: $(tr '\n' ' ' < f.txt)"
[ -n "$flusher" ] || fail "no cprof-flusher thread in $(cat f.txt)"
# the pool's two buffers, 2 x 1,024 pages, written by the flusher
assert_ge "$flusher" 2048 "the flusher's page faults"
echo ok
