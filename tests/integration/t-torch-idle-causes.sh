# Issue 29 item 7: the cause is the largest measured share of the GPU's idle time. Three PyTorch 2.15
# programs on the simulated GPU (tests/workloads/torch_idle.py, --torch-ops), each of which main called
# "launch cost inside the CUDA API": a loop waiting on its DataLoader, two ranks waiting in gloo's
# all_reduce, a compiled function that recompiles at every call (its host time in Dynamo and Python). Each gets its own cause, the
# largest share in starved_by, and advice that names it.
# cprof-test-timeout: 400
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/torch-lib.sh"
need_torch_sim
W=$ROOT/tests/workloads/torch_idle.py
json() { "$BIN/cprof" report $1.db --format json | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }
check() { # name cause key advice-words
	assert_eq "$(json $1 'd["verdict"]')" overhead-bound "$1: verdict"
	assert_match "$(json $1 'd["host_wait_cause"]')" "^$2$" "$1: cause ($(json $1 'd["starved_by"]'))"
	assert_match "$(json $1 'max(d["starved_by"], key=d["starved_by"].get)')" "^($3)$" "$1: largest share"
	assert_match "$(json $1 'd["advice"]')" "$4" "$1: advice"
	case $(json $1 'd["advice"]') in *"CUDA graph"*) [ $1 = compiled ] || fail "$1: told to capture a CUDA graph";; esac
	"$BIN/cprof" report $1.db | grep -qE "^Verdict: overhead-bound: .*\(it waited for the host: $2\)" || fail "$1: verdict line"
}

"$BIN/cprof-run" -q --torch-ops -o dataloader.db -- "$SIMRUN" "$PY" "$W" dataloader 30 > /dev/null 2> dl.err \
	|| fail "dataloader: $(tail -3 dl.err)"
check dataloader "waiting for input data \(DataLoader\)" dataloader_ns "num_workers"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 "$BIN/cprof-run" -q --torch-ops -o allreduce.db -- "$SIMRUN" \
	sh -c 'RANK=0 "$0" "$1" allreduce 20 & RANK=1 "$0" "$1" allreduce 20; wait $!' "$PY" "$W" > /dev/null 2> ar.err \
	|| fail "allreduce: $(tail -3 ar.err)"
assert_eq "$(q allreduce.db "SELECT count(*) FROM PROCESSES")" 2 "allreduce: two ranks"
check allreduce "waiting on other processes \(collectives\)" collectives_ns "collectives"

"$BIN/cprof-run" -q --torch-ops -o compiled.db -- "$SIMRUN" "$PY" "$W" compiled 12 > /dev/null 2> co.err \
	|| fail "compiled: $(tail -3 co.err)"
# the host time between compiled calls outside any op range is the Python that makes them: Dynamo's with it
check compiled "Python and Dynamo \(torch.compile\)" "dynamo_ns|other_host_ns" "recompiles"
assert_eq "$(json compiled 'd["starved_by"]["dynamo_ns"] > 0')" True "compiled: Dynamo's regions measured"
echo ok
