#!/usr/bin/env python3
"""torch_train.py - a small real PyTorch training run for PRISM's device check.

A CNN stem, two residual blocks and one transformer encoder layer over the
8x8 feature map's tokens, trained with AdamW on synthetic 3x32x32 images fed
by a DataLoader (2 forked workers, pinned memory, non-blocking copies).

    torch_train.py [--steps N] [--warm W] [--batch B] [--workers K]
                   [--torch-profiler TRACE.json.gz] [--prof-window A:B]
                   [--device cuda|cpu] [--tiny] [--prism-torch OUT.cbor]
                   [--amp] [--item-every N] [--leak-mb M]

Every step is one NVTX range "train_step" (torch.cuda.nvtx), so PRISM's NVTX
path through CUPTI is exercised; every 25 steps a loss.item() (a sync;
--item-every 1 plants one per step).  --amp: the forward under autocast
(bfloat16); --leak-mb M: M MB of new GPU tensors kept every step;
--heavy-mm K: K 4096x4096 matmuls a step, which a per-step .item() waits for.
After W warm-up steps the GPU is synchronised and a marker kernel is launched
(torch.cuda._sleep: "spin_kernel"), and again after the last step: tools
count the kernels between the two markers (the same steps in every mode).

--torch-profiler: torch.profiler (CPU + CUDA activities) from just before the
first marker to just after the last one (or only for steps A..B-1 with
--prof-window A:B, the check of PRISM and torch.profiler in one process);
the trace is written gzipped.  The timed loop excludes the export.

--prism-torch: prism.init(OUT) and prism.torch.instrument(model, optimizer,
loader) (PRISM's PyTorch integration, in the program; python -m prism and
prism-run need no change to it).

Prints one line: RESULT {json} (steady_ms_per_step: the steps between the
markers, wall time over steps, synchronised at both ends).
"""

import argparse
import gzip
import json
import os
import shutil
import sys
import time

T_START = time.perf_counter()

import torch                                   # noqa: E402
import torch.nn as nn                          # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

T_IMPORT = time.perf_counter()


