"""prism._torch_core - the recording side of prism.torch: per-thread and
step state, the forward stack (instrument()'s per-module hooks and auto()'s
global ones), the backward segments, the module regions.  See prism.torch's
docstring for the region names and how steps and segments work.  Imported
by prism.torch once torch is known to be there."""

import sys
import threading
import time
import weakref

import torch as _torch

import prism
from prism import _torch_ops


def _like(fn, orig, label):
    """fn made to look like orig (name, qualname, doc; __wrapped__ for
    introspection) and marked as PRISM's (_prism), for the patches."""
    fn.__name__ = getattr(orig, "__name__", label)
    fn.__qualname__ = getattr(orig, "__qualname__", label)
    fn.__doc__ = getattr(orig, "__doc__", None)
    fn.__wrapped__ = orig
    fn._prism = True
    return fn

_getframe = sys._getframe
_FunctionType = type(_like)
_get_ident = threading.get_ident
_now = time.perf_counter_ns
# PRISM's own time in its hooks while it measures them: CPU time, so that a
# busy machine's preemption (a few ms landing on a hook of a few us) cannot
# inflate it
_own_now = time.thread_time_ns


def _never():
    return False


# True while torch.compile traces or compiles (torch 2.x; 1.13 has no
# compile): the hooks then do nothing, so a compiled graph holds none of
# PRISM's calls (dynamo folds the test to a constant) and a compiled module
# is recorded as one region from outside (prism._torch_patch)
_is_compiling = getattr(getattr(_torch, "compiler", None), "is_compiling", None) or _never

# the fixed regions (the patches in prism._torch_patch use the last two)
_R_BACKWARD = prism.region("backward")
_R_OPT = prism.region("optimizer.step")
_R_DATA = prism.region("data_loading")
_R_EVAL = prism.region("eval")


_said = set()


def _degrade(what, why):
    """Something PRISM cannot record here: it records less and says so once
    per kind on stderr (never through warnings: -W error would raise)."""
    if what in _said:
        return
    _said.add(what)
    try:
        sys.stderr.write("prism: %s not recorded (%s); the program runs unchanged\n"
                         % (what, why))
    except Exception:
        pass


# ---- per-thread state --------------------------------------------------------

class _Tls(threading.local):
    def __init__(self):
        self.fwd = []           # forward entries opened here: (frame, region,
        #                         auto's names map, auto's root, auto's backward hook,
        #                         start ns and module stats while measuring, _Adapt)
        self.seg = None         # the open backward segment (a region) or None
        self.last = None        # the output tensor an inner module hooked last
        self.in_bw = 0          # inside a recorded backward call
        self.comp = None        # the open "torch.compile (compile)" region


_tls = _Tls()
# the modules instrument() hooked (module -> True): auto()'s global hooks
# leave them to their own hooks, so that both at once record each once
_instrumented = weakref.WeakKeyDictionary()


class _Steps:
    on = True                   # steps=True in some instrument() / auto()
    open = False                # a step is open
    tail = False                # ... and its optimizer step is done: the code
    #                             after it (logging, checkpoints) is its tail
    thread = None               # the training thread's ident: the first
    #                             to begin a step, until an optimizer step
    sure = False                # ... ran on a thread, which is then it
    # frozen companions of an iteration (a distillation teacher, an EMA
    # model: modules that never trained, run under no_grad between two
    # iterations' training): _eval_root()
    comp = 0                    # companion root forwards since the optimizer step
    comp_max = 1                # the most an iteration has held (learned)
    eval_new = 0                # root forwards of untrained modules in this eval pass
    eval_other = False          # ... and it held more (data, a trained module)
    in_eval = False             # an eval pass ran since the last step ended:
    #                             no-grad work outside steps is its own
    # an inference loop (no optimizer made, nothing trained): each of its
    # iterations is a step, begun by what began the first (_inference)
    infer_ok = True             # no optimizer made, no training forward yet
    infer = False               # inference steps on
    infer_lead = None           # "fetch", or a weakref to the lead module


