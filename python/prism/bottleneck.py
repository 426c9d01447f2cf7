"""The reference's BottleneckProfiler (document 004) as a thin layer over prism.

``BottleneckProfiler(config)`` runs sessions (``start_profiling_session`` /
``stop_profiling_session``), times blocks with ``profile_operation(name,
BottleneckType.X)`` and samples the process from a monitor thread every
``sampling_interval`` seconds.  Everything is PRISM's:

* each ``profile_operation`` block is the region ``prism.region(name)``: in
  a PRISM session (``prism.init``, ``python -m prism``) it is in the profile
  prism-top opens; without one it costs next to nothing and the profiler
  still keeps its own per-operation figures;
* the times and the system figures are ``prism.system_read()``'s (its
  ``mono_ns`` clock, the process's resident set, CPU time and byte
  counters), and the monitor's samples are PRISM counters
  (``bottleneck.memory_percent``, ``bottleneck.cpu_percent``, ...);
* ``analyze(path)`` / ``BottleneckProfiler.from_profile(path)`` read a
  finished profile with ``prism.load`` and map PRISM's findings onto the
  eight BottleneckType members (the table: docs/REFERENCE.md).

Nothing here raises into the program from an instrumentation path: the
monitor logs and stops on an error, a failed reading is an empty one, and an
exception inside a ``profile_operation`` block propagates unchanged after
its region has ended and its metrics are recorded.
"""
from __future__ import annotations

import logging
import math
import sys
import threading
import warnings
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, Iterator

import prism

from ._bottleneck_report import FINDING_TYPES, draw_charts, format_report, map_findings
from ._bottleneck_trackers import (CPUTracker, GPUTracker, IOTracker, MemoryTracker,
                                   cpu_percent, read_system)
from ._dataload import DataLoadingProfiler, PreprocessingProfiler

__all__ = [
    "BottleneckType", "ProfilingLevel", "BottleneckProfilerConfig", "BottleneckProfile",
    "OperationStats", "ProfilingSession", "BottleneckProfiler", "MemoryTracker",
    "GPUTracker", "CPUTracker", "IOTracker", "DataLoadingProfiler", "PreprocessingProfiler",
    "FINDING_TYPES",
]

log = logging.getLogger("prism.bottleneck")
MB = 1024 * 1024


class BottleneckType(Enum):
    DATA_LOADING = "data_loading"
    PREPROCESSING = "preprocessing"
    MEMORY_ALLOCATION = "memory_allocation"
    GPU_TRANSFER = "gpu_transfer"
    CPU_COMPUTATION = "cpu_computation"
    I_O_OPERATION = "i_o_operation"
    NETWORK_LATENCY = "network_latency"
    SYNCHRONIZATION = "synchronization"


class ProfilingLevel(Enum):
    """BASIC: timings and the monitor's samples, no bottleneck records;
    DETAILED and COMPREHENSIVE: with them (PRISM records the same either
    way); PRODUCTION: as DETAILED, the monitor sampling at most once a
    second."""
    BASIC = "basic"
    DETAILED = "detailed"
    COMPREHENSIVE = "comprehensive"
    PRODUCTION = "production"


def _check(name: str, v: Any, lo: float, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) \
            or not lo < v <= hi:
        raise ValueError(f"{name} must be a number in ({lo}, {hi}], not {v!r}")
    return float(v)


@dataclass
class BottleneckProfilerConfig:
    """The reference's fields with its defaults where it gives them."""
    profiling_level: ProfilingLevel = ProfilingLevel.DETAILED
    enable_real_time_monitoring: bool = True   # the monitor thread
    bottleneck_threshold: float = 0.05         # an operation over 5 % of the session
    memory_threshold: float = 0.8              # resident set / physical memory
    gpu_threshold: float = 0.9                 # CUDA allocated / device memory
    sampling_interval: float = 0.1             # seconds between monitor samples
    enable_memory_tracking: bool = True
    enable_gpu_tracking: bool = True
    enable_cpu_tracking: bool = True
    enable_io_tracking: bool = True
    generate_visualizations: bool = True       # the PNG with the report
    output_dir: Path = Path("bottleneck_profiles")

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        if not isinstance(self.profiling_level, ProfilingLevel):
            self.profiling_level = ProfilingLevel(self.profiling_level)
        for name in ("bottleneck_threshold", "memory_threshold", "gpu_threshold"):
            setattr(self, name, _check(name, getattr(self, name), 0.0, 1.0))
        self.sampling_interval = _check("sampling_interval", self.sampling_interval,
                                        0.0, 3600.0)
        self.output_dir = Path(self.output_dir)