class Synth(Dataset):
    """Images from a fixed bank plus per-index shifts: cheap in the workers."""

    def __init__(self, n, img=32, classes=10):
        self.n = n
        self.classes = classes
        g = torch.Generator().manual_seed(0)
        self.bank = torch.randn(256, 3, img, img, generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = self.bank[i % 256] * (1.0 + (i % 7) * 0.01)
        return x, i % self.classes


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.act(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.act(y + x)


class Net(nn.Module):
    def __init__(self, classes=10, c=64, d=128, heads=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(c), nn.ReLU(inplace=True))
        self.block1 = Block(c)
        self.down1 = nn.Conv2d(c, d, 3, stride=2, padding=1)
        self.block2 = Block(d)
        self.down2 = nn.Conv2d(d, d, 3, stride=2, padding=1)
        self.encoder = nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=2 * d,
                                                  dropout=0.0, batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.block1(self.stem(x))
        x = self.block2(self.down1(x))
        x = self.down2(x)                          # B x d x 8 x 8 (32x32 input)
        t = x.flatten(2).transpose(1, 2)           # B x 64 x d
        t = self.encoder(t)
        return self.head(self.norm(t.mean(1)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--torch-profiler", default=None)
    ap.add_argument("--prof-window", default=None, help="A:B profile steps A..B-1 only")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--tiny", action="store_true", help="a tiny model and images (CPU tests)")
    ap.add_argument("--prism-torch", default=None, help="prism.torch.instrument into OUT.cbor")
    ap.add_argument("--amp", action="store_true", help="autocast to bfloat16 (CUDA)")
    ap.add_argument("--item-every", type=int, default=25,
                    help="loss.item() every N steps (1: the planted per-step sync)")
    ap.add_argument("--heavy-mm", type=int, default=0,
                    help="K extra 4096x4096 float32 matmuls a step: GPU work the "
                         "per-step .item() then waits for")
    ap.add_argument("--leak-mb", type=int, default=0,
                    help="keep M MB of new GPU tensors every step (the planted leak)")
    a = ap.parse_args()
    if a.warm >= a.steps:
        a.warm = max(0, a.steps // 10)
    cuda = a.device == "cuda"
    dev = torch.device(a.device)
    res = {"mode": "torch.profiler" if a.torch_profiler else "plain", "steps": a.steps,
           "warm": a.warm, "batch": a.batch, "workers": a.workers, "device": a.device,
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "python": sys.version.split()[0], "pid": os.getpid(),
           "import_s": round(T_IMPORT - T_START, 3),
           "prism_loaded": "prism" in sys.modules, "amp": a.amp,
           "item_every": a.item_every, "leak_mb": a.leak_mb, "heavy_mm": a.heavy_mm}
    if cuda:
        torch.zeros(1, device=dev)                 # CUDA initialised here
        res["gpu"] = torch.cuda.get_device_name(0)
        res["cudnn"] = torch.backends.cudnn.version()
    t_cuda = time.perf_counter()
    res["cuda_ready_s"] = round(t_cuda - T_START, 3)

    torch.manual_seed(0)
    model = (Net(c=8, d=16, heads=2) if a.tiny else Net()).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    loader = DataLoader(Synth(a.steps * a.batch, img=16 if a.tiny else 32),
                        batch_size=a.batch, shuffle=False,
                        num_workers=a.workers, pin_memory=cuda, drop_last=True,
                        persistent_workers=False)
    if a.prism_torch:
        import prism
        import prism.torch
        prism.init(a.prism_torch)
        prism.torch.instrument(model, opt, loader)
        res["mode"] = "prism.torch"

    def nvtx_push(name):
        if cuda:
            torch.cuda.nvtx.range_push(name)

    def nvtx_pop():
        if cuda:
            torch.cuda.nvtx.range_pop()

    def marker():
        if cuda:
            torch.cuda.synchronize()
            torch.cuda._sleep(1000)
            torch.cuda.synchronize()

    prof = None
    win = None
    if a.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        prof = profile(activities=acts)
        if a.prof_window:
            x, y = a.prof_window.split(":")
            win = (int(x), int(y))
    prof_on = False

    def prof_start():
        nonlocal prof_on
        if prof is not None and not prof_on:
            prof.__enter__()
            prof_on = True

    def prof_stop():
        nonlocal prof_on
        if prof is not None and prof_on:
            prof.__exit__(None, None, None)
            prof_on = False

    amp = torch.autocast("cuda", dtype=torch.bfloat16) if a.amp and cuda else None
    kept = []                                  # --leak-mb: never freed
    big = (torch.randn(4096, 4096, device=dev) if a.heavy_mm and cuda else None)

    model.train()
    first_nvtx = None
    loss_v = None
    t_a = t_b = None
    step = 0
    t_loop0 = time.perf_counter()
    for x, y in loader:
        if step == a.warm:
            if win is None:
                prof_start()
            marker()
            t_a = time.perf_counter()
        if win is not None and step == win[0]:
            prof_start()
        if win is not None and step == win[1]:
            prof_stop()
        if first_nvtx is None:
            first_nvtx = time.perf_counter()
        nvtx_push("train_step")
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        if amp is not None:
            with amp:
                out = model(x)
                loss = lossf(out.float(), y)
        else:
            out = model(x)
            loss = lossf(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if big is not None:                    # queued behind the step's kernels
            acc = big
            for _ in range(a.heavy_mm):
                acc = torch.mm(acc, big) * 1e-4
            loss = loss + acc[0, 0] * 0.0
        if a.leak_mb:
            kept.append(torch.empty(a.leak_mb << 18, device=dev))   # M MB of float32
        if step % a.item_every == a.item_every - 1:
            loss_v = loss.item()               # a host sync: planted with --item-every 1
        nvtx_pop()
        step += 1
        if step >= a.steps:
            break
    marker()
    t_b = time.perf_counter()
    prof_stop()
    res["steps_run"] = step
    res["loop_s"] = round(t_b - t_loop0, 3)
    if t_a is not None and step > a.warm:
        res["steady_s"] = round(t_b - t_a, 4)
        res["steady_ms_per_step"] = round((t_b - t_a) * 1e3 / (step - a.warm), 3)
    res["first_nvtx_after_cuda_s"] = round(first_nvtx - t_cuda, 3) if first_nvtx else None
    res["loss"] = loss_v
    if prof is not None:
        t_e = time.perf_counter()
        path = a.torch_profiler
        raw = path[:-3] if path.endswith(".gz") else path
        prof.export_chrome_trace(raw)
        if path.endswith(".gz"):
            with open(raw, "rb") as fi, gzip.open(path, "wb", compresslevel=6) as fo:
                shutil.copyfileobj(fi, fo)
            os.remove(raw)
        res["export_s"] = round(time.perf_counter() - t_e, 3)
        res["trace"] = path
        res["prof_window"] = a.prof_window
    if cuda:
        res["max_mem_allocated_mb"] = round(torch.cuda.max_memory_allocated() / 2 ** 20, 1)
    res["total_s"] = round(time.perf_counter() - T_START, 3)
    print("RESULT " + json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
