"""PyTorch programs whose GPU idles for a cause other than launches (issue 29 item 7): a loop waiting on its
DataLoader, ranks waiting in gloo's all_reduce, a compiled function whose host time is in Dynamo and
Python. Prints counts, never timings."""
import os
import sys
import time

import torch


def dataloader(steps):
    class Slow(torch.utils.data.Dataset):
        def __len__(self):
            return steps * 4

        def __getitem__(self, i):
            time.sleep(0.002)  # reading and decoding a sample
            return torch.ones(64)

    loader = torch.utils.data.DataLoader(Slow(), batch_size=4, num_workers=0)
    w = torch.ones(64, 64, device="cuda")
    n = 0
    for x in loader:
        y = x.cuda(non_blocking=True) @ w
        n += 1
    torch.cuda.synchronize()
    print(f"dataloader steps={n} shape={tuple(y.shape)}")


def allreduce(steps):
    import torch.distributed as dist
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(0)
    dist.init_process_group("gloo", rank=rank, world_size=int(os.environ["WORLD_SIZE"]))
    w = torch.ones(64, 64, device="cuda")
    g = torch.ones(256 * 1024)
    for _ in range(steps):
        y = w @ w
        dist.all_reduce(g)  # CPU tensors over gloo: the host waits for the other rank each step
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"allreduce rank={rank} steps={steps}")


def compiled(steps):
    # a compiled step that recompiles at every call (a Python int it specialises on, automatic dynamic
    # shapes off): the host time is in Dynamo and Python, between small kernels
    import torch._dynamo
    torch._dynamo.config.automatic_dynamic_shapes = False
    torch._dynamo.config.cache_size_limit = 4 * steps
    if hasattr(torch._dynamo.config, "recompile_limit"):
        torch._dynamo.config.recompile_limit = 4 * steps

    def f(x, i):
        return x + i

    g = torch.compile(f, backend="eager")
    x = torch.ones(64, device="cuda")
    for i in range(steps):
        y = g(x, i)
    torch.cuda.synchronize()
    print(f"compiled steps={steps} shape={tuple(y.shape)}")


if __name__ == "__main__":
    {"dataloader": dataloader, "allreduce": allreduce, "compiled": compiled}[sys.argv[1]](int(sys.argv[2]))
