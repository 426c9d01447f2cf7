"""Reading profiles: prism.load, prism.compare, prism.export.

Every figure comes from the C analysis prism-top runs, through prism-top's
own JSON writers: ``prism.load(p).json`` is the dict that
``prism-top analyze p --format json`` prints (docs/JSON.md, prism.analyze/1),
``prism.compare(a, b)`` the one ``prism-top compare a b --format json``
prints (prism.compare/1), ``Profile.tree`` the one of
``prism-top export p --format json`` (prism.tree/1).
"""
import json as _json
import os as _os

from . import _prism

_NP = []


def _numpy():
    """numpy where it imports, else None: imported on first use, never by
    ``import prism`` (numpy starts BLAS threads, and prism.init must find
    the program with one thread to route NVTX; it also costs ~40 ms)."""
    if not _NP:
        try:
            import numpy
            _NP.append(numpy)
        except ImportError:  # pragma: no cover - depends on the interpreter
            _NP.append(None)
    return _NP[0]

__all__ = ["Profile", "ProfileError", "load", "compare", "export"]


class ProfileError(ValueError):
    """A file that cannot be read as a profile.

    ``path``, ``reason`` (the words prism-top prints) and ``offset`` (the
    byte where reading stopped); str(e) is "PATH: REASON at byte OFFSET", or
    "PATH: REASON" when the file could not be read at all (missing, not
    readable, a directory), as prism-top prints it.
    """

    def __init__(self, path, reason, offset):
        self.path = path
        self.reason = reason
        self.offset = offset
        super().__init__(self._text())

    def _text(self):
        unreadable = self.offset == 0 and not (
            _os.path.isfile(self.path) and _os.access(self.path, _os.R_OK))
        if unreadable:
            return "%s: %s" % (self.path, self.reason)
        return "%s: %s at byte %d" % (self.path, self.reason, self.offset)

    def __str__(self):
        return self._text()

    def __reduce__(self):
        return (ProfileError, (self.path, self.reason, self.offset))


def _int64(raw):
    _np = _numpy()
    if _np is not None:
        return _np.frombuffer(raw, dtype=_np.int64).copy()
    import array
    a = array.array("q")
    a.frombytes(raw)
    return a.tolist()


def _fspath(path):
    return _os.fsdecode(_os.fspath(path))


