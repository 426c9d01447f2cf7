"""prism.torch - automatic PyTorch instrumentation.

    import prism, prism.torch
    prism.init("train.cbor")
    h = prism.torch.instrument(model, optimizer, loader)   # or prism.torch.auto()
    ... train as usual ...
    h.remove()                                              # optional

Regions (the names the tests and the README rely on):

  <Class>.forward          the root module's forward (the model: ``Net.forward``)
  encoder.layers.3.attn    a submodule's forward, by its named_modules() path
  <path> (backward)        the module's share of the backward pass; the root's
                           is ``<Class> (backward)``
  backward                 the whole loss.backward() / torch.autograd.backward
  optimizer.step           the optimizer's step; one PRISM step per optimizer step
  data_loading             the wait for the next DataLoader batch
  .item() at train.py:88   a CPU-GPU sync call and its caller's file and line
                           (.item(), .cpu(), .tolist(), .numpy(),
                           torch.cuda.synchronize())

Steps: a step begins at the first recorded thing after the previous one ended
(a data wait, a forward with grad enabled, a backward, a sync call, the
optimizer step) on
the training thread, and ends when optimizer.step returns: N optimizer steps
give N steps.

Forward regions nest like the modules.  They come from forward pre/post hooks;
a per-thread stack remembers what was opened (with the _call_impl frame that
opened it), so a forward that raises leaves nothing open for long: the next
module call on the thread closes entries whose frame is gone, a parent's post
hook closes down to its own entry, and the step's end closes the rest.

Backward regions are *segments*, not a nested tree: a hook on each module's
forward output fires when its gradient arrives, which is when the module's
backward starts; the thread's previous segment ends there.  Each module's
region therefore holds its own backward work (what a hot-op finding needs).
torch's register_full_backward_hook is not used: it wraps inputs and outputs
in a custom autograd Function, and an in-place op on them (ResNet's
``out += identity``, ReLU(inplace=True)) then raises in torch 1.13.

Forked DataLoader workers inherit the patches; libcollect records nothing in a
forked child, so a patched call there costs a dictionary lookup or two and
records nothing: the parent's file shows the wait (``data_loading``), not the
workers' work.
"""

import os
import sys
import threading
import types
import weakref

try:
    import torch as _torch
except ImportError as _e:                       # pragma: no cover - tested by subprocess
    raise ImportError(
        "prism.torch needs PyTorch, which is not installed for %s (%s); the core "
        "'prism' module (regions, steps, prism.load) works without it"
        % (sys.executable or "this Python", _e)) from None

import prism

__all__ = ["instrument", "auto", "Handle"]

_getframe = sys._getframe
_get_ident = threading.get_ident
_TORCH_DIR = os.path.dirname(os.path.abspath(_torch.__file__)) + os.sep

_R_BACKWARD = prism.region("backward")
_R_OPT = prism.region("optimizer.step")
_R_DATA = prism.region("data_loading")


# ---- per-thread state --------------------------------------------------------

class _Tls(threading.local):
    def __init__(self):
        self.fwd = []           # forward entries opened here: (frame, region,
        #                         auto's names map, auto's root, auto's backward hook)
        self.seg = None         # the open backward segment (a region) or None
        self.last = None        # the output tensor an inner module hooked last
        self.in_bw = 0          # inside a recorded backward call


_tls = _Tls()


class _Steps:
    on = True                   # steps=True in some instrument() / auto()
    open = False                # a step is open
    thread = None               # the training thread's ident


def _begin():
    """Begin a step lazily on the training thread (the first to get here)."""
    if not _Steps.on:
        return
    tid = _get_ident()
    if _Steps.thread is None:
        _Steps.thread = tid
    elif _Steps.thread != tid:
        return
    _Steps.open = True
    prism.step_begin()


def _cuda_memory():
    """torch.cuda's own reading of each device's memory into the next memory
    samples (taken by the writer after the step ends)."""
    try:
        if not _torch.cuda.is_initialized():
            return
        for d in range(_torch.cuda.device_count()):
            prism.gpu_memory(d, _torch.cuda.memory_allocated(d), _torch.cuda.memory_reserved(d))
    except Exception:           # never break the program for a figure
        pass


_cuda_memory_on = [False]


def _end(tls):
    """End of the optimizer step: close leftovers on this thread, end the step."""
    _close_fwd(tls, 0)
    _close_seg(tls)
    tls.last = None
    if _Steps.open and _Steps.thread == _get_ident():
        if _cuda_memory_on[0]:
            _cuda_memory()
        _Steps.open = False
        prism.step_end()


# ---- forward: pre/post hooks and the per-thread stack ------------------------

def _close_fwd(tls, n):
    """Close forward entries down to length n (only ours)."""
    st = tls.fwd
    while len(st) > n:
        st.pop()[1].__exit__(None, None, None)


