# Issue 2 / must show 2: on the real libcudart.so.13 with no driver, every call is profiled with the
# return code the real library gave, and the program's stdout and exit status do not change.
. "$(dirname "$0")/lib.sh"
P=$WL/nodriver
ldd "$P" | grep -q "/usr/local/cuda\|libcudart.so.13 =>" || fail "nodriver not linked to cudart"
"$P" > bare.out; bare_rc=$?
"$BIN/cprof-run" -q -o prof.db -- "$P" > prof.out; prof_rc=$?
assert_eq "$prof_rc" "$bare_rc" "exit status under cprof-run"
cmp -s bare.out prof.out || fail "stdout differs under cprof-run: $(diff bare.out prof.out)"
# each printed "name code" line must be a profiled call with that return value
code_of() { awk -v n="$1" '$1 == n { print $2; exit }' bare.out; }
malloc_rc=$(code_of cudaMalloc)
assert_eq "$(q prof.db "SELECT returnValue FROM API_CALLS WHERE name='cudaMalloc'")" "$malloc_rc" "cudaMalloc return code"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi >/dev/null 2>&1; then
	assert_eq "$malloc_rc" 35 "cudaMalloc without a driver"
fi
assert_eq "$(q prof.db "SELECT returnValue FROM API_CALLS WHERE name='cudaMemset'")" "$(code_of cudaMemset)" "cudaMemset code"
assert_eq "$(q prof.db "SELECT returnValue FROM API_CALLS WHERE name='cudaLaunchKernel'")" "$(code_of cudaLaunchKernel)" "cudaLaunchKernel code"
assert_eq "$(q prof.db "SELECT returnValue FROM API_CALLS WHERE name='cublasSgemm_v2'")" "$(code_of cublasSgemm)" "cublasSgemm code"
assert_eq "$(q prof.db "SELECT count(*) FROM API_CALLS WHERE name='cudaMemcpy'")" 2 "memcpy calls"
assert_eq "$(q prof.db "SELECT group_concat(memcpyKind) FROM (SELECT memcpyKind FROM MEMOPS WHERE api='cudaMemcpy' ORDER BY start)")" "1,2" "memcpy kinds H2D, D2H"
assert_eq "$(q prof.db "SELECT count(*) FROM API_CALLS WHERE name='cudaFree'")" 1 "cudaFree"
assert_eq "$(q prof.db "SELECT count(*) FROM API_CALLS WHERE name='cudaDeviceSynchronize'")" 1 "sync"
# <<<>>> goes through __cudaLaunchKernel: 3 scale + 1 shift, named; the explicit call is cudaLaunchKernel
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES WHERE api='__cudaLaunchKernel' AND kernelName LIKE '%scale%'")" 3 "<<<scale>>> launches"
assert_eq "$(q prof.db "SELECT gridX||','||gridY||' '||blockX||','||blockY||' '||sharedMem FROM LAUNCHES WHERE kernelName LIKE '%shift%'")" "2,2 64,4 128" "shift launch geometry"
assert_eq "$(q prof.db "SELECT kernelName FROM LAUNCHES WHERE api='cudaLaunchKernel'")" "_Z5scalePffi" "cudaLaunchKernel kernel name"
assert_eq "$(q prof.db "SELECT m||'x'||n||'x'||k FROM GEMMS")" "16x16x16" "GEMM shape"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='complete'")" 1 "profile complete"
assert_eq "$(q prof.db "SELECT value FROM META WHERE key='exit_status'")" "$bare_rc" "exit status stored"
# the report reads it back
"$BIN/cprof" report prof.db > report.txt || fail "cprof report failed"
grep -q "cudaMalloc" report.txt || fail "report lacks cudaMalloc"
"$BIN/cprof" report prof.db --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "cprof.summary/1", d["schema"]
assert d["complete"] is True and d["lost_events"] == 0
names = {a["name"]: a for a in d["apis"]}
assert names["__cudaLaunchKernel"]["calls"] == 4, names["__cudaLaunchKernel"]
assert d["counts"]["processes"] == 1
' || fail "JSON report"
assert_eq "$(q prof.db "SELECT count(*) FROM META WHERE key='simulated_gpu'")" 0 "real libraries are not called simulated"
echo ok
