# Issue 32 item 4 (cosmetic): CPROF_NO_CUPTI=0 turned CUPTI off (any value did), and CPROF_LIBUNWIND=/bin/ls
# was reported as "not found". =0 keeps CUPTI now (=1 or any other value still turns it off); a library that
# cannot be loaded is reported with the loader's reason.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
CPROF_NO_CUPTI=0 sim "$BIN/cprof-run" -q -o n0.db -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
assert_ge "$(q n0.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 3 "CPROF_NO_CUPTI=0: GPU records kept"
CPROF_NO_CUPTI=1 sim "$BIN/cprof-run" -q -o n1.db -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
assert_eq "$(q n1.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 0 "CPROF_NO_CUPTI=1: no GPU records"
CPROF_NO_CUPTI=yes sim "$BIN/cprof-run" -q -o ny.db -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
assert_eq "$(q ny.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 0 "CPROF_NO_CUPTI=yes: no GPU records"
CPROF_LIBUNWIND=/bin/ls sim "$BIN/cprof-run" -q -o u.db --stacks all -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt ||
	fail "run: $(cat err.txt)"
grep -q "not found" err.txt && fail "CPROF_LIBUNWIND=/bin/ls reported as not found: $(cat err.txt)"
grep -q "cannot load /bin/ls (.*)" err.txt || fail "no reason given: $(cat err.txt)"
assert_eq "$(wc -l < err.txt)" 1 "one line about it"
echo OK
