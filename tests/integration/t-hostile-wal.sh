# Issue 32 item 4 (data lost g): a profile read while the run goes on (cprof info, a dashboard) used to keep
# its tail in a 31-42 MB PROFILE-wal beside it: the .db copied alone was incomplete. cprofd's finish waits
# (bounded, 10 s) for such a reader to let go, then merges the WAL into the .db and truncates it.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/integration/rel.sh"
need_sim
cat > reader.py <<'PYEOF'
import sqlite3, sys, time, os
while not os.path.exists("w.db"):
    time.sleep(0.01)
time.sleep(0.3)
db = sqlite3.connect("file:w.db?mode=ro", uri=True, isolation_level=None)
db.execute("BEGIN")
db.execute("SELECT count(*) FROM CPROF_API").fetchone()  # a read snapshot held across the run's finish
open("reading", "w").close()
time.sleep(3)  # the program (under a second) has exited by then: the run's finish waits for this reader
db.execute("COMMIT")
open("released", "w").close()
time.sleep(0.5)
db.close()
PYEOF
"$PY" reader.py &
reader=$!
# the program starts once the reader holds its snapshot: a run that ended before the reader's first read
# (python's start-up under load) proved nothing and failed the check below
sim "$BIN/cprof-run" -q -o w.db -- sh -c 'for i in $(seq 1000); do [ -e reading ] && break; sleep 0.01; done; exec "$@"' sh \
	"$WL/scenarios" steady 12000 > /dev/null 2> err.txt || fail "run: $(cat err.txt)"
[ -e reading ] || fail "the reader did not read during the run"
[ -e released ] || fail "the run finished without waiting for the reader (the WAL could not have been merged)"
wait $reader || fail "the reader failed"
[ ! -s w.db-wal ] || fail "the profile's tail stayed in w.db-wal ($(stat -c %s w.db-wal) bytes): $(cat err.txt)"
mkdir alone
cp w.db alone/
calls=$(q alone/w.db "SELECT count(*) FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId WHERE s.value LIKE '%LaunchKernel'")
# 12,000 launches fit the thread's ring (16,384 events) whatever the load: none can be lost to a starved
# flusher, so a short count here is the WAL's tail, not load
assert_ge "$calls" 12000 "launches in the .db copied alone"
assert_eq "$(meta alone/w.db finalised)" 1 "the .db copied alone is the finished profile"
echo OK
