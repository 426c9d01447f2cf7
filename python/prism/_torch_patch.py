"""prism._torch_patch - prism.torch's wrappers and patches: the optimizer's
step (per instance, and Optimizer.__init__ for auto()), the DataLoader waits
(per loader, and the iterators' __next__ for auto()), and the
reference-counted global patches of backward and the sync calls."""

import functools
import os
import sys
import threading
import types
import warnings

import torch as _torch

import prism
from prism import _torch_ops, _torch_workers
from prism._torch_core import (_R_DATA, _R_EVAL, _R_OPT, _Adapt, _EvalPair, _Steps, _begin,
                               _cancel,
                               _close_comp, _degrade, _end, _end_tail, _get_ident, _getframe, _idle,
                               _inference, _is_compiling, _like, _not_inference, _tls,
                               _wrap_backward)

_TORCH_DIR = os.path.dirname(os.path.abspath(_torch.__file__)) + os.sep


# ---- optimizer ---------------------------------------------------------------

def _wrap_optimizer(opt):
    """Wrap the instance's step (a bound method, as LR schedulers expect);
    returns an undo function, or None when it is wrapped already."""
    if _Steps.infer_ok:
        _not_inference()                # a training program: no inference steps
    cur = getattr(opt, "step", None)
    if cur is None or getattr(cur, "_prism", False):
        return None
    own = "step" in opt.__dict__
    state = {"on": True}

    def step(self, *args, **kwargs):
        if not state["on"]:
            return cur(*args, **kwargs)
        tls = _tls
        if not state.get("stepped"):
            state["stepped"] = True
            _optimizer_stepped()
        if _idle():
            _begin()
        _R_OPT.__enter__()
        try:
            return cur(*args, **kwargs)
        finally:
            _R_OPT.__exit__(None, None, None)
            _end(tls)
    # what the step carried stays on it: an LR scheduler's marks (torch 1.x
    # _with_counter, 2.x _wrapped_by_lr_sched: without them it warns that
    # optimizer.step() "has been overridden", and its own warning about the
    # order of the calls is lost), __wrapped__, the name and the doc
    try:
        marks = dict(vars(getattr(cur, "__func__", cur)))
    except TypeError:
        marks = {}
    for k in ("__name__", "__qualname__", "__module__", "__doc__"):
        v = getattr(cur, k, None)
        if isinstance(v, str):
            marks[k] = v
    for k, v in marks.items():
        if k != "_prism":
            try:
                setattr(step, k, v)
            except (AttributeError, TypeError):
                pass
    step._prism = True
    opt.step = types.MethodType(step, opt)

    def undo():
        state["on"] = False
        d = opt.__dict__
        if getattr(d.get("step"), "__func__", None) is step:
            if own:
                d["step"] = cur
            else:
                del d["step"]
    return undo


_stepped = [0]


def _optimizer_stepped():
    """An optimizer's first step: INFO torch.optimizers, how many have
    stepped (each step() ends a PRISM step: two optimizers make two steps
    an iteration, and the Summary says so)."""
    _stepped[0] += 1
    info = getattr(prism._prism, "_info", None)
    if info is not None and _stepped[0] > 1:
        try:
            info("torch.optimizers", _stepped[0])
        except Exception:
            pass


def _optimizer_init(orig):
    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        try:
            _wrap_optimizer(self)
        except Exception:
            pass
    __init__.__wrapped__ = orig
    __init__._prism = True
    return __init__


# ---- data loading ------------------------------------------------------------

class _WaitIter:
    """Wraps a DataLoader iterator: each next() is a data_loading region."""
    __slots__ = ("_it",)

    def __init__(self, it):
        self._it = it

    def __iter__(self):
        return self

    def __next__(self):
        return _fetch(next, self._it)

    def __len__(self):
        return len(self._it)

    def __getattr__(self, name):
        return getattr(self._it, name)


_dl_classes = {}


