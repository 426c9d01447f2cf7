"""The reference profiler's Python API as a thin layer over ``prism``.

Code written against the reference (``from prism.profiling import
TrainingProfiler, ProfilerConfig, ProfileAnalyzer``) runs unchanged: its
configuration maps onto ``prism.init``, its regions are ``prism.region``, its
trainer callback drives PRISM's steps and epochs, and its analyzer reads the
profile with ``prism.load`` -- the same C analysis ``prism-top analyze`` runs.

Units.  The reference's trainer has two nested loops: *samples* (the outer
loop; ``on_sample_start(i)``) and *epochs* (one optimisation iteration each;
``on_epoch_start/on_epoch_end``; ``sample_rate`` picks epochs).  PRISM calls
these *epochs* and *steps*: a reference sample is a PRISM epoch
(``prism.epoch(i)``), a reference epoch is a PRISM step.  Everything the
reference counts "per sample" or "per epoch" is counted per PRISM epoch or step
here; the docstrings (ProfileAnalyzer.get_summary's too) say which.

README.md, "The reference's API", has the table of every ProfilerConfig field
and what PRISM does with it; ``FIELD_MAPPING`` below is the same table in code
(the tests check that the two agree).
"""
from __future__ import annotations

import atexit
import dataclasses
import errno
import json
import math
import numbers
import os
import secrets
import shutil
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import prism

from ._dataload import (DataLoadingProfile, DataLoadingProfiler, PreprocessingProfile,
                        PreprocessingProfiler)
from ._reference_analysis import Bottleneck, BottleneckType, ProfileAnalyzer

__all__ = [
    "ProfilerConfig",
    "TrainingProfiler",
    "ProfilerCallback",
    "ProfileAnalyzer",
    "Bottleneck",
    "BottleneckType",
    "FIELD_MAPPING",
    "DataLoadingProfiler",
    "DataLoadingProfile",
    "PreprocessingProfiler",
    "PreprocessingProfile",
]

# ---- configuration -----------------------------------------------------

# Field -> (where it goes, detail).  Kinds: "init" (a prism.init keyword, the
# detail names it), "instrument" (TrainingProfiler.instrument), "save" (done
# by TrainingProfiler.save), "session" (how the session is set up), "window"
# (the operator window's, when op_steps turns it on: prism._torch_ops, the
# detail names its setting), "none" (accepted, no effect: the detail says why).
FIELD_MAPPING: dict[str, tuple[str, str]] = {
    "enabled": ("init", "enabled"),
    "collect_timing": ("init", "collect_timing"),
    "collect_memory": ("init", "collect_memory"),
    "collect_gpu_ops": ("init", "collect_gpu_ops"),
    "sample_rate": ("init", "sample_rate"),
    "adaptive_sampling": ("init", "adaptive_sampling"),
    "use_cuda_events": ("none", "GPU times come from CUPTI activity records"),
    "cuda_sync_per_epoch": ("none", "PRISM never synchronises the GPU"),
    "warmup_samples": ("init", "warmup_steps"),
    "active_samples": ("init", "active_steps"),
    "record_shapes": ("window", "op_shapes"),
    "with_flops": ("window", "op_flops"),
    "with_modules": ("instrument", "module regions through prism.torch"),
    "output_dir": ("session", "where the unsaved profile is written"),
    "storage_format": ("save", "json: also the analysis as JSON"),
    "export_chrome_trace": ("save", "also a Chrome trace"),
    "bottleneck_threshold_pct": ("init", "bottleneck_threshold_pct"),
    "memory_leak_threshold_mb": ("init", "memory_leak_threshold_mb"),
}


def _bool(name: str, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, numbers.Integral) and int(v) in (0, 1):
        return bool(v)
    raise ValueError(f"ProfilerConfig.{name}: expected a bool, got {v!r}")


def _real(name: str, v: Any, lo: float, hi: float, lo_open: bool) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ValueError(f"ProfilerConfig.{name}: expected a number, got {v!r}")
    f = float(v)
    if not math.isfinite(f) or f > hi or f < lo or (lo_open and f == lo):
        side = "(" if lo_open else "["
        raise ValueError(f"ProfilerConfig.{name}: {v!r} is outside {side}{lo:g}, {hi:g}]")
    return f


