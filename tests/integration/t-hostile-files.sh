# Issue 21 items 1 and 3: odd files handed to cprof. A FIFO (or a symlink to one, or a directory, or a
# device) is refused at once by every command with one line and exit 2, instead of blocking in open(2)
# forever; a profile whose StringIds holds a NULL (a hand-made file: cprofd's schema says NOT NULL) is
# refused with one line and exit 2 by every command, instead of a SIGSEGV in report and html.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
one_line_exit2() { # WHAT CMD... : exit 2 within 10 s, exactly one line on stderr, naming why
	local what=$1
	shift
	timeout -k 2 10 "$@" > out.txt 2> err.txt
	local rc=$?
	[ $rc -eq 124 ] || [ $rc -eq 137 ] && fail "$what: still blocked after 10 s: $*"
	assert_eq "$rc" 2 "$what: exit status of $*  ($(cat err.txt))"
	assert_eq "$(wc -l < err.txt)" 1 "$what: stderr lines of $* ($(cat err.txt))"
}
sim "$BIN/cprof-run" -q -o ok.db -- "$WL/scenarios" steady 5 > /dev/null 2>err.txt || fail "run: $(cat err.txt)"
mkfifo f.db
ln -s f.db link.db
mkdir dir.db
for bad in f.db link.db dir.db /dev/null; do
	one_line_exit2 "$bad" "$BIN/cprof" info "$bad"
	grep -q "not a regular file" err.txt || fail "$bad: message: $(cat err.txt)"
	one_line_exit2 "$bad" "$BIN/cprof" report "$bad"
	one_line_exit2 "$bad" "$BIN/cprof" report "$bad" --format json
	one_line_exit2 "$bad" "$BIN/cprof" trace "$bad" -o t.json
	one_line_exit2 "$bad" "$BIN/cprof" html "$bad" -o h.html
	one_line_exit2 "$bad" "$BIN/cprof" check "$bad"
	one_line_exit2 "$bad" "$BIN/cprof" check ok.db --baseline "$bad"
	one_line_exit2 "$bad" "$BIN/cprof" diff ok.db "$bad"
	one_line_exit2 "$bad" "$BIN/cprof" diff "$bad" ok.db
	one_line_exit2 "$bad" "$BIN/cprof" merge "$bad" ok.db -o m.db
	one_line_exit2 "$bad" "$BIN/cprof" merge ok.db "$bad" -o m.db
	[ -e t.json ] || [ -e h.html ] || [ -e m.db ] && fail "$bad: an output was written"
done
[ -p f.db ] || fail "the FIFO was replaced"

# NULL in StringIds: the NOT NULL constraint dropped by a dump and reload, then the API names nulled
sqlite3 ok.db .dump | sed 's/value TEXT NOT NULL UNIQUE/value TEXT UNIQUE/' | sqlite3 null.db || fail "reload"
q null.db "UPDATE StringIds SET value = NULL WHERE id IN (SELECT nameId FROM CPROF_API)"
assert_eq "$(q null.db "SELECT count(*) > 0 FROM StringIds WHERE value IS NULL")" 1 "NULL API names"
for cmd in "info" "report" "report --format json" "report --format csv" "report --by api" "check" "diff ok.db" "trace -o t.json" "html -o h.html" "merge ok.db -o m.db"; do
	set -- $cmd
	sub=$1
	shift
	if [ "$sub" = diff ]; then set -- "$@"; fi
	one_line_exit2 "NULL name" "$BIN/cprof" "$sub" null.db "$@"
	grep -q "StringIds" err.txt || fail "$cmd: message: $(cat err.txt)"
done
[ -e t.json ] || [ -e h.html ] || [ -e m.db ] && fail "NULL name: an output was written"
echo ok
