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

# 400 recording windows (rows like cprofd's, one process): the text lists the first 10 and says how many
# more and where they all are; JSON has every one; 10 windows are listed whole
windows() { # DB N
	local s
	s=$(q "$1" "SELECT startNs FROM PROCESSES LIMIT 1")
	q "$1" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
		INSERT INTO CPROF_WINDOWS SELECT 1, (SELECT pid FROM PROCESSES LIMIT 1), i, $s + i * 100000, $s + i * 100000 + 50000,
		'cprof capture --duration 0.00005', 'window ended' FROM n"
}
cp two.db w400.db
cp two.db w10.db
windows w400.db 400
windows w10.db 10
"$BIN/cprof" report w400.db > w400.txt 2>err.txt || fail "report: $(cat err.txt)"
sed -n '/^Recorded windows: 400/,/^Verdict/p' w400.txt > head.txt
grep -q '^Verdict' head.txt || fail "no verdict after the windows: $(head -20 w400.txt)"
assert_eq "$(grep -c '^  #[0-9]' head.txt)" 10 "window lines before the verdict"
grep -qF '  ... 390 more windows not listed (cprof report --format json lists them all, "windows")' head.txt ||
	fail "the windows left out are not counted: $(cat head.txt)"
"$BIN/cprof" report w400.db --format json > w400.json 2>err.txt || fail "report json: $(cat err.txt)"
assert_eq "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["windows"]))' w400.json)" 400 "windows in JSON"
"$BIN/cprof" report w10.db > w10.txt 2>err.txt || fail "report: $(cat err.txt)"
assert_eq "$(grep -c '^  #[0-9]' w10.txt)" 10 "ten windows listed"
grep -q 'more windows' w10.txt && fail "ten windows: a 'more' line"
echo ok
