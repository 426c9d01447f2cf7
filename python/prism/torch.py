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

Steps: a step is the whole loop body.  It begins at the first training
activity on the training thread (a data wait, a forward with grad enabled, a
backward, the optimizer step) and stays open after optimizer.step returns,
so the code that follows (logging, checkpoints, schedulers) is its tail; it
ends at the next iteration's first activity, at an eval pass, or at the end
of the program (then at its optimizer step).  N optimizer steps give N
steps.  An eval pass (a forward under no_grad or of a module in eval mode,
a DataLoader wait under no_grad, between iterations) is an ``eval`` region
of its own, in no step; inside an iteration such forwards (a frozen teacher,
an EMA model) belong to the step.

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

Adaptive module regions (the default; modules="all" or
PRISM_TORCH_MODULES=all keeps every module): every module is measured for
the first adapt_steps optimizer steps, then the modules too small to be
worth their hooks lose them and their time folds into their parent's self
time; the profile says which (prism._torch_adapt, INFO torch.modules.*).

DataLoader workers (forked, spawned, persistent) record into files of their
own that readers merge into the profile as threads "worker N: DataLoader":
``DataLoader batch``, ``<Dataset>.__getitem__``, ``collate (<fn>)``, the
transforms that are nn.Modules (``<Class>.forward``) and any prism.region
(prism._torch_workers; PRISM_TORCH_WORKERS=0 turns it off).  auto() does it
for every loader, instrument() for the loaders it is given.
"""

import sys
import weakref

try:
    import torch as _torch
except ImportError as _e:                       # pragma: no cover - tested by subprocess
    raise ImportError(
        "prism.torch needs PyTorch, which is not installed for %s (%s); the core "
        "'prism' module (regions, steps, prism.load) works without it"
        % (sys.executable or "this Python", _e)) from None

# the machinery: prism._torch_core records (state, steps, forward hooks,
# backward segments), prism._torch_patch wraps and patches torch's objects
from prism import _torch_adapt
from prism._torch_core import (_Adapt, _Auto, _Steps, _auto_post, _auto_pre, _close_comp,
                               _close_fwd, _close_seg,
                               _always, _cuda_memory_on, _instrumented, _module_hooks, _module_names,
                               _regions_for, _steps_on, _tls)
from prism import _torch_workers
from prism._torch_patch import (_loader_next, _optimizer_init, _patch_off, _patch_on,
                                _wrap_loader, _wrap_optimizer)

__all__ = ["instrument", "auto", "Handle"]


class Handle:
    """What instrument() did; remove() undoes it (hooks, wrappers, patches)."""

    def __init__(self):
        self._undo = []

    def remove(self):
        """Undo; regions a raised forward left open on this thread end now."""
        _close_fwd(_tls, 0)
        _close_seg(_tls)
        _close_comp(_tls)
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




def _check_depth(depth):
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 0):
        raise ValueError("depth must be None or an int >= 0, not %r" % (depth,))


def instrument(model=None, optimizer=None, dataloader=None, depth=None, steps=True,
               backward=True, sync_calls=True, cuda_memory=True, modules=None,
               adapt_steps=None):
    """Record model's forward (and backward) per module up to depth levels
    below the root (None: all), optimizer's step (one PRISM step each when
    steps), the waits for dataloader's batches, and the sync calls.
    optimizer and dataloader may be lists.  modules="adaptive" (the
    default, PRISM_TORCH_MODULES) measures every module for adapt_steps
    optimizer steps (PRISM_TORCH_ADAPT_STEPS, 5), then folds those too
    small to be worth their hooks into their parents; "all" keeps every
    module.  Returns a Handle; instrumenting the same objects twice is
    harmless."""
    _check_depth(depth)
    mode, adapt_steps = _torch_adapt.config(modules, adapt_steps)
    h = Handle()
    if not steps:
        _Steps.on = False
    elif _Steps.on:
        _steps_on()
    if cuda_memory:
        _cuda_memory_on[0] = True
    if model is not None:
        if not isinstance(model, _torch.nn.Module):
            raise TypeError("model must be a torch.nn.Module, not %s" % type(model).__name__)
        names = _module_names(model)
        adaptive = mode == "adaptive"
        if adaptive:
            _torch_adapt.start(adapt_steps)
        for m in model.modules():
            path, lvl = names[id(m)]
            if (depth is not None and lvl > depth) or m in _instrumented:
                continue
            _instrumented[m] = True
            fwd, bw_hook, acc = _regions_for(model, path)
            rm = _module_hooks(m, fwd, bw_hook if backward else None, acc if adaptive else None)
            h._undo.extend(rm)
            h._undo.append(lambda m=m: _instrumented.pop(m, None))
            if adaptive:
                _Adapt.regs.append((weakref.ref(m), acc, rm))
    if backward:
        _patch_on("backward")
        h._undo.append(lambda: _patch_off("backward"))
    if sync_calls:
        _patch_on("sync")
        h._undo.append(lambda: _patch_off("sync"))
    _patch_on("compile")
    h._undo.append(lambda: _patch_off("compile"))
    for opt in _as_list(optimizer):
        u = _wrap_optimizer(opt)
        if u:
            h._undo.append(u)
    for dl in _as_list(dataloader):
        u = _wrap_loader(dl)
        if u:
            h._undo.append(u)
    if dataloader is not None:
        _workers_on(False)
    return h


def _workers_on(every):
    try:
        _torch_workers.patch_iterator_init(every)
    except Exception as e:                  # record less, say so once
        _torch_workers._say("patch", "DataLoader workers not recorded: %s: %s"
                            % (type(e).__name__, e))


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def auto(depth=None, steps=True, backward=True, sync_calls=True, cuda_memory=True,
         modules=None, adapt_steps=None):
    """Instrument every module, optimizer and DataLoader of the process with
    no handles: global module hooks (a module called while no instrumented
    module is open on the thread is a root), a wrapper on each optimizer's
    step (optimizers created after this call), DataLoader waits, sync calls.
    modules and adapt_steps as for instrument(): adaptive, after the
    measured steps the global hooks give way to hooks on the kept modules
    of the roots seen (a module first called later is not recorded).
    Calling it again does nothing."""
    _check_depth(depth)
    mode, adapt_steps = _torch_adapt.config(modules, adapt_steps)
    if _Auto.started:
        return
    _Auto.started = True
    if mode == "adaptive":
        _Auto.measure = True
        _torch_adapt.start(adapt_steps)
    _Auto.depth = depth
    _Auto.backward = backward
    if not steps:
        _Steps.on = False
    elif _Steps.on:
        _steps_on()
    if cuda_memory:
        _cuda_memory_on[0] = True
    mm = _torch.nn.modules.module
    _Auto.handles.append(mm.register_module_forward_pre_hook(_auto_pre))
    _Auto.handles.append(_always(mm.register_module_forward_hook, _auto_post))
    if backward:
        _patch_on("backward")
    if sync_calls:
        _patch_on("sync")
    _patch_on("compile")
    opt = _torch.optim.Optimizer
    if not getattr(opt.__init__, "_prism", False):
        opt.__init__ = _optimizer_init(opt.__init__)
    it = _torch.utils.data.dataloader._BaseDataLoaderIter
    if not getattr(it.__next__, "_prism", False):
        it.__next__ = _loader_next(it.__next__)
    _workers_on(True)
