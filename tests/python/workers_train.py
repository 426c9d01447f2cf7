"""A small training run fed by a DataLoader with worker processes, for
test_workers.py and bench/torch_workers_bench.py.

    python workers_train.py OUT_DIR [CONFIG_JSON]

run as it is (no PRISM), under ``python -m prism`` (zero-code), or with
"api": "instrument" (the script starts the session on CONFIG's "output"
and calls prism.torch.instrument(model, opt, loader) itself).  It writes
OUT_DIR/measured.json: its own accounting, to hold the profile against:
samples and batches it received, the sum of every sample value, the final
loss (seeded: the same with PRISM on as off), how many samples came from a
worker whose worker_init_fn had run, whether loader.worker_init_fn is still
its own function after the epochs, and the workers it saw start
(OUT_DIR/inits/<id>-<pid>, written by its worker_init_fn).

CONFIG (JSON, every key optional): ctx ("fork" / "spawn"), workers (2),
persistent (false), epochs (2), n (samples, 44), batch (8), transform
("module": an nn.Module called in __getitem__; "region": a function
decorated with @prism.region("my_transform"); "none"), busy_ms (the
transform's planted busy-wait, 3.0), work_us (a __getitem__ without a
transform burns this many microseconds, 0), init_fn (true: a worker_init_fn
of the script's own), keep_alive (true: the loader stays referenced until
the interpreter exits, so that persistent workers are terminated by
multiprocessing's exit handler, SIGTERM), chdir (a directory the script
changes to before its epochs), api ("auto": nothing here,
"instrument", "plain": never imports prism), output (the profile, "instrument").
"""
import json
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

CFG = {}
_INIT = {"worker": None}


def _busy(us):
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


class SlowAug(torch.nn.Module):
    """The planted slow transform: a busy-wait, then a cheap op."""

    def __init__(self, busy_ms):
        super().__init__()
        self.busy_ms = busy_ms

    def forward(self, x):
        _busy(self.busy_ms * 1000.0)
        return x * 2.0


def _plain_transform(x, busy_ms):
    _busy(busy_ms * 1000.0)
    return x * 2.0


my_transform = _plain_transform


def _decorate():
    """my_transform as @prism.region("my_transform"), as a program does it
    at import: a spawned worker, which imports this file again, does it
    too (WORKERS_TRAIN_REGION, set by main())."""
    global my_transform
    import prism

    @prism.region("my_transform")
    def my_transform(x, busy_ms):       # noqa: F811 - the decorated one
        return _plain_transform(x, busy_ms)


if os.environ.get("WORKERS_TRAIN_REGION") == "1":
    _decorate()


class Samples(Dataset):
    """Sample i: a seeded random vector (the worker's RNG: its base seed
    comes from the parent's generator) and its label; and whether this
    worker's worker_init_fn ran before it."""

    def __init__(self, n, transform, busy_ms, work_us):
        self.n = n
        self.transform = transform
        self.aug = SlowAug(busy_ms) if transform == "module" else None
        self.busy_ms = busy_ms
        self.work_us = work_us

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(1000 + i)
        x = torch.rand(8, generator=g) + torch.rand(1) * 0.01
        if self.aug is not None:
            x = self.aug(x)
        elif self.transform == "region":
            x = my_transform(x, self.busy_ms)
        elif self.work_us:
            _busy(self.work_us)
        inited = 1 if _INIT["worker"] is not None else 0
        return x, i % 2, inited


class UserInit:
    """The script's own worker_init_fn (pickled into spawned workers with
    the folder it writes to): marks this process, leaves a file."""

    def __init__(self, folder):
        self.folder = folder

    def __call__(self, worker_id):
        _INIT["worker"] = worker_id
        with open(os.path.join(self.folder, "%d-%d" % (worker_id, os.getpid())), "w") as f:
            f.write("%d\n" % worker_id)


def main():
    out_dir = sys.argv[1]
    CFG.update(json.loads(sys.argv[2]) if len(sys.argv) > 2 else {})
    os.makedirs(os.path.join(out_dir, "inits"), exist_ok=True)
    ctx = CFG.get("ctx", "fork")
    api = CFG.get("api", "auto")
    transform = CFG.get("transform", "module")
    epochs = CFG.get("epochs", 2)
    if transform == "region":
        os.environ["WORKERS_TRAIN_REGION"] = "1"
        _decorate()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    init_fn = UserInit(os.path.join(out_dir, "inits")) if CFG.get("init_fn", True) else None
    loader = DataLoader(Samples(CFG.get("n", 44), transform, CFG.get("busy_ms", 3.0),
                                CFG.get("work_us", 0)),
                        batch_size=CFG.get("batch", 8), num_workers=CFG.get("workers", 2),
                        multiprocessing_context=ctx,
                        persistent_workers=CFG.get("persistent", False),
                        worker_init_fn=init_fn)
    if api == "instrument":
        import prism
        import prism.torch
        prism.init(output=CFG["output"])
        prism.torch.instrument(model, opt, loader)
    if CFG.get("chdir"):
        os.chdir(CFG["chdir"])      # as some launchers do (Hydra): after the session started
    samples = batches = inited = 0
    total = 0.0
    loss = None
    t0 = time.perf_counter()
    for _ in range(epochs):
        for x, y, ini in loader:
            samples += len(y)
            batches += 1
            inited += int(ini.sum())
            total += float(x.double().sum())
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    wall = time.perf_counter() - t0
    measured = {
        "samples": samples, "batches": batches, "inited": inited, "sum": repr(total),
        "loss": repr(float(loss.detach())), "wall_s": wall,
        "init_fn_same": loader.worker_init_fn is init_fn,
        "inits": sorted(os.listdir(os.path.join(out_dir, "inits"))),
        "pid": os.getpid(),
    }
    with open(os.path.join(out_dir, "measured.json"), "w") as f:
        json.dump(measured, f)
    if CFG.get("keep_alive"):
        # referenced until the interpreter exits: persistent workers are
        # then terminated (SIGTERM) by multiprocessing's exit handler
        keep = type(sys)("workers_train_keep")
        keep.loader = loader
        sys.modules["workers_train_keep"] = keep


if __name__ == "__main__":
    main()
