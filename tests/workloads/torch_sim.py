"""PyTorch workloads for the simulated GPU tests: each mode prints counts, never timings, so runs compare."""
import sys

import torch


def seed(n, steps):
    x = torch.ones(n, n, device="cuda")
    w = torch.ones(n, n, device="cuda")
    b = torch.ones(n, device="cuda")
    for _ in range(steps):
        y = torch.add(torch.matmul(x, w), b)
    torch.cuda.synchronize()
    print(f"seed n={n} steps={steps} shape={tuple(y.shape)}")


def linear(steps):
    torch.manual_seed(0)
    model = torch.nn.Linear(256, 128).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.ones(64, 256, device="cuda")
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = model(x).sum()
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print(f"linear steps={steps} grad={tuple(model.weight.grad.shape)}")


def copies():
    a = torch.arange(1024, dtype=torch.float32)
    d = a.cuda()
    back = d.cpu()
    print(f"copies equal={bool(torch.equal(a, back))} allocated={torch.cuda.memory_allocated() > 0}")
    s = torch.cuda.Stream()
    e = torch.cuda.Event()
    with torch.cuda.stream(s):
        d2 = d * 2
        e.record()
    e.synchronize()
    torch.cuda.current_stream().wait_stream(s)
    print(f"streams done shape={tuple(d2.shape)}")


def graph(replays):
    x = torch.ones(64, 64, device="cuda")
    w = torch.ones(64, 64, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            y = torch.add(torch.matmul(x, w), 1.0)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = torch.add(torch.matmul(x, w), 1.0)
    for _ in range(replays):
        g.replay()
    torch.cuda.synchronize()
    print(f"graph replays={replays} shape={tuple(y.shape)}")


def profiler(steps):
    from torch.profiler import ProfilerActivity, profile

    x = torch.ones(64, 64, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            with torch.cuda.nvtx.range("step"):
                y = torch.add(torch.matmul(x, x), 1.0)
        torch.cuda.synchronize()
    events = prof.key_averages()
    cuda_us = sum(getattr(e, "device_time_total", 0) for e in events)
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=8), file=sys.stderr)
    print(f"profiler steps={steps} shape={tuple(y.shape)} cuda_time_positive={cuda_us > 0}")


def opcounts(what, steps):
    """torch.profiler's own op counts (CPU activity only) for the seed's loop or the training loop."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        seed(64, steps) if what == "seed" else linear(steps)
    for e in sorted(prof.key_averages(), key=lambda e: e.key):
        print(f"{e.key},{e.count}")


def opcost(device, n):
    """The bench's per-op cost of PyTorch's NVTX op ranges (what --torch-ops turns on), measured in one process:
    n small torch.add calls with them off and on, alternately; times go to stderr, stdout stays a count."""
    import time
    from torch.autograd.profiler import _disable_profiler, _enable_profiler
    from torch._C._profiler import ProfilerConfig, ProfilerState, _ExperimentalConfig

    cfg = ProfilerConfig(ProfilerState.NVTX, False, False, False, False, False, _ExperimentalConfig())
    x = torch.ones(8, device=device)
    off, on, coff, con = [], [], [], []
    for rep in range(7):
        for nvtx in ((False, True) if rep % 2 else (True, False)):
            if nvtx:
                _enable_profiler(cfg, set())
            torch.cuda.synchronize()
            t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
            for _ in range(n):
                x = torch.add(x, 1.0)
            torch.cuda.synchronize()
            (on if nvtx else off).append((time.perf_counter_ns() - t0) / n)
            (con if nvtx else coff).append((time.thread_time_ns() - c0) / n)
            if nvtx:
                _disable_profiler()
    med = lambda v: sorted(v)[len(v) // 2]
    # wall time, and the CPU time of this thread alone (what other processes on a busy machine cannot inflate)
    print(f"ns_per_op_off {med(off):.1f} ns_per_op_on {med(on):.1f} cpu_ns_per_op_off {med(coff):.1f}"
          f" cpu_ns_per_op_on {med(con):.1f}", file=sys.stderr)
    print(f"opcost {device} n={n}")


def main():
    mode = sys.argv[1]
    arg = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 0
    if mode == "seed":
        seed(arg, int(sys.argv[3]))
    elif mode == "linear":
        linear(arg)
    elif mode == "copies":
        copies()
    elif mode == "graph":
        graph(arg)
    elif mode == "profiler":
        profiler(arg)
    elif mode == "opcounts":
        opcounts(sys.argv[2], int(sys.argv[3]))
    elif mode == "opcost":
        opcost(sys.argv[2], int(sys.argv[3]))
    elif mode == "available":
        print(f"available={torch.cuda.is_available()}")
    else:
        sys.exit(f"torch_sim.py: unknown mode {mode}")


if __name__ == "__main__":
    main()
