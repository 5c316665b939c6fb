# Issue 19: Python call sites of CUDA calls made through ctypes.CDLL, which releases the GIL around each
# call (as PyTorch does around its ops): functions found on the libraries' own handles (dlsym), in the
# global scope, and from a second thread (and that on every CPython 3.9+ found). --by callsite names the
# two calling lines with exact counts.
# Simulated GPU.
. "$(dirname "$0")/lib.sh"
need_sim
SCRIPT=$ROOT/tests/workloads/py_ctypes_nogil.py
line() { grep -n "# CALLSITE $1\$" "$SCRIPT" | cut -d: -f1; }
G=20 M=5
for mode in handle global thread; do
	for stacks in sampled all; do
		sim "$BIN/cprof-run" -q --stacks $stacks -o $mode-$stacks.db -- python3 "$SCRIPT" $mode $G $M > out.txt ||
			fail "py_ctypes_nogil.py $mode ($stacks)"
		assert_eq "$(cat out.txt)" "$mode: gemm $G memset $M" "workload output ($mode, $stacks)"
		"$BIN/cprof" report $mode-$stacks.db --by callsite --format csv > sites.csv || fail "report ($mode, $stacks)"
		row() { grep -F ",$SCRIPT:$1 run" sites.csv | cut -d, -f1; }
		assert_eq "$(row "$(line gemm)")" $G "GEMM line ($mode, $stacks): $(head -5 sites.csv)"
		assert_eq "$(row "$(line memset)")" $M "memset line ($mode, $stacks): $(head -5 sites.csv)"
		# no call was left to ctypes' own frame
		assert_eq "$(grep -c '_ctypes_callproc\|/_ctypes' sites.csv)" 0 "no _ctypes call site ($mode, $stacks)"
	done
done
# the whole Python stack of a GEMM from the thread: run <- Thread.run <- ... <- Thread._bootstrap
frames=$(q thread-all.db "SELECT group_concat(fu.value, ' ') FROM (SELECT * FROM CPROF_STACK_FRAMES WHERE kind = 'python' AND stackId = (SELECT a.stackId FROM GEMMS g JOIN CPROF_API a ON a.id = g.id LIMIT 1) ORDER BY level) f JOIN StringIds fu ON fu.id = f.funcId")
assert_match "$frames" "^run (Thread\\.)?run .*_bootstrap\$" "Python stack of a GEMM from a thread"
# every CPython 3.9+ found here: the thread case, the two lines named
seen=" "
for v in 9 10 11 12 13 14; do
	for py in $(command -v python3.$v) /usr/bin/python3.$v $(ls /root/.pyenv/versions/3.$v.*/bin/python3.$v 2>/dev/null); do
		real=$("$py" -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null) || continue
		case $seen in *" $real "*) continue ;; esac
		seen="$seen$real "
		sim "$BIN/cprof-run" -q -f -o each.db -- "$py" "$SCRIPT" thread 3 2 > out.txt || fail "$py: py_ctypes_nogil.py thread"
		"$BIN/cprof" report each.db --by callsite --format csv > sites.csv || fail "$py: report"
		assert_eq "$(grep -F ",$SCRIPT:$(line gemm) run" sites.csv | cut -d, -f1)" 3 "$py: GEMM line"
		assert_eq "$(grep -F ",$SCRIPT:$(line memset) run" sites.csv | cut -d, -f1)" 2 "$py: memset line"
		echo "$py: ok"
	done
done
echo ok
