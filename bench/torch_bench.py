"""torch_bench.py - what profiling costs a real (small) PyTorch training run.

tests/python/train_small.py (an MLP fed by a DataLoader with 2 worker
processes, SGD, 2 epochs of 30 steps) run without profiling, with
prism.torch.instrument (modules, backward, optimizer steps, data waits, sync
calls), under `python -m prism` (the same, zero-code: the script unchanged;
its profile is closed at exit, after the loop's clock stops) and with
torch.profiler.profile(activities=[CPU]) (default schedule: every op
recorded), each in its own process, interleaved over several rounds
(the order rotates each round).  The figure is the loop's wall time as the
script measures it (first epoch to the profiler's stop: prism.shutdown() or
the torch profiler's exit included; interpreter start and imports excluded).
Prints medians and ratios against no profiling; never fails on time.

Then, in this process with a session recording, the cost per module call:
forward + backward of nn.Sequential of 64 tiny Linear layers (batch 1), bare
vs instrumented with every module kept (modules="all": the cost of one
module region; the handle added and removed between rounds, interleaved).

    PYTHONPATH=build/python /usr/bin/python3 bench/torch_bench.py [--rounds N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "tests", "python", "train_small.py")
MODES = ["none", "instrument", "python -m prism", "torch-profiler"]


def once(mode, out, args):
    if mode == "python -m prism":       # zero-code: the script unchanged
        argv = [sys.executable, "-m", "prism", "-o", out, TRAIN, "--profile", "none"] + args
    else:
        argv = [sys.executable, TRAIN, "--profile", mode, "-o", out] + args
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=env, timeout=600)
    if p.returncode != 0:
        raise SystemExit("torch_bench: %s failed (%d): %s" % (mode, p.returncode, p.stderr))
    for tok in p.stdout.split():
        if tok.startswith("loop_s="):
            return float(tok[7:])
    raise SystemExit("torch_bench: no loop_s in %r" % p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    a = ap.parse_args()
    try:
        import torch
        import prism.torch  # noqa: F401
    except ImportError as e:
        print("torch_bench: skipped: %s" % e)
        return 0
    args = ["--epochs", str(a.epochs), "--steps", str(a.steps)]
    times = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="prism-torch-bench-") as d:
        out = os.path.join(d, "bench.cbor")
        once("none", out, args)                         # warm the page cache
        for r in range(a.rounds):
            order = MODES[r % len(MODES):] + MODES[:r % len(MODES)]
            for m in order:
                times[m].append(once(m, out, args))
    steps = a.epochs * a.steps
    print("train_small.py: %d steps, torch %s, %s, %d rounds interleaved, %d CPUs"
          % (steps, torch.__version__, sys.version.split()[0], a.rounds, os.cpu_count()))
    base = statistics.median(times["none"])
    for m in MODES:
        med = statistics.median(times[m])
        print("  %-16s median %7.3f s  (%6.2f ms/step)  x%.3f  runs: %s"
              % (m, med, 1e3 * med / steps, med / base,
                 " ".join("%.3f" % t for t in times[m])))
    per_module(a.rounds)
    return 0


def per_module(rounds, layers=64, iters=200):
    import time
    import torch
    import prism
    import prism.torch
    torch.set_num_threads(1)
    model = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(layers)])
    x = torch.randn(1, 8)

    def loop():
        t = time.perf_counter_ns()
        for _ in range(iters):
            model(x).sum().backward()
        return (time.perf_counter_ns() - t) / iters

    with tempfile.TemporaryDirectory(prefix="prism-torch-bench-") as d:
        prism.init(output=os.path.join(d, "m.cbor"), buffer_mb=64)
        bare, inst = [], []
        loop()
        for _ in range(max(rounds, 5)):
            bare.append(loop())
            h = prism.torch.instrument(model, steps=False, modules="all")
            inst.append(loop())
            h.remove()
        prism.shutdown()
    b, i = statistics.median(bare), statistics.median(inst)
    print("per module call (forward + backward, %d Linear(8, 8), batch 1): bare %.1f us, "
          "instrumented %.1f us per iteration: +%.2f us per module"
          % (layers, b / 1e3, i / 1e3, (i - b) / layers / 1e3))


if __name__ == "__main__":
    sys.exit(main())
