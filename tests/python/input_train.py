"""A training loop fed by a real DataLoader with worker processes, with
planted input problems, for test_input_workers.py.  Arguments (name=value):

  workers=N        num_workers (default 2)
  sleep_ms=F       __getitem__ waits F ms a sample (a slow disk)
  transform_ms=F   an nn.Module transform (SlowAug) busy F ms a sample
  init_ms=F        worker_init_fn waits F ms (worker start-up)
  persistent=0|1   persistent_workers
  epochs=N, batches=N (per epoch), batch=N (samples per batch)
  compute_ms=F     the step's own work: a sleep of F ms (the GPU's share of a
                   real step, steady on a busy machine) after a small model step
  accum=K          gradient accumulation: an optimizer step every K batches,
                   each batch's forward and backward followed by compute_ms

It prints its own clock's figures over every step: mean_step_ns (the loop
body, from one step's first batch's arrival to the next step's) and
mean_wait_ns (the time in next() waiting for its batches), and the sum of
every sample it received."""
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

ARGS = dict(workers=2, sleep_ms=0.0, transform_ms=0.0, init_ms=0.0, persistent=0, epochs=1,
            batches=24, batch=4, compute_ms=8.0, accum=1)
for a in sys.argv[1:]:
    k, v = a.split("=")
    ARGS[k] = type(ARGS[k])(float(v)) if isinstance(ARGS[k], float) else int(v)


def busy(ms):
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


class SlowAug(torch.nn.Module):
    def forward(self, x):
        busy(ARGS["transform_ms"])
        return x + 1


class Data(Dataset):
    def __init__(self):
        self.aug = SlowAug() if ARGS["transform_ms"] else None

    def __len__(self):
        return ARGS["batches"] * ARGS["batch"]

    def __getitem__(self, i):
        if ARGS["sleep_ms"]:
            time.sleep(ARGS["sleep_ms"] / 1e3)
        x = torch.full((16,), float(i))
        if self.aug is not None:
            x = self.aug(x)
        return x, torch.tensor(i % 2)


def init(worker_id):
    if ARGS["init_ms"]:
        time.sleep(ARGS["init_ms"] / 1e3)


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Linear(16, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    kw = dict(persistent_workers=True) if ARGS["persistent"] else {}
    dl = DataLoader(Data(), batch_size=ARGS["batch"], num_workers=ARGS["workers"],
                    worker_init_fn=init, **kw)
    steps, waits, total = [], [], 0.0
    k = ARGS["accum"]
    for _ in range(ARGS["epochs"]):
        it = iter(dl)
        last, wait, i = None, 0.0, 0
        while True:
            t0 = time.perf_counter()
            try:
                x, y = next(it)
            except StopIteration:
                break
            t1 = time.perf_counter()
            wait += t1 - t0
            if i % k == 0:              # a step's first batch
                if last is not None:
                    steps.append(t1 - last)
                    waits.append(wait)
                last, wait = t1, 0.0
            i += 1
            total += float(x.sum())
            loss = torch.nn.functional.cross_entropy(model(x), y) / k
            loss.backward()
            if i % k == 0:
                opt.step()
                opt.zero_grad()
            time.sleep(ARGS["compute_ms"] / 1e3)
    print("mean_step_ns", int(1e9 * sum(steps) / len(steps)))
    print("mean_wait_ns", int(1e9 * sum(waits) / len(steps)))
    print("sample_sum", total)
