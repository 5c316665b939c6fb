"""The guide's first function, torch.add(torch.matmul(x, w), b), eager or under torch.compile, one call a step
(an NVTX range "step"). b has the output's shape: inductor fuses the pair into one aten::addmm, which copies b
into the output (a Memcpy DtoD) before the GEMM. Prints shapes, never timings, so runs compare.

    torch_compile_guide.py eager|compiled STEPS
"""
import sys

import torch


def matmul_add(x, w, b):
    return torch.add(torch.matmul(x, w), b)


def main():
    mode, steps = sys.argv[1], int(sys.argv[2])
    if mode not in ("eager", "compiled"):
        sys.exit(f"torch_compile_guide.py: unknown mode {mode}")
    fn = torch.compile(matmul_add) if mode == "compiled" else matmul_add
    n = 64
    x = torch.ones(n, n, device="cuda")
    w = torch.ones(n, n, device="cuda")
    b = torch.ones(n, n, device="cuda")
    for _ in range(3):  # compilation and the caches, outside the steps
        y = fn(x, w, b)
    torch.cuda.synchronize()
    for _ in range(steps):
        torch.cuda.nvtx.range_push("step")
        y = fn(x, w, b)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"{mode} steps={steps} shape={tuple(y.shape)}")


if __name__ == "__main__":
    main()
