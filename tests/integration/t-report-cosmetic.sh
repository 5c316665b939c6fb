# s21 review, cosmetic: a kernel with an empty name was left out of the report's dispatch-chain table
# ("Where the kernels were launched from"); a profile of 400 recording windows printed 400 window lines
# before the verdict.
. "$(dirname "$0")/lib.sh"
need_sim
sim "$BIN/cprof-run" -q -o two.db -- "$WL/scenarios" torch-shaped 5 > /dev/null 2>err.txt || fail "run: $(cat err.txt)"
cp two.db empty.db
q empty.db "UPDATE StringIds SET value = '' WHERE value = '_Z6kern_bPi'"
assert_eq "$(q empty.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.nameId WHERE s.value = ''")" 50 \
	"kernels with an empty name"
"$BIN/cprof" report empty.db > r.txt 2>err.txt || fail "report: $(cat err.txt)"
sed -n '/^Where the kernels were launched from/,/^ (sampled/p' r.txt | sed 1,4d > chain.txt
grep -q '^ kern_a(int\*) ' chain.txt || fail "no kern_a in the chain table: $(cat chain.txt)"
grep -qE '^ \(empty name\) +[0-9.]+ us +50  __cudaLaunchKernel' chain.txt || fail "the kernel with an empty name is not in the chain table: $(cat chain.txt)"
"$BIN/cprof" report empty.db --format json > r.json 2>err.txt || fail "report json: $(cat err.txt)"
echo ok
