"""torch_overhead_bench.py - what zero-code instrumentation costs a training
step: `python -m prism` (adaptive module regions, the default) and
`PRISM_TORCH_MODULES=all` (every module keeps its hooks) against the same
script unprofiled.

Two models, each trained on fixed random data with SGD, one torch thread:

  small  50 small modules (16 residual blocks of Linear + ReLU, a head):
         about 2 ms a step on the 2-core VM with torch 2.13
  cnn    a small CNN (3 convolutions, 2 pools, a linear head) on 32x32
         images: about 40 ms a step there

Each run is its own process (the script below with --child), the modes
interleaved over several rounds (the order rotates each round).  A run
times each step after its first `--skip` steps (past the adaptive
measurement: 5 steps by default) and reports the median step; the figure
per mode is the median of its runs, and the ratio is to the unprofiled
runs of the same bench.  The profile of the last adaptive run says how many
modules were folded.  Then the same model in one process (its own child):
blocks of steps bare and under prism.torch.instrument, adaptive and "all",
interleaved, with the session recording throughout, so only the
instrumentation differs.  Prints figures; never fails on time.

    PYTHONPATH=build/python build/venv/bin/python bench/torch_overhead_bench.py [--rounds N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ["none", "python -m prism", "PRISM_TORCH_MODULES=all"]
MODELS = {          # name: (steps per run, steps skipped)
    "small": (400, 40),
    "cnn": (50, 15),
}


def build(name):
    import torch
    n = torch.nn
    torch.manual_seed(0)
    if name == "small":
        w, b = 160, 64

        class Block(n.Module):
            def __init__(self):
                super().__init__()
                self.lin = n.Linear(w, w)
                self.act = n.ReLU()

            def forward(self, x):
                return self.act(self.lin(x)) + x
        model = n.Sequential(*[Block() for _ in range(16)], n.Linear(w, 10))
        x = torch.randn(b, w)
    else:
        c, b = 32, 24
        model = n.Sequential(n.Conv2d(3, c, 3, padding=1), n.ReLU(),
                             n.Conv2d(c, 2 * c, 3, padding=1), n.ReLU(), n.MaxPool2d(2),
                             n.Conv2d(2 * c, 4 * c, 3, padding=1), n.ReLU(), n.MaxPool2d(2),
                             n.Flatten(), n.Linear(4 * c * 8 * 8, 10))
        x = torch.randn(b, 3, 32, 32)
    y = torch.randint(0, 10, (x.shape[0],))
    return model, x, y


def child(name):
    """One run: train `name`, print the median step after the skipped ones."""
    import torch
    torch.set_num_threads(1)
    model, x, y = build(name)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    loss_fn = torch.nn.CrossEntropyLoss()
    steps, skip = MODELS[name]
    times = []
    for i in range(steps):
        t = time.perf_counter_ns()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        times.append(time.perf_counter_ns() - t)
    med = statistics.median(times[skip:])
    print("step_ns=%d modules=%d" % (med, len(list(model.modules()))))


def in_process(name, rounds, out):
    """The same model in this process with a session recording: blocks of
    steps bare and under prism.torch.instrument (adaptive: measured, decided
    and folded before its block is timed; and modules="all"), interleaved;
    the median step of each block, the median of the blocks.  Only the
    instrumentation differs between the blocks (the session, its writer
    and samplers run throughout); the order rotates each round."""
    import torch
    import prism
    import prism.torch
    torch.set_num_threads(1)
    prism.init(output=out)
    model, x, y = build(name)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    loss_fn = torch.nn.CrossEntropyLoss()
    n = 200 if name == "small" else 20

    def block(k):
        ts = []
        for _ in range(k):
            t = time.perf_counter_ns()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            ts.append(time.perf_counter_ns() - t)
        return statistics.median(ts)

    block(n // 4)
    modes = ["bare", "adaptive", "all"]
    res = {m: [] for m in modes}
    for r in range(rounds):
        for mode in modes[r % 3:] + modes[:r % 3]:     # the order rotates
            if mode == "bare":
                res[mode].append(block(n))
                continue
            h = prism.torch.instrument(model, opt, modules=mode, adapt_steps=5)
            block(10)                   # measured, decided (adaptive)
            res[mode].append(block(n))
            h.remove()
    prism.shutdown()
    base = statistics.median(res["bare"])
    print("  in one process (prism.torch.instrument, session recording throughout):")
    for m in ("bare", "adaptive", "all"):
        med = statistics.median(res[m])
        print("    %-24s %9.3f ms  x%.3f" % (m, med / 1e6, med / base))


def once(name, mode, out):
    me = os.path.abspath(__file__)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    if mode == "none":
        argv = [sys.executable, me, "--child", name]
    else:
        argv = [sys.executable, "-m", "prism", "-o", out, me, "--child", name]
        if mode == "PRISM_TORCH_MODULES=all":
            env["PRISM_TORCH_MODULES"] = "all"
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=env, timeout=600)
    if p.returncode != 0:
        raise SystemExit("torch_overhead_bench: %s %s failed (%d): %s"
                         % (name, mode, p.returncode, p.stderr))
    for tok in p.stdout.split():
        if tok.startswith("step_ns="):
            return int(tok[8:])
    raise SystemExit("torch_overhead_bench: no step_ns in %r" % p.stdout)


def folded(out):
    """What the adaptive run's profile says it folded, in words."""
    try:
        import prism
        s = prism.load(out).json["summary"]
        f = s.get("folded_modules")
        if not f:
            return "no module folded"
        return "%d of %d module regions folded after step %d (threshold %.0f us a call, " \
               "PRISM's cost %.1f us a call)" % (f["folded"], f["folded"] + f["kept"],
                                                 f["after_steps"], f["threshold_ns"] / 1e3,
                                                 f["cost_ns"] / 1e3)
    except Exception as e:
        return "profile not read: %s" % e


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--models", default="small,cnn")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--in-process", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child)
        return 0
    if a.in_process:
        in_process(a.in_process, a.rounds, a.out)
        return 0
    try:
        import torch
        import prism.torch  # noqa: F401
    except ImportError as e:
        print("torch_overhead_bench: skipped: %s" % e)
        return 0
    print("torch_overhead_bench: torch %s, Python %s, %d CPUs, %d rounds interleaved, "
          "one torch thread" % (torch.__version__, sys.version.split()[0], os.cpu_count(),
                                a.rounds))
    with tempfile.TemporaryDirectory(prefix="prism-overhead-bench-") as d:
        for name in a.models.split(","):
            times = {m: [] for m in MODES}
            outs = {m: os.path.join(d, "%s-%d.cbor" % (name, i)) for i, m in enumerate(MODES)}
            once(name, "none", outs["none"])                # warm the page cache
            for r in range(a.rounds):
                order = MODES[r % len(MODES):] + MODES[:r % len(MODES)]
                for m in order:
                    times[m].append(once(name, m, outs[m]))
            base = statistics.median(times["none"])
            steps, skip = MODELS[name]
            print("%s: median step of steps %d-%d, median of %d runs" % (name, skip + 1, steps,
                                                                       a.rounds))
            for m in MODES:
                med = statistics.median(times[m])
                print("  %-26s %9.3f ms  x%.3f  runs: %s"
                      % (m, med / 1e6, med / base, " ".join("%.3f" % (t / 1e6) for t in times[m])))
            print("  adaptive profile: %s" % folded(outs["python -m prism"]))
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--in-process", name,
                                "--rounds", str(a.rounds), "--out", os.path.join(d, "ip.cbor")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={k: v for k, v in os.environ.items()
                                    if not k.startswith("PRISM_")}, timeout=900)
            sys.stdout.write(p.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