@dataclass
class BottleneckProfile:
    """One bottleneck.  ``source``: ``monitor`` (a real-time rule),
    ``operation`` (an operation over bottleneck_threshold of the session) or
    ``prism`` (a PRISM finding; ``prism_type`` its type, and
    ``bottleneck_type`` that string when no member fits)."""
    operation_name: str
    bottleneck_type: BottleneckType | str
    severity: float                  # 0..1
    frequency: int                   # samples or calls it held for
    execution_time: float            # seconds
    suggestions: list[str] = field(default_factory=list)
    optimization_potential: float = 0.0   # 0..1: the share of time it could give back
    source: str = "monitor"
    prism_type: str | None = None
    description: str = ""
    evidence: str = ""


@dataclass
class OperationStats:
    """A profile_operation name's figures over the session."""
    operation_type: BottleneckType
    calls: int = 0
    execution_time: float = 0.0       # seconds, all calls
    min_time: float = math.inf
    max_time: float = 0.0
    memory_delta_mb: float = 0.0      # resident set change, summed
    gpu_memory_delta_mb: float = 0.0
    cpu_time: float = 0.0             # the process's CPU seconds inside the calls
    errors: int = 0                   # calls that raised

    @property
    def cpu_percent(self) -> float:
        return 100.0 * self.cpu_time / self.execution_time if self.execution_time else 0.0


@dataclass
class ProfilingSession:
    session_id: str
    start_time: datetime
    end_time: datetime | None = None
    performance_metrics: dict[str, Any] = field(default_factory=dict)
    bottlenecks: list[BottleneckProfile] = field(default_factory=list)
    memory_profile: dict[float, float] = field(default_factory=dict)   # s -> %
    gpu_profile: dict[float, float] = field(default_factory=dict)      # s -> %
    operations: dict[str, OperationStats] = field(default_factory=dict)
    samples: int = 0
    prism_output: str | None = None   # the PRISM session's file, when one ran


def _mono(d: dict[str, Any]) -> int | None:
    v = d.get("mono_ns")
    return v if isinstance(v, int) else None


