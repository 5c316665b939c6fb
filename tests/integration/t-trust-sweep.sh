# Issue 29 items 1 and 5, on the simulated GPU: the canonical compute-bound run (matmul_sweep --sizes 4096)
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
echo "ok"