# the root modules that began or ran a training forward (grad on, train mode)
_trained = weakref.WeakSet()
COMP_LEARN = 4                  # an "eval pass" of at most this many forwards of
#                                 untrained modules, then training at once, is
#                                 the iteration's companions


class _Adapt:
    """Adaptive module regions (prism._torch_adapt decides): while measuring,
    each module region's calls and time add up in its stats list, acc =
    [ns, calls, first (the first root forward of a step), name]; after
    `steps` optimizer steps (or 4 x steps root forwards without any), decide()
    folds the modules whose time per call is small against PRISM's cost."""
    measuring = False           # adaptive mode, before the decision
    steps = 5                   # measured optimizer steps (the first: warm-up)
    seen = 0                    # optimizer steps ended while measuring
    roots = 0                   # root forwards ended while measuring
    fresh = False               # a step began and no root forward yet
    t0 = 0                      # when the measured steps began (ns)
    own_ns = 0                  # time inside PRISM's module hooks meanwhile
    accs = []                   # every stats list (reset after the warm-up step)
    regs = []                   # instrument()'s hooked modules not yet judged:
    #                             (weakref to the module, acc, removers)
    decide = None               # prism._torch_adapt.decide
    compiled = False            # torch.compile compiled a frame before the
    #                             decision (prism._torch_patch): then every
    #                             module keeps its region, since dynamo guards
    #                             on the hooks and a change would recompile


def _adapt_tick(step):
    """An optimizer step (step=True) or a root forward ended while measuring."""
    a = _Adapt
    if step:
        a.seen += 1
        if a.seen == 1 and a.steps > 1:         # the first step warms up
            for acc in a.accs:
                acc[0] = acc[1] = 0
            a.t0 = _now()
            a.own_ns = 0
        if a.seen < a.steps:
            return
    else:
        a.roots += 1
        if a.seen or a.roots < 4 * a.steps:
            return
    if a.decide is not None:
        try:
            a.decide()
        except Exception as e:  # never break the program: keep what is there
            a.measuring = False
            _degrade("adaptive module folding", "%s: %s" % (type(e).__name__, e))


def _begin():
    """Begin a step on the training thread (the first to get here): at the
    first training activity after the previous optimizer step, which ends
    the previous step (its tail included)."""
    if not _Steps.on:
        return False
    tid = _get_ident()
    if _Steps.thread is None:
        _Steps.thread = tid
    elif _Steps.thread != tid:
        return False
    if _Steps.open:
        prism._prism.step_end()
    s = _Steps
    if s.eval_new and not s.eval_other and s.comp + s.eval_new <= COMP_LEARN:
        # the last "eval pass" was this iteration's companions, one past
        # what was allowed: from now on they stay in the step
        s.comp_max = max(s.comp_max, s.comp + s.eval_new)
    s.comp = s.eval_new = 0
    s.eval_other = False
    s.in_eval = False
    if _Passes.t0:
        _eval_close()
    _Steps.open = True
    _Steps.tail = False
    _Adapt.fresh = True
    prism._prism.step_begin()
    _torch_ops.on_step_begin()
    return True


def _user_steps():
    """The program marks steps of its own (prism.step, step_begin, a
    profiling callback): they are the steps, and prism.torch's automatic
    ones stop (both cut each iteration in two: twice the steps, a median of
    half-iterations); said once.  A step of ours open now is forgotten."""
    if not _Steps.on:
        return
    _Steps.on = False
    if _Steps.open:
        _Steps.open = _Steps.tail = False
        _torch_ops.on_cancel()
        prism._prism._step_cancel()
    try:
        sys.stderr.write("prism: the program marks its own steps (prism.step): prism.torch "
                         "marks none (instrument(steps=False) says so without this line)\n")
    except Exception:
        pass


def _steps_on():
    """Automatic steps on (instrument() or auto() with steps=True): until the
    program marks a step of its own."""
    if _user_steps not in prism._on_user_step:
        prism._on_user_step.append(_user_steps)


