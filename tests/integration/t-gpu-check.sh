# Issue 8: scripts/gpu-check in its simulated form, so it runs in every CI and never rots.
. "$(dirname "$0")/lib.sh"
need_sim
out=$(BUILD=$BUILD "$ROOT/scripts/gpu-check" --simulated --out "$T/gc" 2>&1); rc=$?
printf '%s\n' "$out" | tail -20
assert_eq "$rc" 0 "gpu-check exit status"
printf '%s\n' "$out" | grep -q "SIMULATED GPU" || fail "does not say simulated GPU"
assert_eq "$(grep -c ' FAIL ' "$T/gc/results.txt")" 0 "no failed check"
# steps 1 (six checks), 5, 6 (injection) and 7 run and pass on the simulated GPU
assert_eq "$(grep -c '^[1567] .* pass ' "$T/gc/results.txt")" 9 "checks that pass on the simulated GPU"
grep -q '^2 .* skip ' "$T/gc/results.txt" || fail "torch steps should be skipped here"
echo ok
