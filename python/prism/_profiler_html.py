"""Reporter.save_html's page: tables and inline SVG charts, one file.

No request leaves the page: no script, link, image or font, and the SVG
elements carry no namespace URL (HTML parses inline <svg> without one).
Every name and text from the program goes through html.escape.
"""
from __future__ import annotations

from html import escape

from ._profiler_report import stats_of

_STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
svg text { font-size: 12px; font-family: sans-serif; }
.note { color: #666; }
"""


def _n(x, fmt="%.4g"):
    return "&ndash;" if x is None else escape(fmt % x)


def _table(head, rows):
    out = ["<table><tr>" + "".join("<th>%s</th>" % escape(h) for h in head) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % c for c in r) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _bars(title, items, unit):
    """A horizontal bar chart: items [(name, value)], largest bar full width."""
    if not items:
        return ""
    top = max(v for _, v in items) or 1.0
    row, label, width = 22, 180, 420
    h = row * len(items) + 10
    out = ['<svg role="img" width="%d" height="%d" viewBox="0 0 %d %d">'
           % (label + width + 110, h, label + width + 110, h),
           "<title>%s</title>" % escape(title)]
    for i, (name, v) in enumerate(items):
        y = 5 + i * row
        short = name if len(name) <= 28 else name[:27] + "\u2026"
        w = max(width * v / top, 1.0)
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                   % (label - 6, y + 15, escape(short)))
        out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="#4a7fb5">'
                   "<title>%s: %s %s</title></rect>"
                   % (label, y + 3, w, row - 6, escape(name), _n(v), escape(unit)))
        out.append('<text x="%.1f" y="%d">%s %s</text>'
                   % (label + w + 4, y + 15, _n(v), escape(unit)))
    out.append("</svg>")
    return "\n".join(out)


def _timeline(samples):
    """Allocated (and reserved) bytes over time as polylines."""
    pts = [s for s in samples if s.allocated is not None]
    if len(pts) < 2:
        return ""
    w, h, pad = 600, 160, 30
    t_end = max(s.time_ms for s in pts) or 1.0
    top = max(max(s.allocated for s in pts),
              max((s.reserved or 0) for s in pts)) or 1

    def line(key, colour):
        xy = " ".join("%.1f,%.1f" % (pad + (w - 2 * pad) * s.time_ms / t_end,
                                     h - pad - (h - 2 * pad) * (getattr(s, key) or 0) / top)
                      for s in pts)
        return '<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>' % (
            colour, xy)

    return "\n".join([
        '<svg role="img" width="%d" height="%d" viewBox="0 0 %d %d">' % (w, h, w, h),
        "<title>memory timeline</title>",
        '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#ccc"/>'
        % (pad, pad, w - 2 * pad, h - 2 * pad),
        line("reserved", "#b5834a"), line("allocated", "#4a7fb5"),
        '<text x="%d" y="%d">%.1f MB</text>' % (pad, pad - 8, top / 1e6),
        '<text x="%d" y="%d">0 .. %.1f ms (blue: allocated, brown: reserved)</text>'
        % (pad, h - 8, t_end),
        "</svg>"])


def render(timings, metrics, mem, throughput, tracker, shares):
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>PRISM profiler report</title><style>%s</style></head><body>" % _STYLE,
             "<h1>Profiler report</h1>"]
    parts.append("<h2>Timings (ms)</h2>")
    if timings:
        stats = {n: stats_of(v) for n, v in timings.items()}
        parts.append(_table(["name", "count", "mean", "std", "min", "max", "total"], [
            [escape(n), str(s["count"])] + [_n(s[k]) for k in ("mean", "std", "min", "max",
                                                               "total")]
            for n, s in stats.items()]))
        parts.append(_bars("mean time per block", [(n, s["mean"]) for n, s in stats.items()],
                           "ms"))
        parts.append(_bars("total time", [(n, s["total"]) for n, s in stats.items()], "ms"))
    else:
        parts.append('<p class="note">no timed blocks</p>')
    if shares and shares.get("self_ms"):
        parts.append("<h2>Where the time went</h2>")
        parts.append("<p>bottleneck: <b>%s</b></p>" % escape(str(shares["bottleneck"])))
        parts.append(_table(["name", "self ms", "share"], [
            [escape(n), _n(ms), _n(100.0 * shares["shares"][n], "%.1f %%")]
            for n, ms in sorted(shares["self_ms"].items(), key=lambda kv: -kv[1])]))
    parts.append("<h2>Metrics</h2>")
    if metrics:
        parts.append(_table(["name", "count", "mean", "std", "min", "max"], [
            [escape(n), str(s["count"])] + [_n(s[k]) for k in ("mean", "std", "min", "max")]
            for n, s in ((n, stats_of(v)) for n, v in metrics.items())]))
    else:
        parts.append('<p class="note">no metrics recorded</p>')
    parts.append("<h2>Memory (%s)</h2>" % escape(str(mem.get("device"))))
    parts.append(_table(["figure", "bytes"], [
        [escape(k), _n(mem.get(k), "%d")]
        for k in ("start_allocated", "current_allocated", "peak_allocated",
                  "start_reserved", "current_reserved", "peak_reserved")]))
    if tracker is not None:
        parts.append(_timeline(tracker.get_allocation_timeline()))
    parts.append("<h2>Throughput</h2>")
    parts.append(_table(["figure", "per second"], [
        [escape(k), _n(v, "%.2f")] for k, v in throughput.items()]))
    parts.append("</body></html>\n")
    return "\n".join(p for p in parts if p)