def _idle():
    """No step, or only a finished step's tail: training activity begins one
    (none inside a step of the program's own)."""
    return (not _Steps.open or _Steps.tail) and not prism._user_open[0]


def _end_tail():
    """An eval pass (or the end) on the training thread: the open step's
    tail ends here."""
    if _Steps.open and _Steps.tail and _Steps.thread == _get_ident():
        _Steps.open = _Steps.tail = False
        _torch_ops.on_eval()
        prism._prism.step_end()


def _cancel():
    """A step begun for nothing (the loader's StopIteration): forgotten."""
    if _Steps.open and not _Steps.tail and _Steps.thread == _get_ident():
        _Steps.open = False
        _torch_ops.on_cancel()
        prism._prism._step_cancel()


def _is_eval(module):
    """A forward of an evaluation pass: no grad, or the module in eval mode
    (asked only between training iterations: a frozen teacher or an EMA
    model inside an iteration belongs to it)."""
    return not _torch.is_grad_enabled() or not getattr(module, "training", True)


def _eval_root(module):
    """A root forward between iterations (idle) that does not train
    (_is_eval): True for an evaluation pass (it ends the step's tail), False
    for a frozen companion of the iteration, which stays in the step: a
    module that never trained (a teacher, an EMA copy; the trained model
    under no_grad is an eval pass), in an optimizer step's tail, at most as
    many times as an iteration held before (one at first; learned when an
    "eval pass" of a few such forwards and nothing else is followed at once
    by training).  A teacher run at the start of the iteration lands in the
    previous step's tail: every step still holds one of each."""
    s = _Steps
    new = module is not None and module not in _trained
    if new and s.open and s.tail and s.thread == _get_ident() and s.comp < s.comp_max:
        s.comp += 1
        return False
    if new:
        s.eval_new += 1
    else:
        s.eval_other = True
    return True


def _inference(lead):
    """A root forward or a data wait under no_grad (`lead`: the module, or
    "fetch") in a program that made no optimizer and trained nothing: an
    inference loop, whose iterations are its steps (without them its
    report had no steps, no finding for the half of the loop no region
    held, and shares of a run that was mostly `import torch`).  The first
    such activity leads: each of its next ones ends the step and begins the
    next (INFO torch.steps "inference", said once).  Returns (True, whether
    it began a step) in inference mode, (False, False) otherwise."""
    s = _Steps
    if not s.infer:
        if not s.infer_ok or not s.on or prism._user_open[0]:
            return False, False
        s.infer = True
        try:
            s.infer_lead = lead if isinstance(lead, str) else weakref.ref(lead)
        except TypeError:
            s.infer = s.infer_ok = False
            return False, False
        info = getattr(prism._prism, "_info", None)
        if info is not None:
            try:
                info("torch.steps", "inference")
            except Exception:
                pass
    led = s.infer_lead
    if lead is led or (not isinstance(led, str) and led() is lead):
        return True, _begin()
    return True, False


def _infer_mark():
    """A root forward of an inference step ended: the step's work so far
    (at the end of the program its last step ends at the last of them, as
    a training step ends at its optimizer step)."""
    if _Steps.open and _Steps.thread == _get_ident():
        prism._prism._step_mark()


def _not_inference():
    """An optimizer made or a training forward: no inference steps from
    now on (an inference step open ends here)."""
    s = _Steps
    s.infer_ok = False
    if s.infer:
        s.infer = False
        if s.open and s.thread == _get_ident():
            s.open = s.tail = False
            prism._prism.step_end()


def _trains(module):
    """A root forward that trains: its module is no companion; and whether
    it runs under torch.autocast, said once (INFO torch.autocast: the
    advice then does not say to use mixed precision)."""
    if _Steps.infer_ok:
        _not_inference()
    if module is not None and module not in _trained:
        try:
            _trained.add(module)
        except TypeError:
            pass
    if not _amp_said:
        _amp_check()


_amp_said = []


