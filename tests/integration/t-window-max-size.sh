# Issue 31 item 4: cprof-run --max-size stops storing when the profile would pass the size, says so, and counts
# what it did not store (stored + not stored = what the process emitted); the report shows where it stopped;
# without --max-size the limit is half the free disk space (at least 64 MiB), in META.
. "$(dirname "$0")/lib.sh"
meta() { q "$1" "SELECT value FROM META WHERE key='$2'"; }
need_sim
P=$WL/window_loop
sim "$BIN/cprof-run" -o ms.db --max-size 1M -- "$P" --seconds 2.5 --period-us 0 --log ms.log > ms.out 2> ms.err ||
	fail "max-size run: exit $? ($(cat ms.err))"
cmp -s <(head -c 9 ms.out) <(printf 'launches ') || fail "the program's output: $(cat ms.out)"
grep -q "recording stopped, later events are counted, not stored" ms.err || fail "no word of the limit: $(cat ms.err)"
size=$(stat -c %s ms.db)
[ "$size" -le 1048576 ] || fail "profile of $size bytes for --max-size 1M"
[ ! -e ms.db-wal ] || [ "$(stat -c %s ms.db-wal)" = 0 ] || fail "a WAL left beside the profile"
assert_eq "$(meta ms.db max_size)" 1048576 "max_size in META"
unrec=$(meta ms.db max_size_unrecorded)
assert_ge "$unrec" 1 "events not recorded"
# nothing vanished uncounted: what the process emitted is what was stored plus what was not
assert_eq "$(q ms.db "SELECT eventsEmitted - eventsRecorded - lostEvents FROM PROCESSES")" "$unrec" "unrecorded = emitted - stored"
grep -q "^cprof: recording stopped at --max-size (1048576 bytes): $unrec events and GPU records not recorded$" ms.err ||
	fail "cprof-run's summary does not say where recording stopped: $(cat ms.err)"
assert_eq "$(q ms.db "SELECT why || '|' || endWhy FROM CPROF_WINDOWS")" "whole run|max-size reached" "the window the limit cut"
assert_eq "$(q ms.db "SELECT count(*) FROM CPROF_API WHERE start > (SELECT end FROM CPROF_WINDOWS)")" 0 "no call stored after the cut"
made=$(wc -l < ms.log)
kept=$(q ms.db "SELECT count(*) FROM CPROF_API WHERE class = 'launch'")
[ "$kept" -lt "$made" ] || fail "all $made launches kept under a 1M limit"
"$BIN/cprof" report ms.db > ms.txt || fail "report"
grep -q "^Recording stopped at --max-size 1.0 MiB (+[0-9.]* s): $unrec events and GPU records after it were not recorded" ms.txt ||
	fail "the report does not say where recording stopped: $(sed -n 1,8p ms.txt)"
"$BIN/cprof" report ms.db --format json | python3 -c '
import json, sys
m = json.load(sys.stdin)["max_size"]
assert m["bytes"] == 1048576 and m["reached"] and m["unrecorded"] == int(sys.argv[1]), m' "$unrec" || fail "JSON max_size"
# the default: half the free space where the profile goes, never under 64 MiB; not reached by a small run
sim "$BIN/cprof-run" -q -o def.db -- "$P" --seconds 0.2 > /dev/null 2>&1 || fail "default run"
half=$(( $(stat -f -c '%a * %S' .) / 2 ))
want=$(( half > 67108864 ? half : 67108864 ))
lim=$(meta def.db max_size)
# the free space moves a little between cprof-run's look and ours
diff=$(( lim > want ? lim - want : want - lim ))
[ "$diff" -le $(( want / 20 )) ] || fail "default max_size $lim, want max(64 MiB, half the free space) = $want"
assert_eq "$(meta def.db max_size_unrecorded)" 0 "nothing cut by the default"
for bad in 10 1.5G 12X -1M 1Mi 1MiBx 1MBx; do
	"$BIN/cprof-run" -q -o bad.db --max-size "$bad" -- true 2> bad.err; assert_eq $? 2 "--max-size $bad"
done
# the docs' units are powers of 1024 (K, M, G, T, or KiB ...); MB and the like mean 1000s as often: refused in
# one line, before anything runs, not read as MiB
for bad in 1MB 2mb 1GB 3kB 1TB; do
	rm -f ran
	"$BIN/cprof-run" -q -o bad.db --max-size "$bad" -- touch ran 2> bad.err; assert_eq $? 2 "--max-size $bad"
	[ ! -e ran ] && [ ! -e bad.db ] || fail "--max-size $bad: the command ran"
	assert_eq "$(wc -l < bad.err)" 1 "--max-size $bad: one line"
	grep -q "^cprof-run: --max-size $bad: ${bad: -2} is ambiguous .*; write ${bad%??}[KMGT] or ${bad%??}[KMGT]iB " bad.err || fail "--max-size $bad: $(cat bad.err)"
done
for ok in 2M 2MiB 2m 2097152; do
	"$BIN/cprof-run" -q -f -o ok.db --max-size "$ok" -- true 2> ok.err || fail "--max-size $ok: $(cat ok.err)"
	assert_eq "$(meta ok.db max_size)" 2097152 "--max-size $ok"
done
echo "max-size 1M: profile $size bytes, $kept of $made launches stored, $unrec events and GPU records counted, not stored"
