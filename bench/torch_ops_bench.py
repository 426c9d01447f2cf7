"""torch_ops_bench.py - what the operator window costs (issue 35): a small
transformer (2 blocks, d 128, 64 tokens, batch 8, one torch thread) trained
for 200 steps under `python -m prism` and under `python -m prism
--op-steps 5` (the window on steps 10-14), each run its own process, the two
interleaved over several rounds (the order alternates).  Each run times
every step with its own clock.  Figures, medians of the runs, the ratio to
the run without the window measured in the same bench:

  run          the mean step over all 200 steps: what the window costs a run
  outside      the median step outside steps 10-14: nothing is installed there
  window step  the mean of steps 10-14 against the run's median step
  analyze      `prism-top analyze` of the run's profile (the "merge": the
               operators are regions already, so it is the analysis of the
               extra regions)

Prints figures; never fails on time.

    PYTHONPATH=build/python build/venv/bin/python bench/torch_ops_bench.py [--rounds N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

STEPS, FIRST, N = 200, 10, 5
MODES = ["python -m prism", "python -m prism --op-steps 5"]


def child():
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    d, t, b = 128, 64, 8
    layer = torch.nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True)
    model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, 2), torch.nn.Linear(d, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(b, t, d)
    y = torch.randint(0, 10, (b,))
    times = []
    for _ in range(STEPS):
        t0 = time.perf_counter_ns()
        loss = torch.nn.functional.cross_entropy(model(x).mean(dim=1), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        times.append(time.perf_counter_ns() - t0)
    print("STEPS " + json.dumps(times))


def once(mode, out, top):
    me = os.path.abspath(__file__)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    argv = [sys.executable, "-m", "prism", "-o", out]
    if "--op-steps" in mode:
        argv += ["--op-steps", str(N), "--op-warmup", str(FIRST)]
    p = subprocess.run(argv + [me, "--child"], env=env, capture_output=True, text=True,
                       timeout=900)
    if p.returncode != 0:
        raise SystemExit("torch_ops_bench: %s failed: %s" % (mode, p.stderr))
    times = json.loads([l for l in p.stdout.splitlines() if l.startswith("STEPS ")][-1][6:])
    t0 = time.perf_counter()
    a = subprocess.run([top, "analyze", out], capture_output=True, timeout=600)
    t_an = time.perf_counter() - t0
    if a.returncode != 0:
        raise SystemExit("torch_ops_bench: analyze failed: %s" % a.stderr)
    outside = times[:FIRST] + times[FIRST + N:]
    return {"run": statistics.mean(times), "outside": statistics.median(outside[1:]),
            "window": statistics.mean(times[FIRST:FIRST + N]) / statistics.median(outside[1:]),
            "analyze": t_an}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child()
        return 0
    try:
        import torch
        from prism import _torch_ops  # noqa: F401
    except ImportError as e:
        print("torch_ops_bench: skipped: %s" % e)
        return 0
    b = os.environ.get("B") or "build"
    top = os.path.join(b, "bin", "prism-top")
    if not os.path.exists(top):
        print("torch_ops_bench: skipped: no %s" % top)
        return 0
    print("torch_ops_bench: torch %s, %d steps, the window on steps %d-%d, %d rounds "
          "interleaved" % (torch.__version__, STEPS, FIRST, FIRST + N - 1, a.rounds))
    res = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="prism-ops-bench-") as d:
        for r in range(a.rounds):
            for m in (MODES if r % 2 == 0 else MODES[::-1]):
                res[m].append(once(m, os.path.join(d, "r.cbor"), top))
    med = {m: {k: statistics.median(x[k] for x in res[m]) for k in res[m][0]} for m in MODES}
    base, win = med[MODES[0]], med[MODES[1]]
    print("  %-34s %10s %10s" % ("", MODES[0], "--op-steps 5"))
    print("  %-34s %8.3f ms %8.3f ms  x%.3f" % ("run: mean step of all 200", base["run"] / 1e6,
                                                 win["run"] / 1e6, win["run"] / base["run"]))
    print("  %-34s %8.3f ms %8.3f ms  x%.3f" % ("outside: median step, not 10-14",
                                                 base["outside"] / 1e6, win["outside"] / 1e6,
                                                 win["outside"] / base["outside"]))
    print("  %-34s %10s %9.2fx  (steps 10-14 against the median step)"
          % ("window step", "", win["window"]))
    print("  %-34s %9.3f s %9.3f s  x%.3f" % ("prism-top analyze of the profile",
                                               base["analyze"], win["analyze"],
                                               win["analyze"] / base["analyze"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