def _amp_check():
    """INFO torch.autocast = "<device> <dtype>" the first time a training
    forward runs under torch.autocast (CPU or CUDA)."""
    t = _torch
    for dev in ("cuda", "cpu"):
        try:
            try:
                on = t.is_autocast_enabled(dev)
                dt = t.get_autocast_dtype(dev) if on else None
            except TypeError:       # torch < 2.4: no device argument
                if dev == "cpu":
                    on = t.is_autocast_cpu_enabled()
                    dt = t.get_autocast_cpu_dtype() if on else None
                else:
                    on = t.is_autocast_enabled()
                    dt = t.get_autocast_gpu_dtype() if on else None
        except Exception:
            continue
        if on:
            _amp_said.append(True)
            info = getattr(prism._prism, "_info", None)
            if info is not None:
                try:
                    info("torch.autocast", "%s %s" % (dev, str(dt).replace("torch.", "")))
                except Exception:
                    pass
            return


class _Pair:
    """Two regions as one: eval around a root module's region."""
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __enter__(self):
        self.a.__enter__()
        self.b.__enter__()

    def __exit__(self, *exc):
        self.b.__exit__(None, None, None)
        self.a.__exit__(None, None, None)


class _Passes:
    """The eval passes: each from its first forward, batch or sync call to
    the end of its last (the `eval` region holds those only, not the
    program's code between them: 92 ms of a 290 ms pass in a user's
    trial), into INFO torch.eval.passes / torch.eval.span_ns at the end of
    each pass and before the session closes."""
    t0 = 0                      # the open pass's first activity (ns), 0: none
    last = 0                    # ... the end of its last
    passes = 0
    span = 0
    said = False                # the end-of-session flush registered


def _eval_started():
    """An eval activity begins (an eval pass's forward, batch or sync call)."""
    p = _Passes
    if not p.t0 and _Steps.on:      # (without steps no pass ends)
        p.t0 = p.last = _now()
        if not p.said:
            p.said = True
            prism._on_shutdown.append(_eval_close)
            try:
                import atexit
                atexit.register(prism._before_shutdown)
            except Exception:
                pass


def _eval_close():
    """The open eval pass ends (training resumes, or the session closes)."""
    p = _Passes
    if not p.t0:
        return
    p.passes += 1
    p.span += max(p.last - p.t0, 0)
    p.t0 = 0
    info = getattr(prism._prism, "_info", None)
    if info is not None:
        try:
            info("torch.eval.passes", p.passes)
            info("torch.eval.span_ns", p.span)
        except Exception:
            pass


class _EvalPair(_Pair):
    """eval around a region, the pass's span kept (_Passes)."""
    __slots__ = ()

    def __enter__(self):
        _eval_started()
        self.a.__enter__()
        self.b.__enter__()

    def __exit__(self, *exc):
        self.b.__exit__(None, None, None)
        self.a.__exit__(None, None, None)
        _Passes.last = _now()


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
    """End of the optimizer step: close leftovers on this thread; the step
    stays open for the code after it (its tail) until the next training
    activity, an eval pass, or the end (where it ends at this mark)."""
    _close_fwd(tls, 0)
    _close_seg(tls)
    _close_comp(tls)
    tls.last = None
    tid = _get_ident()
    if _Steps.open and _Steps.thread != tid and not _Steps.sure:
        # the first optimizer step, on another thread than the one whose
        # forward began the step (a model shared with an inference
        # thread): this thread trains; the open step is its first
        _Steps.thread = tid
        prism._prism._step_thread()
    if _Steps.open and _Steps.thread == tid:
        _Steps.sure = True
        if _cuda_memory_on[0]:
            _cuda_memory()
        _Steps.tail = True
        prism._prism._step_mark()
        if _Adapt.measuring:
            _adapt_tick(True)


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


