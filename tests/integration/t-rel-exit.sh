# Issue 7 scenario 7: _exit(3), _Exit(3) and quick_exit(3) (issue 20) in C, os._exit(3) in Python (and exit(3), sys.exit(3) for
# comparison) -> status 3 as bare, and every event up to the exit is in the profile: the _exit hooks
# flush synchronously (bounded by CPROF_EXIT_TIMEOUT_MS), the process said goodbye, the profile is complete.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
write_cu_py
N=500
for how in _exit _Exit quick_exit exit; do
	sim "$WL/scenarios" exit3 1 $how > bare.out; bare=$?
	out=$(sim "$BIN/cprof-run" -q -f -o c.db -- "$WL/scenarios" exit3 $N $how); rc=$?
	assert_eq "$rc" 3 "C $how(3) status"
	assert_eq "$rc" "$bare" "C $how(3) status as bare"
	assert_eq "$out" "$(cat bare.out)" "C $how(3) stdout"
	assert_eq "$(q c.db "SELECT count(*) FROM LAUNCHES")" $N "C $how: launches up to the exit"
	assert_eq "$(q c.db "SELECT byeReason FROM PROCESSES")" "$([ $how = exit ] && echo exit || echo _exit)" "C $how: goodbye"
	assert_eq "$(meta c.db complete)" 1 "C $how: complete"
done
# Python: calls through ctypes.CDLL(None) (the default scope: the preload's hooks, as for a PLT call)
for how in os._exit sys.exit; do
	sim "$PY" cu.py 1 $how > bare.out; bare=$?
	out=$(sim "$BIN/cprof-run" -q -f -o py.db -- "$PY" cu.py $N $how); rc=$?
	assert_eq "$rc" 3 "Python $how(3) status"
	assert_eq "$rc" "$bare" "Python $how(3) status as bare"
	assert_eq "$out" "python calls $((2 * N))" "Python $how(3) stdout"
	assert_eq "$(q py.db "SELECT count(*) FROM API_CALLS WHERE name IN ('cudaMalloc', 'cudaFree')")" $((2 * N)) "Python $how: calls up to the exit"
	assert_eq "$(q py.db "SELECT byeReason FROM PROCESSES")" "$([ $how = os._exit ] && echo _exit || echo exit)" "Python $how: goodbye"
	assert_eq "$(meta py.db complete)" 1 "Python $how: complete"
done
# calls through a handle of libcudart itself (dlsym on the handle) reach the hooks too (issue 19)
sim "$BIN/cprof-run" -q -f -o handle.db -- "$PY" cu.py 10 handle > /dev/null
assert_eq "$(q handle.db "SELECT count(*) FROM API_CALLS WHERE name IN ('cudaMalloc', 'cudaFree')")" 20 "calls through a library handle are hooked"
echo ok
