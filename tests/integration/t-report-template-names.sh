# s21 review: kernels whose demangled names differ only in template arguments were folded to the same
# "k<...>(...)" text in the report's tables and in cprof diff (a kernel listed as new and as gone under one
# shown name). Names that would look alike keep their template arguments (or are shown whole); diff still
# pairs rows by the full name.
. "$(dirname "$0")/lib.sh"
need_sim
sim "$BIN/cprof-run" -q -o two.db -- "$WL/scenarios" torch-shaped 5 > /dev/null 2>err.txt || fail "run: $(cat err.txt)"
assert_eq "$(q two.db "SELECT count(DISTINCT nameId) FROM CUPTI_ACTIVITY_KIND_KERNEL")" 2 "two kernels"
# void cutlass_like::device_gemm::gemm_tensorop_kernel_with_a_long_name<float|double, 128, 64>(T const*, T const*, T*, int, int, int)
F=_ZN12cutlass_like11device_gemm37gemm_tensorop_kernel_with_a_long_nameIfLi128ELi64EEEvPKT_S4_PS2_iii
D=_ZN12cutlass_like11device_gemm37gemm_tensorop_kernel_with_a_long_nameIdLi128ELi64EEEvPKT_S4_PS2_iii
cp two.db tmpl.db
q tmpl.db "UPDATE StringIds SET value = '$F' WHERE value = '_Z6kern_aPi'; UPDATE StringIds SET value = '$D' WHERE value = '_Z6kern_bPi'"
# the names of a table's rows (the findings' evidence, bounded, still folds them: left as it is)
names() { grep -E '^ +([0-9.]+ |kernel )' "$1" | grep -F 'gemm_tensorop' | sed 's/.*  //' | sort; }
"$BIN/cprof" report tmpl.db --by kernel > k.txt 2>err.txt || fail "report: $(cat err.txt)"
assert_eq "$(names k.txt | wc -l)" 2 "two kernel rows"
assert_eq "$(names k.txt | uniq | wc -l)" 2 "the two kernel rows are shown alike: $(names k.txt)"
grep -qF 'gemm_tensorop_kernel_with_a_long_name<float, 128, 64>(...)' k.txt || fail "template arguments not kept: $(names k.txt)"
"$BIN/cprof" report tmpl.db > r.txt 2>err.txt || fail "report: $(cat err.txt)"
grep -A5 '^GPU kernels' r.txt > kt.txt
assert_eq "$(names kt.txt | uniq | wc -l)" 2 "default report: the kernel rows are shown alike: $(names kt.txt)"
# a name without a twin is folded as before
grep -q '__cudaLaunchKernel$' r.txt || fail "API rows changed"
# the Self CPU/CUDA table's 60 columns would hide where the twins differ: each has its place among them (#1, #2)
sed -n '/^Self CPU and Self CUDA/,/^Self CUDA time total/p' r.txt | grep -F 'cutlass_like' > self.txt
assert_eq "$(grep -c ' #[12] ' self.txt)" 2 "the Self table's twin rows numbered: $(cat self.txt)"
assert_eq "$(sed 's/  .*//' self.txt | sort -u | wc -l)" 2 "the Self table's twin rows shown alike: $(cat self.txt)"

# the page: its kernel and Self tables show the twins apart too (each cell's text, the full name on hover)
"$BIN/cprof" html tmpl.db -o tmpl.html 2>err.txt || fail "html: $(cat err.txt)"
cells() { sed -n "/id=\"$1\"/,/<\/table>/p" tmpl.html | grep -o '<td class="name" title="[^"]*">[^<]*' | grep -F cutlass_like | sed 's/.*">//'; }
assert_eq "$(cells t-kernels | wc -l)" 2 "the page's kernel table: two twin rows"
assert_eq "$(cells t-kernels | sort -u | wc -l)" 2 "the page's kernel rows shown alike: $(cells t-kernels)"
assert_eq "$(cells t-torch | sort -u | wc -l)" 2 "the page's Self rows shown alike: $(cells t-torch)"

# diff: the float kernel gone, the double one new, each under its own name; the same profile: no change
cp two.db a.db
cp two.db b.db
q a.db "UPDATE StringIds SET value = '$F' WHERE value = '_Z6kern_aPi'"
q b.db "UPDATE StringIds SET value = '$D' WHERE value = '_Z6kern_aPi'"
"$BIN/cprof" diff a.db b.db > d.txt 2>&1 || fail "diff: $(cat d.txt)"
grep -E '^  kernel .* new .*<double, 128, 64>' d.txt > /dev/null || fail "diff: no new double kernel: $(cat d.txt)"
grep -E '^  kernel .* gone .*<float, 128, 64>' d.txt > /dev/null || fail "diff: no gone float kernel: $(cat d.txt)"
assert_eq "$(names d.txt | uniq | wc -l)" 2 "diff: new and gone are shown alike: $(names d.txt)"
"$BIN/cprof" diff tmpl.db tmpl.db > same.txt 2>&1 || fail "diff: $(cat same.txt)"
grep -q 'no kernel or call changed' same.txt || fail "diff of one profile with itself: $(cat same.txt)"
echo ok
