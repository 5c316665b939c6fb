"""PyTorch call sites: the seed's loop, its two ops on two lines, an nn.Linear forward from a user function and
its backward. torch releases the GIL around each op. Each launching line ends in a marker comment (hash,
CALLSITE, a name): a test finds its line with grep. usage: torch_callsites.py seed|split|linear|all STEPS"""
import os
import sys

import torch


def seed(steps):
    x = torch.ones(64, 64, device="cuda")
    w = torch.ones(64, 64, device="cuda")
    b = torch.ones(64, device="cuda")
    for _ in range(steps):
        y = torch.add(torch.matmul(x, w), b)  # CALLSITE seed
    torch.cuda.synchronize()
    return y


def split(steps):
    x = torch.ones(64, 64, device="cuda")
    w = torch.ones(64, 64, device="cuda")
    b = torch.ones(64, device="cuda")
    for _ in range(steps):
        h = torch.matmul(x, w)  # CALLSITE matmul
        y = torch.add(h, b)  # CALLSITE add
    torch.cuda.synchronize()
    return y


def forward(model, x):
    return model(x)  # CALLSITE forward


def linear(steps):
    model = torch.nn.Linear(256, 128).cuda()
    x = torch.ones(64, 256, device="cuda")
    for _ in range(steps):
        model.zero_grad(set_to_none=True)
        loss = forward(model, x).sum()  # CALLSITE sum
        loss.backward()  # CALLSITE backward
    torch.cuda.synchronize()
    return model.weight.grad


def main():
    mode, steps = sys.argv[1], int(sys.argv[2])
    modes = {"seed": seed, "split": split, "linear": linear}
    for m in modes if mode == "all" else [mode]:
        out = modes[m](steps)
        print(f"{m} steps={steps} shape={tuple(out.shape)}")
    # End without Python's finalisation: after the last backward() torch's autograd thread may still drop the
    # graph task, whose thread-local state decrefs a Python object under the GIL; once finalisation has begun,
    # taking the GIL calls pthread_exit inside that noexcept destructor and libstdc++ aborts the process
    # ("terminate called without an active exception", PyTorch 2.15 with Python 3.11; pytorch/pytorch#190489,
    # #38228). Seen 1 in 60 bare runs under load, so it is PyTorch's race, not the profiler's.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
