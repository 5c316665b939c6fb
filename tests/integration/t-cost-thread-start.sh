# Issue 26 item 3: a thread's schedstat counts from the thread's start, and the flusher read a thread's run and wait
# first when its ring was already in use, so all the thread had run and waited before its first recorded call
# (Python's start-up, the program's set-up) went into the first window's cost: 4.3 s of run and 157 ms of wait on a
# training run's two threads (2026-12-06). The thread's baseline is now read when it takes its ring. A program burns
# 0.6 s of CPU before its first CUDA call, then makes 2,000 recorded calls: what the rows say its threads ran is
# the calls' part, not the 0.6 s; recorded whole and in a window alike.
. "$(dirname "$0")/lib.sh"
need_sim
cat > burn.py <<'PY'
import ctypes, sys, time
t = time.thread_time()
while time.thread_time() - t < 0.6:
    pass
rt = ctypes.CDLL("libcudart.so.13")
window = sys.argv[1] == "window"
rt.cudaFree(None)
if window:
    rt.cudaProfilerStart()
for _ in range(2000):
    rt.cudaDeviceSynchronize()
if window:
    rt.cudaProfilerStop()
PY
for how in whole window; do
	args=()
	[ "$how" = window ] && args=(--capture-range cudaProfilerApi)
	sim "$BIN/cprof-run" -q -o "$how.db" "${args[@]}" -- python3 burn.py "$how" > "$how.out" 2> "$how.err" ||
		fail "cprof-run ($how): exit $? ($(tail -2 "$how.err"))"
	calls=$(q "$how.db" "SELECT count(*) FROM API_CALLS WHERE name = 'cudaDeviceSynchronize'")
	assert_ge "$calls" 2000 "recorded calls ($how)"
	run_ms=$(q "$how.db" "SELECT coalesce(max(appRunNs), 0) / 1000000 FROM CPROF_COST")
	echo "$how: the program's threads ran $run_ms ms by the rows (0.6 s burnt before the first call)"
	[ "$run_ms" -gt 0 ] || fail "$how: no run time in the rows at all"
	[ "$run_ms" -lt 300 ] || fail "$how: the rows hold $run_ms ms of run: the thread's life before its first recorded call"
done
