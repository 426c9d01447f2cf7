"""A second reference API ("kitsune.profiler") as a thin layer over ``prism``.

Code written against it runs with only its imports changed
(``from prism.profiler import CUDATimer, MemoryTracker, MetricsCollector,
Reporter, StreamProfiler, compare_runs``).  Every timed block is also a PRISM
region (``prism.region(name)``) and every recorded metric or memory sample a
PRISM counter (``prism.counter``), so under a session (``prism.init``,
``python -m prism``, ``PRISM_OUTPUT``) what this API measures is in the
profile prism-top opens.  Without a session the API's own results work the
same and nothing is written anywhere.

Times are in milliseconds.  On a machine without CUDA every clock is the
monotonic clock (``time.perf_counter_ns``, CLOCK_MONOTONIC: the clock PRISM's
own timestamps are calibrated against).  Instrumentation (entering and
leaving blocks, recording values) never raises: a value that is not a number
is left out with one warning per name.  docs/PROFILER.md maps every name of
the reference onto PRISM and lists what was added.
"""
from __future__ import annotations

import math
import numbers
import sys
import threading
import time
import warnings

import prism

from ._profiler_memory import MemorySample, MemoryTracker
from ._profiler_report import Reporter, compare_runs, stats_of

__all__ = ["CUDATimer", "MemoryTracker", "MemorySample", "MetricsCollector", "Reporter",
           "StreamProfiler", "compare_runs"]

_now = time.perf_counter_ns


def _torch_cuda():
    """torch.cuda when torch imports and a CUDA device is usable, else None.
    Asks only torch.cuda.is_available(): no context is created here."""
    try:
        import torch
        return torch.cuda if torch.cuda.is_available() else None
    except Exception:  # no torch, or a broken one: the monotonic clock
        return None


class _Block:
    """One measured block: a PRISM region around a monotonic (for a CUDA
    timer, CUDA event) measurement.  The owner's ``_begin()`` runs inside
    the region before the clock is read, ``_stop(ev, ms)`` (the end event,
    the synchronisation: the value) after it, still inside; ``_end(name,
    value)`` stores it once the region is left, so the profile's time of
    the region holds the measurement and little more."""

    __slots__ = ("_owner", "_name", "_region", "_t0", "_ev")

    def __init__(self, owner, name):
        self._owner = owner
        self._name = name
        self._region = prism.region(name)
        self._t0 = 0
        self._ev = None

    def __enter__(self):
        self._region.__enter__()
        self._ev = self._owner._begin()
        self._t0 = _now()
        return self

    def __exit__(self, *exc):
        t1 = _now()
        try:
            value = self._owner._stop(self._ev, (t1 - self._t0) / 1e6)
        except Exception as e:  # never from an instrumentation path
            _warn_once(("end", self._name), "prism.profiler: %r: %s" % (self._name, e))
            value = (t1 - self._t0) / 1e6
        self._region.__exit__(None, None, None)
        try:
            self._owner._end(self._name, value)
        except Exception as e:
            _warn_once(("end", self._name), "prism.profiler: %r not recorded: %s"
                       % (self._name, e))
        return False


_warned = set()


def _warn_once(key, text):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(text, RuntimeWarning, stacklevel=3)


