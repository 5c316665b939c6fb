# Issue 32 item 4 (cosmetic): cprof merge attached the second and later profiles read-write-capable: it left
# -wal and -shm files beside them, and failed in a read-only directory ("attempt to write a readonly
# database"). They are attached as every reader opens a profile: read-only, immutable when finished.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
sim "$BIN/cprof-run" -q -o a.db -- "$WL/scenarios" steady 3 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
cp a.db b.db
cp a.db "it's.db"
"$BIN/cprof" merge a.db b.db "it's.db" -o m.db 2> err.txt || fail "merge: $(cat err.txt)"
ls | grep -E -- '-(wal|shm)$' && fail "side files left by the merge"
assert_eq "$(q m.db "SELECT count(*) FROM PROCESSES")" 3 "processes merged"
# a read-only directory of inputs, as a user who may not write there (root may write anywhere)
id -u nobody > /dev/null 2>&1 || skip "no user 'nobody' to try a read-only directory as"
mkdir ro out
cp a.db b.db ro/
chmod 644 ro/*.db
chmod 555 ro
chmod 777 out
chmod 755 "$T"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$BIN/cprof" --version > /dev/null 2>&1 ||
	skip "user nobody cannot run $BIN/cprof (a build directory private to its owner)"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$BIN/cprof" merge ro/a.db ro/b.db -o out/m.db 2> err.txt ||
	fail "merge from a read-only directory: $(cat err.txt)"
assert_eq "$(q out/m.db "SELECT count(*) FROM PROCESSES")" 2 "processes merged from the read-only directory"
echo OK
