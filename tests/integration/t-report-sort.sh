# Issue 30: cprof report --sort KEY (torch.profiler's sort_by) orders the kernel, memory and API tables in every
# format; --timeunit (nsys stats') fixes their unit; bad values are usage errors. Simulated GPU.
. "$(dirname "$0")/lib.sh"
need_sim
export SIMGPU_COPY_DATA=0
sim "$BIN/cprof-run" -q -o big.db -- "$WL/matmul_sweep" --sizes 64,1024 --steps 20 > /dev/null || fail "matmul_sweep"
# KEY JSON-FIELD: the API rows in JSON follow the key, largest first (names A to Z)
order() {
	"$BIN/cprof" report big.db --format json --sort "$1" | python3 -c "
import json, sys
rows = json.load(sys.stdin)['$2']
key = '$3'
v = [r[key] for r in rows]
want = sorted(v) if key == 'name' else sorted(v, reverse=True)
assert v == want, (key, v)
assert len(rows) >= 3, rows
" || fail "--sort $1: $2 not by $3"
}
order total apis total_ns
order calls apis calls
order avg apis avg_ns
order med kernels med_ns
order max apis max_ns
order min apis min_ns
order std apis std_ns
order name apis name
order instances kernels calls
# text and CSV in the same order as JSON
"$BIN/cprof" report big.db --by api --sort calls --format csv | tail -n +2 | cut -d, -f3 > calls.txt
sort -rn calls.txt | cmp -s - calls.txt || fail "CSV not by calls: $(cat calls.txt)"
"$BIN/cprof" report big.db --by kernel --sort calls | awk '/^ *[0-9.]+ +[0-9.]+ +[0-9]+ / { print $3 }' > k.txt
assert_eq "$(head -1 k.txt)" 50 "text: the kernel called most first"
sort -rn k.txt | cmp -s - k.txt || fail "text not by calls"
# the default order is the one it always was (by total)
"$BIN/cprof" report big.db > a.txt; "$BIN/cprof" report big.db --sort total > b.txt
cmp -s a.txt b.txt || fail "--sort total is not the default"
# --timeunit: every stats table in that unit, the values scaled
"$BIN/cprof" report big.db --by kernel --timeunit ms > ms.txt
grep -q "Total (ms)  Instances  Avg (ms)" ms.txt || fail "--timeunit ms header: $(grep Total ms.txt)"
"$BIN/cprof" report big.db --by kernel --timeunit ns > ns.txt
grep -q "Total (ns)" ns.txt || fail "--timeunit ns header"
t_ns=$(awk '/sm90_xmma/ && $3 == 25 { print $2 }' ns.txt); t_ms=$(awk '/sm90_xmma/ && $3 == 25 { print $2 }' ms.txt)
assert_eq "$(python3 -c "print(round($t_ns / 1e6, 3) == $t_ms)")" True "ns and ms of one kernel ($t_ns, $t_ms)"
"$BIN/cprof" report big.db --timeunit usec | grep -q "Total (us)" || fail "nsys spelling usec"
"$BIN/cprof" report big.db --sort fast 2> err.txt; assert_eq $? 2 "bad --sort"
assert_eq "$(wc -l < err.txt)" 1 "one line"
"$BIN/cprof" report big.db --timeunit h 2> err.txt; assert_eq $? 2 "bad --timeunit"
echo ok
