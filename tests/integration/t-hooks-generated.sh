# Issue 18 item 10: the hooks generated from preload/hooks.spec and the toolkit's headers. Every listed entry
# point is exported by libcprof.so, and a program calling one of each kind (hooks_tour) has each call in its
# profile with the code the real library returned: on the real libraries without a driver (codes like 35),
# and on the simulated GPU, unchanged output and exit status.
. "$(dirname "$0")/lib.sh"
P=$WL/hooks_tour
spec=$ROOT/preload/hooks.spec
exports=$(nm -D --defined-only "$BUILD/lib/libcprof.so" | awk '{print $3}')
n=0
for sym in $(sed 's/#.*//' "$spec" | awk 'NF == 3 {print $1}'); do
	printf '%s\n' "$exports" | grep -qx "$sym" || fail "libcprof.so does not export $sym"
	n=$((n + 1))
done
assert_ge "$n" 100 "generated hooks"

check_run() { # label, runner...
	local label=$1; shift
	"$@" "$P" > bare.out; local bare_rc=$?
	rm -f "$label.db"
	"$@" "$BIN/cprof-run" -q -o "$label.db" -- "$P" > prof.out 2> prof.err; local rc=$?
	assert_eq "$rc" "$bare_rc" "$label: exit status"
	cmp -s bare.out prof.out || fail "$label: stdout differs: $(diff bare.out prof.out | head -5)"
	# each printed call is in the profile, once per line, with the code it returned
	sort bare.out | uniq -c | while read -r count name code; do
		got=$(q "$label.db" "SELECT count(*) FROM API_CALLS WHERE name = '$name' AND returnValue = $code AND nested = 0")
		[ "$got" = "$count" ] || fail "$label: $name returned $code $count time(s), profile has $got: $(q "$label.db" "SELECT group_concat(returnValue) FROM API_CALLS WHERE name = '$name'")"
	done || exit 1
	echo "$label: $(wc -l < bare.out) calls checked"
}
if ! nvidia-smi > /dev/null 2>&1; then
	check_run nodriver env
	assert_eq "$(q nodriver.db "SELECT returnValue FROM API_CALLS WHERE name = 'cudaHostAlloc'")" 35 "no driver: cudaHostAlloc"
	assert_eq "$(q nodriver.db "SELECT bytes FROM API_CALLS WHERE name = 'cublasSetVector'")" 64 "cublasSetVector bytes (16 x 4)"
	assert_eq "$(q nodriver.db "SELECT class FROM API_CALLS WHERE name = 'cudaGraphInstantiate'")" graph "class of a graph call"
	assert_eq "$(q nodriver.db "SELECT class FROM API_CALLS WHERE name = 'cublasSgemv_v2'")" blas "class of level-2 BLAS"
fi
# on the simulated GPU (which stubs some of these: its stderr names them) the codes are the simulator's
need_sim
check_run sim sim
assert_eq "$(q sim.db "SELECT returnValue FROM API_CALLS WHERE name = 'cudaHostAlloc'")" 0 "simulated: cudaHostAlloc"
assert_eq "$(q sim.db "SELECT count(*) FROM API_CALLS WHERE name = 'cudaLaunchHostFunc' AND stream != 0")" 1 "host function's stream"
echo ok
