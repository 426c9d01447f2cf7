"""The trackers of prism.bottleneck: memory, GPU, CPU and I/O readings.

Every host figure comes from ``prism.system_read()`` -- libcollect's own
reader of /proc, the one its memory sampler uses -- so the trackers add no
reader of their own: resident set and physical memory (``rss``,
``mem_total``), the process's CPU time (``cpu_user_ns + cpu_sys_ns``) over
the monotonic clock (``mono_ns``), and the process's disk and the
interfaces' network byte counters.  GPU figures are torch's own
(``torch.cuda.memory_allocated`` / ``memory_reserved``), read only when the
program itself has imported torch and initialised CUDA: a tracker never
imports torch or creates a CUDA context behind the program's back.

No reading raises: an unreadable figure is ``None`` (or 0.0 where the
reference's shape is a number), and ``available`` says whether the GPU
figures are real.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

import prism

MB = 1024 * 1024
GB = 1024 ** 3


def read_system() -> dict[str, Any]:
    """prism.system_read(), or {} when it fails (never raises)."""
    try:
        return prism.system_read()
    except Exception:
        return {}


def _num(d: dict[str, Any], key: str) -> int | None:
    v = d.get(key)
    return v if isinstance(v, int) else None


def cpu_ns(d: dict[str, Any]) -> int | None:
    """The process's CPU time (user + system) in ns, or None."""
    u, s = _num(d, "cpu_user_ns"), _num(d, "cpu_sys_ns")
    return None if u is None or s is None else u + s


def cpu_percent(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """CPU % of one core between two readings (None when unknown)."""
    ca, cb = cpu_ns(a), cpu_ns(b)
    ta, tb = _num(a, "mono_ns"), _num(b, "mono_ns")
    if None in (ca, cb, ta, tb) or tb <= ta:
        return None
    return 100.0 * (cb - ca) / (tb - ta)


class MemoryTracker:
    """The process's resident set, from prism.system_read()."""

    def __init__(self) -> None:
        self.start_time: float | None = None
        self.session_stats: list[dict[str, float]] = []

    def start(self) -> None:
        self.start_time = time.time()
        self.session_stats = []

    def stop(self) -> None:
        self.start_time = None

    def get_current_memory(self) -> float:
        """The resident set in MB (0.0 when unreadable)."""
        rss = _num(read_system(), "rss")
        return rss / MB if rss is not None else 0.0

    @staticmethod
    def stats_of(d: dict[str, Any]) -> dict[str, float | None]:
        rss, total = _num(d, "rss"), _num(d, "mem_total")
        return {
            "used_mb": rss / MB if rss is not None else 0.0,
            # the process's share of physical memory (the reference's was the
            # whole system's; PRISM reads the process)
            "used_percent": 100.0 * rss / total if rss is not None and total else 0.0,
            "available_gb": None,          # not read by PRISM
            "total_gb": total / GB if total else None,
        }

    def get_current_stats(self) -> dict[str, float | None]:
        """used_mb, used_percent (resident set / physical memory),
        available_gb (None: PRISM does not read it), total_gb."""
        stats = self.stats_of(read_system())
        if self.start_time is not None:
            self.session_stats.append({
                "timestamp": time.time() - self.start_time,
                "memory_mb": stats["used_mb"],
                "memory_percent": stats["used_percent"],
            })
        return stats


def _cuda() -> Any:
    """torch.cuda when the program has imported torch and initialised CUDA."""
    torch = sys.modules.get("torch")
    try:
        cuda = torch.cuda if torch is not None else None
        if cuda is not None and cuda.is_available() and cuda.is_initialized():
            return cuda
    except Exception:
        pass
    return None


class GPUTracker:
    """torch's CUDA memory figures of the current device; zeros without one."""

    def get_current_memory(self) -> float:
        """torch.cuda.memory_allocated() in MB (0.0 without CUDA)."""
        cuda = _cuda()
        try:
            return cuda.memory_allocated() / MB if cuda else 0.0
        except Exception:
            return 0.0

    def get_current_stats(self) -> dict[str, Any]:
        """memory_mb, memory_used_percent, reserved_mb, total_gb and
        available; without CUDA (or before the program initialised it)
        memory_mb and memory_used_percent are 0.0, available False and
        reason says why."""
        cuda = _cuda()
        if cuda is None:
            return {"memory_mb": 0.0, "memory_used_percent": 0.0, "available": False,
                    "reason": "no CUDA device in use by this program"}
        try:
            allocated = cuda.memory_allocated()
            reserved = cuda.memory_reserved()
            total = cuda.get_device_properties(cuda.current_device()).total_memory
        except Exception as e:
            return {"memory_mb": 0.0, "memory_used_percent": 0.0, "available": False,
                    "reason": f"torch.cuda: {e}"}
        return {
            "memory_mb": allocated / MB,
            "memory_used_percent": 100.0 * allocated / total if total else 0.0,
            "reserved_mb": reserved / MB,
            "total_gb": total / GB,
            "available": True,
        }


class CPUTracker:
    """The process's CPU use, from its CPU time over the monotonic clock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = read_system()

    def usage_since_last(self, now: dict[str, Any]) -> float:
        with self._lock:
            pct = cpu_percent(self._last, now)
            if cpu_ns(now) is not None:
                self._last = now
        return pct if pct is not None else 0.0

    def get_current_usage(self) -> float:
        """CPU % of one core used by the process since this tracker's
        previous reading (since it was made, the first time); 0.0 when
        unreadable.  Above 100 with several busy threads."""
        return self.usage_since_last(read_system())

    def get_current_stats(self) -> dict[str, Any]:
        """usage_percent (as get_current_usage), count (os.cpu_count()),
        frequency_mhz (None: not read by PRISM)."""
        return {"usage_percent": self.get_current_usage(), "count": os.cpu_count(),
                "frequency_mhz": None}


class IOTracker:
    """The process's disk bytes and the machine's network bytes."""

    KEYS = ("io_read_bytes", "io_write_bytes", "net_rx_bytes", "net_tx_bytes")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = read_system()

    def rates_since_last(self, now: dict[str, Any]) -> dict[str, float | None]:
        with self._lock:
            last, self._last = self._last, now
        ta, tb = _num(last, "mono_ns"), _num(now, "mono_ns")
        span = (tb - ta) / 1e9 if ta is not None and tb is not None and tb > ta else None
        out: dict[str, float | None] = {}
        for k in self.KEYS:
            a, b = _num(last, k), _num(now, k)
            name = k[:-len("_bytes")]
            out[name + "_mb"] = b / MB if b is not None else None
            out[name + "_mb_per_s"] = ((b - a) / MB / span
                                       if span and a is not None and b is not None else None)
        return out

    def get_current_usage(self) -> float:
        """Disk MB/s (read + write) of the process since the previous
        reading; 0.0 when unreadable."""
        r = self.rates_since_last(read_system())
        return (r["io_read_mb_per_s"] or 0.0) + (r["io_write_mb_per_s"] or 0.0)

    def get_current_stats(self) -> dict[str, float | None]:
        """io_read_mb / io_write_mb (the process's disk bytes so far),
        net_rx_mb / net_tx_mb (all interfaces), and each one's _mb_per_s
        since the previous reading; None where unreadable."""
        return self.rates_since_last(read_system())
