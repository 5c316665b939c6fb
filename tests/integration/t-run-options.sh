# cprof-run's other options: --html writes the page after the run, --inject-only profiles through
# CUDA_INJECTION64_PATH alone (GPU records, no hooked calls), %r/%h/%p in -o.
. "$(dirname "$0")/lib.sh"
need_sim
sim "$BIN/cprof-run" -q -o a.db --html page.html -- "$WL/matmul_sweep" --sizes 64 --steps 5 > /dev/null || fail "--html run"
grep -q "Verdict\|verdict" page.html || fail "page has no verdict"
echo keep > kept.html
sim "$BIN/cprof-run" -q -o b.db --html kept.html -- true 2> err.txt; assert_eq $? 2 "--html refuses an existing page before the run"
assert_eq "$(cat kept.html)" keep "existing page untouched"
[ ! -e b.db ] || fail "the run started although the page could not be written"
# injection only: the driver loads the library; CUPTI records, no hooks
sim "$BIN/cprof-run" -q --inject-only -o inj.db -- "$WL/driver_launch" > /dev/null || fail "--inject-only driver program"
assert_eq "$(q inj.db "SELECT count(*) FROM KERNELS")" 100 "kernels of a driver-API program through injection"
sim "$BIN/cprof-run" -q --inject-only -o inj2.db -- "$WL/matmul_sweep" --sizes 64 --steps 5 > /dev/null || fail "--inject-only runtime program"
assert_eq "$(q inj2.db "SELECT count(*) FROM KERNELS")" 20 "kernels through injection"
assert_eq "$(q inj2.db "SELECT count(*) FROM CPROF_API")" 0 "no hooked calls without LD_PRELOAD"
# the user chose no hooks: the profile says so, and the report does not blame the program's build for it
assert_eq "$(q inj2.db "SELECT count(*) FROM CPROF_STATUS WHERE code = 'hooks-absent'")" 1 "hooks-absent stated once"
"$BIN/cprof" report inj2.db > inj2.txt || fail "report of an --inject-only profile"
grep -q "runtime-not-hooked" inj2.txt && fail "runtime-not-hooked fired on --inject-only: $(grep -A1 runtime-not-hooked inj2.txt)"
assert_eq "$(q a.db "SELECT count(*) FROM CPROF_STATUS WHERE code = 'hooks-absent'")" 0 "no hooks-absent when preloaded"
# placeholders
RANK=7 "$BIN/cprof-run" -q -o "p-%r-%h-%%.db" -- true || fail "placeholders"
[ -f "p-7-$(hostname)-%.db" ] || fail "placeholders expanded wrong: $(ls p-*)"
env -u RANK "$BIN/cprof-run" -q -o "q-%r.db" -- true && [ -f q-norank.db ] || fail "%r without a rank"
echo ok
