"""prism.plot: a profile's figures for notebooks and reports (matplotlib).

Each function takes a profile (a path, a ``prism.Profile``, or a
``prism.profiling.ProfileAnalyzer``) and returns a ``matplotlib.figure.Figure``
built without pyplot (no global state, no window: ``fig.savefig("x.png")``
writes the file, a notebook shows it)::

    import prism.plot
    prism.plot.timing_breakdown("run.cbor").savefig("timing.png")
    prism.plot.create_report("run.cbor", "full_report.png")

* ``timing_breakdown(p, n=10)``: the n heaviest operations, total time (ms)
  with their share of the profile's time;
* ``memory_timeline(p)``: host RSS (and GPU memory used) at step ends against
  the step, with the leak fit's line and its verdict;
* ``step_times(p)``: every step's duration against its index, the median and
  p95 as lines, the steps above p95 marked;
* ``flame_graph(p, min_share=0.002)``: the all-threads call tree as an icicle
  (roots on top, a child under its parent, widths by total time);
* ``create_report(p, path)``: the four on one page, written as a PNG (or any
  format matplotlib writes, by the path's suffix); returns the path.

``ProfilePlotter(analyzer)`` is the reference API's name for the same:
``plot_timing_breakdown()``, ``plot_memory_timeline()``, ``plot_step_times()``,
``plot_flame_graph()``, ``create_report(path)``.

Every figure is drawn from the same analysis ``prism-top analyze`` runs
(``Profile.ops``, ``.memory``, ``.steps``, ``.tree``): its numbers are the
JSON report's.  Without matplotlib each call raises ImportError saying so
(``pip install matplotlib``); ``import prism.plot`` itself never needs it.
"""
import os as _os

__all__ = ["timing_breakdown", "memory_timeline", "step_times", "flame_graph", "create_report",
           "ProfilePlotter"]

_MB = 1024.0 * 1024.0


def _figure(w, h):
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError("prism.plot needs matplotlib (pip install matplotlib; Debian: "
                          "python3-matplotlib): %s" % e) from e
    return Figure(figsize=(w, h), layout="constrained")     # (matplotlib 3.5 on)


def _profile(p):
    """A prism.Profile from a path, a Profile or a ProfileAnalyzer."""
    from . import _profile as prof
    if isinstance(p, prof.Profile):
        return p
    inner = getattr(p, "profile", None)
    if isinstance(inner, prof.Profile):
        return inner
    return prof.load(p)


def _leaf(name):
    return name if len(name) <= 48 else name[:22] + "..." + name[-23:]


def _timing(ax, p, n=10):
    ops = list(p.ops or [])[:n]
    names = [_leaf(o["name"]) for o in ops][::-1]
    ms = [o["total_ns"] / 1e6 for o in ops][::-1]
    bars = ax.barh(range(len(ms)), ms, color="#3a6ea5")
    ax.set_yticks(range(len(ms)))
    ax.set_yticklabels(names, fontsize=8)
    ax.set_xlabel("total time (ms)")
    ax.set_title("Top %d operations" % len(ops))
    for b, o in zip(bars, ops[::-1]):
        ax.annotate("%.1f%%" % (100.0 * (o.get("share") or 0)), (b.get_width(), b.get_y() +
                    b.get_height() / 2), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=7)
    return ops


def _memory(ax, p):
    ms = p.memory_series
    steps, rss, gpu = list(ms["step"]), list(ms["rss_bytes"]), list(ms["gpu_used_bytes"])
    pts = [(s, r, g) for s, r, g in zip(steps, rss, gpu) if s >= 0]
    ax.set_title("Memory at step ends")
    ax.set_xlabel("step")
    ax.set_ylabel("MB")
    if not pts:
        ax.text(0.5, 0.5, "no memory samples at step ends", ha="center", va="center",
                transform=ax.transAxes)
        return pts
    ax.plot([x[0] for x in pts], [x[1] / _MB for x in pts], color="#3a6ea5", lw=1.2,
            label="host RSS")
    if any(x[2] for x in pts):
        ax.plot([x[0] for x in pts], [x[2] / _MB for x in pts], color="#e08a2c", lw=1.2,
                label="GPU used")
    fit = (p.memory or {}).get("host_leak") or {}
    if fit.get("have_fit"):
        ax.plot([pts[0][0], pts[-1][0]], [fit["start_mb"], fit["end_mb"]], "--", color="#d33",
                lw=1, label="fit: %+.3f MB/step, %s" % (fit["slope_mb_per_step"],
                                                      fit.get("verdict", "")))
    ax.legend(fontsize=7, loc="best")
    return pts