class Profile:
    """One profile, analysed.  Made by prism.load(path).

    Attributes (dicts and lists as in docs/JSON.md, prism.analyze/1):
    path, complete, json (the whole report), header, reader, summary, steps,
    memory, system, work, ops, gpu, bottlenecks (each also with ``region``, the
    blamed region's name or None, and ``fix``, its recommendation),
    step_durations_ns, memory_series, tree (prism.tree/1), sampled and stacks
    (the Python stack samples), unattributed (its
    `(outside regions)` node), leak, threads (each recorded thread, a
    DataLoader worker process's marked) and worker_files (the worker files
    the reader merged or left).
    """

    def __init__(self, handle):
        self._h = handle
        self.path = handle.path
        self.complete = handle.complete
        self.json = _json.loads(handle.analyze_json())
        self._tree = None
        self._memory_series = None
        self._bottlenecks = None

    def __repr__(self):
        s = self.summary
        return "<prism.Profile %r: %d steps, %d events%s>" % (
            self.path, self.steps.get("count", 0), s.get("events", 0),
            "" if self.complete else ", incomplete")

    def _section(self, key):
        return self.json.get(key)

    header = property(lambda self: self._section("header"), doc="the file's header")
    reader = property(lambda self: self._section("reader"), doc="what the reader saw")
    summary = property(lambda self: self._section("summary"), doc="the summary")
    steps = property(lambda self: self._section("steps"), doc="step statistics and series")
    memory = property(lambda self: self._section("memory"), doc="peaks and leak fits")
    system = property(lambda self: self._section("system"),
                      doc="disk and network bytes, process CPU, memory share, energy "
                          "(format 1.3 system readings; readings 0 and None without them)")
    workers = property(lambda self: self._section("workers"),
                       doc="the DataLoader's worker processes (their files merged): batches, "
                           "per sample, collate, the heaviest transform, busy share, the "
                           "loader's settings (workers 0 and None without them)")
    work = property(lambda self: self._section("work"), doc="work counters (FLOP, bytes)")
    ops = property(lambda self: self._section("ops"), doc="operations by total time")
    gpu = property(lambda self: self._section("gpu"), doc="GPU activity")

    @property
    def bottlenecks(self):
        """The findings, worst first: the JSON's fields plus ``region``
        (the last name of ``path``, or None) and ``fix`` (=
        ``recommendation``)."""
        if self._bottlenecks is None:
            out = []
            for b in self.json.get("bottlenecks") or []:
                d = dict(b)
                path = d.get("path")
                d["region"] = path.split("/")[-1] if path else None
                d["fix"] = d.get("recommendation")
                out.append(d)
            self._bottlenecks = out
        return self._bottlenecks

    def top_operations(self, n=10):
        """The first n operations by total time (``ops``)."""
        return list((self.ops or [])[:n])

    @property
    def step_durations_ns(self):
        """Every step's duration (ns), in start order: an int64 array (numpy)
        or a list."""
        d = [s["duration_ns"] for s in (self.steps or {}).get("series", [])]
        _np = _numpy()
        return _np.array(d, dtype=_np.int64) if _np is not None else d

    @property
    def memory_series(self):
        """The memory samples in time order: a dict of int64 arrays (numpy)
        or lists: t_ns (since the profile's start), rss_bytes,
        gpu_used_bytes and gpu_reserved_bytes (all devices; 0 in a sample
        without GPU figures), step (the step that just ended; -1 for a
        periodic sample)."""
        if self._memory_series is None:
            cols = self._h.memory()
            keys = ("t_ns", "rss_bytes", "gpu_used_bytes", "gpu_reserved_bytes", "step")
            self._memory_series = {k: _int64(c) for k, c in zip(keys, cols)}
        return self._memory_series

    @property
    def tree(self):
        """The call trees (prism.tree/1, as ``prism-top export --format json``)."""
        if self._tree is None:
            self._tree = _json.loads(self._h.tree_json())
        return self._tree

    @property
    def unattributed(self):
        """The `(outside regions)` root of the all-threads tree (a node of
        ``tree``, with ``"unattributed": True``): the training thread's step
        time that no root region holds, with its CPU split; None without
        steps or when regions hold all of it."""
        for n in self.tree.get("roots") or []:
            if n.get("unattributed"):
                return n
        return None

    @property
    def sampled(self):
        """What the Python stack samples saw in each node's own time: a list
        of {"path": "a/b", "frames": [{"name", "parent" (index or None),
        "ns" (an estimate), "samples", "blocked" (0..1)}, ...]} (analyze
        JSON ``sampled``); empty without stack samples."""
        return list(self.json.get("sampled") or [])

    @property
    def stacks(self):
        """The stack sampler's figures: {"samples", "period_ns", "weight_ns",
        "sampler"} (analyze JSON ``summary.stacks``), or None."""
        return (self.json.get("summary") or {}).get("stacks")

    @property
    def cpu_load(self):
        """Who used the CPUs over the run, in cores: {"ncpu", "machine",
        "process", "training_thread", "other_threads", "unrecorded_threads",
        "worker_processes", "other_processes", "span_ns"} (analyze JSON
        ``summary.cpu_load``; a figure the file does not record is None), or
        None."""
        return (self.json.get("summary") or {}).get("cpu_load")

    @property
    def threads(self):
        """The recorded threads, in the analysis's order: a list of dicts
        {"stream", "name", "worker" (True for a thread of a worker process,
        merged from ``<profile>.workers``: "worker N: <its name>"),
        "worker_id" (the worker's index) and "pid" (its process id), both
        None for the profile's own threads}.  ``stream`` is the one of the
        thread's tree in ``tree["threads"]``."""
        out = []
        for stream, name, wid, pid in self._h.threads():
            out.append({"stream": stream, "name": name, "worker": wid is not None,
                        "worker_id": wid, "pid": pid})
        return out

    @property
    def worker_files(self):
        """The files of ``<profile>.workers`` the reader saw: {"merged" (of
        this profile's session), "damaged" (of those, merged as far as they
        go: damaged or torn), "other" (another session's: left out),
        "records" (what the merged ones delivered)}."""
        merged, damaged, other, records = self._h.worker_files()
        return {"merged": merged, "damaged": damaged, "other": other, "records": records}

    @property
    def leak(self):
        """The leak fits of memory over steps: {'host': ..., 'gpu': ...}
        (memory.host_leak and memory.gpu_leak; gpu is None without GPU
        figures)."""
        m = self.memory or {}
        return {"host": m.get("host_leak"), "gpu": m.get("gpu_leak")}

    def save_html(self, path):
        """Write the report as one self-contained HTML page (what
        ``prism-top analyze --format html`` writes): written whole to a
        temporary name beside path, then renamed."""
        page = self._h.analyze_html()
        path = _fspath(path)
        tmp = "%s.tmp-%d" % (path, _os.getpid())
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(page)
            _os.replace(tmp, path)
        except BaseException:
            try:
                _os.unlink(tmp)
            except OSError:
                pass
            raise
        return path

    def export(self, out, format="chrome-trace"):
        """Write this profile as prism-top export does (see prism.export)."""
        export(self, out, format)


def load(path, threshold_pct=None, leak_threshold_mb=None, ridge=None,
         carbon_intensity_g_per_kwh=None):
    """Read and analyse a profile; a Profile.  A file that cannot be read
    raises ProfileError.  threshold_pct, leak_threshold_mb, ridge and
    carbon_intensity_g_per_kwh are prism-top analyze's --threshold,
    --leak-threshold, --ridge and --carbon-intensity (None: the file's
    configuration, or the defaults; no carbon figure without an intensity)."""
    handle, reason, offset = _prism.analyze(path, threshold_pct, leak_threshold_mb, ridge,
                                            carbon_intensity_g_per_kwh)
    if handle is None:
        raise ProfileError(_fspath(path), reason, offset)
    return Profile(handle)


def _as_profile(p):
    return p if isinstance(p, Profile) else load(p)


def compare(a, b):
    """B against the baseline A (paths or Profiles): the dict
    ``prism-top compare A B --format json`` prints (prism.compare/1)."""
    pa = _as_profile(a)
    pb = _as_profile(b)
    return _json.loads(_prism.compare_json(pa._h, pb._h))


_FORMATS = ("chrome-trace", "chrome", "csv", "folded", "json")


def export(path, out, format="chrome-trace"):
    """Write what ``prism-top export PATH --format FORMAT -o OUT`` writes:
    chrome-trace (Perfetto / chrome://tracing), csv, folded (flame graph
    stacks) or json (prism.tree/1).  OUT appears only when complete.  path
    may be a Profile (already analysed)."""
    if format not in _FORMATS:
        raise ValueError("prism.export: unknown format %r (chrome-trace, csv, folded, json)"
                         % (format,))
    if format in ("chrome-trace", "chrome"):
        src = path.path if isinstance(path, Profile) else path
        ok, reason, offset = _prism.export_chrome(src, out)
        if not ok:
            raise ProfileError(_fspath(src), reason, offset)
        return
    _as_profile(path)._h.export(format, out)
