"""prism.measure's results: the metrics classes, the leak rule, the summary.

Pure data and arithmetic (no readings, no threads): prism.measure turns two
``prism.system_read()`` readings and the samples between them into a
``PerformanceMetrics`` here.  MB is 2**20 bytes throughout.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

MB = float(1 << 20)
LEAK_MIN_MB = 16.0          # the leak rule's floor ...
LEAK_MIN_SHARE = 0.05       # ... or this share of the RSS at entry, the larger

__all__ = ["MemoryMetrics", "TimingMetrics", "ComputeMetrics", "SystemMetrics",
           "PerformanceMetrics", "leak_fit"]


@dataclass
class MemoryMetrics:
    """Host RSS of the process at block entry, its peak and at exit (MB);
    ``peak_gpu_mb``: torch's allocated CUDA memory at its peak in the block
    (None without CUDA or with track_gpu=False).  ``memory_leak_detected``:
    see ``leak_fit``; ``leak_growth_mb`` is the fitted line's rise over the
    block.  ``samples`` (detailed_memory=True): ``[seconds since entry, RSS
    MB]`` for every reading, entry and exit included."""
    peak_ram_mb: Optional[float] = None
    final_ram_mb: Optional[float] = None
    initial_ram_mb: Optional[float] = None
    peak_gpu_mb: Optional[float] = None
    memory_leak_detected: bool = False
    leak_growth_mb: Optional[float] = None
    samples: Optional[List[List[float]]] = None


@dataclass
class TimingMetrics:
    """Seconds: wall clock (CLOCK_MONOTONIC, PRISM's clock) and the
    process's CPU time (every thread of it, getrusage) over the block."""
    wall_time_s: float = 0.0
    cpu_time_s: Optional[float] = None
    user_time_s: Optional[float] = None
    system_time_s: Optional[float] = None


@dataclass
class ComputeMetrics:
    """``estimated_flops``: torch's FlopCounterMode count of the torch ops
    the block ran on its thread (estimate_flops=True); ``flops_per_second``
    that over the wall time; ``gpu_utilization_percent`` the mean of
    ``torch.cuda.utilization()`` samples (needs pynvml); the process's
    CPU time over wall time in % of one core."""
    estimated_flops: Optional[int] = None
    flops_per_second: Optional[float] = None
    gpu_utilization_percent: Optional[float] = None
    cpu_utilization_percent: Optional[float] = None


@dataclass
class SystemMetrics:
    """``cpu_percent``: the process's CPU time in % of all usable CPUs over
    the wall time; ``memory_percent``: peak RSS in % of MemTotal;
    ``disk_io_percent``: always None (Linux keeps no per-process disk
    utilisation): ``disk_read_mb``/``disk_write_mb`` are the bytes the
    process sent to or fetched from storage (/proc/self/io read_bytes,
    write_bytes); ``network_io_mb``: bytes received and sent by the host's
    interfaces (not only this process's; lo left out); ``energy_j``: RAPL's
    package energy (the whole machine's CPUs); ``carbon_g``: energy_j times
    the carbon intensity the profiler was given."""
    cpu_percent: Optional[float] = None
    memory_percent: Optional[float] = None
    disk_io_percent: Optional[float] = None
    network_io_mb: Optional[float] = None
    disk_read_mb: Optional[float] = None
    disk_write_mb: Optional[float] = None
    energy_j: Optional[float] = None
    carbon_g: Optional[float] = None


@dataclass
class PerformanceMetrics:
    """One profiled block.  ``completed`` is False when the block raised
    (``error`` then names the exception: the figures cover the block up to
    it); ``unavailable`` maps each figure left None to the reason, as
    ``"system.disk_io_percent"``: words."""
    operation_name: str = ""
    memory: MemoryMetrics = field(default_factory=MemoryMetrics)
    timing: TimingMetrics = field(default_factory=TimingMetrics)
    compute: ComputeMetrics = field(default_factory=ComputeMetrics)
    system: SystemMetrics = field(default_factory=SystemMetrics)
    completed: bool = True
    error: Optional[str] = None
    unavailable: Dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """Plain dicts, lists, numbers, strings, None: ``json.dumps`` takes
        it (no NaN or infinity is ever stored)."""
        return dataclasses.asdict(self)

    def summary(self) -> str:
        """"Peak RAM: 2.4 GB, Wall Time: 45.2s, GPU Util: 78%": GB from
        1024 MB up, MB below; "n/a" for a figure that is None."""
        ram = self.memory.peak_ram_mb
        if ram is None:
            ram_s = "n/a"
        elif ram >= 1024:
            ram_s = "%.1f GB" % (ram / 1024)
        else:
            ram_s = "%.1f MB" % ram
        gpu = self.compute.gpu_utilization_percent
        gpu_s = "n/a" if gpu is None else "%.0f%%" % gpu
        return "Peak RAM: %s, Wall Time: %.1fs, GPU Util: %s" % (
            ram_s, self.timing.wall_time_s, gpu_s)


def leak_fit(points):
    """(leak, growth_mb) for ``points`` = [(seconds, RSS MB), ...] in time
    order, the readings at entry, every memory_interval and at exit.

    growth_mb is the rise over the block of the least-squares line through
    them.  A leak is growth that goes on: growth_mb above max(16 MB, 5 % of
    the RSS at entry), and, with three readings or more, the RSS rising by
    more than a quarter of that limit both from entry to the reading nearest
    the block's middle and from there to exit (memory taken once at the
    start, an allocator warming up, then flat, is no leak).  With two
    readings (a block shorter than memory_interval) the line is the
    difference.  Fewer: (False, None)."""
    if len(points) < 2:
        return False, None
    n = float(len(points))
    mt = sum(t for t, _ in points) / n
    mr = sum(r for _, r in points) / n
    sxx = sum((t - mt) ** 2 for t, _ in points)
    span = points[-1][0] - points[0][0]
    if sxx <= 0.0 or span <= 0.0:
        return False, None
    slope = sum((t - mt) * (r - mr) for t, r in points) / sxx
    growth = slope * span
    limit = max(LEAK_MIN_MB, LEAK_MIN_SHARE * points[0][1])
    leak = growth > limit
    if leak and len(points) >= 3:
        half = points[0][0] + span / 2
        mid = min(points[1:-1], key=lambda p: abs(p[0] - half))[1]
        leak = mid - points[0][1] > limit / 4 and points[-1][1] - mid > limit / 4
    return leak, growth
