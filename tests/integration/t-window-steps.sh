# Issue 31 item 2: cprof-run --steps 10:15 on a 50-step loop (NVTX ranges "step N", found as the report finds
# steps) keeps the kernels of those 6 steps only, with the same per-step counts as an unwindowed run; with
# :every=N the window repeats; the window says how the steps were found.
. "$(dirname "$0")/lib.sh"
need_sim
P=$WL/window_loop
per_step() { # the kernels launched inside each step range, by name: "step 10:win_a(int*)=4,win_b(int*)=1 ..."
	q "$1" "SELECT s.value || ':' || coalesce((SELECT group_concat(k, ',') FROM (SELECT g.name || '=' || count(*) AS k
		FROM API_GPU g WHERE g.processId = n.processId AND g.apiStart BETWEEN n.start AND n.end
		AND g.gpuKind = 'kernel' GROUP BY g.name ORDER BY g.name)), '')
		FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE n.eventType = 'range' ORDER BY n.start" | tr '\n' ' '
}
sim "$BIN/cprof-run" -q -o all.db -- "$P" --steps 50 --period-us 200 --log all.log > all.out 2>&1 || fail "unwindowed run"
sim "$BIN/cprof-run" -q -o w.db --steps 10:15 -- "$P" --steps 50 --period-us 200 --log w.log > w.out 2>&1 || fail "--steps run"
cmp -s all.out w.out || fail "the program's output differs under --steps"
want=$(per_step all.db | grep -o 'step 1[0-5]:[^ ]*' | tr '\n' ' ')
got=$(per_step w.db)
assert_eq "$got" "$want" "per-step kernels of steps 10..15"
assert_match "$got" "^step 10:.* step 15:[^ ]* $" "six steps, 10 to 15"
# nothing outside them: every kernel was launched inside one of the six
assert_eq "$(q w.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" \
	"$(q all.db "SELECT count(*) FROM API_GPU g JOIN NVTX_EVENTS n ON n.processId = g.processId AND g.apiStart BETWEEN n.start AND n.end
		JOIN StringIds s ON s.id = n.textId WHERE g.gpuKind = 'kernel' AND s.value IN ('step 10','step 11','step 12','step 13','step 14','step 15')")" \
	"kernels of the window = kernels of steps 10..15 unwindowed"
assert_match "$(q w.db "SELECT why FROM CPROF_WINDOWS")" "^--steps 10:15: step 10 \(NVTX range 'step 10', as the report finds steps\)$" "how the steps were found"
"$BIN/cprof" report w.db --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [s["name"] for s in d["steps"]] == ["step %d" % i for i in range(10, 16)], d["steps"]
assert len(d["windows"]) == 1' || fail "the report's steps and window"

# repeating: steps 10-12, 30-32 and 50 (the loop ends there: the window closes with the process)
sim "$BIN/cprof-run" -q -o e.db --steps 10:12:every=20 -- "$P" --steps 50 --period-us 200 > /dev/null 2>&1 || fail "every run"
assert_eq "$(q e.db "SELECT group_concat(number || '/' || endWhy, ' ') FROM (SELECT * FROM CPROF_WINDOWS ORDER BY start)")" \
	"1/window ended 2/window ended 3/process ended" "three windows"
want=$(per_step all.db | grep -oE 'step (1[0-2]|3[0-2]|50):[^ ]*' | tr '\n' ' ')
assert_eq "$(per_step e.db)" "$want" "per-step kernels of the repeated windows"
for bad in 0:3 5:4 3 1:2:every=1 1:2:each=5; do
	"$BIN/cprof-run" -q -o bad.db --steps "$bad" -- true 2> /dev/null; assert_eq $? 2 "--steps $bad"
done
echo "steps: $(q w.db "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") kernels in steps 10..15"
