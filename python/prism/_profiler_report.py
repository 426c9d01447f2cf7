"""prism.profiler.Reporter and compare_runs: the collected figures as JSON,
CSV, one self-contained HTML file, text; two runs compared.

Only the standard library.  The HTML file makes no request (no script, font,
image or style sheet from elsewhere; the charts are inline SVG) and every
name it shows went through html.escape.
"""
from __future__ import annotations

import csv
import html
import json
import math
import numbers
import sys

CSV_HEADER = ["kind", "name", "unit", "count", "mean", "std", "min", "max", "total"]
ITERATION_NAMES = ("iteration", "full_iteration")


def stats_of(values):
    """count, mean, std (sample standard deviation; 0.0 for one value), min,
    max, total of a list of numbers (Nones for an empty one)."""
    n = len(values)
    if n == 0:
        return {"count": 0, "mean": None, "std": None, "min": None, "max": None, "total": 0.0}
    total = math.fsum(values)
    mean = total / n
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return {"count": n, "mean": mean, "std": math.sqrt(var), "min": min(values),
            "max": max(values), "total": total}


def _kind(src):
    if hasattr(src, "get_timings") and hasattr(src, "get_metrics"):
        return "collector"
    if hasattr(src, "get_all") and hasattr(src, "clock"):
        return "timer"
    if hasattr(src, "get_allocation_timeline"):
        return "memory"
    raise TypeError("Reporter takes MetricsCollector, CUDATimer and MemoryTracker objects, "
                    "not %s" % type(src).__name__)


class Reporter:
    """Reports over ``Reporter(collector, timer, tracker, ...)``: any number
    of MetricsCollector, CUDATimer and MemoryTracker objects, read when a
    report is written (a name timed by two sources: their measurements pooled).

    The figures (``to_dict()``, what save_json writes):

    * ``timing``: per timed name ``mean``, ``std``, ``min``, ``max`` in ms.
    * ``memory``: ``peak_allocated``, ``peak_reserved`` in bytes: the last
      MemoryTracker's block; without one the process's peaks so far
      (torch.cuda.max_memory_allocated/reserved, or on the host its peak
      resident and virtual size); null where unreadable.
    * ``throughput``: ``iterations_per_sec`` = 1000 / the mean of the
      timing ``iteration`` (else ``full_iteration``); ``samples_per_sec`` =
      the mean of the metric ``batch_size`` x iterations_per_sec.  null
      when the names are not there: nothing is guessed.
    """

    def __init__(self, *sources):
        if not sources:
            raise TypeError("Reporter needs a MetricsCollector, CUDATimer or MemoryTracker")
        self.sources = [(s, _kind(s)) for s in sources]

    # ---- the figures -------------------------------------------------------

    def _timings(self):
        out = {}
        for s, kind in self.sources:
            data = s.get_timings() if kind == "collector" else (
                s.get_all() if kind == "timer" else {})
            for name, values in data.items():
                out.setdefault(name, []).extend(values)
        return out

    def _metrics(self):
        out = {}
        for s, kind in self.sources:
            if kind == "collector":
                for name, values in s.get_metrics().items():
                    out.setdefault(name, []).extend(values)
        return out

    def _tracker(self):
        found = [s for s, kind in self.sources if kind == "memory"]
        return found[-1] if found else None

    def memory_stats(self):
        """The MemoryTracker's get_stats(), or the process's figures now."""
        t = self._tracker()
        if t is not None:
            return t.get_stats()
        from ._profiler_memory import MemoryTracker
        return MemoryTracker().get_stats()

    def to_dict(self):
        timings = self._timings()
        timing = {}
        for name, values in timings.items():
            s = stats_of(values)
            timing[name] = {k: s[k] for k in ("mean", "std", "min", "max")}
        mem = self.memory_stats()
        it = next((timing[n]["mean"] for n in ITERATION_NAMES if n in timing), None)
        ips = 1000.0 / it if it else None
        bs = self._metrics().get("batch_size")
        sps = stats_of(bs)["mean"] * ips if bs and ips is not None else None
        return {"timing": timing,
                "memory": {"peak_allocated": mem["peak_allocated"],
                           "peak_reserved": mem["peak_reserved"]},
                "throughput": {"samples_per_sec": sps, "iterations_per_sec": ips}}

    # ---- writers -----------------------------------------------------------

    def save_json(self, path):
        """Write to_dict() as JSON (null for unknown figures)."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2)
            f.write("\n")

    def rows(self):
        """The CSV rows (without the header), CSV_HEADER's columns: kind
        ``timing`` (unit ms), ``metric``, ``memory`` (bytes), ``throughput``
        (per second); a single figure fills mean, min and max with count 1;
        an unknown one is left empty."""
        rows = []
        for name, values in self._timings().items():
            rows.append(self._row("timing", name, "ms", stats_of(values)))
        for name, values in self._metrics().items():
            rows.append(self._row("metric", name, "", stats_of(values)))
        d = self.to_dict()
        for kind, unit in (("memory", "bytes"), ("throughput", "1/s")):
            for name, v in d[kind].items():
                one = {"count": 1, "mean": v, "std": 0.0, "min": v, "max": v, "total": v}
                rows.append(self._row(kind, name, unit, one if v is not None else {}))
        return rows

    @staticmethod
    def _row(kind, name, unit, s):
        cells = [s.get(k) for k in CSV_HEADER[3:]]
        return [kind, name, unit] + ["" if c is None else repr(c) if isinstance(c, float)
                                     else str(c) for c in cells]

    def save_csv(self, path):
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(CSV_HEADER)
            w.writerows(self.rows())

    def save_html(self, path):
        from ._profiler_html import render
        text = render(self._timings(), self._metrics(), self.memory_stats(),
                      self.to_dict()["throughput"], self._tracker(), self._shares())
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def _shares(self):
        for s, kind in self.sources:
            if kind == "collector":
                return s.analyze_bottlenecks()
        return None

    def summary(self):
        """print_summary's text."""
        d = self.to_dict()
        lines = ["Profile summary"]
        timings = self._timings()
        if timings:
            w = max(len(n) for n in timings)
            lines.append("Timings (ms):")
            for name, values in timings.items():
                s = stats_of(values)
                lines.append("  %-*s  %6d x  mean %10.3f  std %9.3f  min %10.3f  max %10.3f"
                             % (w, name, s["count"], s["mean"], s["std"], s["min"], s["max"]))
        for name, values in self._metrics().items():
            s = stats_of(values)
            lines.append("Metric %s: %d values, mean %.6g (min %.6g, max %.6g)"
                         % (name, s["count"], s["mean"], s["min"], s["max"]))
        mem = self.memory_stats()
        lines.append("Memory (%s): peak allocated %s, peak reserved %s" % (
            mem["device"], _bytes(d["memory"]["peak_allocated"]),
            _bytes(d["memory"]["peak_reserved"])))
        t = d["throughput"]
        lines.append("Throughput: %s iterations/s, %s samples/s" % (
            _fmt(t["iterations_per_sec"]), _fmt(t["samples_per_sec"])))
        return "\n".join(lines)

    def print_summary(self, file=None):
        print(self.summary(), file=file if file is not None else sys.stdout)


