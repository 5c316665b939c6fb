# Issue 32 item 4 (cosmetic): a profile without NVTX_EVENTS (an older or hand-made one) made cprof report
# leak the compiled step pattern (regcomp before the table check). Every reading command on such a profile
# frees what it allocated: valgrind finds no definite leak.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
command -v valgrind > /dev/null || skip "valgrind is not installed (Debian: valgrind)"
sim "$BIN/cprof-run" -q -o a.db -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
cp a.db nonvtx.db
q nonvtx.db "DROP TABLE NVTX_EVENTS"
for cmd in "report" "html -o h.html"; do
	set -- $cmd
	sub=$1
	shift
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 "$BIN/cprof" "$sub" nonvtx.db "$@" \
		> /dev/null 2> vg.txt
	assert_eq "$?" 0 "cprof $cmd on a profile without NVTX_EVENTS under valgrind ($(grep -m3 -A4 'definitely lost' vg.txt))"
done
echo OK
