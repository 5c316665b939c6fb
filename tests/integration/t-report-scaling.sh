# Issue 28: the report's time grows at most about linearly with the run. Profiles of 1x, 4x and 16x the same
# PyTorch-shaped workload (simulated GPU: scenarios torch-shaped, a driver call outside any hooked call before
# each launch, as torch's allocator and stream guard make them) are reported in one run, interleaved, best of
# three CPU times each; linear gives ratios of at most 4 and 16, the per-row NOT EXISTS of before 16 and 256.
# cprof-test-timeout: 420
. "$(dirname "$0")/lib.sh"
need_sim
N=100
for s in 1 4 16; do
	sim "$BIN/cprof-run" -q -o x$s.db -- "$WL/scenarios" torch-shaped $((N * s)) > x$s.out 2> x$s.err ||
		fail "cprof-run torch-shaped $((N * s)): $(tail -2 x$s.err)"
done
# the shape: twice as many driver calls (in no hooked call) as launches, and each in the API table
assert_eq "$(q x16.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_DRIVER")" $((N * 16 * 20)) "driver calls at 16x"
"$BIN/cprof" report x1.db --format csv > api.csv || fail "report --format csv"
grep -Eq "^[^,]*,[^,]*,$((N * 20)),.*,\"?cuCtxGetDevice\"?$" api.csv || fail "driver calls not in the API table: $(head -5 api.csv)"
TIMEFORMAT='%3U %3S'
cpu() { # cpu DB FORMAT: CPU seconds (user + system) of one report, or 'timeout'
	local t
	t=$( { time timeout 120 "$BIN/cprof" report "$1" --format "$2" > /dev/null 2>&1; } 2>&1 ) || { echo timeout; return; }
	echo "$t" | awk '{ printf "%.3f\n", $1 + $2 }'
}
declare -A best
for rep in 1 2 3; do
	for s in 1 4 16; do
		for f in text json; do
			t=$(cpu x$s.db $f)
			[ "$t" = timeout ] && fail "cprof report --format $f of ${s}x ($((N * s)) steps) took over 120 s or failed"
			k=$s.$f
			if [ -z "${best[$k]:-}" ] || awk -v a="$t" -v b="${best[$k]}" 'BEGIN { exit !(a < b) }'; then
				best[$k]=$t
			fi
		done
	done
done
for f in text json; do
	echo "report --format $f CPU s: 1x ${best[1.$f]} 4x ${best[4.$f]} 16x ${best[16.$f]}"
	# a floor of 20 ms under the 1x time: a report that fast is start-up, not rows
	awk -v a="${best[1.$f]}" -v b="${best[4.$f]}" -v c="${best[16.$f]}" -v f=$f 'BEGIN {
		if (a < 0.02) a = 0.02
		if (b / a > 8) { printf "4x/1x = %.1f (linear: <= 4)\n", b / a; exit 1 }
		if (c / a > 40) { printf "16x/1x = %.1f (linear: <= 16)\n", c / a; exit 1 }
		if (c / b > 8) { printf "16x/4x = %.1f (linear: <= 4)\n", c / b; exit 1 }
	}' || fail "report --format $f grows faster than linearly"
done

# The same calls in 16x the windows, over two processes (a fork): the report's time stays about flat. Each window's
# cost once walked every call of the run when the calls were of several processes: O(windows x calls), 14 s for
# 4,000 windows over 800k calls (2026-12-06); a 16x/1x ratio of 6.8 with that walk here.
cat > win.py <<'PYEOF'
import ctypes, os, sys
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
lib, p = ctypes.CDLL(None), ctypes.c_void_p()
windows, calls = int(sys.argv[1]), 60000
kid = os.fork()
for w in range(windows):
    lib.cudaProfilerStart()
    for i in range(calls // windows):
        lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
    lib.cudaProfilerStop()
if kid:
    os.waitpid(kid, 0)
PYEOF
for w in 250 4000; do
	sim "$BIN/cprof-run" -q -o w$w.db --capture-range cudaProfilerApi -- python3 win.py $w > w$w.out 2> w$w.err ||
		fail "cprof-run win.py $w: $(tail -2 w$w.err)"
	assert_eq "$(q w$w.db "SELECT count(*) FROM CPROF_WINDOWS")" $((2 * w)) "windows in the $w-window profile"
done
assert_eq "$(q w4000.db "SELECT count(*) FROM CPROF_API WHERE nameId IN (SELECT id FROM StringIds WHERE value = 'cudaMalloc')")" \
	"$(q w250.db "SELECT count(*) FROM CPROF_API WHERE nameId IN (SELECT id FROM StringIds WHERE value = 'cudaMalloc')")" \
	"the same calls in both"
b1= b16=
for rep in 1 2 3; do
	for w in 250 4000; do
		t=$(cpu w$w.db text)
		[ "$t" = timeout ] && fail "cprof report of the $w-window profile took over 120 s or failed"
		if [ $w = 250 ]; then
			{ [ -z "$b1" ] || awk -v a="$t" -v b="$b1" 'BEGIN { exit !(a < b) }'; } && b1=$t
		else
			{ [ -z "$b16" ] || awk -v a="$t" -v b="$b16" 'BEGIN { exit !(a < b) }'; } && b16=$t
		fi
	done
done
echo "report CPU s, the same calls in 500 / 8,000 windows of two processes: $b1 / $b16"
awk -v a="$b1" -v b="$b16" 'BEGIN { if (a < 0.02) a = 0.02; if (b / a > 3) { printf "16x windows / 1x = %.1f (flat: ~1)\n", b / a; exit 1 } }' ||
	fail "the report's time grows with the windows times the calls"
echo ok
