"""torch_workers_bench.py - what recording DataLoader worker processes
costs an input-bound training loop (prism._torch_workers).

The loop: a DataLoader with 2 worker processes (fork, not persistent: the
workers start again each epoch) over a dataset whose __getitem__ does a
fixed amount of CPU work (a few hundred microseconds: a Python loop, the
same count of iterations every sample), batches of 16, a small MLP trained
by SGD on each batch (one torch thread).  The training thread waits for its
batches: the workers set the pace.

Three configurations, each run its own process (this script with
--child), interleaved over several rounds (the order rotates each round):

  none          the script without PRISM
  workers off   python -m prism with PRISM_TORCH_WORKERS=0 (the parent
                records; its workers do not)
  workers on    python -m prism (the default: each worker records its
                batches, samples and collate into a file of its own)

The figure is the loop's wall time as the script measures it (from the
first epoch's iter() to the last batch's step: worker start-up included,
interpreter start, imports and the profile's close excluded); per
configuration the median of its runs, and ratios to "none" and between
"on" and "off", from the same run (also the median of each round's own
on / off ratio).  Then the same for the worker processes' CPU time (the
children's rusage once each epoch's workers are joined): less moved by
what else runs on the machine than a wall time.  The last "on" profile is read back to
show what was recorded.  Prints figures; never fails on time.

    PYTHONPATH=build/python build/venv/bin/python bench/torch_workers_bench.py [--rounds N]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ["none", "workers off", "workers on"]
N, BATCH, WORK = 1024, 16, 7500          # samples, batch size, loop iterations a sample


def work(k):
    s = 0
    for j in range(WORK):
        s += (j * k) & 7
    return s


def child(epochs):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Burn(Dataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            s = work(i)
            return torch.full((64,), float(s % 5)), i % 10

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Burn(), batch_size=BATCH, num_workers=2)
    t = time.perf_counter()
    for _ in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    loop = time.perf_counter() - t
    # the workers of each epoch are joined when it ends: their CPU time
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("loop_s=%.6f workers_cpu_s=%.6f" % (loop, ru.ru_utime + ru.ru_stime))


def once(mode, out, epochs):
    me = os.path.abspath(__file__)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    if mode == "none":
        argv = [sys.executable, me, "--child", str(epochs)]
    else:
        argv = [sys.executable, "-m", "prism", "-o", out, me, "--child", str(epochs)]
        if mode == "workers off":
            env["PRISM_TORCH_WORKERS"] = "0"
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=env, timeout=600)
    if p.returncode != 0:
        raise SystemExit("torch_workers_bench: %s failed (%d): %s"
                         % (mode, p.returncode, p.stderr))
    got = dict(tok.split("=", 1) for tok in p.stdout.split() if "=" in tok)
    if "loop_s" not in got or "workers_cpu_s" not in got:
        raise SystemExit("torch_workers_bench: no loop_s in %r" % p.stdout)
    return float(got["loop_s"]), float(got["workers_cpu_s"])


def sample_cost():
    """One __getitem__'s work in this process, median of 200 (us)."""
    ts = []
    for i in range(200):
        t = time.perf_counter_ns()
        work(i)
        ts.append(time.perf_counter_ns() - t)
    return statistics.median(ts) / 1e3


def recorded(path):
    """What the last "workers on" profile holds, in words."""
    try:
        import prism
        p = prism.load(path)
        ws = {t["stream"] for t in p.threads if t["worker"]}
        calls = {}
        for th in p.tree["threads"]:
            if th["stream"] not in ws:
                continue
            for r in th["roots"]:
                calls[r["name"]] = calls.get(r["name"], 0) + r["calls"]
                for c in r.get("children", []):
                    calls[c["name"]] = calls.get(c["name"], 0) + c["calls"]
        return "%d worker files merged (%d records), %d worker threads; %s" % (
            p.worker_files["merged"], p.worker_files["records"], len(ws),
            ", ".join("%s %d" % kv for kv in sorted(calls.items())))
    except Exception as e:
        return "profile not read: %s" % e


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child)
        return 0
    try:
        import torch
        import prism.torch  # noqa: F401
    except ImportError as e:
        print("torch_workers_bench: skipped: %s" % e)
        return 0
    print("torch_workers_bench: torch %s, Python %s, %d CPUs, %d rounds interleaved; "
          "%d epochs of %d samples, batches of %d, 2 forked workers, __getitem__ %.0f us "
          "of CPU here" % (torch.__version__, sys.version.split()[0], os.cpu_count(),
                           a.rounds, a.epochs, N, BATCH, sample_cost()))
    times = {m: [] for m in MODES}
    cpu = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="prism-workers-bench-") as d:
        outs = {m: os.path.join(d, "%d.prism" % i) for i, m in enumerate(MODES)}
        once("none", outs["none"], a.epochs)                # warm the page cache
        for r in range(a.rounds):
            order = MODES[r % len(MODES):] + MODES[:r % len(MODES)]
            for m in order:
                t, c = once(m, outs[m], a.epochs)
                times[m].append(t)
                cpu[m].append(c)
        on_profile = recorded(outs["workers on"])

    def show(what, unit, vals):
        base = statistics.median(vals["none"])
        print("  %s (median of %d runs; ratio to none):" % (what, a.rounds))
        for m in MODES:
            med = statistics.median(vals[m])
            print("    %-12s %7.3f %s  x%.3f  runs: %s"
                  % (m, med, unit, med / base, " ".join("%.3f" % v for v in vals[m])))
        # the same round's runs side by side: slow drifts of the machine cancel
        paired = [on / off for on, off in zip(vals["workers on"], vals["workers off"])]
        print("    workers on / workers off: x%.3f (medians), x%.3f (median of the rounds' "
              "ratios)" % (statistics.median(vals["workers on"]) /
                           statistics.median(vals["workers off"]), statistics.median(paired)))

    show("loop wall time", "s", times)
    show("worker processes' CPU time (user + system)", "s", cpu)
    print("  workers on profile: %s" % on_profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