class BottleneckProfiler:
    def __init__(self, config: BottleneckProfilerConfig | None = None) -> None:
        self.config = config if config is not None else BottleneckProfilerConfig()
        self.logger = log
        self.current_session: ProfilingSession | None = None
        self.bottlenecks: list[BottleneckProfile] = []
        self.performance_metrics: dict[str, Any] = defaultdict(float)
        self.memory_tracker = MemoryTracker()
        self.gpu_tracker = GPUTracker()
        self.cpu_tracker = CPUTracker()
        self.io_tracker = IOTracker()
        self.is_profiling = False
        self.profiling_thread: threading.Thread | None = None
        self.stop_event = threading.Event()
        self._lock = threading.Lock()
        self._sampled = threading.Condition(self._lock)
        self._start_mono: int | None = None
        self._last_mono: int | None = None
        self._sample_span = 0.0               # seconds since the previous sample
        self._count = 0

    # ---- sessions -------------------------------------------------------

    def start_profiling_session(self, session_name: str | None = None) -> str:
        """Start a session and its monitor; its id (``session_name`` when
        given).  While one runs, a second start warns and returns the
        running session's id."""
        if self.is_profiling:
            warnings.warn(f"prism.bottleneck: session {self.current_session.session_id!r} "
                          "is already running", RuntimeWarning, stacklevel=2)
            return self.current_session.session_id
        self.config.validate()
        self._count += 1
        sid = session_name or f"session_{datetime.now():%Y%m%d_%H%M%S}_{self._count}"
        self.current_session = ProfilingSession(sid, datetime.now())
        self.bottlenecks = self.current_session.bottlenecks
        self.performance_metrics = defaultdict(float)
        self.current_session.performance_metrics = self.performance_metrics
        self._start_mono = self._last_mono = _mono(read_system())
        self.memory_tracker.start()
        self.stop_event.clear()
        self.is_profiling = True
        if self.config.enable_real_time_monitoring:
            self.profiling_thread = threading.Thread(
                target=self._monitoring_loop, name="prism-bottleneck-monitor", daemon=True)
            self.profiling_thread.start()
        return sid

    def start_profiling(self, session_id: str | None = None) -> str:
        return self.start_profiling_session(session_id)

    def stop_profiling_session(self) -> ProfilingSession | None:
        """Stop the monitor (it is gone when this returns), take a last
        sample, record the operations over ``bottleneck_threshold`` of the
        session, and return the session.  Without a running session: a
        RuntimeWarning and None."""
        if not self.is_profiling:
            warnings.warn("prism.bottleneck: no profiling session is running",
                          RuntimeWarning, stacklevel=2)
            return None
        self.stop_event.set()
        t = self.profiling_thread
        if t is not None:
            t.join()
        self.profiling_thread = None
        self.is_profiling = False
        s = self.current_session
        self._sample_safely()                 # even a session shorter than one interval
        s.end_time = datetime.now()
        self.memory_tracker.stop()
        self._operation_bottlenecks(s)
        try:
            if prism.recording():
                s.prism_output = prism.output_path()
        except Exception:
            pass
        return s

    def stop_profiling(self) -> ProfilingSession | None:
        return self.stop_profiling_session()

    # ---- operations -----------------------------------------------------

    @contextmanager
    def profile_operation(self, operation_name: str,
                          operation_type: BottleneckType = BottleneckType.CPU_COMPUTATION
                          ) -> Iterator[None]:
        """Time a block as the PRISM region ``operation_name`` and record its
        time, resident-set and GPU memory change and CPU time.  Works with
        or without a running session (its figures then go nowhere but the
        region)."""
        region = prism.region(operation_name)
        gpu0 = self.gpu_tracker.get_current_memory()
        a = read_system()
        failed = False
        try:
            with region:
                yield
        except BaseException:
            failed = True
            raise
        finally:
            b = read_system()
            gpu1 = self.gpu_tracker.get_current_memory()
            try:
                self._record_operation_metrics(operation_name, operation_type, a, b,
                                               gpu1 - gpu0, failed)
            except Exception as e:       # never into the program
                self.logger.error("prism.bottleneck: %s not recorded: %s", operation_name, e)

    def _record_operation_metrics(self, name: str, otype: BottleneckType,
                                  a: dict[str, Any], b: dict[str, Any],
                                  gpu_delta: float, failed: bool) -> None:
        if self.current_session is None or not self.is_profiling:
            return
        ta, tb = _mono(a), _mono(b)
        dt = (tb - ta) / 1e9 if ta is not None and tb is not None else 0.0
        ra, rb = a.get("rss"), b.get("rss")
        mem = (rb - ra) / MB if isinstance(ra, int) and isinstance(rb, int) else 0.0
        pct = cpu_percent(a, b)
        with self._lock:
            ops = self.current_session.operations
            st = ops.get(name)
            if st is None:
                st = ops[name] = OperationStats(otype)
            st.calls += 1
            st.execution_time += dt
            st.min_time = min(st.min_time, dt)
            st.max_time = max(st.max_time, dt)
            st.memory_delta_mb += mem
            st.gpu_memory_delta_mb += gpu_delta
            st.cpu_time += (pct or 0.0) / 100.0 * dt
            st.errors += failed
            m = self.performance_metrics
            m[f"{name}.execution_time"] = st.execution_time
            m[f"{name}.calls"] = st.calls
            m[f"{name}.memory_delta_mb"] = st.memory_delta_mb
            m[f"{name}.cpu_percent"] = st.cpu_percent

    def _operation_bottlenecks(self, s: ProfilingSession) -> None:
        if self.config.profiling_level is ProfilingLevel.BASIC or not s.operations:
            return
        span = (s.end_time - s.start_time).total_seconds()
        for name, st in s.operations.items():
            share = st.execution_time / span if span > 0 else 0.0
            if share >= self.config.bottleneck_threshold:
                s.bottlenecks.append(BottleneckProfile(
                    operation_name=name, bottleneck_type=st.operation_type,
                    severity=min(share, 1.0), frequency=st.calls,
                    execution_time=st.execution_time,
                    suggestions=[f"{name} takes {100 * share:.1f} % of the session: "
                                 "see its region in the PRISM profile (prism-top) for what "
                                 "inside it costs the time"],
                    optimization_potential=min(share, 1.0), source="operation"))

    # ---- the monitor ----------------------------------------------------

    def _monitoring_loop(self) -> None:
        interval = self.config.sampling_interval
        if self.config.profiling_level is ProfilingLevel.PRODUCTION:
            interval = max(interval, 1.0)
        while not self.stop_event.is_set():
            try:
                self._collect_real_time_metrics()
                self._detect_real_time_bottlenecks()
            except Exception as e:
                self.logger.error("Error in monitoring loop: %s", e)
                break
            finally:
                with self._sampled:
                    self._sampled.notify_all()
            self.stop_event.wait(interval)

    def _sample_safely(self) -> None:
        try:
            self._collect_real_time_metrics()
            self._detect_real_time_bottlenecks()
        except Exception as e:
            self.logger.error("Error in the last sample: %s", e)

    def _collect_real_time_metrics(self) -> None:
        c = self.config
        now = read_system()
        t = _mono(now)
        at = (t - self._start_mono) / 1e9 if t is not None and self._start_mono else 0.0
        values: dict[str, float] = {}
        if c.enable_memory_tracking:
            mem = MemoryTracker.stats_of(now)
            values["memory_usage"] = mem["used_percent"]
            values["memory_mb"] = mem["used_mb"]
        if c.enable_cpu_tracking:
            values["cpu_usage"] = self.cpu_tracker.usage_since_last(now)
        if c.enable_io_tracking:
            io = self.io_tracker.rates_since_last(now)
            for k in ("io_read_mb_per_s", "io_write_mb_per_s", "net_rx_mb_per_s",
                      "net_tx_mb_per_s"):
                if io[k] is not None:
                    values[k] = io[k]
        if c.enable_gpu_tracking:
            g = self.gpu_tracker.get_current_stats()
            if g.get("available"):
                values["gpu_memory_usage"] = g["memory_used_percent"]
                values["gpu_memory_mb"] = g["memory_mb"]
        for k, v in values.items():
            prism.counter(f"bottleneck.{k}", float(v))
        with self._sampled:
            s = self.current_session
            self.performance_metrics.update(values)
            if "memory_usage" in values:
                s.memory_profile[at] = values["memory_usage"]
                self.memory_tracker.session_stats.append(
                    {"timestamp": at, "memory_mb": values["memory_mb"],
                     "memory_percent": values["memory_usage"]})
            if "gpu_memory_usage" in values:
                s.gpu_profile[at] = values["gpu_memory_usage"]
            s.samples += 1
            last, self._last_mono = self._last_mono, t
            self._sample_span = (t - last) / 1e9 if t is not None and last is not None else 0.0

    def _detect_real_time_bottlenecks(self) -> None:
        c = self.config
        if c.profiling_level is ProfilingLevel.BASIC:
            return
        m = self.performance_metrics
        advice = ["Reduce batch size", "Enable gradient checkpointing", "Use mixed precision"]
        if c.enable_memory_tracking and m.get("memory_usage", 0) > c.memory_threshold * 100:
            self._record_bottleneck(BottleneckType.MEMORY_ALLOCATION, "high_memory_usage",
                                    severity=0.8, suggestions=advice)
        if c.enable_gpu_tracking and m.get("gpu_memory_usage", 0) > c.gpu_threshold * 100:
            self._record_bottleneck(BottleneckType.GPU_TRANSFER, "high_gpu_memory_usage",
                                    severity=0.9, suggestions=advice)

    def _record_bottleneck(self, btype: BottleneckType, name: str, severity: float,
                           suggestions: list[str]) -> None:
        """One record per (type, name) a session: each sample that finds it
        again adds to its frequency and to its time (the samples' spans)."""
        with self._lock:
            s = self.current_session
            for b in s.bottlenecks:
                if b.bottleneck_type is btype and b.operation_name == name:
                    break
            else:
                b = BottleneckProfile(name, btype, severity, 0, 0.0, list(suggestions),
                                      source="monitor")
                s.bottlenecks.append(b)
            b.frequency += 1
            b.execution_time += self._sample_span
            b.optimization_potential = b.frequency / max(s.samples, 1)

    def wait_for_samples(self, n: int, timeout: float | None = None) -> bool:
        """Block until the session's monitor has taken ``n`` samples (or
        stopped); True when it has.  For tests and scripts that must not
        sleep to synchronise."""
        with self._sampled:
            return self._sampled.wait_for(
                lambda: self.current_session is not None and (
                    self.current_session.samples >= n or not self.is_profiling
                    or self.profiling_thread is None
                    or not self.profiling_thread.is_alive()), timeout) and \
                self.current_session.samples >= n

    # ---- results --------------------------------------------------------

    def get_bottleneck_summary(self) -> dict[str, Any]:
        """The session's bottlenecks as dicts, counted by type, and its
        operations' figures ({} before any session)."""
        s = self.current_session
        if s is None:
            return {}
        by_type: dict[str, int] = defaultdict(int)
        for b in s.bottlenecks:
            by_type[getattr(b.bottleneck_type, "value", b.bottleneck_type)] += 1
        return {
            "session_id": s.session_id,
            "total_bottlenecks": len(s.bottlenecks),
            "bottlenecks": [dict(vars(b), bottleneck_type=getattr(
                b.bottleneck_type, "value", b.bottleneck_type)) for b in s.bottlenecks],
            "by_type": dict(by_type),
            "operations": {k: dict(vars(v), operation_type=v.operation_type.value,
                                   cpu_percent=v.cpu_percent)
                           for k, v in s.operations.items()},
            "samples": s.samples,
            "prism_output": s.prism_output,
        }

    def format_report(self) -> str:
        """The session's markdown report (the reference's
        _format_profile_report); '' before any session."""
        return format_report(self.current_session) if self.current_session else ""

    _format_profile_report = format_report

    def generate_visualizations(self, output_dir: str | Path | None = None) -> Path | None:
        """The four charts as OUTPUT_DIR/<session>_visualizations.png; None
        without bottlenecks (as the reference) or without matplotlib (one
        line on stderr)."""
        s = self.current_session
        if s is None or not s.bottlenecks:
            return None
        out = Path(output_dir or self.config.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        return draw_charts(s, out)

    def generate_optimization_report(self, output_dir: str | Path | None = None
                                     ) -> Path | None:
        """Write the report to OUTPUT_DIR/<session>_report.md (and the charts
        when ``generate_visualizations``); its path, None before any session."""
        s = self.current_session
        if s is None:
            return None
        out = Path(output_dir or self.config.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{s.session_id}_report.md"
        path.write_text(format_report(s), encoding="utf-8")
        if self.config.generate_visualizations:
            self.generate_visualizations(out)
        return path

    generate_report = generate_optimization_report

    # ---- PRISM's findings -----------------------------------------------

    @staticmethod
    def from_profile(path: Any, **load_kw: Any) -> list[BottleneckProfile]:
        """PRISM's findings in a finished profile (a path or prism.Profile;
        ``load_kw`` go to prism.load) as BottleneckProfile records."""
        p = path if isinstance(path, prism.Profile) else prism.load(path, **load_kw)
        return map_findings(p, BottleneckType, BottleneckProfile)

    def analyze(self, path: Any = None, **load_kw: Any) -> list[BottleneckProfile]:
        """Map a finished profile's findings and add them to the current
        session (a hot_operation on one of its operations takes that
        operation's type).  ``path`` defaults to the PRISM session's file,
        which is complete only after prism.shutdown(): before that
        RuntimeError says so."""
        if path is None:
            s = self.current_session
            if s is None or s.prism_output is None:
                raise RuntimeError("prism.bottleneck: no PRISM profile recorded; "
                                   "give analyze() a path")
            if prism.recording():
                raise RuntimeError("prism.bottleneck: the PRISM session still records; "
                                   "its profile is complete after prism.shutdown()")
            path = s.prism_output
        p = path if isinstance(path, prism.Profile) else prism.load(path, **load_kw)
        declared = ({k: v.operation_type for k, v in self.current_session.operations.items()}
                    if self.current_session else None)
        found = map_findings(p, BottleneckType, BottleneckProfile, declared)
        if self.current_session is not None:
            with self._lock:
                self.current_session.bottlenecks.extend(found)
        return found
