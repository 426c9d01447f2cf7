"""ddp_job.py - a real distributed PyTorch job on one machine: N ranks as
processes, DistributedDataParallel over gloo (CPU), a small MLP on generated
data, one rank slower in a planted module (`slow_block`, extra matmuls in
its forward).  DDP's all-reduce makes every rank wait for the slow one at
the end of each backward pass, as on a real cluster.

Each rank records either a PRISM profile (prism.torch.instrument: forward
regions per module, backward, optimizer.step = the step; CPU samples) into
OUT/rank<R>.cbor, or a torch.profiler trace (--trace) into
OUT/rank<R>.trace.json with ProfilerStep#N per step.

    python3 ddp_job.py OUT --ranks 4 --slow-rank 2 --steps 12 [--trace]
        [--slow-iters K] (--slow-rank -1: every rank equal)

Exit status 0 when every rank finished."""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn


class Net(nn.Module):
    def __init__(self, slow_iters):
        super().__init__()
        self.embed = nn.Linear(64, 128)
        self.slow_block = SlowBlock(slow_iters)
        self.head = nn.Linear(128, 8)

    def forward(self, x):
        return self.head(torch.relu(self.slow_block(self.embed(x))))


class SlowBlock(nn.Module):
    """Identity on every rank but the slow one, where it also multiplies a
    matrix slow_iters times (CPU work inside this module's forward)."""
    def __init__(self, iters):
        super().__init__()
        self.iters = iters
        self.w = torch.randn(192, 192)

    def forward(self, x):
        if self.iters:
            m = self.w
            for _ in range(self.iters):
                m = torch.tanh(m @ self.w)
            x = x + m.sum() * 0
        return x


def rank_main(rank, a):
    os.environ["RANK"] = str(rank)      # PRISM's %r and the header's rank
    torch.set_num_threads(1)
    torch.manual_seed(rank)
    dist.init_process_group("gloo", init_method="file://" + os.path.join(a.out, ".pg"),
                            rank=rank, world_size=a.ranks)
    model = nn.parallel.DistributedDataParallel(
        Net(a.slow_iters if rank == a.slow_rank else 0))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = [(torch.randn(32, 64), torch.randn(32, 8)) for _ in range(4)]
    loss_fn = nn.MSELoss()

    def step(i):
        x, y = data[i % len(data)]
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    if a.trace:
        sched = torch.profiler.schedule(wait=0, warmup=1, active=a.steps - 1)
        path = os.path.join(a.out, "rank%d.trace.json" % rank)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    schedule=sched,
                                    on_trace_ready=lambda p: p.export_chrome_trace(path)) as p:
            for i in range(a.steps):
                step(i)
                p.step()
    else:
        import prism
        import prism.torch
        prism.init(output=os.path.join(a.out, "rank%r.cbor"))
        prism.torch.instrument(model.module, opt)
        for i in range(a.steps):
            step(i)
        prism.shutdown()
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--slow-rank", type=int, default=2)
    ap.add_argument("--slow-iters", type=int, default=60)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--trace", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    mp.spawn(rank_main, args=(a,), nprocs=a.ranks, join=True)
    try:
        os.unlink(os.path.join(a.out, ".pg"))
    except FileNotFoundError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