def _steps(ax, p):
    d = [int(x) for x in p.step_durations_ns]
    st = p.steps or {}
    ax.set_title("Step times")
    ax.set_xlabel("step (in start order)")
    ax.set_ylabel("ms")
    if not d:
        ax.text(0.5, 0.5, "no steps", ha="center", va="center", transform=ax.transAxes)
        return d
    ax.plot(range(len(d)), [x / 1e6 for x in d], color="#3a6ea5", lw=1)
    p50, p95 = st.get("p50_ns"), st.get("p95_ns")
    if p50:
        ax.axhline(p50 / 1e6, color="#888", lw=0.8, label="median %.3g ms" % (p50 / 1e6))
    if p95:
        ax.axhline(p95 / 1e6, color="#d33", lw=0.8, ls=":", label="p95 %.3g ms" % (p95 / 1e6))
        out = [(i, x) for i, x in enumerate(d) if x > p95]
        if out:
            ax.scatter([i for i, _ in out], [x / 1e6 for _, x in out], s=10, color="#d33",
                       zorder=3, label="above p95 (%d)" % len(out))
    ax.legend(fontsize=7, loc="best")
    return d


def _flame(ax, p, min_share=0.002):
    t = p.tree or {}
    roots = t.get("roots") or []
    total = float(sum(r["total_ns"] for r in roots)) or 1.0
    boxes = []

    def place(node, x, depth):
        w = node["total_ns"] / total
        if w < min_share:
            return
        boxes.append((x, depth, w, node["name"]))
        cx = x
        for c in node.get("children") or []:
            place(c, cx, depth + 1)
            cx += c["total_ns"] / total

    x = 0.0
    for r in roots:
        place(r, x, 0)
        x += r["total_ns"] / total
    depth = max((b[1] for b in boxes), default=0) + 1
    colors = ["#f2a65a", "#eebd6a", "#e8833a", "#f0c27b"]
    for i, (bx, by, bw, name) in enumerate(boxes):
        ax.add_patch(_rect((bx, depth - by - 1), bw, 0.92, colors[i % len(colors)]))
        if bw > 0.06:
            ax.text(bx + 0.005, depth - by - 0.55, _leaf(name), fontsize=7, va="center",
                    clip_on=True)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, depth)
    ax.set_yticks([])
    ax.set_xlabel("share of the profile's time")
    ax.set_title("Call tree (widths: total time; paths under %.1f%% left out)"
                 % (100 * min_share))
    return boxes


def _rect(xy, w, h, color):
    from matplotlib.patches import Rectangle
    return Rectangle(xy, w, h, facecolor=color, edgecolor="white", lw=0.5)


def timing_breakdown(p, n=10):
    """The n heaviest operations (total time, share)."""
    fig = _figure(8, 0.35 * n + 1.2)
    _timing(fig.add_subplot(1, 1, 1), _profile(p), n)
    return fig


def memory_timeline(p):
    """Host RSS (and GPU memory used) at step ends, with the leak fit."""
    fig = _figure(8, 3.5)
    _memory(fig.add_subplot(1, 1, 1), _profile(p))
    return fig


def step_times(p):
    """Every step's duration, median and p95, the steps above p95 marked."""
    fig = _figure(8, 3.5)
    _steps(fig.add_subplot(1, 1, 1), _profile(p))
    return fig


def flame_graph(p, min_share=0.002):
    """The all-threads call tree as an icicle (roots on top)."""
    fig = _figure(10, 4)
    _flame(fig.add_subplot(1, 1, 1), _profile(p), min_share)
    return fig


def create_report(p, path):
    """The four figures on one page, written to path (PNG by default; the
    suffix picks the format); returns the path."""
    prof = _profile(p)
    fig = _figure(14, 10)
    grid = fig.add_gridspec(3, 2)
    _timing(fig.add_subplot(grid[0, 0]), prof)
    _steps(fig.add_subplot(grid[0, 1]), prof)
    _memory(fig.add_subplot(grid[1, :]), prof)
    _flame(fig.add_subplot(grid[2, :]), prof)
    st = prof.steps or {}
    fig.suptitle("PRISM: %s - %d steps, mean %.3g ms, %d findings" % (
        _os.path.basename(prof.path), st.get("count", 0), (st.get("mean_ns") or 0) / 1e6,
        len(prof.bottlenecks or [])))
    path = _os.fspath(path)
    fig.savefig(path, dpi=100)
    return path


class ProfilePlotter:
    """The reference's plotter over a profile (a ProfileAnalyzer, a
    prism.Profile or a path)."""

    def __init__(self, analyzer):
        self.profile = _profile(analyzer)

    def plot_timing_breakdown(self, n=10):
        return timing_breakdown(self.profile, n)

    def plot_memory_timeline(self):
        return memory_timeline(self.profile)

    def plot_step_times(self):
        return step_times(self.profile)

    def plot_flame_graph(self, min_share=0.002):
        return flame_graph(self.profile, min_share)

    def create_report(self, path):
        return create_report(self.profile, path)
