# PyTorch multiprocessing with the fork start method, the parent not touching CUDA before it forks (an NVTX range
# only, which starts cprof there): each worker's kernels are in the profile under the worker's pid, from its own
# CUPTI session, and the parent's matmul after the workers ended is the parent's. Until 2026-12-06 a fork child
# never started CUPTI: the workers' GPU work was missing and the verdict read "CUPTI did not report any".
# cprof-test-timeout: 300
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
cat > mpt.py <<'PYEOF'
import os, torch, multiprocessing as mp
def mm(n):
    a = torch.ones(64, 64, device="cuda")
    for _ in range(n):
        a = a @ a
    torch.cuda.synchronize()
def worker(n):
    mm(n)
    os.write(1, b"worker %d\n" % os.getpid())  # one write: the workers' lines do not interleave
if __name__ == "__main__":
    torch.cuda.nvtx.range_push("before fork")
    torch.cuda.nvtx.range_pop()
    assert not torch.cuda.is_initialized()
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=worker, args=(3,)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    mm(2)
    print("parent", os.getpid(), "exitcodes", *[p.exitcode for p in procs], flush=True)
PYEOF
out=$("$BIN/cprof-run" -q -o mp.db -- "$SIMRUN" "$PY" mpt.py 2> mp.err) || fail "the run failed: $out $(tail -3 mp.err)"
assert_match "$out" "exitcodes 0 0" "the workers' status ($(tail -3 mp.err))"
parent=$(printf '%s\n' "$out" | awk '$1 == "parent" { print $2 }')
gemms() { q mp.db "SELECT count(*) FROM KERNELS k JOIN PROCESSES p ON p.id = k.processId WHERE p.pid = $1 AND k.name LIKE '%gemm%'"; }
assert_eq "$(q mp.db "SELECT count(*) FROM PROCESSES WHERE pid = $parent AND startNs < (SELECT min(startNs) FROM PROCESSES WHERE forked = 1)")" 1 \
	"the parent was profiled before it forked"
assert_ge "$(gemms "$parent")" 2 "the parent's GEMM kernels"
n=0
for w in $(printf '%s\n' "$out" | awk '$1 == "worker" { print $2 }'); do
	assert_eq "$(q mp.db "SELECT ppid || ' ' || forked FROM PROCESSES WHERE pid = $w")" "$parent 1" "worker $w's parent"
	assert_ge "$(gemms "$w")" 3 "worker $w's GEMM kernels, from CUPTI, under its pid"
	n=$((n + 1))
done
assert_eq "$n" 2 "workers seen ($out)"
"$BIN/cprof" report mp.db > mp.txt || fail "report"
v=$(grep '^Verdict:' mp.txt)
case $v in *"no-gpu-activity"* | *"CUPTI did not report"*) fail "the workers' GPU work is missing from the verdict: $v" ;; esac
echo ok