class CUDATimer:
    """Times named blocks: ``with timer.measure(name)`` or
    ``timer.start(name)`` ... ``timer.stop(name)``; each block is a PRISM region.

    ``clock`` says what measured: ``"cuda_events"`` (a torch.cuda.Event pair
    on the current stream, when torch.cuda.is_available()) or
    ``"monotonic"`` (time.perf_counter_ns).  ``synchronize`` (CUDA only)
    synchronises the device before the start event and after the end event,
    so the block's queued GPU work is inside the measurement; with False the
    events are read when a result is asked for.  ``warmup`` and ``repeat``
    apply to ``benchmark(name, fn, ...)`` only: measure() times what it
    encloses, once.
    """

    def __init__(self, synchronize=True, warmup=3, repeat=10):
        self.synchronize = bool(synchronize)
        self.warmup = int(warmup)
        self.repeat = int(repeat)
        self._cuda = _torch_cuda()
        self.clock = "cuda_events" if self._cuda is not None else "monotonic"
        self._times = {}        # name -> [ms, or (start event, end event, monotonic ms)]
        self._open = {}         # name -> [started _Block]
        self._lock = threading.Lock()

    # ---- timing ----------------------------------------------------------

    def measure(self, name):
        """A context manager timing its block as ``name`` (also a PRISM region)."""
        return _Block(self, str(name))

    def start(self, name):
        """Start timing ``name`` (enters its PRISM region); ``stop(name)`` ends it."""
        b = _Block(self, str(name))
        try:
            b.__enter__()
        except Exception as e:
            _warn_once(("start", name), "prism.profiler: cannot start %r: %s" % (name, e))
            return
        with self._lock:
            self._open.setdefault(str(name), []).append(b)

    def stop(self, name):
        """Stop the latest start(name); its time in ms (None when it was not started)."""
        with self._lock:
            open_ = self._open.get(str(name))
            b = open_.pop() if open_ else None
        if b is None:
            _warn_once(("stop", name), "prism.profiler: stop(%r) without start()" % (name,))
            return None
        b.__exit__(None, None, None)
        return self.get_elapsed(name)

    def benchmark(self, name, fn, *args, **kwargs):
        """Call ``fn(*args, **kwargs)`` ``warmup`` times untimed (region
        ``NAME (warmup)``), then ``repeat`` times, each measured as ``name``;
        get_stats(name) of those ``repeat`` measurements."""
        with prism.region("%s (warmup)" % name):
            for _ in range(self.warmup):
                fn(*args, **kwargs)
        first = len(self._times.get(str(name), ()))
        for _ in range(self.repeat):
            with self.measure(name):
                fn(*args, **kwargs)
        return stats_of(self._resolved(name)[first:])

    # ---- results ---------------------------------------------------------

    def get_elapsed(self, name):
        """The last measurement of ``name`` in ms; KeyError if none."""
        times = self._resolved(name)
        if not times:
            raise KeyError("no measurement named %r (measured: %s)"
                           % (name, ", ".join(map(repr, self._times)) or "none"))
        return times[-1]

    def get_stats(self, name):
        """``count``, ``mean``, ``std`` (sample standard deviation), ``min``,
        ``max``, ``total`` of ``name``'s measurements, in ms; KeyError if none."""
        self.get_elapsed(name)
        return stats_of(self._resolved(name))

    def get_all(self):
        """{name: [every measurement, ms]}, in the order they were first measured."""
        return {n: self._resolved(n) for n in list(self._times)}

    def reset(self):
        """Forget every measurement (blocks still open keep running)."""
        with self._lock:
            self._times.clear()

    # ---- the clock --------------------------------------------------------

    def _begin(self):
        if self._cuda is None:
            return None
        try:
            if self.synchronize:
                self._cuda.synchronize()
            start = self._cuda.Event(enable_timing=True)
            start.record()
            return start
        except Exception as e:
            _warn_once("cuda", "prism.profiler: CUDA events failed (%s); "
                       "measuring with the monotonic clock" % e)
            return None

    def _stop(self, start, ms):
        if start is None:
            return ms
        try:
            end = self._cuda.Event(enable_timing=True)
            end.record()
            if self.synchronize:
                self._cuda.synchronize()
                return start.elapsed_time(end)
            return (start, end, ms)
        except Exception as e:
            _warn_once("cuda", "prism.profiler: CUDA events failed (%s); "
                       "measuring with the monotonic clock" % e)
            return ms

    def _end(self, name, value):
        with self._lock:
            self._times.setdefault(name, []).append(value)

    def _resolved(self, name):
        with self._lock:
            times = self._times.get(str(name), [])
            for i, v in enumerate(times):
                if isinstance(v, tuple):
                    try:
                        v[1].synchronize()
                        times[i] = v[0].elapsed_time(v[1])
                    except Exception:
                        times[i] = v[2]
            return list(times)