def _fwd_open(region, frame, module=None, acc=None):
    st = _tls.fwd
    if st:
        top = st[-1][0]
        f = frame.f_back                # the parent's forward, its _call_impl
        if f is not top and (f is None or f.f_back is not top):
            _live_top(st, frame)
    if not st and _in_backward():   # activation checkpointing's recompute
        region = _recompute(region)
    elif not st and _Steps.infer_ok and _is_eval(module) and _inference(module)[0]:
        pass                        # an inference loop's forward
    elif not st and _idle() and _is_eval(module):  # an eval pass, or a companion
        if _eval_root(module):
            _end_tail()
            _Steps.in_eval = True
            region = _EvalPair(_R_EVAL, region)
    elif _idle() and _torch.is_grad_enabled():
        _begin()
    if not st and module is not None and _torch.is_grad_enabled() and not _is_eval(module):
        _trains(module)
    region.__enter__()
    if acc is not None and _Adapt.measuring:
        if not st:
            _first_root(acc)
        st.append((frame, region, None, None, None, _now(), acc))
    else:
        st.append((frame, region, None, None, None, 0, None))


def _first_root(acc):
    """A root forward (nothing open on the thread) while measuring: the
    first of its step (the model, not the loss after it) is kept whatever
    its time, as its forward may begin a step or an eval pass."""
    if _Adapt.fresh or _idle():
        _Adapt.fresh = False
        acc[2] = 1


def _measured(e):
    """A forward entry closed by its own post hook: its time into its stats."""
    acc = e[6]
    if acc is not None and _Adapt.measuring:
        acc[0] += _now() - e[5]
        acc[1] += 1
        if len(_tls.fwd) == 0:
            _adapt_tick(False)


def _fwd_close(frame):
    """Post hook: close down to the entry this _call_impl frame opened; True
    when it was found."""
    st = _tls.fwd
    if st and st[-1][0] is frame:
        e = st.pop()
        e[1].__exit__(None, None, None)
        if e[6] is not None:
            _measured(e)
        if not st and _Steps.infer:
            _infer_mark()
        return True
    for i in range(len(st) - 1, -1, -1):
        if st[i][0] is frame:
            _close_fwd(_tls, i)
            return True
    return _raised(st, frame)


def _raised(st, frame):
    """A forward that raised: torch runs the always_call post hook from
    _call_impl, the frame above the one that ran the pre hook (its inner()
    on torch 2): close down to the entry opened there."""
    for i in range(len(st) - 1, -1, -1):
        if getattr(st[i][0], "f_back", None) is frame:
            _close_fwd(_tls, i)
            return True
    return False


def _out_tensors(out):
    """The tensors of a module's output, in order: the output itself, a
    tuple's or list's items, a dict's values (HF's ModelOutput), a
    @dataclass record's fields (a custom trainer's output)."""
    if isinstance(out, _torch.Tensor):
        return (out,)
    if isinstance(out, (tuple, list)):
        items = out
    elif isinstance(out, dict):
        items = out.values()
    else:
        fields = getattr(type(out), "__dataclass_fields__", None)
        if not isinstance(fields, dict):
            return ()
        items = [getattr(out, name, None) for name in fields]
    return [o for o in items if isinstance(o, _torch.Tensor)]


def _out_tensor(out, inner):
    """The output tensor whose gradient begins the module's backward
    segment: the first with a grad_fn other than inner (the one an inner
    module hooked: a record of (logits, loss) has its loss); inner where
    there is no other, None where there is none."""
    if isinstance(out, _torch.Tensor):          # most modules: at once
        return out if out.requires_grad and out.grad_fn is not None else None
    seen = None
    for t in _out_tensors(out):
        if t.requires_grad and t.grad_fn is not None:
            if t is not inner:
                return t
            seen = t
    return seen


def _hook_backward(bw_hook, out):
    """Register the module's backward-begin hook on its output (_out_tensor),
    unless an inner module already hooked that same tensor (it owns the
    segment)."""
    if bw_hook is None or not _torch.is_grad_enabled():
        return
    tls = _tls
    t = _out_tensor(out, tls.last)
    if t is None or tls.last is t:
        return
    tls.last = t
    # a pre-hook on the output's grad_fn (it runs when the gradient of the
    # output arrives, as a tensor hook would): the tensor's own hook dict is
    # the program's; a RemovableHandle-free hook there once broke the
    # program's t.register_hook.  Half the cost of Tensor.register_hook on
    # torch 2.x (its RemovableHandle and checks), and no handle is kept.
    try:
        t.grad_fn.register_prehook(bw_hook)
    except Exception:           # a grad_fn without pre-hooks: the public way
        try:
            t.register_hook(bw_hook)
        except Exception:
            _degrade("backward segments", "a module output takes no hook")


