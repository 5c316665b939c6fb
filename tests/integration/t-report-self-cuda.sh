# s21 hunt: the report's "Self CPU and Self CUDA by name" table, "as torch.profiler's table", had no copy or
# memset rows and left their GPU time out of "Self CUDA time total" (torch.profiler lists "Memcpy HtoD" and
# "Memset" rows and counts them); the HTML page's table the same.
. "$(dirname "$0")/lib.sh"
need_sim
[ -x "$WL/sample_blas" ] || fail "no $WL/sample_blas (make $WL/sample_blas)"
sim "$BIN/cprof-run" -q -o blas.db -- "$WL/sample_blas" > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
"$BIN/cprof" report blas.db > r.txt 2> err.txt || fail "report: $(cat err.txt)"
sed -n '/^Self CPU and Self CUDA by name/,/^Self CUDA time total/p' r.txt > torch.txt
grep -qE '^ \[CUDA memcpy Host-to-Device\] +0 +[0-9.]+ [nu]s +- +3$' torch.txt ||
	fail "no host-to-device row in the Self CUDA table: $(cat torch.txt)"
grep -qE '^ \[CUDA memcpy Device-to-Host\] +0 +[0-9.]+ [nu]s +- +1$' torch.txt ||
	fail "no device-to-host row in the Self CUDA table: $(cat torch.txt)"
# the total is every GPU record's time: kernels, copies, memsets
want=$(q blas.db "SELECT (SELECT coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL) +
	(SELECT coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY) + (SELECT coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_MEMSET)")
assert_ge "$want" 10000 "GPU time of the run (ns), shown in us"
got=$(sed -n 's/^Self CUDA time total: \([0-9]*\)\.\([0-9]\{3\}\) us$/\1\2/p' torch.txt)
assert_eq "$got" "$want" "Self CUDA time total (ns): $(tail -1 torch.txt)"
"$BIN/cprof" html blas.db -o r.html 2> err.txt || fail "html: $(cat err.txt)"
sed -n '/id="t-torch"/,/Self CUDA time total/p' r.html > torch.html
grep -q 'CUDA memcpy Host-to-Device' torch.html || fail "no host-to-device row in the HTML Self CUDA table"
echo ok
