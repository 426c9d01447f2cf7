"""prism._torch_ops - the operator window: what runs inside the modules, for
a few steps.

With op_steps=N (prism.init(op_steps=N), `python -m prism --op-steps N`,
PRISM_OP_STEPS=N; off by default) the training steps op_warmup ..
op_warmup + N - 1 (PRISM_OP_WARMUP, default 10), and again every op_every
steps when that is set (PRISM_OP_EVERY, default 0: once), record every
PyTorch operator the training thread dispatches as a region of its own,
named with its input shapes and dtype:

    aten::mm [512x4096, 4096x128] f32

The operators are caught live by a TorchDispatchMode that is on only during
the window's steps: each operator's region opens and closes around the
operator's own call, on the thread that runs it, so it lies inside the
module regions (forward, backward) it ran in, exactly, with no clock to
align, and CUDA kernels it launches are credited to it by PRISM's own GPU
records.  Operators with a FLOP formula (torch.utils.flop_counter's table on
torch >= 2.1; matrix products and convolutions on older torch) add their
FLOPs to the work counter "flops" inside their region, so every module
above them has its FLOPs (inclusive) in the profile.

Outside the window nothing is installed.  Inside it each operator costs a
Python call (several us), so the window's steps are slower: the profile
says which steps they were (INFO torch.ops.*, docs/FORMAT.md), and readers
leave them out of the step-time figures.  Never changes the program: the
operator is called with the same arguments and its result returned as is;
a failure of PRISM's own (a shape it cannot format, a FLOP formula that
raises) records less and says so once.  The window stays off (and says so)
in a program that uses torch.compile, whose graphs would see the mode.
"""

import os
import sys
import threading

import torch as _torch

import prism

try:
    from torch.utils._python_dispatch import TorchDispatchMode as _Mode
except ImportError:                         # pragma: no cover (torch < 1.13)
    _Mode = None

try:
    from torch.utils.flop_counter import flop_registry as _flop_registry
except ImportError:                         # torch < 2.1: the products only
    _flop_registry = None

NAMES_MAX = 4096            # distinct operator regions with shapes; then names only
SHAPES_MAX = 4              # tensors named in a region's name


class _Ops:
    steps = 0                   # N: steps a window; 0: off
    warmup = 10                 # steps before the first window
    every = 0                   # a window every this many steps; 0: one
    seen = 0                    # training steps begun
    mode = None                 # the active mode, or None
    thread = None               # the thread that pushed it
    windows = []                # [first, last] step indexes of each window
    said = set()
    regions = {}                # (op, shapes, dtype) -> Region
    names_full = False
    configured = False
    flops_only = False          # flop_steps: FLOPs counted, no operator regions
    shapes = True               # op_shapes: shapes in the names
    count_flops = True          # op_flops: FLOPs counted
    dtype_flops = {}            # ... and by the dtype of their first tensor


def _env_int(name, default):
    v = os.environ.get(name, "")
    if not v:
        return default
    try:
        n = int(v)
        if n < 0:
            raise ValueError
        return n
    except ValueError:
        _say("bad " + name, "%s=%s is not an integer >= 0; %d" % (name, v, default))
        return default


def _check(name, v):
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ValueError("%s must be an int >= 0, not %r" % (name, v))
    return v


def configure(op_steps=None, op_warmup=None, op_every=None, flop_steps=None, op_shapes=True,
              op_flops=True):
    """The window from the keywords, else PRISM_OP_STEPS / PRISM_OP_WARMUP /
    PRISM_OP_EVERY / PRISM_FLOP_STEPS, else off.  A bad keyword raises
    ValueError; a bad variable warns once and keeps the default.  flop_steps
    (without op_steps): the same window counting FLOPs only, no operator
    regions.  op_shapes / op_flops (ProfilerConfig's record_shapes /
    with_flops): False names operators without their shapes / counts no
    FLOPs."""
    _Ops.shapes, _Ops.count_flops = bool(op_shapes), bool(op_flops)
    _Ops.steps = (_check("op_steps", op_steps) if op_steps is not None
                  else _env_int("PRISM_OP_STEPS", 0))
    flops = (_check("flop_steps", flop_steps) if flop_steps is not None
             else _env_int("PRISM_FLOP_STEPS", 0))
    _Ops.flops_only = not _Ops.steps and flops > 0
    if _Ops.flops_only:
        _Ops.steps = flops
    _Ops.warmup = (_check("op_warmup", op_warmup) if op_warmup is not None
                   else _env_int("PRISM_OP_WARMUP", 10))
    _Ops.every = (_check("op_every", op_every) if op_every is not None
                  else _env_int("PRISM_OP_EVERY", 0))
    if _Ops.steps and _Ops.every and _Ops.every < _Ops.steps:
        _say("op_every", "op_every %d is shorter than op_steps %d: one long window"
             % (_Ops.every, _Ops.steps))
        _Ops.every = 0
        _Ops.steps = 1 << 62


