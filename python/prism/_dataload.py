"""The reference's data-loading and preprocessing profilers, measured.

``DataLoadingProfiler().profile_configuration_range(dataset, batch_sizes,
worker_counts)`` builds one DataLoader per configuration (shuffle, pinned
memory when CUDA is there, persistent workers and a prefetch factor of 2
with workers: the reference's loaders), reads batches from each for a
bounded time, and returns one ``DataLoadingProfile`` a configuration;
``recommend`` picks one and says why, ``table`` prints them.
``PreprocessingProfiler`` times a transform the same way, per call and per
batch size.

What is measured, per configuration:

* the first batch apart (``startup_s``: worker start-up, the first fetch),
  then every later batch's wait -- the time ``next()`` took, which is what
  a training loop waits;
* throughput: batches and samples per second over those later batches;
* CPU: the process's and its workers' CPU time over the wall time, in
  percent of one core (the workers are reaped before it is read, so their
  time is in the children's counters);
* memory: the process's resident set plus its live workers', in MB, read
  in the middle of the run.

The time budget.  ``time_budget_s`` bounds the whole sweep: each
configuration gets an equal share of what is left, and no batch is started
that the last batch's time says would end past the share (a batch in
flight cannot be interrupted: the sweep overruns by at most that batch and
the workers' shutdown, which ``DataLoadingProfile.overrun_s`` reports).

The recommendation is the configuration with the most samples per second;
among those within ``tolerance`` (5 %) of it -- the measurement's own
spread -- the one with the fewest workers, then the smallest batch, then
the least memory: no more workers than make a difference.

With ``output=`` the sweep is also recorded as a PRISM profile: one epoch
per configuration (``prism.epoch``), a region named after it, one step per
batch; ``prism-top`` opens it like any profile.  That uses the process's
session (started with that output when none runs, and shut down at the
end: a process has one session).
"""
from __future__ import annotations

import gc
import math
import os
import resource
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import prism

__all__ = [
    "DataLoadingProfile",
    "DataLoadingProfiler",
    "PreprocessingProfile",
    "PreprocessingProfiler",
]

DEFAULT_BATCH_SIZES = (16, 32, 64)
DEFAULT_WORKERS = (0, 2, 4)


def _torch():
    import torch  # imported when used: prism itself does not need torch
    return torch


def _rss_mb(pid: int | str = "self") -> float:
    """Resident set of a process in MB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return 0.0


def _cpu_s() -> float:
    """CPU time of this process and its reaped children, in seconds."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _percentile(v: Sequence[float], q: float) -> float:
    if not v:
        return 0.0
    s = sorted(v)
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


@dataclass
class DataLoadingProfile:
    """One DataLoader configuration, measured."""

    batch_size: int
    num_workers: int
    pin_memory: bool
    persistent_workers: bool
    prefetch_factor: int | None
    batches: int = 0                    # batches timed (the first apart)
    samples: int = 0
    startup_s: float = 0.0              # the first batch: start-up and first fetch
    seconds: float = 0.0                # wall time of the timed batches
    batch_time_p50_s: float = 0.0
    batch_time_p95_s: float = 0.0
    throughput_batches_per_second: float = 0.0
    throughput_samples_per_second: float = 0.0
    cpu_usage_percent: float = 0.0      # process + workers, % of one core
    memory_usage_mb: float = 0.0        # process + live workers, resident
    gpu_memory_usage_mb: float = 0.0    # the reference's field; 0 on CPU
    overrun_s: float = 0.0              # past its share of the budget
    bottlenecks: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def name(self) -> str:
        return f"batch_size={self.batch_size} workers={self.num_workers}"