def _module_hooks(m, fwd, bw_hook, acc=None):
    """instrument()'s forward pre/post hooks on module m (measured into acc
    while _Adapt measures, when given); returns their removers."""
    def pre(module, inputs):
        if _is_compiling():
            return
        if acc is not None and _Adapt.measuring:       # PRISM's own time too
            t = _own_now()
            _fwd_open(fwd, _getframe(1), module, acc)
            _Adapt.own_ns += _own_now() - t
            return
        _fwd_open(fwd, _getframe(1), module, acc)

    def post(module, inputs, out):
        if _is_compiling():
            return
        t = _own_now() if acc is not None and _Adapt.measuring else 0
        if _fwd_close(_getframe(1)) and bw_hook is not None:
            _hook_backward(bw_hook, out)
        if t:
            _Adapt.own_ns += _own_now() - t

    pre._prism = post._prism = True
    _hide_hooks()
    a = m.register_forward_pre_hook(pre)
    b = _always(m.register_forward_hook, post)
    return [a.remove, b.remove]


def _always(register, hook):
    """Register a forward hook that runs when the forward raises too
    (always_call, torch >= 2.0): a forward that raised and was caught kept its
    region open until the next module call, and the program's handler (a
    sleep, a reload) was charged to the module.  torch 1.13 has no such
    hook: there _live_top() closes it at the next forward."""
    try:
        return register(hook, always_call=True)
    except TypeError:
        return register(hook)


# ---- the program's view of its modules ---------------------------------------
#
# PRISM's own hooks on a module (instrument(), and auto()'s kept modules after
# the adaptive decision) are closures: pickle, torch.save(model) and
# copy.deepcopy would carry them (and fail: "Can't pickle local object"), and
# torch.jit.script would try to compile them.  Module.__getstate__ leaves them
# out of the state (the copy is what the program would have got without
# PRISM), and torch.jit.script scripts the module with them set aside.

_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks")
_HOOK_IDS = ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
             "_forward_hooks_always_called")
_hidden = []


def _ours(d):
    """The ids of PRISM's hooks in hook dict d."""
    try:
        return [k for k, h in d.items()
                if type(h) is _FunctionType and h.__dict__.get("_prism") is True]
    except Exception:
        return []


def _without_ours(state):
    """A module's state (a dict) with PRISM's hooks left out, copying only
    the dicts that held some."""
    gone = set()
    for name in _HOOK_DICTS:
        d = state.get(name)
        ids = _ours(d) if d else ()
        if ids:
            d = d.copy()
            for k in ids:
                del d[k]
            state[name] = d
            gone.update(ids)
    for name in _HOOK_IDS:
        d = state.get(name)
        if gone and d and any(k in gone for k in d):
            state[name] = d.__class__((k, v) for k, v in d.items() if k not in gone)
    return state


