"""ProfileAnalyzer, the reference profiler's analyzer, over prism.load.

Part of prism.profiling (import it from there); README.md, "The reference's
API", lists what each method returns.
"""
from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import Any

import prism

__all__ = ["ProfileAnalyzer", "Bottleneck", "BottleneckType"]


class BottleneckType(enum.Enum):
    """PRISM's finding types (the reference's four and PRISM's others)."""

    CPU_GPU_SYNC = "cpu_gpu_sync"
    MEMORY_LEAK = "memory_leak"
    HOT_OPERATION = "hot_operation"
    MEMORY_BOUND = "memory_bound"
    DATA_LOADING = "data_loading"
    GPU_IDLE = "gpu_idle"
    LAUNCH_BOUND = "launch_bound"
    DROPPED_EVENTS = "dropped_events"
    OFF_CPU_WAIT = "off_cpu_wait"
    CPU_CONTENTION = "cpu_contention"
    SLOW_STEPS = "slow_steps"
    UNATTRIBUTED_TIME = "unattributed_time"
    COMMUNICATION_WAIT = "communication_wait"
    IO_WAIT = "io_wait"

    @classmethod
    def _missing_(cls, value: object) -> BottleneckType | None:
        # A type a newer analysis knows: a pseudo-member, so .value still works.
        if not isinstance(value, str):
            return None
        member = object.__new__(cls)
        member._name_ = value.upper()
        member._value_ = value
        return member


_TIME_FINDINGS = {"hot_operation", "cpu_gpu_sync", "data_loading", "off_cpu_wait",
                  "cpu_contention", "memory_bound", "slow_steps",
                  "unattributed_time", "communication_wait", "io_wait"}


@dataclass
class Bottleneck:
    """One finding, with the reference's attributes and PRISM's.

    ``type`` (BottleneckType), ``severity`` ("high", "medium", "low", as the
    reference spells it), ``description``, ``recommendation``, ``impact_ms``
    (the finding's share of the training step times the sampled steps' wall
    time; 0 for findings that are not time); then PRISM's ``evidence``,
    ``share`` (docs/JSON.md), ``path`` (the blamed call path or None) and
    ``region`` (its last name).
    """

    type: BottleneckType
    severity: str
    description: str
    recommendation: str
    impact_ms: float = 0.0
    evidence: str = ""
    share: float = 0.0
    path: str | None = None
    region: str | None = None

    @property
    def fix(self) -> str:
        return self.recommendation


def _ms(ns: Any) -> float:
    return float(ns or 0) / 1e6


def _mb(b: Any) -> float:
    return float(b or 0) / (1 << 20)


