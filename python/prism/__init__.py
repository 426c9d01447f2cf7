"""PRISM for Python: record a training loop, read and compare profiles.

Recording (libcollect, in C; every call is cheap, and does nothing while
no session runs)::

    import prism
    prism.init(output="train.cbor")          # or PRISM_OUTPUT=... in the environment
    for batch in loader:
        with prism.step():
            with prism.region("forward"):
                loss = model(batch)
            ...
    prism.shutdown()                          # also at exit

Reading (the analysis prism-top runs)::

    p = prism.load("train.cbor")
    p.summary, p.steps, p.top_operations(5), p.bottlenecks, p.memory_series
    prism.compare("before.cbor", "after.cbor")
    prism.export("train.cbor", "train.json", format="chrome-trace")

PyTorch: ``prism.torch.instrument(model, optimizer, dataloader)``; a whole
script: ``python -m prism -o out.cbor train.py``.
"""
from . import _prism
from ._prism import (Region, counter, epoch, gpu_memory, mark, output_path, recording,
                     region, step_index, system_read, thread_name)
from ._profile import Profile, ProfileError, compare, export, load

import atexit as _atexit
# the stack sampler's thread takes the GIL: stopped before the interpreter
# finalizes (the session itself is closed by libcollect's own exit handler)
_atexit.register(_prism._stacks_stop)

__version__ = _prism.VERSION

__all__ = [
    "init", "shutdown", "recording", "output_path",
    "region", "Region", "step", "step_begin", "step_end", "step_index", "epoch",
    "counter", "mark", "thread_name", "gpu_memory",
    "load", "compare", "export", "Profile", "ProfileError",
]

_STEP = _prism.STEP


def _region_of(name):
    """prism.region for a name PRISM makes from the program's own (module
    paths, class and function names): a NUL, which prism.region refuses, is
    written as \\0, so instrumentation never raises into the program."""
    return region(name.replace("\0", "\\0") if "\0" in name else name)


def init(output=None, **config):
    """Start the session; True when recording.

    Configuration: every prism_config field by its C name (enabled,
    collect_timing, collect_memory, collect_gpu_ops, sample_rate,
    adaptive_sampling, adaptive_steps, warmup_steps, active_steps,
    memory_interval_ms, cpu_interval_ms, flush_interval_ms, buffer_events,
    buffer_mb, policy ('drop' or 'wait'), output, output_dir,
    bottleneck_threshold_pct, memory_leak_threshold_mb), applied over the
    defaults and then the PRISM_* environment; and stack_hz, the Python
    stack sampler's rate (PRISM_STACK_HZ, default 100; 0 = off); op_steps,
    op_warmup, op_every, flop_steps: prism.torch's operator window and FLOP
    count (docs/PYTHON.md, "The operator window"; off by default).  An unknown name raises
    TypeError, a bad value ValueError.  One session per process: a second
    call while one runs (or after PRISM_OUTPUT / PRISM_ENABLED=1 started it
    as the module loaded) does nothing and returns True; a call after
    shutdown() returns False.
    """
    if output is not None:
        config["output"] = output
    for k in ("op_steps", "op_warmup", "op_every", "flop_steps"):
        if k in config:
            v = config.pop(k)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError("%s must be an int >= 0, not %r" % (k, v))
            _op_config[k] = v
    return _prism.init(config)


# the operator window's keywords (prism._torch_ops): op_steps, op_warmup,
# op_every, flop_steps
_op_config = {}


# called once before the session closes (prism.torch's last facts: the eval
# passes), by shutdown() or at exit
_on_shutdown = []


def _before_shutdown():
    while _on_shutdown:
        try:
            _on_shutdown.pop()()
        except Exception:
            pass


def shutdown():
    """Stop recording and write the profile's end (the footer); True when
    a session was recording.  A second call does nothing."""
    _before_shutdown()
    return _prism.shutdown()


# prism.torch's: called at the program's first step mark of its own, once
# (its automatic steps give way: both would cut each iteration in two)
_on_user_step = []
# a step of the program's own is open: prism.torch takes a forward under
# no_grad inside it for the step's, not for an eval pass
_user_open = [False]


def _user_step():
    while _on_user_step:
        try:
            _on_user_step.pop()()
        except Exception:
            pass


class _Step:
    """prism.step()'s context: the library's step, and what prism.torch
    needs to know of it."""
    __slots__ = ()

    def __enter__(self):
        if _on_user_step:
            _user_step()
        _user_open[0] = True
        return _STEP.__enter__()

    def __exit__(self, *exc):
        _user_open[0] = False
        return _STEP.__exit__(*exc)


_USER_STEP = _Step()


def step(index=None):
    """A training step as a context manager: ``with prism.step(): ...``.

    Steps must come from one thread (the training loop's).  The library
    numbers steps itself (prism.step_index()); `index` is accepted for
    loops that carry their own counter and is not recorded.  The program's
    own steps are the steps: prism.torch's automatic ones stop at the first.
    """
    return _USER_STEP


def step_begin():
    """Begin a training step (its end: step_end()); see step()."""
    if _on_user_step:
        _user_step()
    _user_open[0] = True
    return _prism.step_begin()


def step_end():
    """End the training step begun by step_begin()."""
    if _on_user_step:
        _user_step()
    _user_open[0] = False
    return _prism.step_end()
