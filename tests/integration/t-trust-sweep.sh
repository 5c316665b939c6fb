# Issue 29 items 1, 2, 5 and 6, on the simulated GPU: the canonical compute-bound run (matmul_sweep --sizes 4096)
# gets no copy advice (its final blocking copies wait for queued GEMMs: a sync, not copy time), and the
# sweep over two sizes, one kernel name at two grids by design, gets no kernel-variance finding.
. "$(dirname "$0")/lib.sh"
need_sim
json() { "$BIN/cprof" report $1.db --format json | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }

sim "$BIN/cprof-run" -q -o big.db -- "$WL/matmul_sweep" --sizes 4096 > /dev/null || fail "sweep 4096"
assert_eq "$(json big 'd["verdict"]')" compute-bound "4096: verdict"
line=$(json big 'd["verdict_line"]')
case $line in *[Cc]op*) fail "4096: the verdict names copies: $line";; esac
case $(json big 'd["advice"]') in *[Cc]op*) fail "4096: the advice names copies";; esac
"$BIN/cprof" report big.db | grep -A1 '^Verdict' | grep -qi 'cop' && fail "4096: text verdict names copies"

sim "$BIN/cprof-run" -q -o two.db -- "$WL/matmul_sweep" --sizes 64,4096 --steps 20 > /dev/null || fail "sweep 64,4096"
assert_eq "$(json two '[f["id"] for f in d["findings"] if f["id"] == "kernel-variance"]')" "[]" "sweep: kernel-variance"
# item 2: one set of call totals, named for what they count, in cprof-run's summary, info, report, JSON, HTML
sim "$BIN/cprof-run" -o sum.db -- "$WL/matmul_sweep" --sizes 64 --steps 5 > /dev/null 2> run.txt || fail "sweep 64"
want=$(json sum '"%d CUDA API calls (%d by the program, %d inside libraries, %d seen only by CUPTI)" % (d["calls"]["total"], d["calls"]["by_program"], d["calls"]["inside_libraries"], d["calls"]["seen_only_by_cupti"])')
assert_eq "$(json sum 'd["calls"]["total"] == d["counts"]["api_calls"] == sum(a["calls"] for a in d["apis"]) and d["calls"]["by_program"] > 0 and d["calls"]["inside_libraries"] > 0')" True "JSON totals"
grep -qF "1 process(es), $want," run.txt || fail "cprof-run's summary: $(grep 'process(es)' run.txt), want $want"
"$BIN/cprof" info sum.db | grep -qF "1 process(es), $want," || fail "info: $("$BIN/cprof" info sum.db | grep 'process(es)')"
"$BIN/cprof" report sum.db | grep -qF "Processes: 1   CUDA API calls: ${want%% *} (${want#*(}" || fail "report: $("$BIN/cprof" report sum.db | grep ^Processes)"
"$BIN/cprof" html sum.db -o sum.html || fail "html"
grep -qF "CUDA API calls:</b> ${want%% *} (${want#*(}" sum.html || fail "html: $(grep -o 'CUDA API calls:</b>[^&]*' sum.html)"
# item 6: every table says which window it covers; --window verdict gives the verdict window's tables
"$BIN/cprof" report two.db > two.txt
for t in "GPU kernels" "GPU memory operations" "CUDA API"; do
	grep -q "^$t (whole run, start-up and warm-up included; --window verdict: the verdict's " two.txt || fail "$t: no window"
done
grep -q "^The table below covers the whole run" two.txt || fail "torch view: no window"
grep -q "over the <b>whole run</b>" sum.html || fail "html tables: no window"
"$BIN/cprof" report two.db --window verdict > twov.txt || fail "--window verdict"
grep -q "^GPU kernels (the verdict's window, .*: start-up and warm-up excluded)" twov.txt || fail "verdict window title"
"$BIN/cprof" report two.db --window verdict --format json | python3 -c '
import json, subprocess, sys
v = json.load(sys.stdin)
r = json.loads(subprocess.run([sys.argv[1], "report", "two.db", "--format", "json"], capture_output=True).stdout)
assert v["tables_window"]["name"] == "verdict" and r["tables_window"]["name"] == "run", (v["tables_window"], r["tables_window"])
assert v["tables_window"]["ns"] == v["window_ns"], v["tables_window"]
kv = {k["name"]: k["calls"] for k in v["kernels"]}
kr = {k["name"]: k["calls"] for k in r["kernels"]}
# start-up and warm-up out: fewer instances of each kernel, and no more GPU time than the window
assert all(kv[n] <= kr[n] for n in kv) and sum(kv.values()) < sum(kr.values()), (kv, kr)
assert sum(k["total_ns"] for k in v["kernels"]) <= v["window_ns"], v["kernels"]
assert v["counts"] == r["counts"], "the headline counts are of the run"
' "$BIN/cprof" || fail "verdict window tables"
"$BIN/cprof" report two.db --window bogus 2> err; assert_eq $? 2 "--window bogus: exit status"
echo "ok"