class ProfileAnalyzer:
    """The reference's analyzer over ``prism.load(path)``.

    ``path`` is a profile file (or a ``prism.Profile``); the thresholds
    default to the ones stored in the profile (ProfilerConfig's).  ``profile``
    (also ``data``) is the loaded ``prism.Profile`` with everything
    ``prism-top analyze --format json`` reports.
    """

    def __init__(self, path: Any, threshold_pct: float | None = None,
                 leak_threshold_mb: float | None = None) -> None:
        if isinstance(path, (str, os.PathLike)):
            self.profile = prism.load(os.fspath(path), threshold_pct=threshold_pct,
                                      leak_threshold_mb=leak_threshold_mb)
        else:
            self.profile = path
        self.path = self.profile.path
        self.data = self.profile

    def get_summary(self) -> dict[str, Any]:
        """The reference's summary keys, from PRISM's measurements, and PRISM's own.

        * ``total_epochs``: PRISM steps (a reference epoch is one iteration);
        * ``total_samples``: PRISM epochs: the distinct epoch numbers of the
          steps (a reference sample is one pass of its outer loop; 1 when the
          program never set an epoch, 0 without steps);
        * ``total_time_ms``: the steps' summed wall time; without steps, the
          recorded region time (every thread's top-level regions);
        * ``avg_epoch_time_ms``: mean step time (total_time_ms without steps);
        * ``peak_gpu_memory_mb``: peak GPU memory in use, all devices (0.0
          without GPU samples); ``memory_leak_detected``: host or GPU leak;
        * ``device``: "cuda" when the profile has GPU data, else "cpu";
          ``pytorch_version``: None (a PRISM profile does not record it).

        PRISM's own: ``prism_sampled_steps`` (steps that recorded their
        regions), ``prism_step_p50_ms``, ``prism_step_p95_ms``,
        ``prism_peak_rss_mb``, ``prism_complete`` (footer read),
        ``prism_summary``, ``prism_steps`` (without the per-step series) and
        ``prism_memory`` (docs/JSON.md, prism.analyze/1).
        """
        p = self.profile
        steps, memory, summary, gpu = p.steps, p.memory, p.summary, p.gpu
        series = steps.get("series") or []
        count = int(steps.get("count") or 0)
        if steps.get("timed"):
            total_ms = _ms(steps.get("total_ns"))
            avg_ms = _ms(steps.get("mean_ns"))
        else:
            total_ms = _ms(summary.get("region_ns"))
            avg_ms = total_ms / max(1, count)
        have_gpu = bool(memory.get("have_gpu") or gpu.get("present"))
        return {
            "total_samples": len({s.get("epoch") for s in series}),
            "total_epochs": count,
            "total_time_ms": total_ms,
            "avg_epoch_time_ms": avg_ms,
            "peak_gpu_memory_mb": _mb(memory.get("peak_gpu_used_bytes")),
            "memory_leak_detected": bool(memory.get("leak_detected")),
            "device": "cuda" if have_gpu else "cpu",
            "pytorch_version": None,
            "prism_sampled_steps": int(steps.get("sampled") or 0),
            "prism_step_p50_ms": _ms(steps.get("p50_ns")),
            "prism_step_p95_ms": _ms(steps.get("p95_ns")),
            "prism_peak_rss_mb": _mb(memory.get("peak_rss_bytes")),
            "prism_complete": bool(p.complete),
            "prism_summary": summary,
            "prism_steps": {k: v for k, v in steps.items() if k != "series"},
            "prism_memory": memory,
        }

    def get_top_operations(self, n: int = 10) -> list[dict[str, Any]]:
        """The n heaviest operations: ``name``, ``total_ms``, ``count`` (the reference's).

        An operation is every region of that name on every thread, by
        inclusive time (recursion counted once).  PRISM adds ``self_ms``,
        ``mean_ms``, ``share`` (of all recorded region time) and
        ``heaviest_path``.
        """
        out = []
        for op in self.profile.top_operations(n):
            calls = int(op.get("calls") or 0)
            total = _ms(op.get("total_ns"))
            out.append({
                "name": op.get("name"),
                "total_ms": total,
                "count": calls,
                "self_ms": _ms(op.get("self_ns")),
                "mean_ms": total / calls if calls else 0.0,
                "share": op.get("share"),
                "heaviest_path": op.get("heaviest_path"),
            })
        return out

    def identify_bottlenecks(self) -> list[Bottleneck]:
        """PRISM's findings as the reference's Bottleneck objects, most important first."""
        denom = self.profile.summary.get("share_denominator_ns") or 0
        gpu_span = self.profile.gpu.get("span_ns") or 0
        out = []
        for b in self.profile.bottlenecks:
            kind = b.get("type") or ""
            share = float(b.get("share") or 0.0)
            if kind in _TIME_FINDINGS:
                impact = share * _ms(denom)
            elif kind == "gpu_idle":
                impact = share * _ms(gpu_span)
            else:
                impact = 0.0
            path = b.get("path")
            out.append(Bottleneck(
                type=BottleneckType(kind),
                severity=str(b.get("severity") or "").lower(),
                description=b.get("description") or "",
                recommendation=b.get("recommendation") or "",
                impact_ms=impact,
                evidence=b.get("evidence") or "",
                share=share,
                path=path,
                region=path.rsplit("/", 1)[-1] if path else None,
            ))
        return out

    def save_html(self, path: Any) -> str:
        """The report as one self-contained HTML page (``prism-top analyze
        --format html``; ``prism.Profile.save_html``)."""
        return self.profile.save_html(path)

    def get_efficiency_report(self) -> str:
        """The reference's text report (summary, top 5 operations, bottlenecks)."""
        s = self.get_summary()
        # an imported trace's host figure is torch's CPU allocator's, not an RSS
        peak_label = ("Peak allocated (torch's CPU allocator, from the trace)"
                      if (s["prism_memory"] or {}).get("host_memory") == "allocated"
                      else "Peak host RSS")
        lines = ["=" * 60, "PRISM Training Profile Report", "=" * 60, "", "Summary:",
                 f"  Total samples: {s['total_samples']}",
                 f"  Total epochs: {s['total_epochs']}",
                 f"  Total time: {s['total_time_ms']:.1f} ms",
                 f"  Avg epoch time: {s['avg_epoch_time_ms']:.2f} ms",
                 f"  Peak GPU memory: {s['peak_gpu_memory_mb']:.1f} MB",
                 f"  {peak_label}: {s['prism_peak_rss_mb']:.1f} MB",
                 f"  Memory leak detected: {s['memory_leak_detected']}"]
        if not s["prism_complete"]:
            lines.append("  (profile without a footer: still being written, or its writer died)")
        lines += ["", "Top Operations:"]
        for i, op in enumerate(self.get_top_operations(5), 1):
            lines.append(f"  {i}. {op['name']}: {op['total_ms']:.1f} ms ({op['count']} calls)")
        found = self.identify_bottlenecks()
        if found:
            lines += ["", "Bottlenecks Detected:"]
            for b in found:
                lines.append(f"  [{b.severity.upper()}] {b.type.value}: {b.description}")
                if b.evidence:
                    lines.append(f"    Evidence: {b.evidence}")
                lines.append(f"    Fix: {b.recommendation}")
        lines += ["", "=" * 60]
        return "\n".join(lines)

    def get_memory_analysis(self) -> dict[str, Any]:
        """Memory: peaks, the leak verdicts and the fits (per PRISM step), the series."""
        m = self.profile.memory
        host = m.get("host_leak") or {}
        return {
            "peak_gpu_memory_mb": _mb(m.get("peak_gpu_used_bytes")),
            "peak_gpu_reserved_mb": _mb(m.get("peak_gpu_reserved_bytes")),
            "peak_rss_mb": _mb(m.get("peak_rss_bytes")),
            "memory_leak_detected": bool(m.get("leak_detected")),
            "leak_rate_mb_per_step": host.get("slope_mb_per_step"),
            "host_leak": m.get("host_leak"),
            "gpu_leak": m.get("gpu_leak"),
            "series": self.profile.memory_series,
        }

    def compare(self, other: Any) -> dict[str, Any]:
        """``prism-top compare`` against another profile (this one is the baseline)."""
        b = other.profile if isinstance(other, ProfileAnalyzer) else other
        return prism.compare(self.profile, b)

    def export(self, out: str | os.PathLike, format: str = "chrome-trace") -> None:
        """``prism-top export``: chrome-trace, csv, folded or json."""
        prism.export(self.path, os.fspath(out), format=format)