class MetricsCollector:
    """Named values (``record``) and timed blocks (``measure_time``).

    A value is also the PRISM counter of its name; a timed block the PRISM
    region of its name (monotonic clock, ms).  A name may be both a metric
    and a timing: they are kept apart.
    """

    def __init__(self):
        self._metrics = {}       # name -> [float]
        self._timings = {}       # name -> [ms]
        self._self = {}          # name -> ms not inside another measure_time block
        self._lock = threading.Lock()
        self._tls = threading.local()

    def record(self, name, value):
        """Record ``value`` (a number, or anything float() takes: a one-element tensor)."""
        name = str(name)
        try:
            v = float(value)
        except Exception:
            _warn_once(("value", name), "prism.profiler: %r: %r is not a number; not recorded"
                       % (name, type(value).__name__))
            return
        with self._lock:
            self._metrics.setdefault(name, []).append(v)
        if math.isfinite(v):
            try:
                prism.counter(name, int(value) if isinstance(value, numbers.Integral)
                              and not isinstance(value, bool) and -2**63 <= value < 2**63
                              else v)
            except Exception as e:
                _warn_once(("counter", name), "prism.profiler: counter %r: %s" % (name, e))

    def measure_time(self, name):
        """A context manager timing its block as ``name`` (also a PRISM region)."""
        return _Block(self, str(name))

    # _Block's clock: monotonic; nesting per thread, for the self times
    def _begin(self):
        stack = getattr(self._tls, "stack", None)
        if stack is None:
            stack = self._tls.stack = []
        stack.append(0)          # the time of the blocks measured inside this one
        return None

    @staticmethod
    def _stop(_ev, ms):
        return ms

    def _end(self, name, ms):
        stack = self._tls.stack
        inner = stack.pop() if stack else 0
        if stack:
            stack[-1] += ms
        with self._lock:
            self._timings.setdefault(name, []).append(ms)
            self._self[name] = self._self.get(name, 0.0) + max(ms - inner, 0.0)

    # ---- results ---------------------------------------------------------

    def get_metrics(self):
        """{name: [values]} of record()."""
        with self._lock:
            return {k: list(v) for k, v in self._metrics.items()}

    def get_timings(self):
        """{name: [ms]} of measure_time()."""
        with self._lock:
            return {k: list(v) for k, v in self._timings.items()}

    def get_stats(self, name):
        """stats_of the timing ``name`` if there is one, else of the metric; KeyError if neither."""
        with self._lock:
            values = self._timings.get(name) or self._metrics.get(name)
            if not values:
                raise KeyError("nothing recorded as %r" % (name,))
            return stats_of(list(values))

    def reset(self):
        with self._lock:
            self._metrics.clear()
            self._timings.clear()
            self._self.clear()

    def generate_report(self):
        """Every metric and timing: count, mean, std, min, max (timings in ms)."""
        lines = ["Metrics report"]
        for title, data, unit in (("Timings (ms)", self.get_timings(), " ms"),
                                  ("Metrics", self.get_metrics(), "")):
            lines.append("")
            lines.append(title + ":" + ("" if data else " none"))
            if not data:
                continue
            width = max(len(n) for n in data)
            for name, values in data.items():
                s = stats_of(values)
                lines.append("  %-*s  count %d  mean %s%s  std %s  min %s  max %s"
                             % (width, name, s["count"], _num(s["mean"]), unit, _num(s["std"]),
                                _num(s["min"]), _num(s["max"])))
        return "\n".join(lines)

    def analyze_bottlenecks(self):
        """Where the measured time went, from the measure_time blocks.

        ``self_ms``: per name, its time outside the blocks measured inside
        it (an enclosing ``iteration`` keeps only what its inner blocks left
        over); ``total_ms``: inclusive; ``count``; ``shares``: self time /
        the sum of self times (the time of the outermost blocks), 0..1;
        ``bottleneck``: the name with the largest self time (for blocks not
        nested, the largest total), None without timings;
        ``bottleneck_share``: its share; ``total_time_ms``: the sum of self times.
        """
        with self._lock:
            timings = {k: list(v) for k, v in self._timings.items()}
            own = dict(self._self)
        whole = sum(own.values())
        shares = {n: (own[n] / whole if whole > 0 else 0.0) for n in own}
        worst = max(own, key=lambda n: own[n]) if own else None
        return {"bottleneck": worst,
                "bottleneck_share": shares[worst] if worst is not None else None,
                "shares": shares,
                "self_ms": own,
                "total_ms": {n: sum(v) for n, v in timings.items()},
                "count": {n: len(v) for n, v in timings.items()},
                "total_time_ms": whole}


