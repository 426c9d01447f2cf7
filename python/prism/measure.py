"""A third reference API ("cookbook.measure") as a thin layer over ``prism``.

Code written against it runs with only its imports changed
(``from prism.measure import PerformanceProfiler``)::

    profiler = PerformanceProfiler(detailed_memory=True, memory_interval=0.1)
    with profiler.profile("training"):
        train()
    print(profiler.get_metrics().summary())

Each ``profile(name)`` block is the PRISM region ``name`` (``prism.region``),
so under a session (``prism.init``, ``python -m prism``, ``PRISM_OUTPUT``)
it is in the profile prism-top opens; without one the API works the same and
writes nothing.  Its figures are the difference of two ``prism.system_read()``
readings (libcollect's own reader: the clock, getrusage, /proc/self/statm,
/proc/self/io, /proc/net/dev, RAPL) taken just inside the region, and the RSS
(and torch's CUDA memory) sampled every ``memory_interval`` seconds by a daemon
thread while the block runs; each sample is also the PRISM counter
``measure.rss_mb`` (``measure.gpu_mb``).  A figure that cannot be had is None,
and the result's ``unavailable`` says why.  Nothing here raises from entering
or leaving a block, or changes what the block computes.  docs/REFERENCE.md
("cookbook.measure") maps every name of the reference onto PRISM.
"""
from __future__ import annotations

import math
import numbers
import os
import sys
import threading
import warnings

import prism

from ._measure_metrics import (MB, ComputeMetrics, MemoryMetrics, PerformanceMetrics,
                               SystemMetrics, TimingMetrics, leak_fit)

__all__ = ["PerformanceProfiler", "PerformanceMetrics", "MemoryMetrics", "TimingMetrics",
           "ComputeMetrics", "SystemMetrics"]

DISK_IO_PERCENT = ("Linux keeps no per-process disk utilisation: disk_read_mb and "
                   "disk_write_mb are the bytes this process read from and wrote to storage")
LINE_PROFILING = ("prism.measure: enable_line_profiling=True records no per-line times; "
                  "run the program under `python -m prism` for PRISM's Python stack samples "
                  "(file and line of the time no region holds, in prism-top)")
_line_warned = []


def _cuda():
    """torch.cuda when the program has imported torch and CUDA is in use
    (initialised): nothing here imports torch or creates a CUDA context."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda
    except Exception:
        pass
    return None


def _no_cuda_reason():
    torch = sys.modules.get("torch")
    if torch is None:
        return "the program has not imported torch"
    try:
        if not torch.cuda.is_available():
            return "no CUDA device (torch.cuda.is_available() is False)"
    except Exception as e:
        return "torch.cuda failed: %s" % e
    return None


def _gpu_allocated(cuda):
    """torch's allocated bytes on each device, or None."""
    if cuda is None:
        return None
    try:
        return [cuda.memory_allocated(d) for d in range(cuda.device_count())]
    except Exception:
        return None


def _gpu_peaks(cuda):
    if cuda is None:
        return None
    try:
        return [cuda.max_memory_allocated(d) for d in range(cuda.device_count())]
    except Exception:
        return None


def _delta(r0, r1, key):
    """r1[key] - r0[key], or None where either is unreadable or it fell."""
    a, b = r0.get(key), r1.get(key)
    if a is None or b is None or b < a:
        return None
    return b - a


def _cpus():
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _flop_counter():
    """(a FlopCounterMode, None) or (None, why not)."""
    try:
        import torch
    except Exception as e:
        return None, "torch does not import: %s" % e
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return None, ("torch %s has no torch.utils.flop_counter.FlopCounterMode"
                      % getattr(torch, "__version__", "?"))
    try:
        return FlopCounterMode(display=False), None
    except TypeError:
        return FlopCounterMode(), None


class _Sampler(threading.Thread):
    """Reads the RSS (and torch's CUDA memory, utilisation) every interval
    until stopped; each reading is also a PRISM counter."""

    def __init__(self, block, interval):
        super().__init__(name="prism.measure sampler", daemon=True)
        self.block = block
        self.interval = interval
        self.stop_event = threading.Event()
        self.samples = []

    def run(self):
        while not self.stop_event.wait(self.interval):
            try:
                self.samples.append(self.block.sample())
            except Exception:  # a failed reading is a missing sample
                pass


