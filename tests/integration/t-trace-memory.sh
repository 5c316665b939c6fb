# cprof trace's memory does not grow with the profile: the peak RSS of the trace of a 1M-record synthetic profile
# (store-bench gen, the one make bench's row 4 uses at 1M and 10M) is at most 1.25x that of a 100k-record one.
# The joins held in memory made it 4.4x (9.2 -> 40.3 MiB); read by block it is 1.0x (9.3 -> 9.2 MiB). That the
# trace is the same is t-trace-golden's and t-trace-format's; here only that the big one was written whole.
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/bench/store-bench
[ -x "$GEN" ] || fail "no $GEN (make check builds it)"
# under AddressSanitizer freed memory waits in its quarantine (up to 256 MiB): the peak is not the trace's own
ldd "$BIN/cprof" | grep -q libasan && skip "cprof is built with AddressSanitizer (ASAN=1): its quarantine, not the trace, sets the peak"
"$GEN" gen 100000 1000 small.db > gen.txt 2>&1 || fail "store-bench gen 100k failed: $(cat gen.txt)"
"$GEN" gen 1000000 1000 big.db > gen.txt 2>&1 || fail "store-bench gen 1M failed: $(cat gen.txt)"
# the trace's own peak RSS (kB): its VmHWM every 10 ms until it exits (ru_maxrss would start at the high-water
# mark of the python that forked it, which it keeps through exec: 14 MB, more than this trace's)
peak() {
	python3 - "$@" <<'PY'
import subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open("err.txt", "w"))
peak = 0
while p.poll() is None:
    try:
        with open(f"/proc/{p.pid}/status") as f:
            peak = max([peak] + [int(l.split()[1]) for l in f if l.startswith("VmHWM:")])
    except OSError:
        pass
    time.sleep(0.01)
sys.exit(f"exit {p.returncode}") if p.returncode else print(peak)
PY
}
small=$(peak "$BIN/cprof" trace small.db -o small.json) || fail "cprof trace of 100k records failed: $(cat err.txt)"
big=$(peak "$BIN/cprof" trace big.db -o big.json) || fail "cprof trace of 1M records failed: $(cat err.txt)"
events=$(sed -n 's/^cprof trace: wrote [^ ]* (\([0-9]*\) events.*/\1/p' err.txt)
assert_ge "${events:-0}" 1000000 "events in the 1M-record trace"
[ "$(tail -c 2 big.json)" = "}" ] || fail "the 1M-record trace does not end its JSON"
echo "peak RSS: 100k records $small kB, 1M records $big kB"
[ $((big * 100)) -le $((small * 125)) ] ||
	fail "cprof trace's memory grows with the records: $small kB at 100k, $big kB at 1M (budget 1.25x)"
