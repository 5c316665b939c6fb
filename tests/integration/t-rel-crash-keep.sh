# Issue 20: a job that dies keeps its profile and says how it died (simulated GPU only). The target runs
# N steps (two launches and a sync each) and at once, with no pause for the flusher, segfaults, aborts,
# hits SIGBUS on a truncated file's page, lets a C++ exception escape main, or SIGKILLs itself; or a sync
# returns a CUDA error (700) and the program aborts or exits 1. Each:
# cprof-run's status is the bare command's; every launch before the end and its kernel are in the
# profile (cprof's fatal-signal handler drained them); CPROF_CRASH holds the signal; the report says
# how the process ended. A handler the program installs itself (before its first CUDA call or after its
# last) still runs; a core dump is still produced where the limits allow; the handler's fallback (the
# flusher does not answer in time) keeps the crashing thread's calls; a crash inside cprof's own
# handler ends the process with the original signal instead of looping.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
N=50
cores=$(cat /proc/sys/kernel/core_pattern)
ulimit -c unlimited 2>/dev/null
core_checked=0
# run NAME EXPECTED_STATUS ARGS... : bare and profiled runs of scenarios die N ARGS, in directory NAME
run() {
	local name=$1 want=$2
	shift 2
	cd "$T" && mkdir "$name" && cd "$name" || fail "mkdir $name"
	sim "$WL/scenarios" die $N "$@" > bare.out 2> /dev/null; bare=$?
	rm -f core core.*
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}disable_coredump=0 \
		sim timeout 60 "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" die $N "$@" > out.txt 2> err.txt
	rc=$?
	assert_eq "$rc" "$want" "cprof-run's status ($name)"
	assert_eq "$rc" "$bare" "same status as the bare command ($name)"
	assert_eq "$(cat out.txt)" "$(cat bare.out)" "the target's output ($name)"
	"$BIN/cprof" report prof.db > report.txt || fail "report ($name)"
	"$BIN/cprof" report --by process prof.db > procs.txt || fail "report --by process ($name)"
}
# all N steps kept: 2N launches, each with its kernel on the GPU
kept_all() {
	assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" $((2 * N)) "launches before the end ($1)"
	assert_eq "$(q prof.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" $((2 * N)) "kernels before the end ($1)"
	assert_eq "$(q prof.db "SELECT count(*) FROM API_GPU WHERE gpuKind='kernel'")" $((2 * N)) "launches joined to their kernel ($1)"
}
# the signal in CPROF_CRASH, the ending in PROCESSES and in the report
ended_by() {
	local name=$1 sig=$2 signame=$3
	assert_eq "$(q prof.db "SELECT signal FROM CPROF_CRASH")" "$sig" "CPROF_CRASH.signal ($name)"
	assert_eq "$(q prof.db "SELECT ending FROM PROCESSES")" "signal $sig ($signame)" "PROCESSES.ending ($name)"
	assert_eq "$(q prof.db "SELECT count(*) FROM PROCESSES WHERE byeReason IS NULL")" 1 "no goodbye ($name)"
	assert_eq "$(meta prof.db term_signal)" "$sig" "term_signal ($name)"
	grep -Eq "^Ended: pid [0-9]+: signal $sig \($signame\); last CUDA call of thread [0-9]+: cuda[A-Za-z]+" report.txt ||
		fail "the report names $signame and the last CUDA call ($name): $(grep Ended report.txt)"
	grep -q "signal $sig ($signame)" procs.txt || fail "the process table names $signame ($name)"
	assert_ge "$(q prof.db "SELECT count(*) FROM CPROF_CRASH_CALLS c JOIN StringIds s ON s.id = c.nameId")" 1 \
		"the last CUDA call of the crashing thread ($name)"
}
core_dumped() {
	case $cores in
	core*) [ "$(ulimit -c)" = 0 ] && { echo "$1: core dump not checked: ulimit -c is 0 here"; return; }
		ls core* > /dev/null 2>&1 || fail "no core dump ($1; core_pattern $cores, ulimit -c $(ulimit -c))"
		core_checked=$((core_checked + 1)) ;;
	*) echo "$1: core dump not checked: core_pattern is '$cores', not a file in the working directory" ;;
	esac
}

