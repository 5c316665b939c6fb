# Issue 32 item 4 (host harmed, data lost f): an output that is not a regular file is written through, never
# renamed over or unlinked (/dev/null stays a device, /dev/stdout a link, a FIFO a FIFO), a link to a file
# keeps being a link; an output that is the input profile itself (by name or through a link), or a
# cprof-run --html page that is the profile, is refused with one line and exit 2, the profile intact.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
sim "$BIN/cprof-run" -q -o p.db -- "$WL/scenarios" steady 5 > /dev/null 2>err.txt || fail "run: $(cat err.txt)"
# another run: cprof merge refuses one run twice (exit 7), and the merges below must be refused for their output
sim "$BIN/cprof-run" -q -o q.db -- "$WL/scenarios" steady 5 > /dev/null 2>err.txt || fail "run: $(cat err.txt)"
calls=$(q p.db "SELECT count(*) FROM CPROF_API")
assert_ge "$calls" 1 "calls recorded"

# first the cases that harm only this test's directory on a cprof that renames over its target
ln -s /dev/null null-link
"$BIN/cprof" html p.db -o null-link -f 2>err.txt || fail "html through a link to /dev/null: $(cat err.txt)"
[ -L null-link ] || fail "the link to /dev/null was replaced by a regular file"
mkfifo page.fifo
cat page.fifo > from-fifo.html &
reader=$!
timeout 20 "$BIN/cprof" html p.db -o page.fifo -f 2>err.txt || fail "html into a FIFO: $(cat err.txt)"
wait $reader
[ -p page.fifo ] || fail "the FIFO was replaced"
grep -q '</html>' from-fifo.html || fail "the page did not go through the FIFO"
ls page.fifo.tmp.* 2>/dev/null && fail "a temporary file was left"
echo old > real.json
ln -s real.json t-link.json
"$BIN/cprof" trace p.db -o t-link.json -f 2>err.txt || fail "trace through a link to a file: $(cat err.txt)"
[ -L t-link.json ] || fail "the link to a file was replaced"
grep -q traceEvents real.json || fail "the file the link points to did not get the trace"

# the system's own /dev/null and /dev/stdout (safe now that the cases above passed)
"$BIN/cprof" html p.db -o /dev/null -f 2>err.txt || fail "html -o /dev/null: $(cat err.txt)"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
"$BIN/cprof" trace p.db -o /dev/stdout -f 2>err.txt | cat > piped.json || fail "trace -o /dev/stdout: $(cat err.txt)"
[ -L /dev/stdout ] || fail "/dev/stdout is no longer a link"
grep -q traceEvents piped.json || fail "the trace did not reach stdout"
{ echo first; "$BIN/cprof" trace p.db -o /dev/stdout -f; } > both.txt 2>err.txt || fail "trace -o /dev/stdout into a file: $(cat err.txt)"
assert_eq "$(head -1 both.txt)" first "what the shell wrote before the trace into the same stdout"
grep -q traceEvents both.txt || fail "the trace did not reach the redirected stdout"
"$BIN/cprof" merge p.db q.db -o /dev/null -f > /dev/null 2>err.txt && fail "merge into /dev/null accepted"
[ -c /dev/null ] || fail "merge replaced /dev/null"

# the output is the input
one_line_2() { # WHAT CMD...
	local what=$1
	shift
	"$@" > out.txt 2> err.txt
	assert_eq "$?" 2 "$what: exit status ($(cat err.txt))"
	assert_eq "$(wc -l < err.txt)" 1 "$what: stderr lines ($(cat err.txt))"
	assert_eq "$(q p.db "SELECT count(*) FROM CPROF_API")" "$calls" "$what: the profile's calls"
}
ln -s p.db link.db
one_line_2 "html -o the profile" "$BIN/cprof" html p.db -o p.db -f
grep -q "itself" err.txt || fail "message: $(cat err.txt)"
one_line_2 "html -o a link to the profile" "$BIN/cprof" html p.db -o link.db -f
one_line_2 "trace of the link -o the profile" "$BIN/cprof" trace link.db -o p.db -f
one_line_2 "merge -o an input" "$BIN/cprof" merge q.db p.db -o p.db -f
one_line_2 "merge -o a link to an input" "$BIN/cprof" merge q.db p.db -o link.db -f
"$BIN/cprof" info p.db > /dev/null 2>err.txt || fail "the profile is unreadable: $(cat err.txt)"
# cprof-run: the page would be the profile it has just written
sim "$BIN/cprof-run" -q -o r.db --html r.db -- "$WL/scenarios" steady 5 > /dev/null 2>err.txt
assert_eq "$?" 2 "cprof-run -o r.db --html r.db ($(cat err.txt))"
[ -e r.db ] && fail "cprof-run ran although the page is the profile"
mkdir sub
sim "$BIN/cprof-run" -q -f -o q.db --html sub/../q.db -- "$WL/scenarios" steady 5 > /dev/null 2>err.txt
assert_eq "$?" 2 "cprof-run -o q.db --html sub/../q.db ($(cat err.txt))"
assert_eq "$(q q.db "SELECT count(*) FROM CPROF_API")" "$calls" "q.db after the refused run"

# two cprof-run -f -o same.db at once: the second must not unlink the first's live profile (issue 32 item 4e).
# The first stays live until the second is done (a file it waits for), not for as long as 150,000 launches
# happened to take: those outran the rings on a loaded machine, and the first run's gate then failed.
sim "$BIN/cprof-run" -f -o same.db --check '--require-complete' -- sh -c '"$1" steady 2000 && while [ ! -e go ]; do sleep 0.02; done' sh "$WL/scenarios" > /dev/null 2> first.txt &
first=$!
while [ ! -e same.db ]; do sleep 0.02; done
sim "$BIN/cprof-run" -q -f -o same.db -- "$WL/scenarios" steady 7 > /dev/null 2> err.txt
assert_eq "$?" 2 "a second cprof-run -f onto a live profile ($(cat err.txt))"
grep -q "another cprof-run" err.txt || fail "message: $(cat err.txt)"
touch go
wait $first || fail "the first run: $(cat first.txt)"
assert_match "$(meta same.db command)" "steady 2000" "the profile at same.db is the first run's"
assert_ge "$(q same.db "SELECT count(*) FROM CPROF_API")" 2000 "the first run's calls"
grep -q " 2002 CUDA API calls" first.txt || fail "the first run's summary describes another run: $(cat first.txt)"
# once it is done, -f overwrites it as before
sim "$BIN/cprof-run" -q -f -o same.db -- "$WL/scenarios" steady 7 > /dev/null 2> err.txt || fail "-f after the run: $(cat err.txt)"
assert_match "$(meta same.db command)" "steady 7" "overwritten once the first run is over"
echo ok
