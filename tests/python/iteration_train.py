"""iteration_train.py - a training script with the usual things around the
optimizer step, for tests/python/test_iteration.py (run under python -m prism):
metrics written after optimizer.step(), a checkpoint every CKPT steps
(torch.save of a 16 MB state to a slow filesystem: 0.3 s more), an eval
pass over a validation DataLoader under no_grad at the end of each epoch
(its accuracy read with .item(), a sync call).  Its own clock
(time.perf_counter) is the truth: one JSON line on stdout, "CLOCK {...}"."""
import json
import os
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS, STEPS, CKPT = 2, 20, 10
out_dir = sys.argv[1]


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.out = nn.Linear(64, 4)

    def forward(self, x):
        return self.out(self.trunk(x))


def write_metrics(log, step, value):
    log.append((step, value))
    time.sleep(0.03)                    # a slow metrics sink, after optimizer.step()


def main():
    torch.manual_seed(0)
    model = Scorer()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    train = DataLoader(TensorDataset(torch.randn(STEPS * 16, 32), torch.randint(0, 4, (STEPS * 16,))),
                       batch_size=16, num_workers=2)
    val = DataLoader(TensorDataset(torch.randn(64, 32), torch.randint(0, 4, (64,))),
                     batch_size=16, num_workers=2)
    big = {"weights": model.state_dict(), "buffer": torch.randn(4_000_000)}    # 16 MB
    clock = {"iter_s": [], "metrics_s": 0.0, "ckpt_s": 0.0, "ckpt_steps": [], "eval_s": 0.0,
             "eval_each_s": [], "opt_steps": 0}
    log = []
    step = 0
    for epoch in range(EPOCHS):
        model.train()
        it = iter(train)                # the workers start here, before the clock
        t_iter = time.perf_counter()
        for x, y in it:
            loss = lossf(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            clock["opt_steps"] += 1
            t = time.perf_counter()
            write_metrics(log, step, float(loss.detach()))
            clock["metrics_s"] += time.perf_counter() - t
            if step % CKPT == CKPT - 1:
                t = time.perf_counter()
                torch.save(big, os.path.join(out_dir, "ckpt.pt"))
                time.sleep(0.3)                 # a slow network filesystem's commit
                clock["ckpt_s"] += time.perf_counter() - t
                clock["ckpt_steps"].append(step)
            step += 1
            now = time.perf_counter()
            clock["iter_s"].append(now - t_iter)
            t_iter = now
        model.eval()
        with torch.no_grad():
            vit = iter(val)             # worker start-up: before the clock, in no phase
            t = time.perf_counter()
            correct = 0
            for x, y in vit:            # a metric read with .item(): a sync call
                correct += (model(x).argmax(1) == y).sum().item()
        dt = time.perf_counter() - t
        clock["eval_s"] += dt
        clock["eval_each_s"].append(dt)
    print("CLOCK " + json.dumps(clock), flush=True)


if __name__ == "__main__":
    main()