def _dl_subclass(cls):
    sub = _dl_classes.get(cls)
    if sub is None:
        def __iter__(self):
            return _WaitIter(cls.__iter__(self))
        sub = type(cls.__name__, (cls,), {"__iter__": __iter__, "_prism_base": cls,
                                          "__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__})
        _dl_classes[cls] = sub
    return sub


def _wrap_loader(dl):
    cls = type(dl)
    if "_prism_base" in cls.__dict__:
        return None
    dl.__class__ = _dl_subclass(cls)

    def undo():
        if type(dl) is _dl_classes.get(cls):
            dl.__class__ = cls
    return undo


_EVAL_DATA = _EvalPair(_R_EVAL, _R_DATA)


def _fetch(fn, it):
    """One DataLoader wait: a training iteration's first act (it begins the
    step and ends the previous one's tail), or under no_grad between
    iterations an eval pass's (eval > data_loading, no step).  A step begun for the StopIteration that
    ends an epoch is forgotten."""
    infer = (_Steps.infer_ok and not _torch.is_grad_enabled() and
             _inference("fetch"))
    if infer and infer[0]:
        region, began = _R_DATA, infer[1]   # an inference loop's batch
    elif not _torch.is_grad_enabled() and _idle():
        _end_tail()
        _Steps.eval_other = True        # an eval pass's data: no companions
        _Steps.in_eval = True
        region, began = _EVAL_DATA, False
    else:
        region, began = _R_DATA, _idle() and _begin()
    region.__enter__()
    try:
        batch = fn(it)
        if "_prism_t0" in getattr(it, "__dict__", ()):
            _torch_workers.first_batch(it)
        return batch
    except StopIteration:
        if began:
            region.__exit__(None, None, None)
            region = None
            _cancel()
        raise
    finally:
        if region is not None:
            region.__exit__(None, None, None)


def _loader_next(orig):
    def __next__(self):
        return _fetch(orig, self)
    __next__.__wrapped__ = orig
    __next__._prism = True
    return __next__


# ---- sync calls --------------------------------------------------------------

_SKIP = object()


def _wrap_sync(orig, label):
    """A sync call as a region named '<label> at <file>:<line>' of its caller;
    calls from inside torch itself are not recorded.  With no step open it
    begins one where grad is on; under no_grad it begins none (an eval
    pass's metric, `.item()` of its accuracy, began a step, and the rest of
    the pass was taken for training), and after an eval pass's forward or
    batch it is that pass's work, inside eval."""
    cache = {}
    in_eval = {}

    def call(*args, **kwargs):
        f = _getframe(1)
        key = (f.f_code, f.f_lineno)
        r = cache.get(key)
        if r is None:
            fn = f.f_code.co_filename
            if fn.startswith(_TORCH_DIR):
                r = _SKIP
            else:
                r = prism._region_of("%s at %s:%d" % (label, os.path.basename(fn), f.f_lineno))
            cache[key] = r
        if r is _SKIP:
            return orig(*args, **kwargs)
        if not _Steps.open and not prism._user_open[0]:
            if _torch.is_grad_enabled():
                _begin()
            elif _Steps.in_eval and _Steps.thread == _get_ident():
                e = in_eval.get(key)
                if e is None:
                    e = in_eval[key] = _EvalPair(_R_EVAL, r)
                r = e
        r.__enter__()
        try:
            return orig(*args, **kwargs)
        finally:
            r.__exit__(None, None, None)
    return _like(call, orig, label)


# ---- torch.compile -----------------------------------------------------------
# A compiled module is a module: the forward hooks see its OptimizedModule
# (region compiled:<Class> when it is the root, prism._torch_core).  A
# compiled function is wrapped here: region compiled:<qualname> around each
# call.  Dynamo's compile-start/end callbacks (torch._dynamo.callback_handler)
# open and close "torch.compile (compile)" on the compiling thread: the
# compile time of the first calls (and of recompiles) inside the compiled
# region, apart from its run time.

_R_COMPILE_NAME = "torch.compile (compile)"
_compile_region = []


def _compile_start(args=None):
    _torch_ops.on_compile()
    _Adapt.compiled = True
    tls = _tls
    if tls.comp is not None:
        return
    if not _compile_region:
        _compile_region.append(prism.region(_R_COMPILE_NAME))
    if not _Steps.open and _torch.is_grad_enabled():
        _begin()
    tls.comp = _compile_region[0]
    tls.comp.__enter__()


def _compile_end(args=None):
    _close_comp(_tls)


def _wrap_compiled_fn(fn, name):
    region = prism._region_of("compiled:" + name)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _is_compiling():             # called from inside a compiled graph
            return fn(*args, **kwargs)
        if not _Steps.open and _torch.is_grad_enabled():
            _begin()
        region.__enter__()
        try:
            return fn(*args, **kwargs)
        finally:
            region.__exit__(None, None, None)
    call._prism = True
    return call


_quieted = []


def _quiet_global_hooks():
    """torch warns at each call of a compiled module while global module
    hooks exist (they fire for the OptimizedModule too: that is how auto()
    sees it).  When the only ones are auto()'s, that warning is PRISM's doing
    and would raise under -W error: it is ignored (the program's own global
    hooks keep it)."""
    if _quieted:
        return
    from prism._torch_core import _auto_post, _auto_pre
    mm = _torch.nn.modules.module
    hooks = []
    for d in ("_global_forward_pre_hooks", "_global_forward_hooks",
              "_global_backward_pre_hooks", "_global_backward_hooks"):
        hooks.extend(getattr(mm, d, {}).values())
    if hooks and all(h is _auto_pre or h is _auto_post for h in hooks):
        warnings.filterwarnings("ignore", category=UserWarning,
                                message=r"Using `torch\.compile\(module\)` when there are global hooks")
        _quieted.append(True)


def _wrap_compile(orig):
    def compile(model=None, *args, **kwargs):
        _compile_callbacks_now()        # torch.compile imports torch._dynamo anyway
        if model is None:               # @torch.compile(mode=...): a decorator
            deco = orig(None, *args, **kwargs)
            return lambda fn: _compiled(fn, deco(fn))
        if isinstance(model, _torch.nn.Module):
            _quiet_global_hooks()
        return _compiled(model, orig(model, *args, **kwargs))
    return _like(compile, orig, "compile")


def _compiled(target, result):
    """What torch.compile returned for target: a module as it is, a function
    wrapped in its compiled:<name> region."""
    if isinstance(result, _torch.nn.Module) or not callable(result):
        return result
    try:
        owner = getattr(target, "__self__", None)
        if isinstance(owner, _torch.nn.Module):     # module.compile(): its _call_impl
            name = type(owner).__name__
        else:
            name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) \
                or type(target).__name__
        return _wrap_compiled_fn(result, name)
    except Exception:
        _degrade("compiled function regions", "torch.compile returned %s"
                 % type(result).__name__)
        return result


# dynamo's callbacks are registered when torch._dynamo is there: at once when
# the program imported it, else at its first torch.compile() call.  Reaching
# for torch._dynamo would import it (and torch._inductor, sympy: a new
# warnings filter, seconds of start-up) into a program that never compiles.
_compile_cb = {"want": False, "on": False}


def _compile_callbacks_now():
    if _compile_cb["want"] and not _compile_cb["on"]:
        _compile_cb["on"] = _compile_callbacks(True)


def _compile_callbacks(on):
    try:
        ch = _torch._dynamo.callback_handler
        if on:
            ch.register_start_callback(_compile_start)
            ch.register_end_callback(_compile_end)
        else:
            for f, rm in ((_compile_start, ch.remove_start_callback),
                          (_compile_end, ch.remove_end_callback)):
                try:
                    rm(f)
                except ValueError:      # torch._dynamo.reset() cleared them
                    pass
        return True
    except Exception as e:
        if on:
            _degrade("torch.compile's compile time", "no torch._dynamo.callback_handler: %s" % e)
        return False


# ---- sync calls --------------------------------------------------------------

_SYNC = (("item", ".item()"), ("cpu", ".cpu()"), ("tolist", ".tolist()"),
         ("numpy", ".numpy()"))


class _Patches:
    """Reference-counted global patches (backward, sync calls), shared by every
    instrument() handle and auto()."""
    lock = threading.Lock()
    users = {"backward": 0, "sync": 0, "compile": 0}
    saved = {"backward": [], "sync": [], "compile": []}


def _patch_on(kind):
    with _Patches.lock:
        _Patches.users[kind] += 1
        if _Patches.users[kind] > 1:
            return
        saved = _Patches.saved[kind]
        if kind == "backward":
            targets = [(_torch.Tensor, "backward"), (_torch.autograd, "backward"),
                       (_torch.autograd, "grad")]
            wrap = _wrap_backward
        elif kind == "compile":
            if not hasattr(_torch, "compile"):      # torch 1.x
                return
            targets = [(_torch, "compile")]
            wrap = _wrap_compile
            _compile_cb["want"] = True
            if "torch._dynamo" in sys.modules:
                _compile_callbacks_now()
            saved.append((None, None, None, None, None))
        else:
            targets = [(_torch.Tensor, n) for n, _ in _SYNC] + [(_torch.cuda, "synchronize")]
        for i, (obj, name) in enumerate(targets):
            orig = getattr(obj, name, None)
            if orig is None or getattr(orig, "_prism", False):
                continue
            if kind == "sync":
                label = _SYNC[i][1] if i < len(_SYNC) else "torch.cuda.synchronize()"
                new = _wrap_sync(orig, label)
            elif kind == "backward" and name == "grad":
                new = wrap(orig, prism.region("autograd.grad"), "grad")
            else:
                new = wrap(orig)
            had = name in obj.__dict__ if isinstance(obj, type) else True
            setattr(obj, name, new)
            saved.append((obj, name, orig, had, new))


def _patch_off(kind):
    with _Patches.lock:
        if _Patches.users[kind] == 0:
            return
        _Patches.users[kind] -= 1
        if _Patches.users[kind]:
            return
        for obj, name, orig, had, new in reversed(_Patches.saved[kind]):
            if obj is None:
                _compile_cb["want"] = False
                if _compile_cb["on"]:
                    _compile_callbacks(False)
                    _compile_cb["on"] = False
                continue
            if getattr(obj, name, None) is new:
                if had:
                    setattr(obj, name, orig)
                else:
                    delattr(obj, name)
        _Patches.saved[kind].clear()