def _num(x):
    return "%.4g" % x if x is not None else "-"


class StreamProfiler:
    """The wall time of a block and, with CUDA, the GPU time of each of the
    ``num_streams`` busiest streams in it.

    The block is the PRISM region ``StreamProfiler``.  Without CUDA only its
    wall time is measured (nothing of CUDA is called); print_stream_efficiency
    says so in one line.  With CUDA and PRISM's CUPTI recording kernels
    (``source == "cupti"``), a stream's time is the summed duration of the
    kernels that started on it during the block, from the kernel records the
    profile gets (prism_gpu_streams_begin/_end): every stream, however the
    work got there; keyed by CUPTI's stream id.  When CUPTI does not record
    here (GPU collection off, another CUPTI client such as torch.profiler
    holding it), ``source == "cuda_events"``: ``torch.cuda.StreamContext``
    (what torch.cuda.stream returns) is wrapped while the block runs, in every
    thread, so that entering a stream's context records a CUDA event on it
    and leaving records another; a stream's time is the sum of those spans
    (its queued work, and any wait inside it for other streams), keyed by the
    stream's handle; work put on a stream by other means is not seen.  The
    device is synchronised at the block's end.
    """

    def __init__(self, num_streams=4):
        self.num_streams = int(num_streams)
        self.wall_ms = None
        self.stream_ms = {}       # stream -> GPU ms (CUDA only)
        self.stream_kernels = {}  # stream -> kernels (source "cupti")
        self.unseen_streams = 0   # streams (cupti) or blocks (events) beyond num_streams
        self.source = None        # "cupti", "cuda_events", or None (no CUDA)
        self.cupti_lost = False   # CUPTI stopped recording during the block
        self._cuda = None
        self._region = prism.region("StreamProfiler")
        self._spans = {}          # handle -> [(start, end)]
        self._restore = None

    @property
    def device(self):
        return "cuda" if self._cuda is not None else "cpu"

    def __enter__(self):
        self._cuda = _torch_cuda()
        self.stream_ms, self._spans, self.unseen_streams = {}, {}, 0
        self.stream_kernels, self.source, self.cupti_lost = {}, None, False
        if self._cuda is not None:
            if prism._prism.gpu_streams_begin():
                self.source = "cupti"
            else:
                self.source = "cuda_events"
                self._wrap()
        self._region.__enter__()
        self._t0 = _now()
        return self

    def __exit__(self, *exc):
        if self._cuda is not None:
            try:
                self._cuda.synchronize()
            except Exception as e:
                _warn_once("streams", "prism.profiler: cannot synchronise: %s" % e)
        self.wall_ms = (_now() - self._t0) / 1e6
        self._region.__exit__(None, None, None)
        if self.source == "cupti":
            got = prism._prism.gpu_streams_end()
            self.cupti_lost = got is None
            for _dev, stream, kernels, busy_ns in got or ():
                if len(self.stream_ms) < self.num_streams:
                    self.stream_ms[stream] = busy_ns / 1e6
                    self.stream_kernels[stream] = kernels
                else:
                    self.unseen_streams += 1
        elif self._cuda is not None:
            self._unwrap()
            try:
                self.stream_ms = {h: sum(a.elapsed_time(b) for a, b in spans)
                                  for h, spans in self._spans.items()}
            except Exception as e:
                _warn_once("streams", "prism.profiler: stream times not read: %s" % e)
        return False

    def _wrap(self):
        try:
            ctx = self._cuda.StreamContext
            enter, leave = ctx.__enter__, ctx.__exit__
        except Exception:
            return
        me = self

        def wrapped_enter(c):
            r = enter(c)
            try:
                s = c.stream
                if s is not None:
                    h = s.cuda_stream
                    if h in me._spans or len(me._spans) < me.num_streams:
                        ev = me._cuda.Event(enable_timing=True)
                        ev.record(s)
                        me._spans.setdefault(h, [])
                        c._prism_start = (h, ev)
                    else:
                        me.unseen_streams += 1
            except Exception as e:
                _warn_once("streams", "prism.profiler: stream not measured: %s" % e)
            return r

        def wrapped_exit(c, *exc):
            try:
                started = c.__dict__.pop("_prism_start", None)
                if started is not None:
                    ev = me._cuda.Event(enable_timing=True)
                    ev.record(c.stream)
                    me._spans[started[0]].append((started[1], ev))
            except Exception as e:
                _warn_once("streams", "prism.profiler: stream not measured: %s" % e)
            return leave(c, *exc)

        ctx.__enter__, ctx.__exit__ = wrapped_enter, wrapped_exit
        self._restore = (ctx, enter, leave)

    def _unwrap(self):
        if self._restore is not None:
            ctx, enter, leave = self._restore
            ctx.__enter__, ctx.__exit__ = enter, leave
            self._restore = None

    def print_stream_efficiency(self, file=None):
        """Print what was measured: one line without CUDA; with CUDA the wall
        time, each stream's time, and their overlap (sum of stream time /
        wall time: 1.0 is serial, N is N streams busy all along)."""
        out = file if file is not None else sys.stdout
        if self.wall_ms is None:
            print("StreamProfiler: nothing measured yet (use it as `with profiler:`)", file=out)
        elif self._cuda is None:
            print("StreamProfiler: stream efficiency needs a CUDA GPU (none here); measured "
                  "instead: the block's wall time, %.3f ms (monotonic clock)" % self.wall_ms,
                  file=out)
        elif self.source == "cupti":
            busy = sum(self.stream_ms.values())
            print("StreamProfiler: wall %.3f ms, %d stream(s) ran kernels (the busiest %d "
                  "shown), from CUPTI's kernel records"
                  % (self.wall_ms, len(self.stream_ms) + self.unseen_streams,
                     self.num_streams), file=out)
            for s, ms in self.stream_ms.items():
                print("  stream %d: %.3f ms in %d kernel(s), %.0f %% of the wall time"
                      % (s, ms, self.stream_kernels.get(s, 0),
                         100.0 * ms / self.wall_ms if self.wall_ms else 0.0), file=out)
            if self.stream_ms:
                print("  overlap: %.2f (sum of stream time / wall time)"
                      % (busy / self.wall_ms if self.wall_ms else 0.0), file=out)
            elif self.cupti_lost:
                print("  CUPTI stopped recording during the block (another CUPTI client, or "
                      "the session ended): per-stream time not measured", file=out)
            else:
                print("  no kernel started during the block", file=out)
            if self.unseen_streams:
                print("  %d more stream(s) not shown" % self.unseen_streams, file=out)
        else:
            busy = sum(self.stream_ms.values())
            print("StreamProfiler: wall %.3f ms, %d stream(s) seen (of %d tracked), from CUDA "
                  "events (PRISM's CUPTI does not record kernels here)"
                  % (self.wall_ms, len(self.stream_ms), self.num_streams), file=out)
            for i, (h, ms) in enumerate(self.stream_ms.items()):
                print("  stream %d (0x%x): %.3f ms, %.0f %% of the wall time"
                      % (i, h, ms, 100.0 * ms / self.wall_ms if self.wall_ms else 0.0),
                      file=out)
            if self.stream_ms:
                print("  overlap: %.2f (sum of stream time / wall time)"
                      % (busy / self.wall_ms if self.wall_ms else 0.0), file=out)
            else:
                print("  no `with torch.cuda.stream(s):` block ran inside: "
                      "per-stream time not measured", file=out)
            if self.unseen_streams:
                print("  %d stream block(s) on streams beyond the first %d not measured"
                      % (self.unseen_streams, self.num_streams), file=out)
