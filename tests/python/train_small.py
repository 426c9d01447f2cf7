"""train_small.py - a small real PyTorch training run for PRISM's tests and benches.

An MLP (encoder, mixer, head) learns a fixed random linear map from generated
data, fed by a DataLoader with worker processes, trained with SGD or Adam.

    train_small.py [--profile regions|instrument|none] [--plant P] [-o OUT]
                   [--epochs N] [--steps N] [--workers N] [--optim sgd|adam]

--profile   regions: explicit prism.region / prism.step calls in the loop;
            instrument: prism.torch.instrument(model, optimizer, loader);
            none: no prism at all (for `python -m prism`, prism-run, benches)
            torch-profiler: torch.profiler.profile(activities=[CPU]) (benches)
--plant     one problem per run:
            leak       losses kept with their graph in a list (the reference's
                       example) and a 1 MiB tensor made from each kept too
                       (torch 2 frees a graph's saved tensors at backward, so
                       the graphs alone grow too little): host memory grows
                       about 1-3 MiB per step
            slow_data  the workers take long per batch: the loop waits for data
            heavy      the module `mixer.up` is far heavier than the rest
            item       loss.item() once per step (the line marked PLANT-ITEM)
Prints one line at the end: steps=N loss=X loop_s=T (T: wall time from the
first epoch to the profiler's stop, for the benches).
"""

import argparse
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

IN, HIDDEN, OUT = 64, 256, 10


class Data(Dataset):
    """Deterministic generated samples; slow_data sleeps per sample (the
    planted slow pipeline runs in the worker processes)."""

    def __init__(self, n, delay_s):
        self.n = n
        self.delay_s = delay_s
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(n, IN, generator=g)
        self.w = torch.randn(IN, OUT, generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay_s:
            time.sleep(self.delay_s)
        x = self.x[i]
        return x, x @ self.w


class Wide(nn.Module):
    """The planted hot module: a leaf 8 times wider inside than out (16 times the work of a Linear(256, 256))."""

    def __init__(self, n, wide):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(n, wide) / n ** 0.5)
        self.w2 = nn.Parameter(torch.randn(wide, n) / wide ** 0.5)

    def forward(self, x):
        return torch.relu(x @ self.w1) @ self.w2


class Mixer(nn.Module):
    """A residual block; with `heavy` its `up` is the planted hot module."""

    def __init__(self, heavy):
        super().__init__()
        self.up = Wide(HIDDEN, 8 * HIDDEN) if heavy else nn.Linear(HIDDEN, HIDDEN)
        self.act = nn.ReLU(inplace=True)
        self.down = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x):
        out = self.down(self.act(self.up(x)))
        out += x                                # in place on a module output
        return out


class Net(nn.Module):
    def __init__(self, heavy=False):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN),
                                     nn.ReLU())
        self.mixer = Mixer(heavy)
        self.head = nn.Linear(HIDDEN, OUT)

    def forward(self, x):
        return self.head(self.mixer(self.encoder(x)))


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="none",
                   choices=["regions", "instrument", "none", "torch-profiler"])
    p.add_argument("--plant", default="none", choices=["none", "leak", "slow_data", "heavy", "item"])
    p.add_argument("-o", "--output", default="train_small.cbor")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps", type=int, default=10, help="steps per epoch")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--optim", default="sgd", choices=["sgd", "adam"])
    return p.parse_args(argv)


def main(argv=None):
    a = parse(argv)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net(heavy=a.plant == "heavy")
    if a.optim == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = Data(a.steps * a.batch, 0.004 if a.plant == "slow_data" else 0.0)
    loader = DataLoader(data, batch_size=a.batch, num_workers=a.workers, shuffle=True)
    loss_fn = nn.MSELoss()

    prism = None
    if a.profile in ("regions", "instrument"):
        import prism
        if not prism.init(output=a.output):
            print("train_small: the profile did not start", file=sys.stderr)
            return 2
        if a.profile == "instrument":
            import prism.torch
            prism.torch.instrument(model, opt, loader)
    prof = None
    if a.profile == "torch-profiler":
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU])
        prof.__enter__()

    losses = []
    hoard = []                                  # the planted leak (--plant leak)
    total = 0.0
    steps = 0
    t0 = time.perf_counter()
    for epoch in range(a.epochs):
        if a.profile == "regions":
            prism.epoch(epoch)
            it = iter(loader)
            for _ in range(len(loader)):
                with prism.step():
                    with prism.region("data_loading"):
                        x, y = next(it)
                    with prism.region("forward"):
                        loss = loss_fn(model(x), y)
                    with prism.region("backward"):
                        loss.backward()
                    with prism.region("optimizer.step"):
                        opt.step()
                        opt.zero_grad()
                steps += 1
                losses.append(loss.detach())
            continue
        for x, y in loader:
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            steps += 1
            if a.plant == "leak":
                losses.append(loss)                     # keeps every step's graph
                hoard.append(torch.ones(1 << 18) * loss.detach())   # and 1 MiB
            elif a.plant == "item":
                total += loss.item()  # PLANT-ITEM
            else:
                losses.append(loss.detach())
    if prof is not None:
        prof.__exit__(None, None, None)
    if prism is not None:
        prism.shutdown()
    loop_s = time.perf_counter() - t0
    last = losses[-1].detach() if losses else torch.tensor(total / max(steps, 1))
    print("steps=%d loss=%s loop_s=%.4f" % (steps, format(float(last), ".4f"), loop_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
