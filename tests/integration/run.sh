#!/bin/bash
# Runs every integration test (t-*.sh), each under a timeout; prints one line per test and fails if any did.
cd "$(dirname "$0")" || exit 2
pass=0 failed=() skipped=0
for t in ${1:-t-*.sh}; do
	start=$(date +%s.%N)
	# a test that starts PyTorch several times says how long it may take ("# cprof-test-timeout: S")
	lim=$(sed -n 's/^# cprof-test-timeout: \([0-9][0-9]*\)$/\1/p' "$t" | head -1)
	out=$(timeout -k 5 "${CPROF_TEST_TIMEOUT:-${lim:-180}}" bash "$t" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		printf 'PASS %-40s %5.1fs\n' "$t" "$(echo "$(date +%s.%N) - $start" | bc)"
	elif [ $rc -eq 77 ]; then
		# a test that could not run says why (lib.sh's skip); it is not a pass
		skipped=$((skipped + 1))
		printf 'SKIP %-40s %s\n' "$t" "$(printf '%s\n' "$out" | sed -n 's/^SKIP: //p' | tail -1)"
	else
		failed+=("$t")
		printf 'FAIL %-40s (exit %d)\n' "$t" "$rc"
		printf '%s\n' "$out" | tail -25 | sed 's/^/    /'
	fi
done
echo "integration: ${pass} passed, ${#failed[@]} failed, ${skipped} skipped"
[ ${#failed[@]} -eq 0 ]
