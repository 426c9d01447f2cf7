"""stacks_train.py - a training script whose slow parts have no region, for
tests/python/test_stacks.py (run under python -m prism): before each
optimizer step it waits in an un-instrumented function (wait_for_peer: a
sleep, as a rank waiting on a slow peer would) and after it runs a pure
Python metrics loop (summarise).  A DataLoader with 2 worker processes
feeds it.  Its own clock (time.perf_counter) is the truth: one JSON line on
stdout, "CLOCK {...}"."""
import json
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

STEPS = 30


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(24, 48), nn.Tanh(), nn.Linear(48, 3))

    def forward(self, x):
        return self.body(x)


def wait_for_peer():
    time.sleep(0.035)


def summarise(values, rounds):
    acc = 0.0
    for _ in range(rounds):
        for v in values:
            acc += v * v - acc * 1e-9
    return acc


def main():
    torch.manual_seed(1)
    model = Ranker()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    lossf = nn.CrossEntropyLoss()
    data = DataLoader(TensorDataset(torch.randn(STEPS * 8, 24), torch.randint(0, 3, (STEPS * 8,))),
                      batch_size=8, num_workers=2)
    clock = {"iter_s": [], "wait_s": 0.0, "metrics_s": 0.0, "opt_steps": 0}
    vals = [float(i) for i in range(500)]
    it = iter(data)
    t_iter = time.perf_counter()
    for x, y in it:
        loss = lossf(model(x), y)
        opt.zero_grad()
        loss.backward()
        t = time.perf_counter()
        wait_for_peer()
        clock["wait_s"] += time.perf_counter() - t
        opt.step()
        clock["opt_steps"] += 1
        t = time.perf_counter()
        summarise(vals, 1500)
        clock["metrics_s"] += time.perf_counter() - t
        now = time.perf_counter()
        clock["iter_s"].append(now - t_iter)
        t_iter = now
    print("CLOCK " + json.dumps(clock), flush=True)


if __name__ == "__main__":
    main()