def _live_top(st, frame):
    """Drop entries whose opening frame is no longer among frame's callers
    (a forward that raised).  The top entry is usually 2-4 frames up."""
    while st:
        top = st[-1][0]
        f = frame.f_back
        while f is not None:
            if f is top:
                return
            f = f.f_back
        st.pop()[1].__exit__(None, None, None)


def _fwd_open(region, frame):
    st = _tls.fwd
    if st:
        top = st[-1][0]
        f = frame.f_back                # the parent's forward, its _call_impl
        if f is not top and (f is None or f.f_back is not top):
            _live_top(st, frame)
    if not _Steps.open and _torch.is_grad_enabled():
        _begin()
    region.__enter__()
    st.append((frame, region, None, None, None))


def _fwd_close(frame):
    """Post hook: close down to the entry this _call_impl frame opened; True
    when it was found."""
    st = _tls.fwd
    if st and st[-1][0] is frame:
        st.pop()[1].__exit__(None, None, None)
        return True
    for i in range(len(st) - 1, -1, -1):
        if st[i][0] is frame:
            _close_fwd(_tls, i)
            return True
    return False


def _first_tensor(out):
    if isinstance(out, _torch.Tensor):
        return out
    if isinstance(out, (tuple, list)):
        for o in out:
            if isinstance(o, _torch.Tensor):
                return o
    elif isinstance(out, dict):
        for o in out.values():
            if isinstance(o, _torch.Tensor):
                return o
    return None


def _hook_backward(bw_hook, out):
    """Register the module's backward-begin hook on its output, unless an
    inner module already hooked that same tensor (it owns the segment)."""
    t = _first_tensor(out)
    if t is None or not t.requires_grad or t.grad_fn is None or not _torch.is_grad_enabled():
        return
    tls = _tls
    if tls.last is t:
        return
    tls.last = t
    # Tensor.register_hook without its RemovableHandle (a third of the cost
    # of a module call): the hook dict the grad_fn reads, keyed by the hook
    # (RemovableHandle keys are ints: no clash with the program's hooks)
    hooks = t._backward_hooks
    if hooks is None:
        try:
            t._backward_hooks = hooks = {}
            t.grad_fn._register_hook_dict(t)
        except Exception:
            t._backward_hooks = None
            t.register_hook(bw_hook)
            return
    hooks[bw_hook] = bw_hook


# ---- backward ----------------------------------------------------------------

def _close_seg(tls):
    seg = tls.seg
    if seg is not None:
        tls.seg = None
        seg.__exit__(None, None, None)


def _segment_hook(region):
    def hook(grad):
        tls = _tls
        if tls.seg is not None:
            tls.seg.__exit__(None, None, None)
        elif not tls.in_bw:
            # an autograd worker thread (CUDA), or a backward we did not
            # wrap: close this thread's segment when the pass ends
            tid = _get_ident()
            try:
                _torch.autograd.Variable._execution_engine.queue_callback(
                    lambda: _close_seg(tls) if _get_ident() == tid else None)
            except Exception:
                pass
        tls.seg = region
        region.__enter__()
        return None
    return hook


def _wrap_backward(orig):
    def backward(*args, **kwargs):
        tls = _tls
        if tls.in_bw:
            return orig(*args, **kwargs)
        tls.in_bw = 1
        tls.last = None
        if not _Steps.open:
            _begin()
        _R_BACKWARD.__enter__()
        try:
            return orig(*args, **kwargs)
        finally:
            _close_seg(tls)
            _R_BACKWARD.__exit__(None, None, None)
            tls.in_bw = 0
    backward.__name__ = getattr(orig, "__name__", "backward")
    backward.__qualname__ = getattr(orig, "__qualname__", "backward")
    backward.__doc__ = getattr(orig, "__doc__", None)
    backward.__wrapped__ = orig
    backward._prism = True
    return backward


# ---- optimizer ---------------------------------------------------------------

def _wrap_optimizer(opt):
    """Wrap the instance's step (a bound method, as LR schedulers expect);
    returns an undo function, or None when it is wrapped already."""
    cur = getattr(opt, "step", None)
    if cur is None or getattr(cur, "_prism", False):
        return None
    own = "step" in opt.__dict__
    state = {"on": True}

    def step(self, *args, **kwargs):
        if not state["on"]:
            return cur(*args, **kwargs)
        tls = _tls
        if not _Steps.open:
            _begin()
        _R_OPT.__enter__()
        try:
            return cur(*args, **kwargs)
        finally:
            _R_OPT.__exit__(None, None, None)
            _end(tls)
    step._prism = True
    if getattr(cur, "_with_counter", False):
        step._with_counter = True       # an LR scheduler wrapped it before us
    step.__doc__ = getattr(cur, "__doc__", None)
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