def _count(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < 2**32:
        raise ValueError(f"ProfilerConfig.{name}: expected an integer 0..2^32-1, got {v!r}")
    return int(v)


@dataclass
class ProfilerConfig:
    """The reference's configuration; README.md's table maps every field.

    Names, types and defaults are the reference's except:

    * ``sample_rate`` defaults to 1.0 (reference 0.1): a PRISM region costs
      well under a microsecond, so every step can record its regions; the
      reference sampled because its timing cost more.  Unsampled steps still
      record their duration either way.
    * ``warmup_samples`` / ``active_samples`` default to 0 / 0, every step
      (reference 2 / 5, torch.profiler's schedule): they bound the CUPTI
      window, in steps, which PRISM keeps open for the whole run by default.

    Unknown fields raise TypeError (as any dataclass); bad values raise
    ValueError, here and when a TrainingProfiler starts.
    """

    enabled: bool = True
    collect_timing: bool = True
    collect_memory: bool = True
    collect_gpu_ops: bool = True
    sample_rate: float = 1.0
    adaptive_sampling: bool = True
    use_cuda_events: bool = True
    cuda_sync_per_epoch: bool = False
    warmup_samples: int = 0
    active_samples: int = 0
    record_shapes: bool = True
    with_flops: bool = True
    with_modules: bool = True
    output_dir: Path | None = None
    storage_format: Literal["binary", "json"] = "binary"
    export_chrome_trace: bool = True
    bottleneck_threshold_pct: float = 10.0
    memory_leak_threshold_mb: float = 10.0

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check and normalise every field; ValueError names the bad one."""
        for f in dataclasses.fields(self):
            if f.default is True or f.default is False:
                setattr(self, f.name, _bool(f.name, getattr(self, f.name)))
        self.sample_rate = _real("sample_rate", self.sample_rate, 0.0, 1.0, True)
        self.warmup_samples = _count("warmup_samples", self.warmup_samples)
        self.active_samples = _count("active_samples", self.active_samples)
        self.bottleneck_threshold_pct = _real("bottleneck_threshold_pct",
                                              self.bottleneck_threshold_pct, 0.0, 100.0, False)
        self.memory_leak_threshold_mb = _real("memory_leak_threshold_mb",
                                              self.memory_leak_threshold_mb, 0.0, 1e12, False)
        if self.output_dir is not None:
            if not isinstance(self.output_dir, (str, os.PathLike)) or str(self.output_dir) == "":
                raise ValueError(f"ProfilerConfig.output_dir: expected a path or None, "
                                 f"got {self.output_dir!r}")
            self.output_dir = Path(self.output_dir)
        if self.storage_format not in ("binary", "json"):
            raise ValueError(f"ProfilerConfig.storage_format: {self.storage_format!r} is not "
                             f"'binary' or 'json'")

    def init_kwargs(self) -> dict[str, Any]:
        """The prism.init keywords these fields give (FIELD_MAPPING "init")."""
        return {kw: getattr(self, field) for field, (kind, kw) in FIELD_MAPPING.items()
                if kind == "init"}


# ---- the trainer callback -------------------------------------------------


def _index(args: tuple, kwargs: dict, key: str) -> int | None:
    """An integer index from a hook's arguments: key=, or the first int."""
    v = kwargs.get(key)
    if v is None:
        v = next((a for a in args if isinstance(a, numbers.Integral)
                  and not isinstance(a, bool)), None)
    if isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0:
        return int(v)
    return None


class ProfilerCallback:
    """The hooks a trainer calls (``callbacks=[profiler.callback]``).

    The reference trainer's hooks, with its meaning of the words:

    * ``on_sample_start(sample_idx)`` -> ``prism.epoch(sample_idx)`` (a
      reference sample is a PRISM epoch); ``on_sample_end(sample_idx,
      stats=None)`` ends a step still open;
    * ``on_epoch_start(epoch)`` -> ``prism.step_begin()`` (a reference epoch
      is one iteration: a PRISM step); ``on_epoch_end(epoch, loss)`` records
      ``loss`` as a counter when it is a number, then ``prism.step_end()``;
    * ``on_training_end()`` ends a step still open.

    Generic trainers' hooks (Keras, Hugging Face, Lightning spellings; any
    arguments): ``on_step_begin/_start``, ``on_batch_begin/_start``,
    ``on_train_batch_begin/_start`` begin a step and their ``_end`` twins end
    it; ``on_epoch_begin``, ``on_train_epoch_begin/_start`` set the epoch (a
    pass over the data) from an int argument or ``epoch=``, else count;
    ``on_epoch_end`` ends a step only when ``on_epoch_start`` began it;
    ``on_train_begin/end``, ``on_fit_start/end`` end a step still open.
    Any other ``on_*`` attribute is a hook that does nothing.

    Steps must come from one thread (prism.step_begin's rule).  A step begun
    while one is open ends the open one first.  After
    ``TrainingProfiler.instrument(model, optimizer)`` the optimizer's steps
    are the PRISM steps and these hooks begin and end none.
    """

    def __init__(self, profiler: TrainingProfiler | None = None) -> None:
        self._profiler = profiler
        self._open: str | None = None    # which hook family began the open step
        self._epochs = 0                 # generic epochs seen without an index
        self.steps_by_optimizer = False  # TrainingProfiler.instrument makes the steps

    # -- the step itself
    def _begin(self, who: str) -> None:
        if self._open is not None and not self.steps_by_optimizer:
            prism.step_end()
        if not self.steps_by_optimizer:
            prism.step_begin()
        self._open = who

    def _end(self, who: str | None = None) -> None:
        if self._open is not None and (who is None or self._open == who):
            if not self.steps_by_optimizer:
                prism.step_end()
            self._open = None

    def _set_epoch(self, n: int | None) -> None:
        if n is None:
            n = self._epochs
        self._epochs = n + 1
        prism.epoch(n)

    # -- the reference trainer's hooks
    def on_sample_start(self, sample_idx: int | None = None, *args: Any, **kwargs: Any) -> None:
        self._end()
        self._set_epoch(_index((sample_idx,) + args, kwargs, "sample_idx"))

    def on_sample_end(self, *args: Any, **kwargs: Any) -> None:
        self._end()

    def on_epoch_start(self, *args: Any, **kwargs: Any) -> None:
        self._begin("epoch")

    def on_epoch_end(self, epoch: Any = None, loss: Any = None, *args: Any, **kwargs: Any) -> None:
        if self._open != "epoch":
            return                       # a generic trainer's end of a pass
        if isinstance(loss, numbers.Real) and not isinstance(loss, bool):
            prism.counter("loss", float(loss))
        self._end("epoch")

    def on_training_end(self, *args: Any, **kwargs: Any) -> None:
        self._end()

    # -- generic trainers' hooks
    def on_step_begin(self, *args: Any, **kwargs: Any) -> None:
        self._begin("step")

    def on_step_end(self, *args: Any, **kwargs: Any) -> None:
        self._end("step")

    def on_epoch_begin(self, *args: Any, **kwargs: Any) -> None:
        self._end()
        self._set_epoch(_index(args, kwargs, "epoch"))

    on_step_start = on_batch_begin = on_batch_start = on_step_begin
    on_train_batch_begin = on_train_batch_start = on_step_begin
    on_batch_end = on_train_batch_end = on_step_end
    on_train_epoch_begin = on_train_epoch_start = on_epoch_begin
    on_train_begin = on_train_end = on_fit_start = on_fit_end = on_training_end
    on_training_begin = on_training_start = on_training_end

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):
            return _no_op
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _no_op(*args: Any, **kwargs: Any) -> None:
    return None


