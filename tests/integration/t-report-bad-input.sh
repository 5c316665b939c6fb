# cprof on bad input: one line on stderr, exit 2, nothing written.
. "$(dirname "$0")/lib.sh"
"$BIN/cprof" report missing.db 2>err.txt; assert_eq $? 2 "missing file"
assert_eq "$(wc -l < err.txt)" 1 "one line for a missing file"
echo "not a database" > junk.db
"$BIN/cprof" report junk.db 2>err.txt; assert_eq $? 2 "junk file"
assert_eq "$(wc -l < err.txt)" 1 "one line for junk"
grep -q "not a cprof profile" err.txt || fail "message: $(cat err.txt)"
assert_eq "$(cat junk.db)" "not a database" "junk file untouched"
sqlite3 other.db "CREATE TABLE x(a); INSERT INTO x VALUES(1);"
"$BIN/cprof" report other.db 2>err.txt; assert_eq $? 2 "another SQLite file"
"$BIN/cprof" 2>/dev/null; assert_eq $? 2 "no command"
"$BIN/cprof" frobnicate x.db 2>/dev/null; assert_eq $? 2 "unknown command"
"$BIN/cprof-run" -q -o ok.db -- true
"$BIN/cprof" report ok.db --format yaml 2>/dev/null; assert_eq $? 2 "bad format"
"$BIN/cprof" report ok.db --top x 2>/dev/null; assert_eq $? 2 "bad --top"
"$BIN/cprof" report ok.db >/dev/null; assert_eq $? 0 "empty profile reads"
# a report that could not be written (disk full) is an error, never exit 0
"$BIN/cprof" report ok.db >/dev/full 2>err.txt; assert_eq $? 2 "stdout on a full disk"
grep -q "write failure on standard output" err.txt || fail "message: $(cat err.txt)"
echo ok
