# Issue 7 scenario 15: the collector's disk fills up (a 640 KiB tmpfs, where mounting is allowed, and a file
# size limit, ulimit -f) -> the target is unaffected (its stdout and status, at most one warning on
# stderr); the profile keeps what was committed, passes SQLite's integrity check, reads, and is marked
# incomplete; cprofd says why and exits 1, cprof-run warns.
# (640 KiB: the schema and strings take ~400 KiB of WAL, and cprofd's spool shares the disk; 512 KiB left the
# first commit a few pages short about one run in four)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
# 5000 launches a second, API events only: a few commits (one per 200 ms) fit before the space runs out
export SIMGPU_LAUNCH_NS=200000 CPROF_NO_CUPTI=1
sim "$WL/scenarios" loop 0.1 > bare.out; bare=$?
check_full() {
	local what=$1 db=$2
	assert_eq "$rc" "$bare" "target's status ($what)"
	cmp -s bare.out out.txt || fail "target's stdout ($what): $(cat out.txt)"
	[ "$(grep -c 'collector gone' err.txt)" -le 1 ] || fail "more than one warning ($what)"
	grep -q "cannot write the profile" err.txt || fail "cprofd did not say why ($what): $(cat err.txt)"
	assert_eq "$(sqlite3 "$db" 'PRAGMA integrity_check')" ok "integrity ($what)"
	assert_eq "$(meta "$db" complete)" 0 "complete ($what)"
	echo "$what: reason '$(meta "$db" incomplete_reason)', $(q "$db" 'SELECT count(*) FROM CPROF_API') events kept"
	assert_ge "$(q "$db" 'SELECT count(*) FROM CPROF_API')" 1 "events committed before the disk filled ($what)"
	# the final word if there was room for it, else the one written when the profile was created
	assert_match "$(meta "$db" incomplete_reason)" "could not be written|out of disk space" "reason ($what)"
	"$BIN/cprof" report "$db" > report.txt || fail "report ($what)"
	grep -q INCOMPLETE report.txt || fail "report does not say incomplete ($what)"
	"$BIN/cprof" check "$db" --require-complete > /dev/null; assert_eq $? 3 "check --require-complete ($what)"
}
# a file size limit: SQLite's writes fail with EFBIG (cprofd ignores SIGXFSZ)
( ulimit -f 600 && sim "$BIN/cprof-run" -o limit.db -- "$WL/scenarios" loop 1.5 > out.txt 2> err.txt ); rc=$?
check_full "ulimit -f 600" limit.db
# a full file system
mkdir small
if mount -t tmpfs -o size=640k tmpfs small 2> mount.err; then
	trap 'umount "$T/small" 2>/dev/null; rm -rf "$T"' EXIT
	sim "$BIN/cprof-run" -o small/full.db -- "$WL/scenarios" loop 1.5 > out.txt 2> err.txt; rc=$?
	check_full "640 KiB tmpfs" small/full.db
	umount small
else
	echo "tmpfs variant skipped: cannot mount a tmpfs here ($(cat mount.err)); the file size limit covers the same path"
fi
echo ok