def _bytes(n):
    return "unknown" if n is None else "%.1f MB" % (n / 1e6)


def _fmt(x):
    return "unknown" if x is None else "%.2f" % x


# ---- compare_runs -------------------------------------------------------------

def _as_report(run):
    """A run as (time, {name: mean ms}); time None when it cannot be told."""
    if isinstance(run, numbers.Real) and not isinstance(run, bool):
        return float(run), {}
    if isinstance(run, dict):
        d = run
    else:
        try:
            d = Reporter(run).to_dict()
        except TypeError:
            raise TypeError("compare_runs takes numbers, dicts and MetricsCollector / "
                            "CUDATimer objects, not %s" % type(run).__name__) from None
    means = {n: v["mean"] for n, v in (d.get("timing") or {}).items()
             if isinstance(v, dict) and v.get("mean") is not None}
    if d.get("time") is not None:
        return float(d["time"]), means
    for n in ITERATION_NAMES:
        if n in means:
            return means[n], means
    return (math.fsum(means.values()) if means else None), means


def _ratio(a, b):
    return a / b if a is not None and b else None


def compare_runs(baseline, new):
    """How much faster ``new`` is than ``baseline``.

    Each run: a number (its time), a dict with ``time``, a dict shaped as
    Reporter.to_dict() / save_json (``timing``), or a MetricsCollector /
    CUDATimer.  A run's time: its ``time``, else the mean of its
    ``iteration`` (or ``full_iteration``) timing, else the sum of its timing
    means (one pass through each timed block).  Both runs in the same unit.

    Returns ``speedup`` (baseline time / new time; None when a time is
    unknown or zero), ``baseline_time``, ``new_time``, and ``timings``:
    {name: baseline mean / new mean} for the names timed in both.
    """
    t0, m0 = _as_report(baseline)
    t1, m1 = _as_report(new)
    return {"speedup": _ratio(t0, t1), "baseline_time": t0, "new_time": t1,
            "timings": {n: _ratio(m0[n], m1[n]) for n in m0 if n in m1}}
