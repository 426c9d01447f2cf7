"""busy_train.py - a compute-only training script for tests/python/test_busy.py
(run under python -m prism beside CPU hogs).  Nothing in it blocks: the
data is made up front, no DataLoader, no I/O, no sleep, one intra-op
thread (torch.set_num_threads(1), so the training thread never waits for
a pool of its own).  A frozen trunk (a leaf module of repeated matmuls,
no gradient through it) computes most of each step; a small trainable head
learns on its features.  Its own clock (time.perf_counter) is the truth:
the time inside the trunk's call and each iteration's time, one JSON line
on stdout, "CLOCK {...}"."""
import json
import time

import torch
import torch.nn as nn

STEPS = 60
ROUNDS = 10


class Trunk(nn.Module):
    """A leaf: its whole forward is its own work (no submodules)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(384, 384) / 20.0, requires_grad=False)

    def forward(self, x):
        for _ in range(ROUNDS):
            x = torch.tanh(x @ self.w)
        return x


class Net(nn.Module):
    def __init__(self, clock):
        super().__init__()
        self.clock = clock
        self.trunk = Trunk()
        self.head = nn.Sequential(nn.Linear(384, 256), nn.ReLU(), nn.Linear(256, 10))

    def forward(self, x):
        t = time.perf_counter()
        f = self.trunk(x)
        self.clock["trunk_s"] += time.perf_counter() - t
        return self.head(f)


def main():
    torch.set_num_threads(1)
    torch.manual_seed(3)
    clock = {"trunk_s": 0.0, "iter_s": []}
    model = Net(clock)
    opt = torch.optim.SGD(model.head.parameters(), lr=0.01)
    lossf = nn.CrossEntropyLoss()
    xs = [torch.randn(96, 384) for _ in range(8)]
    ys = [torch.randint(0, 10, (96,)) for _ in range(8)]
    t_iter = time.perf_counter()
    for s in range(STEPS):
        x, y = xs[s % 8], ys[s % 8]
        loss = lossf(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        now = time.perf_counter()
        clock["iter_s"].append(now - t_iter)
        t_iter = now
    print("CLOCK " + json.dumps(clock), flush=True)


if __name__ == "__main__":
    main()
