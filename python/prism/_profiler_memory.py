"""prism.profiler.MemoryTracker: the memory a block used, on the current CUDA
device or, without CUDA, in the host process.

CUDA: torch.cuda.memory_allocated / memory_reserved (current) and
max_memory_allocated / max_memory_reserved (peaks).  The peak counters are
never reset (torch.cuda.reset_peak_memory_stats would change what the
program itself reads from them): they are read at entry and at exit, and
when they rose inside the block their value at exit is the block's exact
peak; otherwise the block stayed below an earlier peak and its peak is the
largest sample taken (entry, exit, the timeline), ``peak_exact`` False.

Host (no CUDA): "allocated" is the resident set (/proc/self/statm, field 2),
"reserved" the virtual size (field 1: the address space the process holds,
as a CUDA caching allocator holds reserved memory).  The peaks come from the
kernel's high-water marks (VmHWM, VmPeak in /proc/self/status) the same way.
"""
from __future__ import annotations

import collections
import os
import sys
import threading
import time

import prism

MemorySample = collections.namedtuple("MemorySample", "time_ms allocated reserved")
MemorySample.__doc__ = ("One timeline sample: ms since the tracker's entry, allocated and "
                        "reserved bytes.")

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _host_now():
    """(resident, virtual) bytes of this process, or (None, None)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            size, resident = f.read().split()[:2]
        return int(resident) * _PAGE, int(size) * _PAGE
    except (OSError, ValueError):
        try:
            import resource
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            return rss * (1 if sys.platform == "darwin" else 1024), None
        except Exception:
            return None, None


def _host_peaks():
    """(VmHWM, VmPeak) bytes, or Nones."""
    hwm = peak = None
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
                elif line.startswith(b"VmPeak:"):
                    peak = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return hwm, peak


class _Cuda:
    def __init__(self, cuda):
        self.cuda = cuda
        self.index = cuda.current_device()
        self.name = "cuda:%d" % self.index

    def now(self):
        c = self.cuda
        return c.memory_allocated(self.index), c.memory_reserved(self.index)

    def peaks(self):
        c = self.cuda
        return c.max_memory_allocated(self.index), c.max_memory_reserved(self.index)

    def allocs(self):
        s = self.cuda.memory_stats(self.index)
        return s.get("allocation.all.allocated"), s.get("allocation.all.freed")


class _Host:
    name = "cpu"
    now = staticmethod(_host_now)
    peaks = staticmethod(_host_peaks)

    @staticmethod
    def allocs():
        return None, None


def _source():
    try:
        import torch
        if torch.cuda.is_available():
            return _Cuda(torch.cuda)
    except Exception:
        pass
    return _Host()


def _max(*values):
    values = [v for v in values if v is not None]
    return max(values) if values else None


class MemoryTracker:
    """``with tracker:``: the memory the block used; then ``get_stats()``,
    ``print_summary()``, ``get_allocation_timeline()``.

    ``track_timeline``: a daemon thread samples every ``interval`` ms while
    the block runs (plus one sample at entry and one at exit);
    ``track_allocations``: on CUDA, the number of allocations and frees of
    torch's caching allocator inside the block (memory_stats); the host has
    no such count (None).  Every sample is also the PRISM counters
    ``memory.allocated`` and ``memory.reserved`` (bytes), and on CUDA
    prism.gpu_memory, so a session's memory series carries it.
    """

    def __init__(self, track_allocations=True, track_timeline=True, interval=100):
        self.track_allocations = bool(track_allocations)
        self.track_timeline = bool(track_timeline)
        self.interval = max(float(interval), 1.0)
        self._src = None
        self._timeline = []
        self._stats = None
        self._stop = threading.Event()
        self._thread = None
        self._lock = threading.Lock()

    @property
    def device(self):
        return (self._src or _source()).name

    def __enter__(self):
        try:
            self._begin()
        except Exception as e:  # never from an instrumentation path
            import warnings
            warnings.warn("prism.profiler: MemoryTracker not started: %s" % e, RuntimeWarning)
            self._src = None
        return self

    def __exit__(self, *exc):
        try:
            self._finish()
        except Exception as e:
            import warnings
            warnings.warn("prism.profiler: MemoryTracker not read: %s" % e, RuntimeWarning)
        return False

    def _begin(self):
        self._src = _source()
        self._t0 = time.perf_counter_ns()
        self._timeline = []
        self._start = self._src.now()
        self._peaks0 = self._src.peaks()
        self._allocs0 = self._src.allocs() if self.track_allocations else (None, None)
        self._stats = None
        self._sample(self._start)
        if self.track_timeline:
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="prism.profiler memory")
            self._thread.start()

    def _finish(self):
        if self._src is None:
            return
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        end = self._src.now()
        self._sample(end)
        self._stats = self._read(end, final=True)

    def _run(self):
        while not self._stop.wait(self.interval / 1000.0):
            try:
                self._sample(self._src.now())
            except Exception:
                return

    def _sample(self, values):
        alloc, res = values
        s = MemorySample((time.perf_counter_ns() - self._t0) / 1e6, alloc, res)
        with self._lock:
            self._timeline.append(s)
        if alloc is not None:
            prism.counter("memory.allocated", alloc)
        if res is not None:
            prism.counter("memory.reserved", res)
        if isinstance(self._src, _Cuda) and alloc is not None:
            prism.gpu_memory(self._src.index, alloc, res or 0)

    def _read(self, current, final):
        src = self._src
        with self._lock:
            tl = list(self._timeline)
        p0, p1 = self._peaks0, src.peaks()
        peak = []
        exact = True
        for i in (0, 1):
            sampled = _max(*(s[i + 1] for s in tl))
            if p1[i] is not None and p0[i] is not None and p1[i] > p0[i]:
                # the kernel's counters lag its statm figures by a page or so
                peak.append(_max(p1[i], sampled))
            else:
                peak.append(sampled)
                exact = False
        a0, a1 = self._allocs0, (src.allocs() if self.track_allocations else (None, None))
        return {
            "device": src.name,
            "start_allocated": self._start[0], "start_reserved": self._start[1],
            "current_allocated": current[0], "current_reserved": current[1],
            "peak_allocated": peak[0], "peak_reserved": peak[1],
            "peak_exact": exact,
            "allocated_delta": (current[0] - self._start[0]
                                if None not in (current[0], self._start[0]) else None),
            "num_allocations": a1[0] - a0[0] if None not in (a0[0], a1[0]) else None,
            "num_frees": a1[1] - a0[1] if None not in (a0[1], a1[1]) else None,
            "samples": len(tl),
            "duration_ms": tl[-1].time_ms if tl else 0.0,
            "finished": final,
        }

    def get_stats(self):
        """The block's figures, bytes: ``device`` ('cuda:N' or 'cpu'),
        ``start_*``, ``current_*`` (at exit; while inside, now), ``peak_*``,
        ``peak_exact``, ``allocated_delta``, ``num_allocations``,
        ``num_frees`` (None on the host or with track_allocations=False),
        ``samples``, ``duration_ms``, ``finished``.  Before any block: the
        process's figures now, its peaks so far."""
        if self._stats is not None:
            return dict(self._stats)
        if self._src is not None:           # inside the block
            return self._read(self._src.now(), final=False)
        src = _source()
        now, peaks = src.now(), src.peaks()
        return {"device": src.name, "start_allocated": None, "start_reserved": None,
                "current_allocated": now[0], "current_reserved": now[1],
                "peak_allocated": peaks[0], "peak_reserved": peaks[1], "peak_exact": False,
                "allocated_delta": None, "num_allocations": None, "num_frees": None,
                "samples": 0, "duration_ms": 0.0, "finished": False}

    def get_allocation_timeline(self):
        """[MemorySample(time_ms, allocated, reserved)] of the last block, oldest first."""
        with self._lock:
            return list(self._timeline)

    def print_summary(self, file=None):
        s = self.get_stats()
        out = file if file is not None else sys.stdout
        what = ("allocated", "reserved") if s["device"] != "cpu" else (
            "allocated (resident)", "reserved (virtual)")
        print("Memory (%s)%s" % (s["device"], "" if s["finished"] else ", block not finished"),
              file=out)
        for key, label in zip(("allocated", "reserved"), what):
            print("  %-21s start %s  end %s  peak %s%s" % (
                label, _mb(s["start_" + key]), _mb(s["current_" + key]), _mb(s["peak_" + key]),
                "" if s["peak_exact"] else " (sampled)"), file=out)
        if s["num_allocations"] is not None:
            print("  allocations %d, frees %d" % (s["num_allocations"], s["num_frees"]), file=out)
        print("  %d sample(s) over %.1f ms" % (s["samples"], s["duration_ms"]), file=out)


def _mb(n):
    return "%.1f MB" % (n / 1e6) if n is not None else "-"
