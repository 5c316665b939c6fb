# Issue 10 / must show: a Python launcher starting 3 ranks (fork and spawn start methods) -> one profile
# with 3 ranks and the exact per-rank kernel counts; per-rank traces; merging two node profiles sums
# their counts and keeps both hosts; a straggler rank built into the test is named by the report.
. "$(dirname "$0")/lib.sh"
need_sim
COUNTS=40,50,60 PACE=200,200,2000 # rank 2 spends 2 ms of host work per step: the straggler
for method in fork spawn; do
	out=$(sim "$BIN/cprof-run" -q -o $method.db -- python3 "$ROOT/tests/workloads/launcher.py" $method "$WL/scenarios" $COUNTS $PACE) \
		|| fail "$method launcher failed: $out"
	assert_eq "$out" "ranks done" "$method launcher"
	assert_eq "$(q $method.db "SELECT group_concat(rank) FROM (SELECT DISTINCT rank FROM PROCESSES WHERE rank IS NOT NULL ORDER BY rank)")" "0,1,2" "$method: ranks"
	assert_eq "$(q $method.db "SELECT group_concat(n) FROM (SELECT count(*) n FROM KERNELS k JOIN PROCESSES p ON p.id = k.processId GROUP BY p.rank ORDER BY p.rank)")" "$COUNTS" "$method: kernels per rank"
	assert_eq "$(q $method.db "SELECT group_concat(n) FROM (SELECT count(*) n FROM LAUNCHES l JOIN PROCESSES p ON p.id = l.processId GROUP BY p.rank ORDER BY p.rank)")" "$COUNTS" "$method: launch calls per rank"
	assert_eq "$(q $method.db "SELECT count(*) FROM PROCESSES WHERE rank IS NOT NULL AND worldSize = 3")" 3 "$method: world size"
	"$BIN/cprof" report $method.db --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
ranks = {r["rank"]: r for r in d["ranks"]}
assert [ranks[r]["kernels"] for r in (0, 1, 2)] == [40, 50, 60], d["ranks"]
assert all(ranks[r]["verdict"] in ("overhead-bound", "compute-bound", "mixed") for r in ranks), d["ranks"]
assert ranks[2]["run_ns"] > ranks[0]["run_ns"], d["ranks"]
f = {x["id"]: x for x in d["findings"]}
assert "straggler" in f and f["straggler"]["evidence"].startswith("rank 2 "), d["findings"]
' || fail "$method: report ranks or straggler"
	"$BIN/cprof" report $method.db | grep -q "^Per rank" || fail "$method: no per-rank table"
done
# one trace per rank, as HTA's multi-rank analysis reads them
"$BIN/cprof" trace fork.db --per-rank traces || fail "--per-rank"
assert_eq "$(ls traces | tr '\n' ' ')" "rank-0.json rank-1.json rank-2.json " "per-rank files"
for r in 0 1 2; do
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = int(sys.argv[2])
assert d["distributedInfo"]["rank"] == r and d["distributedInfo"]["world_size"] == 3, d["distributedInfo"]
k = sum(1 for e in d["traceEvents"] if e.get("cat") == "kernel")
assert k == [40, 50, 60][r], (r, k)
' traces/rank-$r.json $r || fail "trace of rank $r"
done
# two nodes: the second run under another host name (a UTS namespace), then merged
if unshare -u true 2>/dev/null; then
	sim unshare -u sh -c 'hostname node-b && exec "$0" "$@"' "$BIN/cprof-run" -q -o nodeb.db -- python3 "$ROOT/tests/workloads/launcher.py" fork "$WL/scenarios" 5,6,7 0,0,0 > /dev/null \
		|| fail "second node run"
	hb=node-b
else
	echo "no UTS namespaces here: the second node keeps this host's name"
	sim "$BIN/cprof-run" -q -o nodeb.db -- python3 "$ROOT/tests/workloads/launcher.py" fork "$WL/scenarios" 5,6,7 0,0,0 > /dev/null
	hb=$(hostname)
fi
"$BIN/cprof" merge fork.db nodeb.db -o job.db || fail "merge"
assert_eq "$(q job.db "SELECT count(*) FROM KERNELS")" $((40 + 50 + 60 + 5 + 6 + 7)) "merged kernel count"
assert_eq "$(q job.db "SELECT count(*) FROM LAUNCHES")" $((40 + 50 + 60 + 5 + 6 + 7)) "merged launch count"
assert_eq "$(q job.db "SELECT count(DISTINCT host) FROM PROCESSES")" "$([ $hb = node-b ] && echo 2 || echo 1)" "hosts kept"
assert_eq "$(q job.db "SELECT count(*) FROM PROCESSES WHERE host = '$hb' AND rank IS NOT NULL")" 3 "second node's ranks"
assert_eq "$(q job.db "SELECT value FROM META WHERE key='lost_events'")" 0 "merged lost"
# every launch still joins its kernel after the merge (ids remapped consistently)
assert_eq "$(q job.db "SELECT count(*) FROM API_GPU WHERE gpuKind='kernel'")" $((40 + 50 + 60 + 5 + 6 + 7)) "joins after merge"
"$BIN/cprof" merge fork.db nodeb.db -o job.db 2>/dev/null; assert_eq $? 2 "merge never overwrites"
# a clock offset moves one host's events
"$BIN/cprof" merge fork.db nodeb.db -o shifted.db --clock-offset $hb=1000000000 || fail "merge with offset"
d=$(( $(q shifted.db "SELECT min(start) FROM KERNELS k JOIN PROCESSES p ON p.id = k.processId WHERE p.host = '$hb'") - $(q job.db "SELECT min(start) FROM KERNELS k JOIN PROCESSES p ON p.id = k.processId WHERE p.host = '$hb'") ))
assert_eq "$d" 1000000000 "clock offset applied to $hb's events"
# issue 29 item 8: two equal ranks, rank 0 waiting 300 ms at the rendezvous after its first CUDA call: no
# straggler (the first-to-last-call span said rank 0); each per-process verdict line whole, with its rank
ids() { "$BIN/cprof" report $1.db --format json | python3 -c 'import json,sys; print(" ".join(f["id"] for f in json.load(sys.stdin)["findings"]))'; }
sim "$BIN/cprof-run" -q -o eq.db -- python3 "$ROOT/tests/workloads/launcher.py" fork "$WL/scenarios" 20,20 10000,10000 300,0 > /dev/null \
	|| fail "equal ranks"
case " $(ids eq) " in *" straggler "*) fail "equal ranks: straggler: $("$BIN/cprof" report eq.db | grep -A1 straggler)";; esac
"$BIN/cprof" report eq.db | sed -n '/^Per process/,/^$/p' > eq.txt
assert_eq "$(grep -cE '^  [0-9]+ \(rank [01]\): .* -> [a-z].*[a-z]$' eq.txt)" 2 "per-process lines whole: $(cat eq.txt)"
# a run that failed (rank 1 exits 1, the launcher with it): no straggler although rank 0 is slower; the
# failure is a finding
sim "$BIN/cprof-run" -q -o failed.db -- python3 "$ROOT/tests/workloads/launcher.py" fork "$WL/scenarios" 40,40 3000,200 0,0 0,1 \
	> /dev/null 2>&1 && fail "the failed run's status"
f=" $(ids failed) "
case $f in *" straggler "*) fail "failed run: straggler";; esac
case $f in *" run-failed "*) ;; *) fail "failed run: no run-failed finding: $f";; esac
echo ok
