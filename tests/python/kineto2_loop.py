"""kineto2_loop.py - a small CPU training loop that traces itself with
torch.profiler the way PyTorch users do (torch 2.x writes the Kineto
layout), for test_kineto2.py and the fixtures in tests/fixtures/kineto2/:

    kineto2_loop.py -o DIR [--workers N] [--leak MB] [--gzip] [--active N]
                    [--no-stack] [--steps N]

A model of nested modules (Net > Sequential > Linear, ReLU; head Linear),
a DataLoader over a TensorDataset (num_workers N: worker processes), SGD
with zero_grad, and torch.profiler with record_shapes, profile_memory,
with_stack (unless --no-stack), with_modules, schedule(wait=1, warmup=1,
active=ACTIVE) and tensorboard_trace_handler(DIR, worker_name="worker0",
use_gzip=--gzip): DIR/worker0.<timestamp>.pt.trace.json[.gz], one per
cycle.  --leak MB keeps an MB-sized tensor per step (memory that grows).
Prints "steps=ACTIVE" and "trace=PATH" for each trace written."""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--leak", type=float, default=0.0)
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--active", type=int, default=3)
    ap.add_argument("--no-stack", action="store_true")
    a = ap.parse_args()
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    torch.manual_seed(0)
    steps = 2 + a.active
    ds = TensorDataset(torch.randn(8 * steps, 16), torch.randn(8 * steps, 4))
    dl = DataLoader(ds, batch_size=8, num_workers=a.workers)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    kept = []
    handler = tensorboard_trace_handler(a.output, worker_name="worker0", use_gzip=a.gzip)
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=1, warmup=1, active=a.active, repeat=1),
                 record_shapes=True, profile_memory=True, with_stack=not a.no_stack,
                 with_modules=True, on_trace_ready=handler) as prof:
        for x, y in dl:
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            if a.leak:
                kept.append(torch.ones(int(a.leak * (1 << 20)) // 4))
            prof.step()
    print("steps=%d" % a.active)
    for f in sorted(os.listdir(a.output)):
        if ".pt.trace.json" in f:
            print("trace=%s" % os.path.join(a.output, f))


if __name__ == "__main__":
    main()
