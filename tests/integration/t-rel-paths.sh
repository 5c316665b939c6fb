# Issue 7 scenario 16: files and paths. The run directory is 0700 and the FIFO 0600 whatever the umask
# (000, 022, 077, 777), the profile 0600; a symlink (dangling or not) or a file planted at the output
# path or at its -wal/-shm names is refused, never followed (lstat in cprof-run; O_CREAT|O_EXCL|O_NOFOLLOW
# and SQLITE_OPEN_NOFOLLOW in cprofd), and -f removes the link itself, not its target. Other users cannot
# reach the FIFO: it is 0600 in a 0700 directory (a FIFO carries no sender credentials, so this is the
# check; root can open anything anyway, and the library only writes to a FIFO its own uid owns).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
for m in 000 022 077 777; do
	out=$(umask $m && "$BIN/cprof-run" -q -o "u$m.db" -- sh -c 'echo $(stat -c %a "$(dirname "$CPROF_FIFO")") $(stat -c %a "$CPROF_FIFO") $(umask)') ||
		fail "run with umask $m"
	assert_eq "$out" "700 600 0$m" "run dir, FIFO modes and the target's own umask (umask $m)"
	assert_eq "$(stat -c %a "u$m.db")" 600 "profile mode (umask $m)"
done
echo precious > victim
for planted in "ln -s victim" "ln -s missing-target" "touch"; do
	for name in out.db out.db-wal out.db-shm; do
		rm -f out.db*
		$planted "$name"
		"$BIN/cprof-run" -q -o out.db -- true 2> err.txt; rc=$?
		assert_eq "$rc" 2 "$planted at $name is refused"
		grep -q "exists; pass -f" err.txt || fail "message ($planted $name): $(cat err.txt)"
		assert_eq "$(cat victim)" precious "symlink target untouched ($planted $name)"
	done
done
rm -f out.db* && ln -s victim out.db
"$BIN/cprof-run" -q -f -o out.db -- true || fail "-f over a symlink"
[ -L out.db ] && fail "-f kept the symlink"
assert_eq "$(cat victim)" precious "-f removed the link, not its target"
"$BIN/cprof" info out.db > /dev/null || fail "profile written after -f"
# the collector itself, handed a symlinked path (as if swapped in after cprof-run's check)
mkfifo f.fifo && ln -s victim swapped.db
"$BIN/cprofd" --fifo "$T/f.fifo" --db "$T/swapped.db" 2> err.txt; rc=$?
[ "$rc" -ne 0 ] || fail "cprofd wrote through a symlink"
grep -q "cannot create" err.txt || fail "cprofd's message: $(cat err.txt)"
assert_eq "$(cat victim)" precious "cprofd left the symlink's target alone"
# another user cannot write into a run's FIFO
if id nobody > /dev/null 2>&1 && command -v setpriv > /dev/null; then
	out=$("$BIN/cprof-run" -q -o other.db -- sh -c 'setpriv --reuid=nobody --regid=nogroup --clear-groups \
		sh -c "echo intruder > \"$CPROF_FIFO\"" 2>&1; echo "status $?"')
	assert_match "$out" "Permission denied" "another user opening the FIFO"
	assert_eq "$(meta other.db bad_frames)" 0 "nothing from the other user reached the collector"
else
	echo "other-user check skipped: no user 'nobody' or no setpriv here"
fi
echo ok
