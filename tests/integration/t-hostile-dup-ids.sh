# Issue 32 item 4 (cprof fails to run): correlation ids repeated in a hand-made profile made every join on
# them quadratic (report ran 120-261 s on a 320 KB profile). Readers refuse a profile that repeats one many
# times (one line, exit 2, at once); a few repeats (a thread id the kernel reused) still read.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
sim "$BIN/cprof-run" -q -o p.db -- "$WL/scenarios" steady 3000 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
cp p.db all.db
q all.db "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = 7; UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = 7;
	UPDATE CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION SET correlationId = 7, externalId = 7; UPDATE CPROF_API SET correlationId = 7"
cp p.db api.db
q api.db "UPDATE CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION SET externalId = 7; UPDATE CPROF_API SET correlationId = 7"
cp p.db ext.db
q ext.db "UPDATE CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION SET correlationId = 7"
for db in all.db api.db ext.db; do
	for cmd in "report" "html -o h.html" "trace -o t.json" "check"; do
		set -- $cmd
		sub=$1
		shift
		timeout -k 2 10 "$BIN/cprof" "$sub" "$db" "$@" > out.txt 2> err.txt
		rc=$?
		[ $rc -eq 124 ] || [ $rc -eq 137 ] && fail "$db: cprof $cmd still running after 10 s"
		assert_eq "$rc" 2 "$db: cprof $cmd ($(cat err.txt))"
		assert_eq "$(wc -l < err.txt)" 1 "$db: cprof $cmd: one line"
		grep -q "repeats a correlation id" err.txt || fail "$db: message: $(cat err.txt)"
	done
done
# a thread id reused once: two calls share an id; the profile reads
cp p.db two.db
q two.db "UPDATE CPROF_API SET correlationId = (SELECT min(correlationId) FROM CPROF_API)
	WHERE id = (SELECT max(id) FROM CPROF_API)"
"$BIN/cprof" report two.db > /dev/null 2> err.txt || fail "a profile with one repeated id: $(cat err.txt)"
echo OK