def _say(key, msg):
    if key in _Ops.said:
        return
    _Ops.said.add(key)
    try:
        sys.stderr.write("prism: %s\n" % msg)
    except Exception:
        pass


def _in_window(k):
    """Is training step k (0-based, counted by prism.torch) in a window?"""
    if not _Ops.steps or k < _Ops.warmup:
        return False
    d = k - _Ops.warmup
    return d % _Ops.every < _Ops.steps if _Ops.every else d < _Ops.steps


def on_step_begin():
    """A training step began on the training thread (prism.torch)."""
    if not _Ops.configured:
        _Ops.configured = True
        try:
            configure(**prism._op_config)
        except Exception as e:      # checked by prism.init already
            _say("config", "the operator window is off: %s" % e)
            _Ops.steps = 0
    if not _Ops.steps:
        return
    k = _Ops.seen
    _Ops.seen += 1
    if _in_window(k):
        _activate()
    else:
        _deactivate()
    if _Ops.mode is not None:           # (one that could not leave stays on)
        try:
            prism._prism._step_ops()
        except Exception:
            pass


def on_cancel():
    """The step just begun was for nothing (a loader's StopIteration)."""
    if _Ops.steps and _Ops.seen:
        _Ops.seen -= 1


def on_eval():
    """An eval pass begins on the training thread: not a training step."""
    if _Ops.mode is not None:
        _deactivate()


def on_compile():
    """torch.compile starts compiling: an open window ends for good (the
    next ones do not open: _compiled)."""
    if _Ops.mode is not None:
        _deactivate()
        _say("compile", "the operator window is off: the program uses torch.compile")
        _Ops.steps = 0


def _compiled():
    try:
        from prism import _torch_patch
        return bool(_torch_patch._compile_region)
    except Exception:
        return False


def _activate():
    if _Ops.mode is not None:
        _note_step()
        return
    if _Mode is None:
        _say("no mode", "the operator window is off: this torch has no TorchDispatchMode")
        return
    if _compiled():
        _say("compile", "the operator window is off: the program uses torch.compile")
        return
    try:
        m = _OpMode()
        m.__enter__()
    except Exception as e:
        _say("enter", "the operator window is off: %s: %s" % (type(e).__name__, e))
        _Ops.steps = 0
        return
    _Ops.mode = m
    _Ops.thread = threading.get_ident()
    _Ops.windows.append([prism.step_index(), prism.step_index()])
    _info()


def _note_step():
    if _Ops.windows:
        _Ops.windows[-1][1] = prism.step_index()
        _info()


def _top_is(m):
    """Is m the innermost dispatch mode of this thread (so that leaving it
    pops ours, not a mode the program entered inside the step)?"""
    try:
        from torch.utils._python_dispatch import _get_current_dispatch_mode
        return _get_current_dispatch_mode() is m
    except Exception:
        return True


def _deactivate():
    m = _Ops.mode
    if m is None or _Ops.thread != threading.get_ident():
        return
    if not _top_is(m):
        _say("not top", "the operator window stays on a step longer: the program "
             "entered a dispatch mode of its own inside it")
        return
    _Ops.mode = None
    try:
        m.__exit__(None, None, None)
    except Exception as e:
        _say("exit", "the operator window: leaving it failed: %s: %s" % (type(e).__name__, e))
        _Ops.steps = 0


def finish():
    """At the end (atexit, prism.shutdown): leave the window if this thread
    is in it."""
    _deactivate()


def _in_child():
    """A fork()ed child (a DataLoader worker forked in a window step, which
    inherits the mode on its one thread): no window there, ever."""
    m, _Ops.mode = _Ops.mode, None
    _Ops.steps = 0
    if m is not None and _top_is(m):
        try:
            m.__exit__(None, None, None)
        except Exception:
            pass


import atexit as _atexit             # noqa: E402
_atexit.register(finish)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_child)


def _info():
    info = getattr(prism._prism, "_info", None)
    if info is None:
        return
    try:
        info("torch.ops.windows", ", ".join("%d-%d" % (a, b) for a, b in _Ops.windows[-64:]))
        info("torch.ops.steps", sum(b - a + 1 for a, b in _Ops.windows))
        info("torch.ops.names", len(_Ops.regions))
        if _Ops.dtype_flops:                # flop_steps: the dtype holding most FLOPs
            dt = max(_Ops.dtype_flops, key=_Ops.dtype_flops.get)
            if dt is not None:
                info("torch.ops.dtype", _dtype_name(dt))
        if len(_Ops.windows) == 1 and _Ops.windows[0][0] == _Ops.windows[0][1]:
            _device_info(info)
    except Exception:
        pass