# ---- data loading ------------------------------------------------------------

class _WaitIter:
    """Wraps a DataLoader iterator: each next() is a data_loading region."""
    __slots__ = ("_it",)

    def __init__(self, it):
        self._it = it

    def __iter__(self):
        return self

    def __next__(self):
        if not _Steps.open:
            _begin()
        _R_DATA.__enter__()
        try:
            return next(self._it)
        finally:
            _R_DATA.__exit__(None, None, None)

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


# ---- sync calls --------------------------------------------------------------

_SKIP = object()


def _wrap_sync(orig, label):
    """A sync call as a region named '<label> at <file>:<line>' of its caller;
    calls from inside torch itself are not recorded."""
    cache = {}

    def call(*args, **kwargs):
        f = _getframe(1)
        key = (f.f_code, f.f_lineno)
        r = cache.get(key)
        if r is None:
            fn = f.f_code.co_filename
            if fn.startswith(_TORCH_DIR):
                r = _SKIP
            else:
                r = prism.region("%s at %s:%d" % (label, os.path.basename(fn), f.f_lineno))
            cache[key] = r
        if r is _SKIP:
            return orig(*args, **kwargs)
        if not _Steps.open:
            _begin()
        r.__enter__()
        try:
            return orig(*args, **kwargs)
        finally:
            r.__exit__(None, None, None)
    call.__name__ = getattr(orig, "__name__", label)
    call.__qualname__ = getattr(orig, "__qualname__", label)
    call.__doc__ = getattr(orig, "__doc__", None)
    call.__wrapped__ = orig
    call._prism = True
    return call


_SYNC = (("item", ".item()"), ("cpu", ".cpu()"), ("tolist", ".tolist()"),
         ("numpy", ".numpy()"))


class _Patches:
    """Reference-counted global patches (backward, sync calls), shared by every
    instrument() handle and auto()."""
    lock = threading.Lock()
    users = {"backward": 0, "sync": 0}
    saved = {"backward": [], "sync": []}


def _patch_on(kind):
    with _Patches.lock:
        _Patches.users[kind] += 1
        if _Patches.users[kind] > 1:
            return
        saved = _Patches.saved[kind]
        if kind == "backward":
            targets = [(_torch.Tensor, "backward"), (_torch.autograd, "backward")]
            wrap = _wrap_backward
        else:
            targets = [(_torch.Tensor, n) for n, _ in _SYNC] + [(_torch.cuda, "synchronize")]
        for i, (obj, name) in enumerate(targets):
            orig = getattr(obj, name, None)
            if orig is None or getattr(orig, "_prism", False):
                continue
            if kind == "sync":
                label = _SYNC[i][1] if i < len(_SYNC) else "torch.cuda.synchronize()"
                new = _wrap_sync(orig, label)
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
            if getattr(obj, name, None) is new:
                if had:
                    setattr(obj, name, orig)
                else:
                    delattr(obj, name)
        _Patches.saved[kind].clear()


# ---- modules -----------------------------------------------------------------

def _module_names(root):
    """{id(module): (path, depth)} for root's named_modules()."""
    out = {}
    for path, m in root.named_modules():
        if id(m) not in out:
            out[id(m)] = (path, path.count(".") + 1 if path else 0)
    return out


_regions = {}


def _regions_for(root, path):
    """(forward region, backward hook) for the module at path below root."""
    cls = type(root).__name__
    key = (cls, path)
    r = _regions.get(key)
    if r is None:
        fwd = prism.region(path if path else cls + ".forward")
        bwd = prism.region((path if path else cls) + " (backward)")
        r = (fwd, _segment_hook(bwd))
        _regions[key] = r
    return r


class Handle:
    """What instrument() did; remove() undoes it (hooks, wrappers, patches)."""

    def __init__(self):
        self._undo = []

    def remove(self):
        """Undo; regions a raised forward left open on this thread end now."""
        _close_fwd(_tls, 0)
        _close_seg(_tls)
        _tls.last = None
        while self._undo:
            try:
                self._undo.pop()()
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_instrumented = weakref.WeakKeyDictionary()      # module -> True


def _check_depth(depth):
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 0):
        raise ValueError("depth must be None or an int >= 0, not %r" % (depth,))


