#!/bin/bash
# Runs every integration test (t-*.sh), each under a timeout; prints one line per test and fails if any did.
cd "$(dirname "$0")" || exit 2
pass=0 skipped=0 failed=()
for t in ${1:-t-*.sh}; do
	start=$(date +%s.%N)
	if out=$(timeout -k 5 ${CPROF_TEST_TIMEOUT:-180} bash "$t" 2>&1); then
		pass=$((pass + 1))
		printf 'PASS %-40s %5.1fs\n' "$t" "$(echo "$(date +%s.%N) - $start" | bc)"
	else
		rc=$?
		if [ $rc -eq 77 ]; then
			# exit 77: the test did not run (its last line says why); never counted as passed
			skipped=$((skipped + 1))
			printf 'SKIP %s: %s\n' "$t" "$(printf '%s\n' "$out" | tail -1)"
			continue
		fi
		failed+=("$t")
		printf 'FAIL %-40s (exit %d)\n' "$t" "$rc"
		printf '%s\n' "$out" | tail -25 | sed 's/^/    /'
	fi
done
echo "integration: ${pass} passed, ${skipped} skipped, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