def _hide_hooks():
    """Once: Module.__getstate__ and torch.jit.script as above."""
    if _hidden:
        return
    _hidden.append(True)
    mod = _torch.nn.Module
    orig = mod.__dict__.get("__getstate__")       # torch 1.13 has none

    def __getstate__(self):
        state = orig(self) if orig is not None else self.__dict__.copy()
        if isinstance(state, dict):
            return _without_ours(state)
        return state
    __getstate__._prism = True
    if orig is not None:
        __getstate__ = _like(__getstate__, orig, "__getstate__")
    mod.__getstate__ = __getstate__

    jit = getattr(_torch, "jit", None)
    script = getattr(jit, "script", None)
    if script is None or getattr(script, "_prism", False):
        return

    try:                    # script() finds a class's names _frames_up frames above it
        import inspect
        frames_up = "_frames_up" in inspect.signature(script).parameters
    except (TypeError, ValueError):
        frames_up = False

    def script_(obj, *args, **kwargs):
        if not isinstance(obj, mod):
            if frames_up:       # this wrapper is one frame more
                if len(args) >= 2:
                    args = (args[0], args[1] + 1) + tuple(args[2:])
                else:
                    kwargs["_frames_up"] = kwargs.get("_frames_up", 0) + 1
            return script(obj, *args, **kwargs)
        saved = []
        try:
            for m in obj.modules():
                for name in _HOOK_DICTS:
                    d = getattr(m, name, None)
                    if d and _ours(d):
                        saved.append((d, list(d.items())))
                        for k in _ours(d):
                            del d[k]
        except Exception:
            pass
        try:
            return script(obj, *args, **kwargs)
        finally:
            for d, items in saved:          # the program's order, ours among them
                d.clear()
                d.update(items)
    jit.script = _like(script_, script, "script")


# ---- auto(): global module hooks ---------------------------------------------

class _Auto:
    depth = None
    backward = True
    handles = []
    roots = weakref.WeakKeyDictionary()     # root module -> _module_names(root)
    started = False
    measure = False             # adaptive: measure until _Adapt decides
    kept_handles = []           # after it: the kept modules' own hooks (auto() has no undo)


def _auto_pre(module, inputs):
    if _is_compiling():
        return
    if _Auto.measure and _Adapt.measuring:             # PRISM's own time too
        t = _own_now()
        _auto_open(module, _getframe(1))
        _Adapt.own_ns += _own_now() - t
        return
    _auto_open(module, _getframe(1))


def _auto_open(module, frame):
    st = _tls.fwd
    if st:
        top = st[-1][0]
        f = frame.f_back
        if f is not top and (f is None or f.f_back is not top):
            _live_top(st, frame)
    if module in _instrumented:     # instrument()'s own hooks record it
        return
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
            below = None if names is not None else _below_root(module)
            if below is not None:   # a model's module called alone: its path
                names, root, entry = below
            else:
                if names is None:
                    names = _Auto.roots[module] = _module_names(module)
                root, entry = module, ("", 0)
        except TypeError:
            return
    path, lvl = entry
    if _Auto.depth is not None and lvl > _Auto.depth:
        return
    fwd, bw_hook, acc = _regions_for(root, path)
    if not st and _in_backward():   # activation checkpointing's recompute
        fwd = _recompute(fwd)
    elif not st and _Steps.infer_ok and _is_eval(module) and _inference(module)[0]:
        pass                        # an inference loop's forward
    elif not st and _idle() and _is_eval(module):  # an eval pass, or a companion
        if _eval_root(module):
            _end_tail()
            _Steps.in_eval = True
            fwd = _EvalPair(_R_EVAL, fwd)
    elif _idle() and _torch.is_grad_enabled():
        _begin()
    if not st and _torch.is_grad_enabled() and not _is_eval(module):
        _trains(module)
    fwd.__enter__()
    if _Auto.measure and _Adapt.measuring:
        if not st:
            _first_root(acc)
        st.append((frame, fwd, names, root, bw_hook, _now(), acc))
    else:
        st.append((frame, fwd, names, root, bw_hook, 0, None))


def _below_root(module):
    """(names, root, (path, depth)) of a module called with nothing open
    that is a module of a root seen before (a checkpointed block run again
    in backward, `model.encoder(x)` called alone): named by its path there,
    not as a root of its own (`Block.forward` with bare children, every
    block's backward merged into `fc1 (backward)`); None for another
    module.  Checked against the root's module at that path (an id may be
    reused)."""
    mid = id(module)
    for root, names in list(_Auto.roots.items()):
        e = names.get(mid)
        if e is None or root is module or not e[0]:
            continue
        try:
            if root.get_submodule(e[0]) is module:
                return names, root, e
        except Exception:
            continue
    return None


_graph_task = getattr(_torch._C, "_current_graph_task_id", None)