# ---- the profiler ---------------------------------------------------------

_unsaved: set[str] = set()
_unsaved_lock = threading.Lock()


@atexit.register
def _tell_unsaved() -> None:
    with _unsaved_lock:
        for p in sorted(_unsaved):
            print(f"prism: a TrainingProfiler was never saved; its profile is {p}",
                  file=sys.stderr)


def _sibling(path: Path, suffix: str) -> Path:
    """PATH with its last suffix replaced: run.pt -> run.trace.json."""
    return path.with_name(path.stem + suffix) if path.suffix else path.with_name(path.name + suffix)


class TrainingProfiler:
    """The reference's profiler: starts a PRISM session, saves it to a path.

    With ``config.enabled`` it starts the session (``prism.init`` with the
    config's keywords) writing to a temporary file in ``config.output_dir``
    (default: the current directory) until ``save(path)`` moves it there.
    When a session already runs (``prism-run``, ``PRISM_OUTPUT``, an earlier
    ``prism.init``), the profiler joins it instead (that session's
    configuration applies, not this one's) and ``save`` copies that
    session's file (see ``save``).
    """

    def __init__(self, config: ProfilerConfig | None = None) -> None:
        self.config = config if config is not None else ProfilerConfig()
        if not isinstance(self.config, ProfilerConfig):
            raise TypeError(f"TrainingProfiler: config must be a ProfilerConfig, "
                            f"not {type(self.config).__name__}")
        self.config.validate()
        self._callback = ProfilerCallback(self)
        self._temp: str | None = None      # our unsaved file, while we own the session
        self._joined = False               # recording into a session started elsewhere
        self.saved_path: Path | None = None
        self.why_not: str | None = None    # why nothing is recorded, when it is not
        if not self.config.enabled:
            self.why_not = "profiling is disabled (ProfilerConfig.enabled=False)"
            return
        if prism.recording():
            for field, (kind, key) in FIELD_MAPPING.items():
                if kind == "window":
                    prism._op_config[key] = bool(getattr(self.config, field))
            self._joined = True
            return
        directory = Path(self.config.output_dir) if self.config.output_dir else Path.cwd()
        directory.mkdir(parents=True, exist_ok=True)
        # Not mkstemp: the collector creates the file itself, with the usual mode.
        name = f".prism-{os.getpid()}-{secrets.token_hex(4)}.cbor.part"
        temp = os.path.abspath(directory / name)
        for field, (kind, key) in FIELD_MAPPING.items():
            if kind == "window":            # the window stays off unless op_steps is set
                prism._op_config[key] = bool(getattr(self.config, field))
        started = prism.init(output=temp.replace("%", "%%"), **self.config.init_kwargs())
        if started and prism.output_path() == temp:
            self._temp = temp
            with _unsaved_lock:
                _unsaved.add(temp)
            return
        if os.path.exists(temp):
            os.unlink(temp)
        if started and prism.recording():
            self._joined = True
            return
        self.why_not = ("the PRISM session did not start: one session per process, so a "
                        "process whose session ended (an earlier save()) records no other; "
                        "or see the collector's warning above")
        warnings.warn(f"TrainingProfiler: nothing will be recorded: {self.why_not}",
                      RuntimeWarning, stacklevel=2)

    # -- recording
    @property
    def callback(self) -> ProfilerCallback:
        """The trainer hooks (``callbacks=[profiler.callback]``): one object per profiler."""
        return self._callback

    def profile_region(self, name: str) -> Any:
        """``with profiler.profile_region("forward"):`` or ``@profiler.profile_region("f")``.

        This is ``prism.region(name)``: it records whenever a session runs
        (this profiler's or one started elsewhere), in every step, on every
        thread.
        """
        return prism.region(name)

    def start_sample(self, sample_idx: int) -> None:
        """The reference's outer-loop hook: ``prism.epoch(sample_idx)``."""
        self._callback.on_sample_start(sample_idx)

    def end_sample(self, sample_idx: int | None = None) -> None:
        """End of an outer-loop sample: ends a step still open."""
        self._callback.on_sample_end(sample_idx)

    def start_epoch(self, epoch: int | None = None) -> None:
        """The reference's iteration begins: ``prism.step_begin()``."""
        self._callback.on_epoch_start(epoch)

    def end_epoch(self, epoch: int | None = None, loss: float | None = None) -> None:
        """The iteration ends: ``loss`` as a counter, then ``prism.step_end()``."""
        self._callback.on_epoch_end(epoch, loss)

    def instrument(self, model: Any, optimizer: Any = None, dataloader: Any = None,
                   **kwargs: Any) -> Any:
        """``prism.torch.instrument`` for this model, optimizer and DataLoader.

        With ``config.with_modules`` every module's forward (and backward)
        becomes a region; without it the model is left alone and only the
        backward call, the optimizer step, the wait for each batch and the
        sync calls are recorded.  Keyword arguments go to
        prism.torch.instrument.  With an optimizer (and ``steps`` not False)
        each optimizer step is a PRISM step, and the callback's step hooks
        then leave the steps to it (they still set epochs and record the
        loss).  Returns prism.torch's Handle.
        """
        import prism.torch as pt
        handle = pt.instrument(model if self.config.with_modules else None,
                               optimizer=optimizer, dataloader=dataloader, **kwargs)
        if optimizer is not None and kwargs.get("steps", True):
            self._callback.steps_by_optimizer = True
        return handle

    # -- saving
    @property
    def recording(self) -> bool:
        """True while this profiler's session (or the one it joined) records."""
        return (self._temp is not None or self._joined) and prism.recording()

    def save(self, path: str | os.PathLike) -> Path | None:
        """End the session and put its profile at ``path`` (any name: ``run.pt`` works).

        The session is shut down (every event flushed, the footer written),
        then the file is moved to ``path`` (os.replace; a copy when ``path``
        is on another file system).  With ``export_chrome_trace`` the Chrome
        trace goes to ``path`` with its suffix replaced by ``.trace.json``;
        with ``storage_format="json"`` the analysis (prism.analyze/1) to
        ``.analyze.json``.  Returns the path.

        A profiler that joined a session started elsewhere shuts it down and
        copies its file to ``path`` (the original stays where it was).
        Disabled, or the session did not start: nothing is written, a
        RuntimeWarning says why, and None is returned.  A second save raises
        RuntimeError: the session ended at the first.
        """
        dest = Path(path)
        if self.saved_path is not None:
            raise RuntimeError(f"TrainingProfiler.save({str(dest)!r}): the profile was "
                               f"already saved to {str(self.saved_path)!r}; its session "
                               f"ended there")
        if self._temp is None and not self._joined:
            warnings.warn(f"TrainingProfiler.save({str(dest)!r}): nothing saved: "
                          f"{self.why_not}", RuntimeWarning, stacklevel=2)
            return None
        dest.parent.mkdir(parents=True, exist_ok=True)
        self._callback.on_training_end()
        source = self._temp if self._temp is not None else prism.output_path()
        prism.shutdown()
        if source is None:
            raise RuntimeError(f"TrainingProfiler.save({str(dest)!r}): the session it "
                               f"joined has no output file")
        if self._temp is not None:
            _move(source, dest)
            with _unsaved_lock:
                _unsaved.discard(self._temp)
            self._temp = None
        else:
            shutil.copyfile(source, dest)
        self.saved_path = dest
        if self.config.export_chrome_trace:
            prism.export(str(dest), str(_sibling(dest, ".trace.json")), format="chrome-trace")
        if self.config.storage_format == "json":
            doc = prism.load(str(dest)).json
            out = _sibling(dest, ".analyze.json")
            with open(out, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=1)
                f.write("\n")
        return dest

    @classmethod
    def load(cls, path: str | os.PathLike) -> Any:
        """The saved profile as a ``prism.Profile`` (the reference returned its ProfileData)."""
        return prism.load(os.fspath(path))


def _move(source: str, dest: Path) -> None:
    try:
        os.replace(source, dest)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.part")
        shutil.copyfile(source, tmp)
        os.replace(tmp, dest)
        os.unlink(source)


# The reference's `from prism.profiling.visualization import ProfilePlotter`:
# prism.plot under that name too (matplotlib is imported only when a figure
# is drawn).
from . import plot as visualization  # noqa: E402
sys.modules[__name__ + ".visualization"] = visualization
