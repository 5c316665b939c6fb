# cuBLAS asks the occupancy calculator inside every GEMM (through its own runtime: no hook sees it). CUPTI records
# those queries until the flusher has drained CPROF_OCCUPANCY_GEMMS (256) GEMM calls, then cprof switches their
# records off and says so (CPROF_STATUS queries-sampled); the report's API table and the occupancy finding say the
# count is of the first ones only. A run with fewer GEMMs keeps every one, and says nothing.
. "$(dirname "$0")/lib.sh"
need_sim
occ() { q "$1" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaOccupancy%'"; }
gemms() { q "$1" "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value = 'cublasSgemm_v2'"; }
sampled() { q "$1" "SELECT count(*) || ' ' || coalesce(min(err), '') FROM CPROF_STATUS WHERE code = 'queries-sampled'"; }

# 20,000 GEMMs (~0.5 s): the switch comes at the flusher's first round that drained 256
sim "$BIN/cprof-run" -q -o long.db -- "$WL/matmul_sweep" --sizes 64 --steps 20000 > /dev/null 2> err.txt ||
	fail "run failed: $(cat err.txt)"
g=$(gemms long.db) o=$(occ long.db) s=$(sampled long.db)
echo "20000 steps: $g GEMM calls, $o occupancy records, status: $s"
[ "${s%% *}" = 1 ] || fail "queries-sampled stated ${s%% *} times, want once"
after=${s#* }
[ "$after" -ge 256 ] || fail "switched off after $after GEMM calls, want >= 256"
[ "$o" -ge 256 ] || fail "$o occupancy records kept, want >= 256 (the first GEMMs' queries)"
[ "$o" -lt $((g / 2)) ] || fail "$o occupancy records for $g GEMM calls: their records were not switched off"
"$BIN/cprof" report long.db > long.txt || fail "report failed"
grep -q "occupancy queries (cudaOccupancy\*) recorded only at first" long.txt || fail "the API table's note is missing"
grep -q "occupancy queries (recorded at first only) each followed" long.txt ||
	fail "the finding does not say its count is of the first queries: $(grep -A1 occupancy-before long.txt)"
"$BIN/cprof" report long.db --format json > long.json || fail "report --format json failed"
python3 -c 'import json,sys; n=json.load(open("long.json"))["queries_sampled_note"]; sys.exit(0 if n and "recorded only at first" in n else 1)' ||
	fail "JSON queries_sampled_note missing"
"$BIN/cprof" html long.db -o long.html || fail "html failed"
grep -q "recorded only at first" long.html || fail "the page's note is missing"

# 100 GEMMs: every query kept, nothing said
sim "$BIN/cprof-run" -q -o short.db -- "$WL/matmul_sweep" --sizes 64 --steps 100 > /dev/null 2> err.txt ||
	fail "run failed: $(cat err.txt)"
g=$(gemms short.db) o=$(occ short.db)
assert_eq "$o" "$g" "occupancy records of a short run, one per GEMM call"
assert_eq "$(sampled short.db)" "0 " "no queries-sampled status in a short run"
"$BIN/cprof" report short.db --format json > short.json || fail "report --format json failed"
assert_eq "$(python3 -c 'import json; print(json.load(open("short.json"))["queries_sampled_note"])')" "None" "no note in a short run's JSON"
"$BIN/cprof" report short.db > short.txt || fail "report failed"
! grep -q "recorded only at first" short.txt || fail "a short run's report says its queries were sampled"
echo ok