def _device_info(info):
    """The GPU the model runs on (for the MFU: analyze's table of peaks) and
    the peak the user gave (PRISM_PEAK_TFLOPS, TFLOP/s), once."""
    try:
        if _torch.cuda.is_available() and _torch.cuda.is_initialized():
            info("torch.device", _torch.cuda.get_device_name(_torch.cuda.current_device()))
    except Exception:
        pass
    peak = os.environ.get("PRISM_PEAK_TFLOPS", "")
    if peak:
        try:
            if not float(peak) > 0:
                raise ValueError
            info("torch.peak_tflops", peak)
        except ValueError:
            _say("peak", "PRISM_PEAK_TFLOPS=%s is not a number > 0; ignored" % peak)


# ---- the mode ---------------------------------------------------------------

_DTYPES = {}


def _dtype_name(dt):
    n = _DTYPES.get(dt)
    if n is None:
        s = str(dt).replace("torch.", "")
        n = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
             "int64": "i64", "int32": "i32", "bool": "bool", "uint8": "u8",
             "int8": "i8"}.get(s, s)
        _DTYPES[dt] = n
    return n


def _shapes(args):
    """The tensors' shapes (tuples), first among args and lists in them, and
    the first tensor's dtype."""
    out, dt = [], None
    for a in args:
        if isinstance(a, _torch.Tensor):
            out.append(tuple(a.shape))
            if dt is None:
                dt = a.dtype
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, _torch.Tensor):
                    out.append(tuple(b.shape))
                    if dt is None:
                        dt = b.dtype
        if len(out) > SHAPES_MAX:
            break
    return tuple(out), dt


def _op_name(func):
    try:
        return func._schema.name
    except Exception:
        return str(func)


def _region(func, args):
    shapes, dt = _shapes(args)
    if not _Ops.shapes:                 # (the dtype stays: the MFU's peak needs it)
        shapes = ()
    key = (func, shapes, dt)
    r = _Ops.regions.get(key)
    if r is not None:
        return r
    name = _op_name(func)
    if _Ops.names_full:
        r = _Ops.regions.get((func, None, None))
        if r is None:
            r = _Ops.regions[(func, None, None)] = prism.region(name)
        return r
    if len(_Ops.regions) >= NAMES_MAX:
        _Ops.names_full = True
        _say("names", "the operator window: over %d operator names with shapes; "
             "names only from now on" % NAMES_MAX)
        return _region(func, args)
    dims = ["x".join(str(d) for d in s) if s else "()" for s in shapes[:SHAPES_MAX]]
    if len(shapes) > SHAPES_MAX:
        dims.append("...")
    full = name
    if dims:
        full += " [" + ", ".join(dims) + "]"
    if dt is not None:
        full += " " + _dtype_name(dt)
    r = _Ops.regions[key] = prism.region(full)
    return r


def _flops_small(func, args, out):
    """torch < 2.1: matrix products and convolutions, 2 FLOPs a multiply-add."""
    n = _op_name(func)
    try:
        if n in ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm"):
            a, b = (args[1], args[2]) if n in ("aten::addmm", "aten::baddbmm") else args[:2]
            k = a.shape[-1]
            return 2 * out.numel() * k
        if n in ("aten::convolution", "aten::_convolution"):
            w = args[1]
            return 2 * out.numel() * (w.numel() // w.shape[0])
    except Exception:
        return 0
    return 0


def _flops(func, args, kwargs, out):
    if not _Ops.count_flops:
        return 0
    if _flop_registry is None:
        return _flops_small(func, args, out) if isinstance(out, _torch.Tensor) else 0
    f = _flop_registry.get(getattr(func, "_overloadpacket", None))
    if f is None:
        return 0
    return f(*args, **kwargs, out_val=out)


if _Mode is not None:
    class _OpMode(_Mode):
        """Every operator in a region of its own (and its FLOPs)."""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if _Ops.flops_only:         # flop_steps: into the regions open here
                out = func(*args, **kwargs)
                try:
                    n = _flops(func, args, kwargs, out)
                    if n:
                        prism.counter("flops", int(n))
                        dt = next((a.dtype for a in args if isinstance(a, _torch.Tensor)), None)
                        _Ops.dtype_flops[dt] = _Ops.dtype_flops.get(dt, 0) + n
                except Exception as e:
                    _say("flops", "the FLOP count: FLOPs of %s not counted: %s: %s"
                         % (_op_name(func), type(e).__name__, e))
                return out
            try:
                r = _region(func, args)
            except Exception as e:
                _say("region", "the operator window: an operator not recorded: %s: %s"
                     % (type(e).__name__, e))
                r = None
            if r is None:
                return func(*args, **kwargs)
            r.__enter__()
            try:
                out = func(*args, **kwargs)
                try:
                    n = _flops(func, args, kwargs, out)
                    if n:
                        prism.counter("flops", int(n))
                except Exception as e:
                    _say("flops", "the operator window: FLOPs of %s not counted: %s: %s"
                         % (_op_name(func), type(e).__name__, e))
                return out
            finally:
                r.__exit__(None, None, None)
