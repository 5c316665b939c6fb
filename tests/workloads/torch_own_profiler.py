"""A program that runs its own torch.profiler with a schedule (wait/warmup/active), as training frameworks' profiler
callbacks do, and writes its own trace. Prints the kernel counts its profiler saw, never timings, so runs compare.

    torch_own_profiler.py STEPS TRACE_DIR [off]     off: the same loop with no profiler (the kernels it launches)
"""
import contextlib
import json
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, schedule


def main():
    steps, out = int(sys.argv[1]), sys.argv[2]
    off = len(sys.argv) > 3 and sys.argv[3] == "off"
    x = torch.ones(64, 64, device="cuda")
    w = torch.ones(64, 64, device="cuda")
    b = torch.ones(64, device="cuda")
    for _ in range(3):  # warm-up outside the profiler: cuBLAS handles, allocator
        y = torch.add(torch.matmul(x, w), b)
    torch.cuda.synchronize()
    seen = []

    def ready(p):
        kernels = sum(1 for e in p.events()
                      if e.device_type == torch.autograd.DeviceType.CUDA and not e.name.startswith(("Memcpy", "Memset")))
        path = os.path.join(out, f"trace-{len(seen)}.json")
        p.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
        in_trace = sum(1 for e in trace.get("traceEvents", []) if e.get("cat") == "kernel")
        seen.append((kernels, in_trace))

    sched = schedule(wait=1, warmup=1, active=3, repeat=2)
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched, on_trace_ready=ready)
    with contextlib.nullcontext() if off else prof:
        for _ in range(steps):
            torch.cuda.nvtx.range_push("step")
            for _ in range(3):
                y = torch.relu(torch.add(torch.matmul(x, w), b))
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            if not off:
                prof.step()
    for i, (k, t) in enumerate(seen):
        print(f"own profiler cycle {i}: kernels={k} trace_kernels={t}")
    print(f"own profiler cycles={len(seen)} shape={tuple(y.shape)}")


if __name__ == "__main__":
    main()
