#!/usr/bin/env python3
"""Damaged and hostile variants of a real profile (tests/integration/t-rel-corrupt.sh, seeds for the
profile-loader fuzz target): usage corrupt.py BASE.db OUTDIR [FLIPS]. Deterministic."""
import os, random, shutil, sqlite3, sys

base_path, out = sys.argv[1], sys.argv[2]
flips = int(sys.argv[3]) if len(sys.argv) > 3 else 60
base = open(base_path, "rb").read()
os.makedirs(out, exist_ok=True)
n, page = len(base), int.from_bytes(base[16:18], "big") or 65536


def write(name, data):
    with open(os.path.join(out, name + ".db"), "wb") as f:
        f.write(data)


def edited(name, *sql):
    """A copy of the base profile changed with SQL, as a hostile or damaged file would be."""
    path = os.path.join(out, name + ".db")
    shutil.copy(base_path, path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")
    for s in sql:
        db.executescript(s)
    db.commit()
    db.close()


# not a profile at all
write("empty", b"")
write("text", b"not a database\n")
write("random", bytes(random.Random(1).getrandbits(8) for _ in range(2 * page)))
write("header-only", base[:100])
write("zero-pages", base[:100] + bytes(2 * page - 100))
# truncated: in the header, at and around page boundaries, in the middle of pages
cuts = {1, 15, 16, 99, 100, 101, 511, 512, page - 1, page, page + 1, n - 1}
cuts |= {k * page for k in range(2, n // page)} | {k * page + 777 for k in range(1, n // page, 2)}
for c in sorted(cuts):
    if 0 < c < n:
        write("trunc-%d" % c, base[:c])
# bit flips: half in page headers (b-tree structure), half anywhere
r = random.Random(7)
for i in range(flips):
    b = bytearray(base)
    off = r.randrange(n // page) * page + r.randrange(16) if i % 2 else r.randrange(n)
    b[off] ^= 1 << r.randrange(8)
    write("flip-%d-%d" % (i, off), bytes(b))
# 16 random bytes over a page's first bytes
for i in range(6):
    b = bytearray(base)
    off = r.randrange(1, n // page) * page
    b[off:off + 16] = bytes(r.getrandbits(8) for _ in range(16))
    write("smash-%d" % off, bytes(b))
# valid SQLite, hostile or foreign content
edited("future-schema", "UPDATE META SET value='cprof.profile/2' WHERE key='schema'")
edited("no-schema-row", "DELETE FROM META WHERE key='schema'")
edited("no-meta", "DROP TABLE META")
edited("trigger", "CREATE TRIGGER t AFTER INSERT ON META BEGIN DELETE FROM CPROF_API; END")
edited("view-recursive", "DROP VIEW GPU_OPS",
       "CREATE VIEW GPU_OPS AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
       " SELECT 1 AS processId, 0 AS deviceId, 7 AS streamId, x AS correlationId, x AS start, x + 1 AS end,"
       " 'kernel' AS kind, 0 AS nameId, NULL AS bytes FROM c")
edited("view-function", "DROP VIEW GEMMS",
       "CREATE VIEW GEMMS AS SELECT *, randomblob(1000000) AS junk FROM CPROF_API")
edited("table-is-view", "ALTER TABLE CPROF_API RENAME TO API_REAL",
       "CREATE VIEW CPROF_API AS SELECT * FROM API_REAL")
edited("meta-is-view", "ALTER TABLE META RENAME TO M2", "CREATE VIEW META AS SELECT * FROM M2")
edited("long-strings", "UPDATE StringIds SET value = printf('%.*c', 20000 + id, 'x') WHERE value LIKE '_Z%'",
       "UPDATE META SET value = printf('%.*c', 100000, 'y') WHERE key IN ('command', 'incomplete_reason')")
edited("odd-values", "UPDATE CPROF_API SET start = -1, end = 9223372036854775807 WHERE id % 3 = 0",
       "UPDATE CPROF_API SET nameId = 999999 WHERE id % 5 = 0",
       "UPDATE META SET value = 'x' WHERE key IN ('events', 'lost_events', 'exit_status')")
db = sqlite3.connect(os.path.join(out, "other-sqlite.db"))
db.executescript("CREATE TABLE x(a); INSERT INTO x VALUES (1);")
db.close()