class DataLoadingProfiler:
    """Profile DataLoader configurations of a dataset (see the module)."""

    def __init__(self, config: Any = None, *, time_budget_s: float = 60.0,
                 max_batches: int = 50, min_batches: int = 3, tolerance: float = 0.05,
                 batch_size_range: Sequence[int] = DEFAULT_BATCH_SIZES,
                 worker_range: Sequence[int] = DEFAULT_WORKERS, output: str | None = None):
        if not time_budget_s > 0:
            raise ValueError(f"time_budget_s must be > 0, got {time_budget_s!r}")
        if int(max_batches) < 1 or int(min_batches) < 1:
            raise ValueError("max_batches and min_batches must be >= 1")
        if not 0 <= tolerance < 1:
            raise ValueError(f"tolerance must be in [0, 1), got {tolerance!r}")
        self.config = config
        self.time_budget_s = float(time_budget_s)
        self.max_batches = int(max_batches)
        self.min_batches = int(min_batches)
        self.tolerance = float(tolerance)
        self.batch_size_range = list(batch_size_range)
        self.worker_range = list(worker_range)
        self.output = output
        self.profiles: list[DataLoadingProfile] = []
        self.elapsed_s = 0.0
        self._own_session = False

    # ---- one loader ----------------------------------------------------

    def profile_data_loader(self, data_loader: Any, num_batches: int | None = None,
                            budget_s: float | None = None) -> DataLoadingProfile:
        """Read up to num_batches (max_batches) batches of data_loader after
        the first, within budget_s seconds (the whole budget); measured."""
        dl = data_loader
        p = DataLoadingProfile(
            batch_size=int(dl.batch_size or 1), num_workers=int(dl.num_workers),
            pin_memory=bool(dl.pin_memory),
            persistent_workers=bool(getattr(dl, "persistent_workers", False)),
            prefetch_factor=getattr(dl, "prefetch_factor", None) if dl.num_workers else None)
        want = int(num_batches or self.max_batches)
        budget = self.time_budget_s if budget_s is None else float(budget_s)
        cpu0, t0 = _cpu_s(), time.perf_counter()
        times: list[float] = []
        rec = self._own_session and prism.recording()
        it = None
        first_n = 0
        try:
            it = iter(dl)
            with prism.region(f"{p.name}: first batch") if rec else _null():
                first = next(it)
            first_n = _len_of(first, p.batch_size)
            p.samples += first_n
            p.startup_s = time.perf_counter() - t0
            last = p.startup_s
            mid = None
            while len(times) < want:
                now = time.perf_counter() - t0
                # no batch that would end past the budget, once the floor is met
                if len(times) >= self.min_batches and now + last > budget:
                    break
                if now > budget and times:
                    break
                b0 = time.perf_counter()
                try:
                    if rec:
                        with prism.step(), prism.region(f"{p.name}: next batch"):
                            batch = next(it)
                    else:
                        batch = next(it)
                except StopIteration:
                    break
                last = time.perf_counter() - b0
                times.append(last)
                p.samples += _len_of(batch, p.batch_size)
                if mid is None and len(times) >= max(1, want // 2):
                    mid = self._memory(it)
            p.memory_usage_mb = mid if mid is not None else self._memory(it)
        except Exception as e:                      # noqa: BLE001 - reported per config
            p.error = f"{type(e).__name__}: {e}"
        finally:
            _shutdown(it)
            del it
            gc.collect()
        wall = time.perf_counter() - t0
        p.overrun_s = max(0.0, wall - budget)
        p.batches = len(times)
        p.seconds = sum(times)
        p.batch_time_p50_s = _percentile(times, 0.5)
        p.batch_time_p95_s = _percentile(times, 0.95)
        if p.seconds > 0:
            p.throughput_batches_per_second = p.batches / p.seconds
            p.throughput_samples_per_second = (p.samples - first_n) / p.seconds
        p.cpu_usage_percent = 100.0 * (_cpu_s() - cpu0) / wall if wall > 0 else 0.0
        p.bottlenecks = self._bottlenecks(p)
        return p

    @staticmethod
    def _memory(it: Any) -> float:
        mb = _rss_mb()
        for w in getattr(it, "_workers", None) or []:
            mb += _rss_mb(getattr(w, "pid", None) or 0)
        return mb

    def _bottlenecks(self, p: DataLoadingProfile) -> list[str]:
        """The reference's checks, on what was measured, plus start-up."""
        out = []
        if p.error:
            return ["FAILED"]
        if p.batch_time_p50_s > 0.1:
            out.append("SLOW_DISK_IO")          # the reference's name: > 100 ms a batch
        if p.num_workers == 0 and p.throughput_batches_per_second < 10:
            out.append("INSUFFICIENT_WORKERS")
        if p.memory_usage_mb > 1000:
            out.append("MEMORY_PRESSURE")
        if p.batch_time_p50_s > 0 and p.startup_s > 10 * p.batch_time_p50_s and p.batches:
            out.append("WORKER_STARTUP")        # start-up worth ten batches
        return out

    # ---- the sweep -----------------------------------------------------

    def profile_configuration_range(self, dataset: Any, batch_sizes: Sequence[int] | None = None,
                                    worker_counts: Sequence[int] | None = None
                                    ) -> list[DataLoadingProfile]:
        """Every (batch size, workers) configuration, within the budget."""
        torch = _torch()
        data = torch.utils.data
        sizes = list(batch_sizes or self.batch_size_range)
        workers = list(worker_counts or self.worker_range)
        configs = [(b, w) for b in sizes for w in workers]
        pin = bool(torch.cuda.is_available())
        self._own_session = session = self._start_session()
        t0 = time.perf_counter()
        self.profiles = []
        try:
            for i, (b, w) in enumerate(configs):
                left = self.time_budget_s - (time.perf_counter() - t0)
                share = left / (len(configs) - i)
                if share <= 0:
                    break
                kw: dict[str, Any] = {}
                if w > 0:
                    kw = {"persistent_workers": True, "prefetch_factor": 2}
                try:
                    dl = data.DataLoader(dataset, batch_size=b, shuffle=True, num_workers=w,
                                         pin_memory=pin, **kw)
                except Exception as e:              # noqa: BLE001 - reported per config
                    p = DataLoadingProfile(b, w, pin, w > 0, 2 if w else None,
                                           error=f"{type(e).__name__}: {e}",
                                           bottlenecks=["FAILED"])
                    self.profiles.append(p)
                    continue
                if session:
                    prism.epoch(i)
                p = self.profile_data_loader(dl, budget_s=share)
                del dl
                self.profiles.append(p)
        finally:
            self.elapsed_s = time.perf_counter() - t0
            self._own_session = False
            if session:
                prism.shutdown()
        return self.profiles

    def _start_session(self) -> bool:
        """With output=, a session of our own when none runs; True then.
        A session that runs already (the user's) is left alone: the sweep's
        batches are no training steps of it."""
        if not self.output:
            return False
        if prism.recording() or not prism.init(output=str(self.output)):
            print(f"prism: DataLoadingProfiler: not recorded to {self.output}: a process has one "
                  f"PRISM session, and this one's is "
                  f"{'running' if prism.recording() else 'over'}", file=sys.stderr)
            return False
        return True

    # ---- the verdict ---------------------------------------------------

    def recommend(self, profiles: Sequence[DataLoadingProfile] | None = None
                  ) -> tuple[DataLoadingProfile | None, str]:
        """The configuration to use, and why (see the module)."""
        ok = [p for p in (profiles if profiles is not None else self.profiles)
              if not p.error and p.throughput_samples_per_second > 0]
        if not ok:
            return None, "no configuration delivered a batch"
        best = max(ok, key=lambda p: p.throughput_samples_per_second)
        floor = best.throughput_samples_per_second * (1.0 - self.tolerance)
        near = [p for p in ok if p.throughput_samples_per_second >= floor]
        pick = min(near, key=lambda p: (p.num_workers, p.batch_size, p.memory_usage_mb))
        why = (f"{pick.name}: {pick.throughput_samples_per_second:.0f} samples/s, "
               f"p50 {1e3 * pick.batch_time_p50_s:.1f} ms a batch")
        if pick is best:
            why += ", the fastest measured"
        else:
            why += (f", within {100 * self.tolerance:.0f} % of the fastest "
                    f"({best.name}, {best.throughput_samples_per_second:.0f} samples/s) "
                    f"with fewer workers or smaller batches")
        if pick.bottlenecks:
            why += f"; seen: {', '.join(pick.bottlenecks)}"
        return pick, why

    def table(self, profiles: Sequence[DataLoadingProfile] | None = None) -> str:
        """The profiles as a text table, the recommendation under it."""
        rows = list(profiles if profiles is not None else self.profiles)
        head = (f"{'batch':>6} {'workers':>7} {'batches/s':>10} {'samples/s':>10} "
                f"{'p50 ms':>8} {'p95 ms':>8} {'start s':>8} {'CPU %':>7} {'RSS MB':>8}  seen")
        lines = [head]
        for p in rows:
            seen = p.error or ", ".join(p.bottlenecks) or "-"
            lines.append(f"{p.batch_size:>6} {p.num_workers:>7} "
                         f"{p.throughput_batches_per_second:>10.1f} "
                         f"{p.throughput_samples_per_second:>10.0f} "
                         f"{1e3 * p.batch_time_p50_s:>8.1f} {1e3 * p.batch_time_p95_s:>8.1f} "
                         f"{p.startup_s:>8.2f} {p.cpu_usage_percent:>7.0f} "
                         f"{p.memory_usage_mb:>8.0f}  {seen}")
        pick, why = self.recommend(rows)
        lines.append(f"Recommended: {why}" if pick else f"No recommendation: {why}")
        return "\n".join(lines)


# ---- preprocessing ------------------------------------------------------


@dataclass
class PreprocessingProfile:
    """A transform, timed over num_iterations calls."""

    operation_name: str
    batch_size: int
    iterations: int
    mean_time_s: float
    p50_time_s: float
    p95_time_s: float
    throughput_per_second: float       # calls a second
    samples_per_second: float          # calls x batch size a second
    memory_delta_mb: float
    cpu_usage_percent: float
    error: str | None = None


class PreprocessingProfiler:
    """Time preprocessing functions (the reference's PreprocessingProfiler)."""

    def __init__(self, config: Any = None, batch_size_range: Sequence[int] = (1, 8, 32)):
        self.config = config
        self.batch_size_range = list(batch_size_range)

    def profile_preprocessing_function(self, preprocessing_func: Callable[[Any], Any],
                                       sample_data: Any, num_iterations: int = 10,
                                       operation_name: str | None = None,
                                       batch_size: int = 1) -> PreprocessingProfile:
        """Call preprocessing_func(sample_data) num_iterations times."""
        n = int(num_iterations)
        if n < 1:
            raise ValueError(f"num_iterations must be >= 1, got {num_iterations!r}")
        name = operation_name or getattr(preprocessing_func, "__name__", repr(preprocessing_func))
        times: list[float] = []
        rss0, cpu0, t0 = _rss_mb(), _cpu_s(), time.perf_counter()
        error = None
        for _ in range(n):
            c0 = time.perf_counter()
            try:
                with prism.region(name):
                    preprocessing_func(sample_data)
            except Exception as e:                  # noqa: BLE001 - reported
                error = f"{type(e).__name__}: {e}"
                break
            times.append(time.perf_counter() - c0)
        wall = time.perf_counter() - t0
        total = sum(times)
        return PreprocessingProfile(
            operation_name=name, batch_size=batch_size, iterations=len(times),
            mean_time_s=statistics.fmean(times) if times else 0.0,
            p50_time_s=_percentile(times, 0.5), p95_time_s=_percentile(times, 0.95),
            throughput_per_second=len(times) / total if total > 0 else 0.0,
            samples_per_second=len(times) * batch_size / total if total > 0 else 0.0,
            memory_delta_mb=_rss_mb() - rss0,
            cpu_usage_percent=100.0 * (_cpu_s() - cpu0) / wall if wall > 0 else 0.0,
            error=error)

    def profile_batch_preprocessing(self, preprocessing_func: Callable[[Any], Any],
                                    sample_data: Any, batch_sizes: Sequence[int] | None = None,
                                    num_iterations: int = 5) -> list[PreprocessingProfile]:
        """The function on batches of sample_data repeated along a new
        first dimension (a tensor), one profile per batch size."""
        out = []
        base = getattr(preprocessing_func, "__name__", "preprocess")
        for b in list(batch_sizes or self.batch_size_range):
            batch = sample_data.unsqueeze(0)
            if b > 1:
                batch = batch.repeat(b, *([1] * (batch.dim() - 1)))
            out.append(self.profile_preprocessing_function(
                preprocessing_func, batch, num_iterations=num_iterations,
                operation_name=f"{base}_batch_{b}", batch_size=b))
        return out


# ---- helpers --------------------------------------------------------------


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False


def _len_of(batch: Any, default: int) -> int:
    """Samples in a batch: the first dimension of its first tensor."""
    x = batch
    for _ in range(4):
        if isinstance(x, (list, tuple)) and x:
            x = x[0]
        elif isinstance(x, dict) and x:
            x = next(iter(x.values()))
        else:
            break
    shape = getattr(x, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    return default


def _shutdown(it: Any) -> None:
    """Stop a DataLoader iterator's workers now (persistent ones too)."""
    stop = getattr(it, "_shutdown_workers", None)
    if stop is not None:
        try:
            stop()
        except Exception:                           # noqa: BLE001 - best effort
            pass


# ---- python -m prism sweep ------------------------------------------------

SWEEP_USAGE = """usage: python -m prism sweep [options] MODULE:CALLABLE [ARG...]
Profile DataLoader configurations of a dataset: MODULE:CALLABLE(ARG...)
returns it (a module importable from the current directory, or a path to a
.py file before the colon).  Prints a table and the configuration to use.

  --batch-sizes N,N,...  batch sizes (default 16,32,64)
  --workers N,N,...      worker counts (default 0,2,4)
  --budget S             seconds for the whole sweep (default 60)
  --max-batches N        batches a configuration at most (default 50)
  -o, --output FILE      also record the sweep as a PRISM profile
  -h, --help             this text

Exit status: 0; 1 when the dataset could not be made; 2 for a usage error.
"""


def _ints(opt: str, v: str) -> list[int]:
    try:
        out = [int(x) for x in v.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{opt}: not a list of integers: {v!r}") from None
    if not out or any(x < 0 for x in out):
        raise ValueError(f"{opt}: not a list of integers >= 0: {v!r}")
    return out


def _load_callable(spec: str) -> Callable[..., Any]:
    import importlib
    import importlib.util
    mod, sep, name = spec.rpartition(":")
    if not sep or not mod or not name:
        raise ValueError(f"{spec!r} is not MODULE:CALLABLE")
    if mod.endswith(".py"):
        spec_ = importlib.util.spec_from_file_location("_prism_sweep_dataset", mod)
        if spec_ is None or spec_.loader is None:
            raise ValueError(f"{mod}: cannot load")
        m = importlib.util.module_from_spec(spec_)
        spec_.loader.exec_module(m)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        m = importlib.import_module(mod)
    obj: Any = m
    for part in name.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"{spec!r} is not callable")
    return obj


def sweep_main(argv: Sequence[str]) -> int:
    """python -m prism sweep: see SWEEP_USAGE."""
    kw: dict[str, Any] = {}
    sizes, workers = list(DEFAULT_BATCH_SIZES), list(DEFAULT_WORKERS)
    args = list(argv)
    try:
        while args and args[0].startswith("-"):
            a = args.pop(0)
            if a in ("-h", "--help"):
                sys.stdout.write(SWEEP_USAGE)
                return 0
            name, _, val = a.partition("=")
            if name not in ("--batch-sizes", "--workers", "--budget", "--max-batches",
                            "-o", "--output"):
                raise ValueError(f"unknown option: {a}")
            if not _:
                if not args:
                    raise ValueError(f"option needs a value: {a}")
                val = args.pop(0)
            if name == "--batch-sizes":
                sizes = _ints(name, val)
                if 0 in sizes:
                    raise ValueError(f"{name}: a batch size must be >= 1")
            elif name == "--workers":
                workers = _ints(name, val)
            elif name == "--budget":
                kw["time_budget_s"] = float(val)
            elif name == "--max-batches":
                kw["max_batches"] = int(val)
            else:
                kw["output"] = val
        if not args:
            raise ValueError("no MODULE:CALLABLE given")
        prof = DataLoadingProfiler(**kw)
    except ValueError as e:
        sys.stderr.write(f"python -m prism sweep: {e}\nTry 'python -m prism sweep --help'.\n")
        return 2
    try:
        dataset = _load_callable(args[0])(*args[1:])
    except Exception as e:                          # noqa: BLE001 - the user's code
        sys.stderr.write(f"python -m prism sweep: {args[0]}: {type(e).__name__}: {e}\n")
        return 1
    prof.profile_configuration_range(dataset, sizes, workers)
    print(prof.table())
    print(f"({len(prof.profiles)} configurations in {prof.elapsed_s:.1f} s of a "
          f"{prof.time_budget_s:.0f} s budget)")
    if kw.get("output") and prof.profiles:
        print(f"prism: sweep recorded to {kw['output']}", file=sys.stderr)
    return 0