class _Block:
    """One ``with profiler.profile(name)`` block."""

    def __init__(self, owner, name, region):
        self.owner = owner
        self.name = name
        self.region = region
        self.sampler = None
        self.flops = None
        self.flops_why = "estimate_flops=False"
        self.util_why = None
        self.gpu_max0 = None
        self.s0 = None

    # ---- readings --------------------------------------------------------

    def sample(self):
        """(mono_ns, rss, [allocated per device] or None, GPU % or None)."""
        r = prism.system_read()
        cuda = _cuda() if self.owner.track_gpu else None
        gpu = _gpu_allocated(cuda)
        util = None
        if cuda is not None and self.util_why is None:
            try:
                util = float(cuda.utilization())
            except Exception as e:
                self.util_why = "torch.cuda.utilization() failed (it needs pynvml): %s" % e
        try:
            if r.get("rss") is not None:
                prism.counter("measure.rss_mb", r["rss"] / MB)
            if gpu is not None:
                prism.counter("measure.gpu_mb", sum(gpu) / MB)
        except Exception:  # the reading stands without its counter
            pass
        return r["mono_ns"], r.get("rss"), gpu, util, r

    def __enter__(self):
        self.region.__enter__()
        try:
            owner = self.owner
            if owner.estimate_flops:
                self.flops, self.flops_why = _flop_counter()
                if self.flops is not None:
                    try:
                        self.flops.__enter__()
                    except Exception as e:
                        self.flops, self.flops_why = None, "FlopCounterMode failed: %s" % e
            if owner.track_gpu:
                self.gpu_max0 = _gpu_peaks(_cuda())
            self.sampler = _Sampler(self, owner.memory_interval)
            self.s0 = self.sample()
            self.sampler.start()
        except Exception:  # instrumentation never stops the block
            pass
        return self

    def __exit__(self, exc_type, exc, tb):
        s1 = None
        try:
            s1 = self.sample()
        except Exception:
            pass
        counted = None
        if self.flops is not None:
            try:
                self.flops.__exit__(None, None, None)
                counted = int(self.flops.get_total_flops())
            except Exception as e:
                self.flops_why = "FlopCounterMode failed: %s" % e
        try:
            self.region.__exit__(exc_type, exc, tb)
        except Exception:
            pass
        samples = []
        if self.sampler is not None and self.sampler.is_alive():
            self.sampler.stop_event.set()
            self.sampler.join(5.0)
            samples = list(self.sampler.samples)
        try:
            if self.s0 is not None and s1 is not None:
                m = self.metrics(self.s0, samples, s1, counted)
                if exc_type is not None:
                    m.completed = False
                    text = str(exc)
                    m.error = exc_type.__name__ + (": " + text if text else "")
                self.owner._store(m)
        except Exception:
            pass
        return False

    # ---- the figures -----------------------------------------------------

    def metrics(self, s0, samples, s1, counted):
        owner = self.owner
        r0, r1 = s0[4], s1[4]
        why = {}
        m = PerformanceMetrics(operation_name=self.name)
        wall_ns = max(0, r1["mono_ns"] - r0["mono_ns"])
        wall = wall_ns / 1e9
        inside = [s0] + [s for s in samples if s[0] <= s1[0]] + [s1]

        rss = [(s[0], s[1]) for s in inside if s[1] is not None]
        mem = MemoryMetrics()
        if rss:
            mem.initial_ram_mb = rss[0][1] / MB if s0[1] is not None else None
            mem.final_ram_mb = rss[-1][1] / MB if s1[1] is not None else None
            mem.peak_ram_mb = max(b for _, b in rss) / MB
            points = [((t - s0[0]) / 1e9, b / MB) for t, b in rss]
            mem.memory_leak_detected, mem.leak_growth_mb = leak_fit(points)
            if owner.detailed_memory:
                mem.samples = [[t, b] for t, b in points]
        else:
            why["memory.peak_ram_mb"] = "RSS unreadable (/proc/self/statm)"
        mem.peak_gpu_mb, gpu_why = self.gpu_peak(inside)
        if gpu_why:
            why["memory.peak_gpu_mb"] = gpu_why
        m.memory = mem

        t = TimingMetrics(wall_time_s=wall)
        user, sys_ = _delta(r0, r1, "cpu_user_ns"), _delta(r0, r1, "cpu_sys_ns")
        if user is not None and sys_ is not None:
            t.user_time_s, t.system_time_s = user / 1e9, sys_ / 1e9
            t.cpu_time_s = (user + sys_) / 1e9
        else:
            why["timing.cpu_time_s"] = "getrusage failed"
        m.timing = t

        c = ComputeMetrics()
        if counted is not None:
            c.estimated_flops = counted
            c.flops_per_second = counted / wall if wall > 0 else None
        else:
            why["compute.estimated_flops"] = self.flops_why or "no FLOP count"
        utils = [s[3] for s in inside if s[3] is not None]
        if utils:
            c.gpu_utilization_percent = sum(utils) / len(utils)
        else:
            why["compute.gpu_utilization_percent"] = (
                "track_gpu=False" if not owner.track_gpu else
                self.util_why or _no_cuda_reason() or "CUDA was not used in the block")
        if t.cpu_time_s is not None and wall > 0:
            c.cpu_utilization_percent = 100.0 * t.cpu_time_s / wall
        m.compute = c

        s = SystemMetrics()
        if t.cpu_time_s is not None and wall > 0:
            s.cpu_percent = 100.0 * t.cpu_time_s / wall / _cpus()
        total = r1.get("mem_total") or r0.get("mem_total")
        if mem.peak_ram_mb is not None and total:
            s.memory_percent = 100.0 * mem.peak_ram_mb * MB / total
        why["system.disk_io_percent"] = DISK_IO_PERCENT
        rd, wr = _delta(r0, r1, "io_read_bytes"), _delta(r0, r1, "io_write_bytes")
        if rd is None or wr is None:
            why["system.disk_read_mb"] = "/proc/self/io unreadable"
        else:
            s.disk_read_mb, s.disk_write_mb = rd / MB, wr / MB
        rx, tx = _delta(r0, r1, "net_rx_bytes"), _delta(r0, r1, "net_tx_bytes")
        if rx is None or tx is None:
            why["system.network_io_mb"] = "/proc/net/dev unreadable"
        else:
            s.network_io_mb = (rx + tx) / MB
        uj = _delta(r0, r1, "cpu_energy_uj")
        if uj is None:
            why["system.energy_j"] = (
                "RAPL energy counters unreadable (/sys/class/powercap/intel-rapl:N/energy_uj)"
                if r1.get("cpu_energy_uj") is None else "the RAPL counter wrapped in the block")
        else:
            s.energy_j = uj / 1e6
        if not owner.track_carbon:
            why["system.carbon_g"] = "track_carbon=False"
        elif owner.carbon_intensity_g_per_kwh is None:
            why["system.carbon_g"] = ("no carbon_intensity_g_per_kwh given (PRISM does not "
                                      "guess a grid's carbon intensity)")
        elif s.energy_j is None:
            why["system.carbon_g"] = "no energy reading"
        else:
            s.carbon_g = s.energy_j / 3.6e6 * owner.carbon_intensity_g_per_kwh
        m.system = s
        m.unavailable = why
        return m

    def gpu_peak(self, inside):
        """(MB, None) or (None, why): per device, max_memory_allocated at
        exit where it rose in the block, else the largest sample; summed."""
        if not self.owner.track_gpu:
            return None, "track_gpu=False"
        cuda = _cuda()
        if cuda is None:
            why = _no_cuda_reason()
            return (None, why) if why else (0.0, None)
        peaks = _gpu_peaks(cuda)
        if peaks is None:
            return None, "torch.cuda.max_memory_allocated failed"
        before = self.gpu_max0 or []
        total = 0
        for d, peak in enumerate(peaks):
            if d < len(before) and peak <= before[d]:
                seen = [s[2][d] for s in inside if s[2] is not None and d < len(s[2])]
                peak = max(seen) if seen else 0
            total += peak
        return total / MB, None


