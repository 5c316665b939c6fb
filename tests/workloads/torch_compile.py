"""torch.compile workloads for the simulated GPU tests: Triton pointwise and reduction kernels, a GEMM with an
epilogue, and mode="reduce-overhead" (CUDA graphs). Prints counts, never timings, so runs compare.

    torch_compile.py run STEPS        the steady block of each function inside an NVTX range "block:NAME"
    torch_compile.py count STEPS      the same, each block under torch.profiler: its kernel counts on stderr
"""
import contextlib
import os
import sys

import torch


def pointwise(x, y):
    return torch.sin(x) * y + 1.0


def reduction(x):
    return torch.softmax(x, dim=-1).sum(dim=0)


def guide(x, w, b):
    return torch.relu(torch.nn.functional.linear(x, w, b))


def graphed(x, w):
    return torch.tanh(x @ w) + x


def kernels_of(prof):
    """torch.profiler's own count of GPU kernels (Kineto's device events that are neither copies nor memsets)."""
    n = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and not e.name.startswith(("Memcpy", "Memset")):
            n += 1
    return n


def block(name, steps, fn, args, count):
    """Compile and warm up outside the block (compilation, autotuning, graph capture), then run STEPS calls."""
    for _ in range(3):
        out = fn(*args)
    torch.cuda.synchronize()
    ctx = contextlib.nullcontext()
    if count:
        from torch.profiler import ProfilerActivity, profile

        ctx = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with ctx as prof:
        torch.cuda.nvtx.range_push(f"block:{name}")
        for _ in range(steps):
            out = fn(*args)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    if count:
        print(f"torch.profiler kernels block:{name} {kernels_of(prof)}", file=sys.stderr)
    return out


def main():
    mode, steps = sys.argv[1], int(sys.argv[2])
    if mode not in ("run", "count"):
        sys.exit(f"torch_compile.py: unknown mode {mode}")
    count = mode == "count"
    torch.manual_seed(0)
    x = torch.randn(1024, device="cuda")
    y = torch.randn(1024, device="cuda")
    m = torch.randn(64, 128, device="cuda")
    w = torch.randn(256, 128, device="cuda")
    b = torch.randn(256, device="cuda")
    g = torch.randn(128, 128, device="cuda")
    out = block("pointwise", steps, torch.compile(pointwise), (x, y), count)
    print(f"pointwise shape={tuple(out.shape)}")
    out = block("reduction", steps, torch.compile(reduction), (m,), count)
    print(f"reduction shape={tuple(out.shape)}")
    out = block("guide", steps, torch.compile(guide), (m, w, b), count)
    print(f"guide shape={tuple(out.shape)}")
    out = block("reduce-overhead", steps, torch.compile(graphed, mode="reduce-overhead"), (m, g), count)
    print(f"reduce-overhead shape={tuple(out.shape)}")
    # a new shape: Dynamo misses its cache and compiles again (a recompilation)
    cp = torch.compile(pointwise)
    cp(x, y)
    cp(x[:512], y[:512])
    torch.cuda.synchronize()
    print("recompiled done")


if __name__ == "__main__":
    main()
