# Issue 7 scenario 13: damaged and hostile profiles (tests/fuzz/corrupt.py on a real one: empty, not
# SQLite, truncated at ~40 offsets, 60 bit flips, smashed page headers, a future schema version, a
# trigger, views that are not cprof's, a table replaced by a view, absurd values) -> every cprof command
# exits 0 or 2 (3 for check), never crashes or hangs (the runner's timeout); exit 2 comes with exactly one line on stderr; the
# file is never modified and nothing is created next to it (opened read-only, immutable when finished,
# SQLite's defensive flag on, trusted_schema off, triggers off). Then the whole set again under
# ASan/UBSan, through the fuzz_profile harness (every report command on each file).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
sim "$BIN/cprof-run" -q -o base.db -- "$WL/scenarios" threads 100 > /dev/null || fail "base profile"
"$PY" "$ROOT/tests/fuzz/corrupt.py" base.db corpus 60 || fail "corrupt.py"
cd corpus || fail "no corpus"
sha256sum *.db > ../before.sum
n=0 rejected=0
for f in *.db; do
	n=$((n + 1))
	cmds="report"
	case $f in flip-*|smash-*|trunc-*[05].db) ;; *) cmds="report info check trace" ;; esac
	for c in $cmds; do
		case $c in
		trace) "$BIN/cprof" trace "$f" -f -o "../$f.json" > /dev/null 2> ../err.txt; rc=$? ;;
		*) "$BIN/cprof" $c "$f" > /dev/null 2> ../err.txt; rc=$? ;;
		esac
		case $rc in
		0|3) ;;
		2) [ "$(wc -l < ../err.txt)" = 1 ] || fail "cprof $c $f: exit 2 with $(wc -l < ../err.txt) lines: $(cat ../err.txt)"
		   [ $c = report ] && rejected=$((rejected + 1)) ;;
		*) fail "cprof $c $f: exit $rc: $(cat ../err.txt)" ;;
		esac
	done
done
sha256sum -c --quiet ../before.sum || fail "a profile was modified by reading it"
[ "$(ls | grep -vc '\.db$')" = 0 ] || fail "files created next to the profiles: $(ls | grep -v '\.db$' | head)"
echo "$n files, $rejected rejected by cprof report (exit 2, one line)"
# the ones that must be refused, and why
for f in empty text random header-only trunc-100 trunc-8192 future-schema no-meta no-schema-row trigger \
	view-recursive view-function table-is-view meta-is-view other-sqlite; do
	"$BIN/cprof" report $f.db > /dev/null 2> ../err.txt; rc=$?
	assert_eq "$rc" 2 "cprof report $f"
	echo "$f: $(cat ../err.txt)"
done
"$BIN/cprof" info future-schema.db 2>&1 | grep -q "written by a newer cprof (schema cprof.profile/2" || fail "future schema message"
"$BIN/cprof" info trigger.db 2>&1 | grep -q "trigger" || fail "trigger message"
"$BIN/cprof" info view-recursive.db 2>&1 | grep -q "view GPU_OPS is not the one cprof writes" || fail "view message"
assert_ge "$rejected" 60 "damaged files rejected"
# a profile still being written (WAL beside it) is read the ordinary way, and still read-only
cd "$T" && sim "$BIN/cprof-run" -q -o live.db -- "$WL/scenarios" loop 0.8 > /dev/null &
for i in $(seq 100); do [ -s "$T/live.db-wal" ] && break; sleep 0.02; done
sleep 0.3
"$BIN/cprof" info "$T/live.db" > /dev/null || fail "cannot read a profile being written"
wait
# ASan/UBSan: the same files through every report command in the fuzz harness (built by make check when
# clang is there)
FZ=$BUILD/fuzz/fuzz_profile
if [ -x "$FZ" ]; then
	# every hostile and odd file, a sample of the damaged ones (each accepted file costs ~0.4 s under ASan)
	cd "$T/corpus" && set -- $(ls *.db | grep -v '^flip-\|^trunc-\|^smash-') $(ls flip-*.db | head -12) $(ls smash-*.db trunc-*.db | head -6)
	"$FZ" -runs=1 "$@" > ../asan.txt 2>&1 || { tail -30 ../asan.txt; fail "ASan/UBSan found a problem"; }
	echo "ASan/UBSan: $# files clean"
else
	echo "ASan/UBSan pass skipped: $FZ not built (clang with libFuzzer missing; see tests/fuzz/fuzz.mk)"
fi
echo ok