class PerformanceProfiler:
    """Times, memory, CPU, disk, network and energy of ``with`` blocks.

    ``track_gpu``: torch's CUDA memory (and, with pynvml, utilisation)
    where the program uses CUDA; ``track_carbon``: carbon from the energy
    reading and ``carbon_intensity_g_per_kwh`` (grams CO2e per kWh, given
    by you: without it carbon is None and says why); ``detailed_memory``:
    keep the RSS samples in the result (the leak verdict is computed in any
    case); ``memory_interval``: seconds between samples (> 0);
    ``enable_line_profiling``: accepted, warns once: PRISM's stack sampler
    (``python -m prism``) is the line-level view; ``estimate_flops``: count
    torch FLOPs with FlopCounterMode (torch 2.1+; None and the reason
    otherwise).
    """

    def __init__(self, track_gpu=True, track_carbon=False, detailed_memory=False,
                 memory_interval=0.5, enable_line_profiling=False, estimate_flops=False,
                 carbon_intensity_g_per_kwh=None):
        if (isinstance(memory_interval, bool) or not isinstance(memory_interval, numbers.Real)
                or not math.isfinite(memory_interval) or memory_interval <= 0):
            raise ValueError("memory_interval must be a number of seconds > 0, not %r"
                             % (memory_interval,))
        ci = carbon_intensity_g_per_kwh
        if ci is not None and (isinstance(ci, bool) or not isinstance(ci, numbers.Real)
                               or not math.isfinite(ci) or ci < 0):
            raise ValueError("carbon_intensity_g_per_kwh must be a number >= 0 or None, not %r"
                             % (ci,))
        self.track_gpu = bool(track_gpu)
        self.track_carbon = bool(track_carbon)
        self.detailed_memory = bool(detailed_memory)
        self.memory_interval = float(memory_interval)
        self.enable_line_profiling = bool(enable_line_profiling)
        self.estimate_flops = bool(estimate_flops)
        self.carbon_intensity_g_per_kwh = None if ci is None else float(ci)
        self._lock = threading.Lock()
        self._last = None
        self._by_name = {}
        self._totals = {}
        if self.enable_line_profiling and not _line_warned:
            _line_warned.append(True)
            warnings.warn(LINE_PROFILING, RuntimeWarning, stacklevel=2)

    def profile(self, operation_name):
        """A context manager: the block is the PRISM region
        ``operation_name`` and its metrics are kept under that name.  An
        exception in the block propagates unchanged; its metrics (up to the
        exception, ``completed=False``) are kept all the same."""
        return _Block(self, operation_name, prism.region(operation_name))

    def _store(self, m):
        with self._lock:
            self._last = m
            self._by_name[m.operation_name] = m
            name = m.operation_name
            self._totals[name] = self._totals.get(name, 0.0) + m.timing.wall_time_s

    def has_results(self):
        """True once a block has ended (normally or by an exception)."""
        return self._last is not None

    def get_metrics(self, operation_name=None):
        """The metrics of the last block that ended, or of the last block of
        that name.  LookupError when there is none."""
        with self._lock:
            if operation_name is None:
                if self._last is None:
                    raise LookupError("no profiled block has ended yet")
                return self._last
            try:
                return self._by_name[operation_name]
            except KeyError:
                raise LookupError("no profiled block named %r has ended" % (operation_name,))

    def get_timing_breakdown(self):
        """{operation name: seconds}, the wall time of every ended block of
        that name added up, in the order the names first ended."""
        with self._lock:
            return dict(self._totals)

    def get_current_memory(self):
        """The process's RSS now, in MB (2**20 bytes); None if unreadable."""
        try:
            rss = prism.system_read().get("rss")
        except Exception:
            return None
        return None if rss is None else rss / MB

    def get_current_gpu_memory(self):
        """The share (0..1) of the current CUDA device's memory in use now
        (every process's: torch.cuda.mem_get_info), or 0.0 where this
        process has not initialised CUDA (no torch, no device, not used
        yet: nothing here creates a CUDA context)."""
        cuda = _cuda()
        if cuda is None:
            return 0.0
        try:
            free, total = cuda.mem_get_info()
            return (total - free) / total if total else 0.0
        except Exception:
            return 0.0
