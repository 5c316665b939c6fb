# make bench: a PyTorch step loop timed from inside the script (bare, under cprof-run, or in torch.profiler).
"""Usage: torch_loop.py eager|train [--steps N] [--warmup N] [--torch-profiler | --alternate cuda|torch [--blocks K]]

eager: the guide's step, torch.add(torch.matmul(x, w), b) on 64x64; train: one training step of a 2-layer
nn.TransformerEncoder (d_model 64, 4 heads, batch 8 x 16 tokens, SGD). The loop is timed with
time.perf_counter_ns around it and a final torch.cuda.synchronize(); prints one JSON line with ns per step
and the loop's wall and CPU time (process CPU, all threads).

--alternate: 2K blocks of N steps in one process, profiled and not in the order off, on, on, off (repeated K/2
times), each block timed alone: `cuda` opens each profiled block with torch.cuda.profiler.start() and closes it with
stop() (cudaProfilerStart/Stop: what `cprof-run --capture-range cudaProfilerApi` records), `torch` runs it inside
torch.profiler.profile(CPU, CUDA). One process's layout for both halves: the per-process spread of the step time
(several us on a shared VM) cancels, which separate bare and profiled processes cannot do. Prints the blocks' ns
per step, off and on, and the loop thread's run and run-queue wait per step in each block (schedstat: what a
profiler's threads working on between the blocks take from it)."""
import atexit
import json
import os
import sys
import threading
import time

import torch


def make(mode):
    dev = "cuda"
    if mode == "eager":
        x = torch.randn(64, 64, device=dev)
        w = torch.randn(64, 64, device=dev)
        b = torch.randn(64, device=dev)

        def step():
            torch.add(torch.matmul(x, w), b)
        return step
    if mode == "train":
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                                 batch_first=True)
        model = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        atexit.register(settle_autograd)
        src = torch.randn(8, 16, 64, device=dev)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = model(src).square().mean()
            loss.backward()
            opt.step()
        return step
    raise SystemExit(f"torch_loop.py: unknown mode {mode!r} (eager or train)")


def threads():
    """Each thread's run time and run-queue wait (ns) from /proc/self/task/*/schedstat."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                run, wait, _ = (int(v) for v in f.read().split())
            with open(f"/proc/self/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/self/task/{tid}/status") as f:
                vol = int(next(l for l in f if l.startswith("voluntary_ctxt_switches")).split()[1])
        except OSError:
            continue
        out[tid] = (comm, run, wait, vol)
    return out


def alternate(step, how, steps, blocks):
    """Blocks profiled and not, ABBA order; each block's ns per step, off and on."""
    from torch.profiler import ProfilerActivity, profile
    got = {"off": [], "on": [], "wait_off": [], "wait_on": [], "run_off": [], "run_on": []}

    def sched():
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
            run, wait, _ = (int(v) for v in f.read().split())
        return run, wait
    for i in range(2 * blocks):
        on = i % 4 in (1, 2)
        prof = None
        if on and how == "cuda":
            torch.cuda.profiler.start()
        elif on:
            prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
            prof.__enter__()
        s0 = sched()
        t0 = time.perf_counter_ns()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        t1 = time.perf_counter_ns()
        s1 = sched()
        if on and how == "cuda":
            torch.cuda.profiler.stop()
        elif on:
            prof.__exit__(None, None, None)
        got["on" if on else "off"].append((t1 - t0) / steps)
        got["run_on" if on else "run_off"].append((s1[0] - s0[0]) / steps)
        got["wait_on" if on else "wait_off"].append((s1[1] - s0[1]) / steps)
    return got


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    mode = args[0]
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 3000
    warmup = int(args[args.index("--warmup") + 1]) if "--warmup" in args else 50
    step = make(mode)
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    if "--alternate" in args:
        how = args[args.index("--alternate") + 1]
        if how not in ("cuda", "torch"):
            raise SystemExit(f"torch_loop.py: --alternate {how!r}: cuda or torch")
        blocks = int(args[args.index("--blocks") + 1]) if "--blocks" in args else 8
        got = alternate(step, how, steps, blocks + blocks % 2)
        print(json.dumps({"mode": mode, "steps": steps, "alternate": how, "off_ns_per_step": got["off"],
                          "on_ns_per_step": got["on"],
                          "main_thread_ns_per_step": {k: got[k] for k in ("run_off", "run_on", "wait_off", "wait_on")}}),
              flush=True)
        return
    prof = None
    if "--torch-profiler" in args:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    th0 = threads()
    c0 = time.process_time_ns()
    t0 = time.perf_counter_ns()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    t1 = time.perf_counter_ns()
    c1 = time.process_time_ns()
    th1 = threads()
    me = str(os.getpid())
    per = {}
    for tid, (comm, run, wait, vol) in th1.items():
        r0, w0, v0 = th0.get(tid, (comm, 0, 0, 0))[1:]
        key = "main" if tid == me else comm
        d = per.setdefault(key, [0, 0, 0])
        d[0] += run - r0
        d[1] += wait - w0
        d[2] += vol - v0
    if prof is not None:
        prof.__exit__(None, None, None)
    print(json.dumps({"mode": mode, "steps": steps, "ns_per_step": (t1 - t0) / steps,
                      "loop_ns": t1 - t0, "loop_cpu_ns": c1 - c0,
                      "threads": {k: {"run_ns": v[0], "wait_ns": v[1], "sleeps": v[2]} for k, v in per.items()}, "t0_ns": time.time_ns() - (time.perf_counter_ns() - t0)}),
          flush=True)


def settle_autograd():
    """PyTorch's autograd device thread may still be dropping the last backward's GraphTask (a Python object in its
    ThreadLocalState) when the interpreter finalises: its take_gil then calls pthread_exit through a noexcept frame
    and std::terminate aborts the process ("terminate called without an active exception", SIGABRT; seen twice in
    `make bench` on 2026-12-02, bare and under cprof-run alike, and in one of 13 bare runs by hand with a `yes` beside
    it; the core's backtrace: Engine::thread_main -> ~GraphTask -> ~ThreadLocalState -> SafePyObject decref ->
    PyThread_exit_thread). A moment for it to go idle before the exit keeps the step's rounds from dying of it: an
    atexit handler, which the interpreter runs before it finalises."""
    time.sleep(0.2)


if __name__ == "__main__":
    main()