for c in segv:11:SIGSEGV abort:6:SIGABRT bus:7:SIGBUS throw:6:SIGABRT; do
	how=${c%%:*} rest=${c#*:}; sig=${rest%%:*} signame=${rest#*:}
	run "$how" $((128 + sig)) "$how"
	assert_eq "$(head -1 out.txt)" "disposition default" "the program sees its own disposition ($how)"
	kept_all "$how"
	ended_by "$how" "$sig" "$signame"
	# the drain was the flusher's, with a forced CUPTI flush (flags 2); not the fallback's
	assert_eq "$(q prof.db "SELECT flags & 3 FROM CPROF_CRASH")" 2 "drained by the flusher after a CUPTI flush ($how)"
	core_dumped "$how"
done
[ "$(q "$T/segv/prof.db" "SELECT addr FROM CPROF_CRASH")" = 4 ] || fail "faulting address (argc=4 as a pointer)"

# the program's own handler, installed before its first CUDA call or after its last: it runs (it prints,
# resets the signal to default and lets it end the process), and cprof's data is still there
for c in segv:11:SIGSEGV:before abort:6:SIGABRT:after bus:7:SIGBUS:after segv:11:SIGSEGV:after; do
	IFS=: read -r how sig signame own <<< "$c"
	run "$how-own-$own" $((128 + sig)) "$how" "$own"
	assert_eq "$(cat out.txt)" "disposition own
app handler ran" "the program's handler ran ($how, installed $own)"
	kept_all "$how-own-$own"
	ended_by "$how-own-$own" "$sig" "$signame"
	assert_eq "$(q prof.db "SELECT flags & 8 FROM CPROF_CRASH")" 8 "the CRASH frame says the program had a handler ($how)"
	core_dumped "$how-own-$own"
done

# another thread launches all along and goes on while the main thread dies: the main thread's steps are
# all kept, and the CRASH record has the last call of both threads
run thread 139 segv thread
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES WHERE kernelName LIKE '%kern_a%'")" $N "the dying thread's launches (thread)"
assert_eq "$(q prof.db "SELECT count(DISTINCT tid) FROM CPROF_CRASH_CALLS")" 2 "last calls of both threads (thread)"
assert_eq "$(q prof.db "SELECT flags & 3 FROM CPROF_CRASH")" 2 "drained by the flusher after a CUPTI flush (thread)"
ended_by thread 11 SIGSEGV

# the fault inside a CUDA call (a copy to an unmapped host address): the calls before it are kept, CUPTI
# is left alone (its state is unknown there), and the ending says where it happened
run in-cuda 139 in-cuda
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" $((2 * N)) "launches before the end (in-cuda)"
assert_eq "$(q prof.db "SELECT flags & 6 FROM CPROF_CRASH")" 4 "inside CUDA, no CUPTI flush (in-cuda)"
assert_eq "$(q prof.db "SELECT ending FROM PROCESSES")" "signal 11 (SIGSEGV) inside a CUDA call" "PROCESSES.ending (in-cuda)"

# the flusher does not answer in time (CPROF_CRASH_TIMEOUT_MS=0): the crashing thread writes its own ring
export CPROF_CRASH_TIMEOUT_MS=0
run fallback 139 segv
unset CPROF_CRASH_TIMEOUT_MS
assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" $((2 * N)) "launches kept by the handler itself"
assert_eq "$(q prof.db "SELECT flags & 1 FROM CPROF_CRASH")" 1 "CRASH written by the handler itself"
ended_by fallback 11 SIGSEGV

# the crash finding: the signal, the last call of the thread, the last kernels of the stream
for how in segv abort; do
	grep -q "\[warn\] crash: pid [0-9]* ended: signal" "$T/$how/report.txt" || fail "crash finding ($how)"
	grep -A1 "\[warn\] crash:" "$T/$how/report.txt" | grep -q "last kernels on stream [0-9]*: kern_b(int\*), kern_a(int\*), kern_b(int\*)" ||
		fail "crash finding names the stream's last kernels ($how): $(grep -A1 'crash:' "$T/$how/report.txt")"
done
grep -A1 "\[warn\] crash:" "$T/segv/report.txt" | grep -q "signal 11 (SIGSEGV); thread [0-9]* last called cudaDeviceSynchronize, returned 0" ||
	fail "crash finding: signal and last call (segv): $(grep -A1 'crash:' "$T/segv/report.txt")"

# a CUDA error: the 20th sync returns 700 (the simulator's SIMGPU_FAIL_SYNC_AFTER; on a device, a kernel's
# illegal access), then the program aborts, or exits 1 after one more (failing) call. Each step launches
# kern_a and kern_b on stream s, kern_c on stream s2, then synchronises s.
for c in abort:134:"signal 6 (SIGABRT)" exit:1:"exit, status 1"; do
	IFS=: read -r how want end <<< "$c"
	cd "$T" && mkdir "cuda-$how" && cd "cuda-$how" || fail "mkdir cuda-$how"
	{ SIMGPU_FAIL_SYNC_AFTER=20 sim "$WL/scenarios" cuda-error $N "$how" > bare.out; } 2> /dev/null; bare=$?
	{ SIMGPU_FAIL_SYNC_AFTER=20 sim timeout 60 "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" cuda-error $N "$how" \
		> out.txt 2> err.txt; } 2> /dev/null; rc=$?
	assert_eq "$rc" "$want" "cprof-run's status (cuda-$how)"
	assert_eq "$rc" "$bare" "same status as the bare command (cuda-$how)"
	assert_eq "$(cat out.txt)" "step 20: cudaStreamSynchronize: cudaErrorIllegalAddress" "the target's output (cuda-$how)"
	assert_eq "$(q prof.db "SELECT count(*) FROM LAUNCHES")" 60 "launches before the error (cuda-$how)"
	assert_eq "$(q prof.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 60 "kernels before the error (cuda-$how)"
	assert_eq "$(q prof.db "SELECT ending FROM PROCESSES")" \
		"CUDA error 700 (cudaErrorIllegalAddress) from cudaStreamSynchronize, then $end" "PROCESSES.ending (cuda-$how)"
	"$BIN/cprof" report prof.db > report.txt || fail "report (cuda-$how)"
	grep -Eq "^Ended: pid [0-9]+: CUDA error 700 \(cudaErrorIllegalAddress\) from cudaStreamSynchronize, then .*; last kernels on its stream \([0-9]+\) before it: kern_b\(int\*\), kern_a\(int\*\), kern_b\(int\*\)$" report.txt ||
		fail "the report's ending names the call, the error and the stream's last kernels (cuda-$how): $(grep Ended report.txt)"
	grep -A1 "\[warn\] crash: pid [0-9]* ended: CUDA error 700" report.txt |
		grep -q "evidence: cudaStreamSynchronize returned 700 (cudaErrorIllegalAddress) on thread [0-9]*; last kernels on its stream before it, latest first: kern_b(int\*), kern_a(int\*), kern_b(int\*)" ||
		fail "crash finding (cuda-$how): $(grep -A1 'crash:' report.txt)"
	grep -A1 "\[warn\] crash:" report.txt | grep -q "kern_c" && fail "another stream's kernel is not on the failing stream (cuda-$how)"
	"$BIN/cprof" report --format json prof.db | grep -q '"id":"crash"' || fail "JSON has the crash finding (cuda-$how)"
done
# the exit case's last call (cudaStreamDestroy, failing too: the error is sticky) is not the one named
grep -A1 "\[warn\] crash:" "$T/cuda-exit/report.txt" | grep -q "last called cudaStreamDestroy, returned 700" ||
	fail "the thread's last call is the failing cudaStreamDestroy (cuda-exit)"
# a launch that fails (2048 threads a block: 9) on the last step, then exit 1: the launch is named, and the
# last kernels on its stream start with the one it failed to launch
cd "$T" && mkdir cuda-launch && cd cuda-launch || fail "mkdir cuda-launch"
{ sim "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" cuda-error 5 launch > out.txt 2> err.txt; } 2> /dev/null
assert_eq "$?" 1 "launch error: status 1"
assert_eq "$(cat out.txt)" "step 5: launch: cudaErrorInvalidConfiguration" "launch error: the target's output"
assert_eq "$(q prof.db "SELECT ending FROM PROCESSES")" \
	"CUDA error 9 (cudaErrorInvalidConfiguration) from __cudaLaunchKernel, then exit, status 1" "PROCESSES.ending (launch error)"
"$BIN/cprof" report prof.db > report.txt || fail "report (launch error)"
grep -Eq "^Ended: .*; last kernels on its stream \([0-9]+\) before it: kern_b\(int\*\), kern_a\(int\*\), kern_b\(int\*\)$" report.txt ||
	fail "launch error: the failed launch's kernel first: $(grep Ended report.txt)"
# no error: a normal end, no CUDA error named
cd "$T" && mkdir cuda-none && cd cuda-none || fail "mkdir cuda-none"
{ sim "$BIN/cprof-run" -q -o prof.db -- "$WL/scenarios" cuda-error 5 abort > out.txt 2> err.txt; } 2> /dev/null
assert_eq "$?" 0 "no error: status 0"
assert_eq "$(q prof.db "SELECT ending FROM PROCESSES")" "exit, status 0" "PROCESSES.ending (no error)"

# cprof merge keeps how each part ended: the CRASH tables and PROCESSES.ending are copied, names remapped
cd "$T" && "$BIN/cprof" merge segv/prof.db cuda-abort/prof.db cuda-exit/prof.db -o merged.db || fail "merge"
assert_eq "$(q merged.db "SELECT count(*) FROM CPROF_CRASH")" 2 "merged CPROF_CRASH rows"
assert_eq "$(q merged.db "SELECT group_concat(signal) FROM (SELECT signal FROM CPROF_CRASH ORDER BY processId)")" "11,6" "merged signals"
assert_eq "$(q merged.db "SELECT count(*) FROM CPROF_CRASH_CALLS c JOIN StringIds s ON s.id = c.nameId")" \
	$(( $(q segv/prof.db "SELECT count(*) FROM CPROF_CRASH_CALLS") + $(q cuda-abort/prof.db "SELECT count(*) FROM CPROF_CRASH_CALLS") )) \
	"merged crash calls, with their names"
assert_eq "$(q merged.db "SELECT group_concat(ending, '|') FROM (SELECT ending FROM PROCESSES ORDER BY id)")" \
	"signal 11 (SIGSEGV)|CUDA error 700 (cudaErrorIllegalAddress) from cudaStreamSynchronize, then signal 6 (SIGABRT)|CUDA error 700 (cudaErrorIllegalAddress) from cudaStreamSynchronize, then exit, status 1" \
	"merged endings"
"$BIN/cprof" report merged.db > merged.txt || fail "report of the merged profile"
assert_eq "$(grep -c "^Ended: pid" merged.txt)" 3 "the merged report's endings"
assert_eq "$(grep -c "\[warn\] crash:" merged.txt)" 3 "the merged report's crash findings"

# a crash inside cprof's own handler: no loop (timeout 60 would make it 124), the original signal's status
for c in segv:139 abort:134; do
	how=${c%%:*} want=${c#*:}
	export CPROF_TEST_CRASH_IN_HANDLER=1
	run "inhandler-$how" "$want" "$how"
	unset CPROF_TEST_CRASH_IN_HANDLER
done

# SIGKILL: nothing in the process runs; the report names the kill from cprof-run's wait status
run kill9 137 kill9
assert_eq "$(q prof.db "SELECT count(*) FROM CPROF_CRASH")" 0 "no CRASH frame after SIGKILL"
assert_eq "$(q prof.db "SELECT ending FROM PROCESSES")" "killed by signal 9 (SIGKILL)" "PROCESSES.ending (kill9)"
grep -q "^Ended: pid [0-9]*: killed by signal 9 (SIGKILL); its event counts are a lower bound" report.txt ||
	fail "the report names SIGKILL and says its counts are a lower bound: $(grep Ended report.txt)"
# what was still in the rings is lost uncounted: every count says it is a lower bound
grep -q "lost events: at least 0 (a process was killed" report.txt || fail "the header's lost events are a lower bound: $(grep Processes: report.txt)"
grep -q "at least 0 lost events" <("$BIN/cprof" info prof.db) || fail "cprof info's lost events are a lower bound"
"$BIN/cprof" report --format json prof.db | grep -q '"lost_events_lower_bound":true' || fail "JSON: lost_events_lower_bound"
# the trace too (until 2026-12-07 its header said "lost_events": 0 alone)
"$BIN/cprof" trace prof.db -f -o kill9.json 2> /dev/null || fail "trace (kill9)"
grep -q '"lost_events": 0, "lost_events_lower_bound": true' kill9.json || fail "trace: lost_events_lower_bound: $(grep -o '"cprof": {[^,]*,[^,]*' kill9.json)"
"$BIN/cprof" html prof.db -o report.html || fail "html (kill9)"
grep -q "lost events:</b> at least 0 (a process was killed" report.html || fail "HTML: the lost events are a lower bound"
grep -q "\[warn\] crash: pid [0-9]* ended: killed by signal 9 (SIGKILL).*lower bound" report.txt || fail "crash finding (kill9)"
grep -q "queued no GPU work" report.txt && fail "a killed process's missing records are not 'no GPU work queued'"

# Python with faulthandler enabled after cprof started (its handler is chained): the traceback is
# printed, the calls are kept, the status is the bare one's
cd "$T" && mkdir py && cd py || fail "mkdir py"
cat > crash.py <<'PYEOF'
import ctypes, faulthandler, sys
cudart = ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
lib, p = ctypes.CDLL(None), ctypes.c_void_p()
for i in range(int(sys.argv[1])):
    lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(256))
    lib.cudaFree(p)
faulthandler.enable()
ctypes.string_at(0)
PYEOF
{ sim "$PY" crash.py 1 2> bare.err; } 2>/dev/null; bare=$?
{ sim "$BIN/cprof-run" -q -o prof.db -- "$PY" crash.py $N 2> err.txt; } 2>/dev/null; rc=$?
assert_eq "$rc" "$bare" "Python: same status as bare"
assert_eq "$rc" 139 "Python: status"
grep -q "Fatal Python error: Segmentation fault" err.txt || fail "Python's faulthandler ran: $(head -3 err.txt)"
assert_eq "$(q prof.db "SELECT count(*) FROM API_CALLS WHERE name IN ('cudaMalloc', 'cudaFree')")" $((2 * N)) "Python: calls kept"
assert_eq "$(q prof.db "SELECT ending FROM PROCESSES")" "signal 11 (SIGSEGV)" "Python: ending"

# a normal end says its status
run exit0 1 none
assert_eq "$(q prof.db "SELECT ending FROM PROCESSES")" "exit, status 1" "PROCESSES.ending (exit 1)"
grep -q "^Ended:" report.txt && fail "a normal exit is not reported as an abnormal end"
grep -q "\[warn\] crash:" report.txt && fail "no crash finding for a normal end (exit 1 with no CUDA error)"
echo "core dumps checked: $core_checked"
echo ok
