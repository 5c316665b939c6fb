#!/usr/bin/env python3
"""Compares a windowed profile with the launches window_loop logged itself (index, t0, t1, step).

A launch is inside a window when its call lies wholly in it, outside when wholly outside every window;
a call across a window's edge may be either. Checks that every recorded launch is one the program made
inside or across a window, that every launch made inside one is recorded with its kernel, that a recorded
launch without its kernel is one across an edge (CUPTI is switched at the edge while the call may be under
way: docs/guarantees.md), and that no kernel is without its recorded launch. Prints one line per window;
exits 1 with the reason on the first mismatch."""
import bisect
import sqlite3
import sys


def main(db_path, log_path, want_windows):
    log = []
    with open(log_path) as f:
        for line in f:
            i, t0, t1, step = line.split()
            log.append((int(t0), int(t1), int(i), int(step)))
    log.sort()
    db = sqlite3.connect(db_path)
    wins = db.execute("SELECT number, start, end, why, endWhy FROM CPROF_WINDOWS ORDER BY start").fetchall()
    if len(wins) != want_windows:
        sys.exit(f"FAIL: {len(wins)} windows in the profile, want {want_windows}: {wins}")
    rows = db.execute("SELECT start, correlationId FROM CPROF_API WHERE class = 'launch' ORDER BY start").fetchall()
    calls = [r[0] for r in rows]
    kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    # the recorded launches whose kernel CUPTI recorded: kernel -> CUPTI id -> cprof's external id
    with_kernel = {r[0] for r in db.execute(
        "SELECT DISTINCT e.externalId FROM CUPTI_ACTIVITY_KIND_KERNEL k"
        " JOIN CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e ON e.correlationId = k.correlationId AND e.externalKind = 5")}
    # a window is [capture-on, capture-off]; its outer stamps (capture-start before CUPTI's kinds go on, capture-stop
    # after they go off and are flushed) hold CUPTI's switches, while the hooks pass calls through. A call that
    # entered between a flip and its inner stamp is recorded and may lie outside [on, off], never outside the outer
    starts_at = sorted(r[0] for r in db.execute("SELECT timeNs FROM CPROF_STATUS WHERE code = 'capture-start'"))
    stops_at = sorted(r[0] for r in db.execute("SELECT timeNs FROM CPROF_STATUS WHERE code = 'capture-stop'"))

    def outer(s, e):
        k = bisect.bisect_right(starts_at, s) - 1
        k2 = bisect.bisect_left(stops_at, e)
        return (starts_at[k] if k >= 0 else s, stops_at[k2] if k2 < len(stops_at) else e)
    outer_wins = [outer(s, e) for _, s, e, _, _ in wins]
    corr_of = {}
    starts = [l[0] for l in log]
    matched = set()
    for c, corr in rows:
        k = bisect.bisect_right(starts, c) - 1
        if k < 0 or not (log[k][0] <= c <= log[k][1]):
            sys.exit(f"FAIL: recorded launch at {c} is none the program logged")
        t0, t1, idx, _ = log[k]
        if not any(t1 >= s and t0 <= e for s, e in outer_wins):
            sys.exit(f"FAIL: launch {idx} ({t0}..{t1}) was recorded but lies outside every window {wins}")
        if idx in matched:
            sys.exit(f"FAIL: launch {idx} recorded twice")
        matched.add(idx)
        corr_of[idx] = corr
    edge_total = 0
    for (n, s, e, why, end_why), (os_, oe) in zip(wins, outer_wins):
        switching = sum(1 for l in log if (l[0] >= os_ and l[1] < s) or (l[0] > e and l[1] <= oe))
        inside = [l for l in log if l[0] >= s and l[1] <= e]
        edge = [l for l in log if not (l[0] >= s and l[1] <= e) and l[1] >= s and l[0] <= e]
        missing = [l[2] for l in inside if l[2] not in matched]
        if missing:
            sys.exit(f"FAIL: window {n}: {len(missing)} launches made inside it were not recorded (first {missing[:5]})")
        no_kernel = [l[2] for l in inside if corr_of[l[2]] not in with_kernel]
        if no_kernel:
            sys.exit(f"FAIL: window {n}: {len(no_kernel)} launches made inside it have no kernel (first {no_kernel[:5]})")
        cut = sum(1 for l in edge if l[2] in matched and corr_of[l[2]] not in with_kernel)
        kept = sum(1 for l in inside + edge if l[2] in matched)
        edge_total += len(edge)
        print(f"window {n} ({why}; {end_why}): {(e - s) / 1e9:.3f} s, {len(inside)} launches made inside it, "
              f"{kept} recorded, {len(edge)} across its edges ({cut} of them recorded without their kernel), "
              f"{switching} made while CUPTI was switched at its edges")
        if not inside:
            sys.exit(f"FAIL: window {n}: no launch inside it: the test proves nothing")
    recorded = {corr_of[i] for i in matched}
    orphans = len(with_kernel - recorded)
    if orphans or kernels != len(with_kernel & recorded):
        sys.exit(f"FAIL: {kernels} kernels for {len(calls)} recorded launches, {orphans} of them of no recorded launch")
    print(f"recorded {len(calls)} of {len(log)} launches; {kernels} kernels; {edge_total} across window edges")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
