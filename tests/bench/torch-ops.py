#!/usr/bin/env python3
# The host cost cprof adds to a PyTorch op with Python call sites read (the GIL released): --stacks off, sampled, all.
"""usage: tests/bench/torch-ops.py [ROUNDS]   (BUILD=build dir, CPROF_TORCH_VENV=the torch virtualenv)

Runs torch on the simulated GPU (build/simgpu/simgpu-run): plain, and under cprof-run with --stacks off,
sampled, all, and sampled with CPROF_PY_NOGIL=0 (frames only where the GIL is held: torch's ops then get
native stacks only). The processes alternate round by round so that a busy machine shifts every
configuration alike. In each process two ops run 10 Python frames deep, in bursts of BURST, 2 ms apart (so
the collector keeps up): torch.add of two 64x64 tensors (one kernel launch) and torch.matmul (one cuBLAS
GEMM); each figure is the median over a process's bursts of the time per op, then the median over rounds
(the added cost: the median over rounds of the difference with the same round's --stacks off).
Simulated GPU: the launch calls return without a driver, so the figures are host costs only."""
import os
import statistics
import subprocess
import sys
import time

BURST, BURSTS = 200, 60


def child():
    import torch

    x = torch.ones(64, 64, device="cuda")
    w = torch.ones(64, 64, device="cuda")
    ops = {"add": lambda: torch.add(x, w), "matmul": lambda: torch.matmul(x, w)}
    per = {k: [] for k in ops}

    def bursts():
        for k in ops:  # warm-up: cuBLAS handles, caching allocator, first-call paths
            for _ in range(50):
                ops[k]()
        torch.cuda.synchronize()
        for i in range(BURSTS):
            for k in ops if i % 2 == 0 else reversed(list(ops)):
                f = ops[k]
                t0 = time.perf_counter_ns()
                for _ in range(BURST):
                    f()
                per[k].append((time.perf_counter_ns() - t0) / BURST)
                torch.cuda.synchronize()
                time.sleep(0.002)

    def deep(k):
        return deep(k - 1) if k else bursts()

    deep(10)
    print(" ".join("%s %.1f" % (k, sorted(v)[len(v) // 2]) for k, v in per.items()))


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    build = os.path.abspath(os.environ.get("BUILD", os.path.join(root, "build")))
    py = os.path.join(os.environ.get("CPROF_TORCH_VENV", os.path.join(build, "venv-torch")), "bin", "python")
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    sim = os.path.join(build, "simgpu", "simgpu-run")
    run = os.path.join(build, "bin", "cprof-run")
    db = os.path.join(build, "bench-torch-ops.db")
    me = os.path.abspath(__file__)
    confs = [("plain", [], {}), ("stacks off", ["--stacks", "off"], {}), ("stacks sampled", ["--stacks", "sampled"], {}),
             ("stacks all", ["--stacks", "all"], {}),
             ("sampled, CPROF_PY_NOGIL=0", ["--stacks", "sampled"], {"CPROF_PY_NOGIL": "0"})]
    res = {c[0]: {"add": [], "matmul": []} for c in confs}
    for r in range(rounds):
        for name, opts, env in confs if r % 2 == 0 else reversed(confs):
            pre = [run, "-q", "-f", "-o", db] + opts + ["--"] if name != "plain" else []
            out = subprocess.run(pre + [sim, py, me, "--child"], env=dict(os.environ, **env), check=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.split()
            for k, v in zip(out[0::2], out[1::2]):
                res[name][k].append(float(v))
            print("round %d %-28s %s" % (r + 1, name, " ".join(out)), file=sys.stderr)
    med = {n: {k: statistics.median(v) for k, v in d.items()} for n, d in res.items()}
    # the added cost: a difference within each round (its processes ran side by side), median over rounds
    add = {n: {k: statistics.median(a - b for a, b in zip(v, res["stacks off"][k])) for k, v in d.items()}
           for n, d in res.items()}
    print("%s, load %.1f, %d rounds, ns per op: median over rounds of each process's median of %d bursts of %d;"
          " +ns: median over rounds of the difference with that round's --stacks off" %
          (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.getloadavg()[0], rounds, BURSTS, BURST))
    print("| configuration | torch.add ns | +ns vs stacks off | torch.matmul ns | +ns vs stacks off |")
    print("|---|---|---|---|---|")
    for n in res:
        print("| %s | %.0f | %+.0f | %.0f | %+.0f |" % (n, med[n]["add"], add[n]["add"], med[n]["matmul"],
                                                     add[n]["matmul"]))

if __name__ == "__main__":
    child() if sys.argv[1:2] == ["--child"] else main()
