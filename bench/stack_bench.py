"""stack_bench.py - what the Python stack sampler costs a real (small)
PyTorch training run, and what one sample costs.

tests/python/train_small.py (an MLP fed by a DataLoader with 2 worker
processes, SGD) under `python -m prism` with the stack sampler off
(PRISM_STACK_HZ=0) and at 100 Hz (the default), and, when py-spy is
installed (pip install py-spy) and may attach, the same script without
PRISM under `py-spy record --rate 100` beside the same script alone: each
in its own process, interleaved over several rounds (the order rotates).
The figure is the loop's wall time as the script measures it.  Prints
medians and the ratio to the baseline measured in the same run; never
fails on time.  Then the sampler's own figures from the 100 Hz profiles
(INFO stacks.sampler): the GIL held per pass, mean and most.

    PYTHONPATH=build/python build/venv/bin/python bench/stack_bench.py [--rounds N]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "tests", "python", "train_small.py")
HZ = 100                                # --hz
TOP = os.path.join(os.environ.get("B", os.path.join(HERE, "..", "build")), "bin", "prism-top")


def once(mode, out, args, pyspy):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    if mode.startswith("prism"):
        env["PRISM_STACK_HZ"] = "0" if mode == "prism, stacks off" else str(HZ)
        argv = [sys.executable, "-m", "prism", "-o", out, TRAIN, "--profile", "none"] + args
    else:
        argv = [sys.executable, TRAIN, "--profile", "none", "-o", out] + args
        if mode == "py-spy 100 Hz":
            argv = [pyspy, "record", "--rate", "100", "--format", "raw", "-o", out + ".txt",
                    "--"] + argv
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       timeout=600)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or [""]
    for tok in p.stdout.split():
        if tok.startswith("loop_s="):
            return float(tok[7:]), None
    return None, ["no loop_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--hz", type=int, default=100, help="the sampler's rate (PRISM_STACK_HZ)")
    a = ap.parse_args()
    global HZ
    HZ = a.hz
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print("stack_bench: skipped: %s" % e)
        return 0
    args = ["--epochs", str(a.epochs), "--steps", str(a.steps)]
    pyspy = shutil.which("py-spy") or shutil.which("py-spy", path=os.path.dirname(sys.executable))
    modes = ["prism, stacks off", "prism, stacks on"]
    d = tempfile.mkdtemp(prefix="prism-stack-bench-")
    if pyspy:
        t, why = once("py-spy 100 Hz", os.path.join(d, "probe"), args, pyspy)
        if t is None:
            print("py-spy: cannot record here (%s): left out" % why[0][:120])
        else:
            modes += ["none", "py-spy 100 Hz"]
    else:
        print("py-spy: not installed (pip install py-spy): left out")
    res = {m: [] for m in modes}
    holds = []
    try:
        for r in range(a.rounds):
            order = modes[r % len(modes):] + modes[:r % len(modes)]
            for m in order:
                out = os.path.join(d, "r%d.cbor" % r)
                t, why = once(m, out, args, pyspy)
                if t is None:
                    raise SystemExit("stack_bench: %s failed: %s" % (m, why))
                res[m].append(t)
                if m == "prism, stacks on":
                    dump = subprocess.run([TOP, "dump", out], capture_output=True,
                                          text=True).stdout
                    g = re.search(r"GIL held ([0-9.]+) us a pass on average, ([0-9.]+) us", dump)
                    if g:
                        holds.append((float(g.group(1)), float(g.group(2))))
    finally:
        shutil.rmtree(d, True)
    base = statistics.median(res["prism, stacks off"])
    print("loop wall time, median of %d interleaved rounds (train_small.py), stacks at %d Hz"
          % (a.rounds, HZ))
    for m in modes:
        med = statistics.median(res[m])
        ref = base if m.startswith("prism") else statistics.median(res["none"])
        what = "stacks off" if m.startswith("prism") else "no profiler"
        print("  %-22s %8.3f s   x%.3f of %s" % (m, med, med / ref, what))
    if holds:
        print("  sampler: GIL held %.1f us a pass (median of the runs' means), %.1f us at most"
              % (statistics.median(h[0] for h in holds), max(h[1] for h in holds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
