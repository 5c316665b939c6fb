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
    elif mode == "available":
        print(f"available={torch.cuda.is_available()}")
    else:
        sys.exit(f"torch_sim.py: unknown mode {mode}")


if __name__ == "__main__":
    main()
