"""trace_loop.py - one small training loop, recorded two ways, for the trace
tests (test_torch_trace.py, test_trace_hostile.py):

    trace_loop.py torch -o TRACE.json [--heavy N]   torch.profiler, exported
                                                    with export_chrome_trace
    trace_loop.py prism -o PROFILE.cbor [--heavy N] the prism module: prism.step
                                                    and prism.region

The same regions either way (record_function or prism.region), nested as
here: data_loading; forward/{encoder, heavy_block, head}; backward;
optimizer_step.  heavy_block is the planted hot region: a pure-Python loop
of N iterations (no aten op under it, so its own time is the hot spot);
--heavy 300000 makes it far heavier than everything else, 3000 light.
torch.profiler: schedule(wait=1, warmup=1, active=ACTIVE), record_shapes,
profile_memory, with_stack (torch 1.x: see LEGACY); ACTIVE steps are
recorded (ProfilerStep#N).
Prints "steps=N" at the end."""
import argparse
import contextlib

import torch
import torch.nn as nn

WAIT, WARMUP, ACTIVE = 1, 1, 3
# with_stack where it adds nothing to the export (torch 1.x's legacy
# layout); torch 2.x's Python frames would sit between the regions
# (test_kineto2.py reads those), and the paths here are the code's.
LEGACY = int(torch.__version__.split(".")[0]) < 2


class Net(nn.Module):
    def __init__(self, region, heavy):
        super().__init__()
        self.region, self.heavy = region, heavy
        self.encoder = nn.Sequential(nn.Linear(64, 128), nn.ReLU())
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        with self.region("encoder"):
            h = self.encoder(x)
        with self.region("heavy_block"):
            s = 0
            for i in range(self.heavy):        # the planted work, in Python
                s += i * i
            h = h * (1.0 + (s % 7) * 1e-9)
        with self.region("head"):
            return self.head(h)


def loop(region, step, heavy, steps):
    torch.manual_seed(0)
    model = Net(region, heavy)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        with step():
            with region("data_loading"):
                x = torch.randn(32, 64, generator=g)
                y = torch.randn(32, 10, generator=g)
            with region("forward"):
                out = model(x)
                loss = ((out - y) ** 2).mean()
            with region("backward"):
                loss.backward()
            with region("optimizer_step"):
                opt.step()
                opt.zero_grad()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["torch", "prism"])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--heavy", type=int, default=300000)
    a = ap.parse_args()
    if a.mode == "torch":
        from torch.profiler import ProfilerActivity, profile, record_function, schedule
        with profile(activities=[ProfilerActivity.CPU],
                     schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE),
                     record_shapes=True, profile_memory=True, with_stack=LEGACY,
                     on_trace_ready=lambda p: p.export_chrome_trace(a.output)) as prof:
            @contextlib.contextmanager
            def step():
                yield
                prof.step()
            loop(record_function, step, a.heavy, WAIT + WARMUP + ACTIVE)
    else:
        import prism
        prism.init(output=a.output)
        loop(prism.region, prism.step, a.heavy, ACTIVE)
        prism.shutdown()
    print("steps=%d" % ACTIVE)


if __name__ == "__main__":
    main()