def instrument(model=None, optimizer=None, dataloader=None, depth=None, steps=True,
               backward=True, sync_calls=True, cuda_memory=True):
    """Record model's forward (and backward) per module up to depth levels
    below the root (None: all), optimizer's step (one PRISM step each when
    steps), the waits for dataloader's batches, and the sync calls.
    optimizer and dataloader may be lists.  Returns a Handle; instrumenting
    the same objects twice is harmless."""
    _check_depth(depth)
    h = Handle()
    if not steps:
        _Steps.on = False
    if cuda_memory:
        _cuda_memory_on[0] = True
    if model is not None:
        if not isinstance(model, _torch.nn.Module):
            raise TypeError("model must be a torch.nn.Module, not %s" % type(model).__name__)
        names = _module_names(model)
        for m in model.modules():
            path, lvl = names[id(m)]
            if (depth is not None and lvl > depth) or m in _instrumented:
                continue
            _instrumented[m] = True
            fwd, bw_hook = _regions_for(model, path)
            h._undo.extend(_module_hooks(m, fwd, bw_hook if backward else None))
            h._undo.append(lambda m=m: _instrumented.pop(m, None))
    if backward:
        _patch_on("backward")
        h._undo.append(lambda: _patch_off("backward"))
    if sync_calls:
        _patch_on("sync")
        h._undo.append(lambda: _patch_off("sync"))
    for opt in _as_list(optimizer):
        u = _wrap_optimizer(opt)
        if u:
            h._undo.append(u)
    for dl in _as_list(dataloader):
        u = _wrap_loader(dl)
        if u:
            h._undo.append(u)
    return h


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _module_hooks(m, fwd, bw_hook):
    def pre(module, inputs):
        _fwd_open(fwd, _getframe(1))

    def post(module, inputs, out):
        if _fwd_close(_getframe(1)) and bw_hook is not None:
            _hook_backward(bw_hook, out)

    a = m.register_forward_pre_hook(pre)
    b = m.register_forward_hook(post)
    return [a.remove, b.remove]


# ---- auto: global hooks ------------------------------------------------------

class _Auto:
    depth = None
    backward = True
    handles = []
    roots = weakref.WeakKeyDictionary()     # root module -> _module_names(root)
    started = False


def _auto_pre(module, inputs):
    frame = _getframe(1)
    st = _tls.fwd
    if st:
        top = st[-1][0]
        f = frame.f_back
        if f is not top and (f is None or f.f_back is not top):
            _live_top(st, frame)
    names = entry = None
    if st:
        top = st[-1]
        if top[2] is not None:
            entry = top[2].get(id(module))
            if entry is not None:
                names, root = top[2], top[3]
    if entry is None:               # nothing open, or not below the open root
        try:
            names = _Auto.roots.get(module)
            if names is None:
                names = _Auto.roots[module] = _module_names(module)
        except TypeError:
            return
        root, entry = module, ("", 0)
    path, lvl = entry
    if _Auto.depth is not None and lvl > _Auto.depth:
        return
    fwd, bw_hook = _regions_for(root, path)
    if not _Steps.open and _torch.is_grad_enabled():
        _begin()
    fwd.__enter__()
    st.append((frame, fwd, names, root, bw_hook))


def _auto_post(module, inputs, out):
    frame = _getframe(1)
    st = _tls.fwd
    if st and st[-1][0] is frame:
        e = st.pop()
        e[1].__exit__(None, None, None)
        if _Auto.backward:
            _hook_backward(e[4], out)
        return
    for i in range(len(st) - 1, -1, -1):
        if st[i][0] is frame:
            bw_hook = st[i][4]
            _close_fwd(_tls, i)
            if _Auto.backward:
                _hook_backward(bw_hook, out)
            return


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


def _loader_next(orig):
    def __next__(self):
        if not _Steps.open:
            _begin()
        _R_DATA.__enter__()
        try:
            return orig(self)
        finally:
            _R_DATA.__exit__(None, None, None)
    __next__.__wrapped__ = orig
    __next__._prism = True
    return __next__


def auto(depth=None, steps=True, backward=True, sync_calls=True, cuda_memory=True):
    """Instrument every module, optimizer and DataLoader of the process with
    no handles: global module hooks (a module called while no instrumented
    module is open on the thread is a root), a wrapper on each optimizer's
    step (optimizers created after this call), DataLoader waits, sync calls.
    Calling it again does nothing."""
    _check_depth(depth)
    if _Auto.started:
        return
    _Auto.started = True
    _Auto.depth = depth
    _Auto.backward = backward
    if not steps:
        _Steps.on = False
    if cuda_memory:
        _cuda_memory_on[0] = True
    mm = _torch.nn.modules.module
    _Auto.handles.append(mm.register_module_forward_pre_hook(_auto_pre))
    _Auto.handles.append(mm.register_module_forward_hook(_auto_post))
    if backward:
        _patch_on("backward")
    if sync_calls:
        _patch_on("sync")
    opt = _torch.optim.Optimizer
    if not getattr(opt.__init__, "_prism", False):
        opt.__init__ = _optimizer_init(opt.__init__)
    it = _torch.utils.data.dataloader._BaseDataLoaderIter
    if not getattr(it.__next__, "_prism", False):
        it.__next__ = _loader_next(it.__next__)
