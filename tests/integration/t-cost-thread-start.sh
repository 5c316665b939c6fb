# Issue 26 item 3: a thread's schedstat counts from the thread's start, and the flusher read a thread first once its
# ring was in use, so all the thread had run and waited before (Python's start-up, the program's set-up) went into
# the first window's cost: 4.3 s of run and 157 ms of wait on a training run's two threads (2026-12-06). The thread
# now reads its baseline itself when it takes its ring. A program burns 0.6 s of CPU before its first recorded call
# and 0.4 s right after it, then makes 2,000 recorded calls: the rows hold the 0.4 s, not the 0.6. The flusher's
# rounds are 3 s apart here, so a baseline taken at the flusher's first reading of the thread (after the 0.4 s)
# would miss that too. Recorded whole and in a window alike.
. "$(dirname "$0")/lib.sh"
need_sim
cat > burn.py <<'PY'
import ctypes, sys, time

def burn(s):
    t = time.thread_time()
    while time.thread_time() - t < s:
        pass

burn(0.6)
rt = ctypes.CDLL("libcudart.so.13")
window = sys.argv[1] == "window"
rt.cudaFree(None)
if window:
    rt.cudaProfilerStart()
    rt.cudaDeviceSynchronize()
burn(0.4)
for _ in range(2000):
    rt.cudaDeviceSynchronize()
if window:
    rt.cudaProfilerStop()
PY
for how in whole window; do
	args=()
	[ "$how" = window ] && args=(--capture-range cudaProfilerApi)
	CPROF_FLUSH_MS=3000 sim "$BIN/cprof-run" -q -o "$how.db" "${args[@]}" -- python3 burn.py "$how" > "$how.out" 2> "$how.err" ||
		fail "cprof-run ($how): exit $? ($(tail -2 "$how.err"))"
	calls=$(q "$how.db" "SELECT count(*) FROM API_CALLS WHERE name = 'cudaDeviceSynchronize'")
	assert_ge "$calls" 2000 "recorded calls ($how)"
	run_ms=$(q "$how.db" "SELECT coalesce(max(appRunNs), 0) / 1000000 FROM CPROF_COST")
	echo "$how: the program's threads ran $run_ms ms by the rows (0.6 s burnt before the first recorded call, 0.4 s after)"
	[ "$run_ms" -ge 350 ] || fail "$how: the rows hold $run_ms ms of run: not the 0.4 s after the thread took its ring"
	[ "$run_ms" -lt 900 ] || fail "$how: the rows hold $run_ms ms of run: the thread's life before its first recorded call"
done
