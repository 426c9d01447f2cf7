"""python_bench.py - the cost of a region from Python, in one process.

Rows (ns per whole `with` block, the loop's own cost included; "net" takes
the empty loop's median away):
  empty loop                      for _ in range(n): pass
  contextlib.nullcontext()        with contextlib.nullcontext(): pass
  prism.region, no session        with prism.region("x"): pass   (before init)
  prism.region, recording         the same while a session records
  record_function, no profiler    with torch.profiler.record_function("x"): pass
  record_function, profiling      the same inside torch.profiler.profile(CPU)

A session cannot be paused and there is one per process, so the rounds run
in two phases: before prism.init (no session) and while recording; within a
phase every row runs once per round, in turn (interleaved), and each
figure is the median over the rounds.  The baselines run in both phases.
Prints figures; never fails on time.  Run by `make bench` with $(PYTHON)
and PYTHONPATH=$(B)/python.
"""
import contextlib
import os
import statistics
import sys
import tempfile
import time

import prism

ROUNDS = int(os.environ.get("PRISM_BENCH_ROUNDS", "9"))
N = int(os.environ.get("PRISM_BENCH_N", "200000"))
N_TORCH = max(N // 10, 1000)

try:
    import torch
    import torch.profiler
except Exception as e:  # torch is a test dependency, not a build one
    torch = None
    TORCH_WHY = "%s: %s" % (type(e).__name__, e)


def empty(n):
    t = time.perf_counter_ns()
    for _ in range(n):
        pass
    return (time.perf_counter_ns() - t) / n


def nullctx(n):
    nc = contextlib.nullcontext
    t = time.perf_counter_ns()
    for _ in range(n):
        with nc():
            pass
    return (time.perf_counter_ns() - t) / n


def region(n):
    t = time.perf_counter_ns()
    for _ in range(n):
        with prism.region("x"):
            pass
    return (time.perf_counter_ns() - t) / n


def region_kept(n):
    r = prism.region("x")
    t = time.perf_counter_ns()
    for _ in range(n):
        with r:
            pass
    return (time.perf_counter_ns() - t) / n


def record_function(n):
    rf = torch.profiler.record_function
    t = time.perf_counter_ns()
    for _ in range(n):
        with rf("x"):
            pass
    return (time.perf_counter_ns() - t) / n


def record_function_profiling(n):
    rf = torch.profiler.record_function
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        t = time.perf_counter_ns()
        for _ in range(n):
            with rf("x"):
                pass
        dt = time.perf_counter_ns() - t
    return dt / n


def phase(rows):
    got = {name: [] for name, _, _ in rows}
    for _ in range(ROUNDS):
        for name, fn, n in rows:
            got[name].append(fn(n))
    return {k: statistics.median(v) for k, v in got.items()}


def main():
    print("python_bench: %s %s, %d rounds, %d blocks a round (%d for torch)"
          % (sys.executable, sys.version.split()[0], ROUNDS, N, N_TORCH))
    base = [("empty loop", empty, N), ("contextlib.nullcontext()", nullctx, N)]
    torch_rows = []
    if torch is not None:
        torch_rows = [("record_function, no profiler", record_function, N_TORCH),
                      ("record_function, profiling", record_function_profiling, N_TORCH)]
    res = {}
    a = phase(base + [("prism.region, no session", region, N)] + torch_rows)
    tmp = tempfile.mkdtemp(prefix="prism-pybench-")
    out = os.path.join(tmp, "bench.cbor")
    if not prism.init(output=out, collect_memory=False, cpu_interval_ms=0):
        print("python_bench: prism.init failed; no recording figures")
        return 0
    b = phase(base + [("prism.region, recording", region, N),
                      ("prism.region, recording (object kept)", region_kept, N)])
    prism.shutdown()
    res.update(a)
    res.update(b)
    events = prism.load(out).summary["events"]
    os.remove(out)
    os.rmdir(tmp)

    loop = b["empty loop"]
    print("%-42s %9s %9s %9s" % ("ns per `with` block (median)", "raw", "net", "/ null"))
    order = ["empty loop", "contextlib.nullcontext()", "prism.region, no session",
             "prism.region, recording", "prism.region, recording (object kept)",
             "record_function, no profiler", "record_function, profiling"]
    for k in order:
        if k not in res:
            continue
        raw = res[k]
        ph = b if k in b else a             # net: against its own phase's baselines
        net, pnull = raw - ph["empty loop"], ph["contextlib.nullcontext()"] - ph["empty loop"]
        print("%-42s %9.1f %9.1f %8.2fx" % (k, raw, net, net / pnull if pnull > 0
                                            else float("nan")))
    if torch is None:
        print("record_function rows: torch not importable (%s)" % TORCH_WHY)
    print("baselines by phase: empty loop %.1f / %.1f ns, nullcontext %.1f / %.1f ns "
          "(no session / recording)" % (a["empty loop"], b["empty loop"],
                                        a["contextlib.nullcontext()"],
                                        b["contextlib.nullcontext()"]))
    rec = res["prism.region, recording"]
    print("prism.region recording: %.1f ns a block (target <= 150 ns)" % rec)
    if torch is not None:
        print("record_function / prism.region: %.1fx without a profiler, %.1fx profiling"
              % ((res["record_function, no profiler"] - loop) / (rec - loop),
                 (res["record_function, profiling"] - loop) / (rec - loop)))
    print("profile written while recording: %d region events (2 rows x %d blocks x 2 "
          "events = %d)" % (events, ROUNDS * N, 4 * ROUNDS * N))
    return 0


if __name__ == "__main__":
    sys.exit(main())