def _in_backward():
    """This thread runs a backward pass now (a recorded one, or autograd's
    engine: torch >= 2 says so on its device threads too)."""
    if _tls.in_bw:
        return True
    if _graph_task is not None:
        try:
            return _graph_task() != -1
        except Exception:
            return False
    return False


_recomputes = {}


def _recompute(fwd):
    """A root forward inside a backward pass: activation checkpointing
    running a checkpointed forward again.  It closes the open module
    segment (the recompute is not the previous module's backward) and is
    '<name> (recompute)'."""
    _close_seg(_tls)
    name = getattr(fwd, "name", None)
    if not isinstance(name, str):
        return fwd
    r = _recomputes.get(name)
    if r is None:
        r = _recomputes[name] = prism._region_of(name + " (recompute)")
    return r


def _auto_post(module, inputs, out):
    if _is_compiling() or module in _instrumented:     # its own hooks close it
        return
    if _Auto.measure and _Adapt.measuring:
        t = _own_now()
        _auto_close(out, _getframe(1))
        _Adapt.own_ns += _own_now() - t
        return
    _auto_close(out, _getframe(1))


def _auto_close(out, frame):
    st = _tls.fwd
    if st and st[-1][0] is frame:
        e = st.pop()
        e[1].__exit__(None, None, None)
        if e[6] is not None:
            _measured(e)
        if not st and _Steps.infer:
            _infer_mark()
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
    _raised(st, frame)


# ---- backward ----------------------------------------------------------------

def _close_seg(tls):
    seg = tls.seg
    if seg is not None:
        tls.seg = None
        seg.__exit__(None, None, None)


def _close_comp(tls):
    r = tls.comp
    if r is not None:
        tls.comp = None
        r.__exit__(None, None, None)


def _segment_hook(region):
    def hook(grad):
        if _Adapt.measuring:                            # PRISM's own time too
            t = _own_now()
            _segment(region)
            _Adapt.own_ns += _own_now() - t
        else:
            _segment(region)
        return None
    return hook


def _segment(region):
    """A module's backward begins: its segment follows the thread's last."""
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


def _wrap_backward(orig, region=None, label="backward"):
    """A backward pass as a region (`backward`; torch.autograd.grad's own,
    `autograd.grad`: a gradient penalty's pass, whose module segments were
    roots) holding the module segments it runs."""
    r = _R_BACKWARD if region is None else region

    def backward(*args, **kwargs):
        tls = _tls
        if tls.in_bw:
            return orig(*args, **kwargs)
        tls.in_bw = 1
        tls.last = None
        if _idle():
            _begin()
        r.__enter__()
        try:
            return orig(*args, **kwargs)
        finally:
            _close_seg(tls)
            r.__exit__(None, None, None)
            tls.in_bw = 0
    return _like(backward, orig, label)


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
    """(forward region, backward hook, stats) for the module at path below
    root (stats: the _Adapt list, shared by every module of that name).
    A torch.compile(model) root (an OptimizedModule) is compiled:<Class>; the
    model inside it (_orig_mod, whose hooks run outside the compiled frame)
    is <Class>.forward, its submodules their paths without "_orig_mod."."""
    cls = type(root).__name__
    if cls == "OptimizedModule" and hasattr(root, "_orig_mod"):
        inner = type(root._orig_mod).__name__
        key = ("compiled:" + inner, path)
        if not path:
            names = ("compiled:" + inner, "compiled:" + inner + " (backward)")
        elif path == "_orig_mod":
            names = (inner + ".forward", inner + " (backward)")
        else:
            p = path[len("_orig_mod."):] if path.startswith("_orig_mod.") else path
            names = (p, p + " (backward)")
    else:
        key = (cls, path)
        names = (path if path else cls + ".forward", (path if path else cls) + " (backward)")
    r = _regions.get(key)
    if r is None:
        acc = [0, 0, 0, names[0], key]
        _Adapt.accs.append(acc)
        r = (prism._region_of(names[0]), _segment_hook(prism._region_of(names[1])), acc)
        _regions[key] = r
    return r
