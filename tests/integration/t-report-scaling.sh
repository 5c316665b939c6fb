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
echo ok
