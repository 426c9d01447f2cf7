"""prism.bottleneck's outputs: the markdown report, the charts, and PRISM's
findings mapped onto the reference's bottleneck types.

Data and drawing apart: the report and the charts read a finished
``ProfilingSession``; they compute nothing the session does not hold.
"""
from __future__ import annotations

import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

# PRISM finding type -> the reference's BottleneckType member name; a type
# not here keeps its PRISM name (docs/REFERENCE.md has the table and why).
FINDING_TYPES = {
    "data_loading": "DATA_LOADING",
    "io_wait": "I_O_OPERATION",
    "communication_wait": "NETWORK_LATENCY",
    "cpu_gpu_sync": "SYNCHRONIZATION",
    "hot_operation": "CPU_COMPUTATION",
    "cpu_contention": "CPU_COMPUTATION",
    "memory_leak": "MEMORY_ALLOCATION",
    "memory_bound": "MEMORY_ALLOCATION",
    "gpu_idle": "GPU_TRANSFER",
    "launch_bound": "GPU_TRANSFER",
}
# findings whose share is a fraction of step (or run) time
TIME_SHARES = {"hot_operation", "data_loading", "cpu_gpu_sync", "io_wait",
               "communication_wait", "off_cpu_wait", "cpu_contention", "slow_steps",
               "unattributed_time"}
SEVERITY = {"HIGH": 0.9, "MEDIUM": 0.6, "LOW": 0.3}


def map_findings(profile: Any, types: Any, record: Any,
                 declared: dict[str, Any] | None = None) -> list[Any]:
    """BottleneckProfile records (made by ``record(**fields)``) from a
    prism.Profile's findings.  ``types`` is the BottleneckType enum;
    ``declared`` maps operation names to the type a profile_operation gave
    them (a hot_operation blaming one of them takes that type)."""
    ops = {o["name"]: o for o in profile.ops if not o.get("unattributed")}
    out = []
    for f in profile.bottlenecks:
        kind = f.get("type", "unknown")
        region = f.get("region")
        if kind == "hot_operation" and declared and region in declared:
            btype = declared[region]
        elif kind in FINDING_TYPES:
            btype = types[FINDING_TYPES[kind]]
        else:
            btype = kind
        op = ops.get(region) if region else None
        worth = f.get("worth") or {}
        share = f.get("share") or 0.0
        if worth.get("speedup"):
            potential = 1.0 - 1.0 / worth["speedup"]
        elif kind in TIME_SHARES:
            potential = share
        else:
            potential = 0.0
        out.append(record(
            operation_name=region or kind,
            bottleneck_type=btype,
            severity=SEVERITY.get(f.get("severity"), 0.3),
            frequency=op["calls"] if op else 1,
            execution_time=op["total_ns"] / 1e9 if op else 0.0,
            suggestions=[f["recommendation"]] if f.get("recommendation") else [],
            optimization_potential=min(max(potential, 0.0), 1.0),
            source="prism", prism_type=kind,
            description=f.get("description", ""), evidence=f.get("evidence", "")))
    return out


def _type_name(t: Any) -> str:
    return t.value if hasattr(t, "value") else str(t)


def format_report(session: Any) -> str:
    """The reference's markdown report of one session, with each record's
    source and PRISM's evidence where it has some."""
    end = session.end_time or datetime.now()
    lines = [
        "# Bottleneck Profiling Report",
        f"Generated: {datetime.now().strftime('%Y-%m-%d %H:%M:%S')}",
        f"Session ID: {session.session_id}",
        "",
        "## Session Summary",
        f"- Start Time: {session.start_time}",
        f"- End Time: {session.end_time}",
        f"- Duration: {(end - session.start_time).total_seconds():.2f} seconds",
        f"- Monitor samples: {session.samples}",
        f"- PRISM profile: {session.prism_output or '(no PRISM session)'}",
        "",
        "## Performance Metrics",
    ]
    for metric, value in session.performance_metrics.items():
        lines.append(f"- {metric}: {value:.4f}" if isinstance(value, float)
                     else f"- {metric}: {value}")
    lines += ["", "## Bottleneck Analysis",
              f"Total Bottlenecks Detected: {len(session.bottlenecks)}", "",
              "### Bottlenecks by Type"]
    by_type: dict[str, list[Any]] = defaultdict(list)
    for b in session.bottlenecks:
        by_type[_type_name(b.bottleneck_type)].append(b)
    for name, items in by_type.items():
        lines += ["", f"#### {name.title()}"]
        for b in items:
            lines.append(f"- **{b.operation_name}**: Severity: {b.severity:.2f}, "
                         f"Frequency: {b.frequency}, Time: {b.execution_time:.4f}s "
                         f"(from {b.source})")
            if b.evidence:
                lines.append(f"  - Evidence: {b.evidence}")
            if b.suggestions:
                lines.append("  - Suggestions:")
                lines += [f"    - {s}" for s in b.suggestions]
    return "\n".join(lines) + "\n"


def draw_charts(session: Any, out: Path, dpi: int = 300) -> Path | None:
    """The reference's four charts (severity, frequency, optimisation
    potential, memory and GPU memory over time) as one PNG; None, and one
    line on stderr, without matplotlib.  Uses matplotlib's object API and
    the Agg canvas: the program's pyplot state and backend are untouched."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        print("prism.bottleneck: matplotlib is not installed; no charts written "
              "(pip install matplotlib)", file=sys.stderr)
        return None
    bs = session.bottlenecks
    names = [b.operation_name for b in bs]
    fig = Figure(figsize=(12, 8))
    FigureCanvasAgg(fig)
    for i, (title, label, values) in enumerate((
            ("Bottleneck Severity", "Severity (0-1)", [b.severity for b in bs]),
            ("Bottleneck Frequency", "Frequency", [b.frequency for b in bs]),
            ("Optimization Potential", "Potential (0-1)",
             [b.optimization_potential for b in bs]))):
        ax = fig.add_subplot(2, 2, i + 1)
        ax.barh(names, values)
        ax.set_title(title)
        ax.set_xlabel(label)
    ax = fig.add_subplot(2, 2, 4)
    for series, label in ((session.memory_profile, "Memory Usage"),
                          (session.gpu_profile, "GPU Memory Usage")):
        if series:
            ax.plot(list(series.keys()), list(series.values()), label=label)
    ax.set_title("Resource Usage Over Time")
    ax.set_xlabel("Time (s)")
    ax.set_ylabel("Usage (%)")
    if session.memory_profile or session.gpu_profile:
        ax.legend()
    fig.tight_layout()
    path = out / f"{session.session_id}_visualizations.png"
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return path
