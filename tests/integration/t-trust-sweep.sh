# Issue 29 items 1, 2 and 5, on the simulated GPU: the canonical compute-bound run (matmul_sweep --sizes 4096)
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
echo "ok"
