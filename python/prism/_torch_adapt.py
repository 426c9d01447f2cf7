"""prism._torch_adapt - adaptive module regions: module regions cost what
they are worth.

In adaptive mode (the default; PRISM_TORCH_MODULES=all or modules="all"
keeps every module) every module region is measured for the first
`adapt_steps` optimizer steps (PRISM_TORCH_ADAPT_STEPS, default 5; the
first step warms up and is not counted).  Then decide() keeps the hooks of
the first root forward of a step (the model), of the modules whose forward
takes at least FACTOR times PRISM's own cost per module call (its hooks
time themselves while measuring), of the modules holding at least SHARE of
the step (at least SHARE_FACTOR times that cost a call), and of the largest others while all kept
hooks cost under BUDGET of a step; the others lose their hooks, forward
and backward, so their time is their parent's self time from then on (the
tree stays exact: nothing is lost, it is attributed one level up).

instrument()'s modules lose their own hooks (torch's handles: the
program's hooks are untouched); auto()'s global hooks are replaced by
per-module hooks on the kept modules of the roots seen so far (a module
first called after the decision is not recorded).  The profile says so:
INFO torch.modules.* (docs/FORMAT.md), shown by prism-top analyze.
"""

import os
import sys

import prism
from prism._torch_core import _Adapt, _Auto, _module_hooks, _now, _regions_for

FACTOR = 50                     # keep a module whose forward costs >= 50 x ours
BUDGET = 0.005                  # and the largest others while they cost < 0.5 % a step
SHARE = 0.05                    # a module holding >= 5 % of the step stays, while its
SHARE_FACTOR = 4                # forward costs >= 4 x ours (a busy machine inflates
                                # our measured cost: the planted heavy module was folded)
MODES = ("adaptive", "all")
COMPILED_WHY = ("torch.compile compiled modules of this program: a change to the hooks "
                "would make it compile them again")
THIN_OWN = 0.1                  # a thin wrapper's own time: under this share of its time
_NAMES_MAX = 4000               # bytes of INFO torch.modules.folded_names
_COST_DEFAULT = 10000           # ns, when nothing was measured
_COST_MIN = 1000                # ns: no pair of Python hooks costs less


def config(modules, adapt_steps):
    """The mode and the measured steps: the keywords, else the environment
    (PRISM_TORCH_MODULES, PRISM_TORCH_ADAPT_STEPS), else adaptive and 5.
    A bad keyword raises ValueError; a bad variable warns once and keeps
    the default."""
    if modules is None:
        modules = os.environ.get("PRISM_TORCH_MODULES", "") or "adaptive"
        if modules not in MODES:
            _warn("PRISM_TORCH_MODULES=%s is not one of %s; adaptive"
                  % (modules, ", ".join(MODES)))
            modules = "adaptive"
    elif modules not in MODES:
        raise ValueError("modules must be one of %s, not %r" % (", ".join(MODES), modules))
    if adapt_steps is None:
        v = os.environ.get("PRISM_TORCH_ADAPT_STEPS", "")
        adapt_steps = _Adapt.steps
        if v:
            try:
                adapt_steps = int(v)
                if adapt_steps < 1:
                    raise ValueError
            except ValueError:
                _warn("PRISM_TORCH_ADAPT_STEPS=%s is not an integer >= 1; %d"
                      % (v, _Adapt.steps))
                adapt_steps = _Adapt.steps
    elif not isinstance(adapt_steps, int) or isinstance(adapt_steps, bool) or adapt_steps < 1:
        raise ValueError("adapt_steps must be an int >= 1, not %r" % (adapt_steps,))
    return modules, adapt_steps


def _warn(msg):
    try:
        sys.stderr.write("prism: warning: %s\n" % msg)
    except Exception:
        pass


def start(adapt_steps):
    """Measure from now on (instrument() or auto() in adaptive mode).  A
    start after a decision measures again for the modules registered since."""
    if not _Adapt.measuring:
        _Adapt.measuring = True
        _Adapt.seen = _Adapt.roots = 0
        for acc in _Adapt.accs:
            acc[0] = acc[1] = 0
        _Adapt.t0 = _now()
        _Adapt.own_ns = 0
    _Adapt.steps = adapt_steps


# ---- the decision ------------------------------------------------------------

def _dynamo_compiled():
    """Whether dynamo compiled a frame without PRISM's callback seeing it
    (torch._dynamo used directly, not through torch.compile): its own
    counters say so.  Never imports it."""
    utils = sys.modules.get("torch._dynamo.utils")
    try:
        stats = utils.counters["stats"]
        return bool(stats.get("unique_graphs", 0) or stats.get("calls_captured", 0))
    except Exception:
        return False


def decide():
    """After the measured steps: fold the small modules (hooks removed),
    keep the others, and say so in the profile.  Where torch.compile has
    compiled anything, nothing changes: its guards check the module hooks
    (auto()'s global ones, a module's own), and any change would make it
    compile again, which on a large model costs minutes."""
    _Adapt.measuring = False
    cost = _cost_per_call()
    limit = FACTOR * cost
    if not _Adapt.compiled and _dynamo_compiled():
        _Adapt.compiled = True
    if _Adapt.compiled:
        _Adapt.regs = []
        _Auto.measure = False           # auto()'s global hooks stay as they are
        kept = [acc[3] for acc in _Adapt.accs if acc[1]]
        _info(kept, [], cost, limit, COMPILED_WHY)
        return
    keep = _chosen(cost, limit)
    kept, folded = [], []

    regs, _Adapt.regs = _Adapt.regs, []
    from prism.torch import _instrumented
    for ref, acc, removers in regs:
        m = ref()
        if m is None or m not in _instrumented:     # gone, or its handle removed
            continue
        if keep(acc):
            kept.append(acc[3])
            continue
        for rm in removers:
            try:
                rm()
            except Exception:
                pass
        folded.append(acc[3])
    if _Auto.measure:
        _Auto.measure = False
        _auto_switch(keep, kept, folded)
    _info(kept, folded, cost, limit)


def _cost_per_call():
    """PRISM's cost per module call in this program: twice the CPU time its
    hooks spent per measured module call (forward pre and post, the backward
    segment hook: timed inside them, cold caches and all), for torch's
    dispatch of them, which no hook can time (in a hot loop it adds 0.35 to
    0.5 of the hooks' own time on torch 1.13 and 2.13: the factor 2 leaves a
    margin for cold caches); _COST_DEFAULT when nothing was measured (then
    nothing is folded either)."""
    calls = sum(acc[1] for acc in _Adapt.accs)
    if not calls or not _Adapt.own_ns:
        return _COST_DEFAULT
    return max(int(2 * _Adapt.own_ns / calls), _COST_MIN)


def _by_path(accs):
    """(by_key, placed): the accs by their stats key (root class, path), and
    those called below a root, each as (acc, root class, path split at its
    dots), to find a module's ancestors by their keys."""
    by_key = {acc[4]: acc for acc in accs if len(acc) > 4}
    placed = [(acc, acc[4][0], acc[4][1].split(".")) for acc in accs
              if len(acc) > 4 and acc[1] and acc[4][1]]
    return by_key, placed


def _without_inner_hooks(accs, cost):
    """{id(acc): its measured time less PRISM's hooks on the modules called
    inside it} (cost a module call).  While measuring every module is
    hooked, so a wrapper's time holds the hooks of everything below it: 30
    nested thin wrappers around one Linear were each kept for the hooks of
    the ones below (the step x1.85, as with every module kept).  The stats
    key (root class, path) places a module below its ancestors."""
    by_key, placed = _by_path(accs)
    inner = {}
    for acc, cls, parts in placed:
        for i in range(len(parts) - 1, -1, -1):
            anc = by_key.get((cls, ".".join(parts[:i])))
            if anc is not None:
                inner[id(anc)] = inner.get(id(anc), 0) + acc[1]
    return {id(acc): max(acc[0] - cost * inner[id(acc)], 0) for acc in accs if id(acc) in inner}


def _thin_wrappers(accs, limit):
    """The ids of thin wrappers: a module whose one child module runs once a
    call of it and whose own time beside that child's is under limit a call
    and under THIN_OWN of its time.
    Its region would read as its child's, at the price of one more pair of
    hooks: folded, whatever its share of the step (30 nested wrappers, each
    holding the whole step, were all kept as heavy)."""
    by_key, placed = _by_path(accs)
    kids = {}
    for acc, cls, parts in placed:
        parent = by_key.get((cls, ".".join(parts[:-1])))
        if parent is not None:
            kids.setdefault(id(parent), []).append(acc)
    out = set()
    for acc in accs:
        k = kids.get(id(acc))
        own = acc[0] - k[0][0] if k else 0
        # its own time small beside the child's too: a module whose own
        # work is most of it (a 5 ms sleep around one Linear) is no wrapper,
        # even where a busy machine's inflated cost puts it under limit
        if (k and len(k) == 1 and k[0][1] == acc[1] and acc[1] and
                own < limit * acc[1] and own < THIN_OWN * acc[0]):
            out.add(id(acc))
    return out


def _chosen(cost, limit):
    """keep(acc) for the measured modules: the first root forward of a step
    (the model: it begins steps and eval passes), every module whose forward
    takes >= limit a call (its hooks cost it <= 1/FACTOR of its time), every
    module holding >= SHARE of the step whose forward takes >= SHARE_FACTOR
    times the cost (the heavy modules a user looks for stay, whatever the
    measured cost), and then, largest time per call first, the others while all the kept hooks
    together cost under BUDGET of the mean measured step (PRISM's cost per
    call x their calls per step; the step less the cost of every module's
    hooks while measuring).  A module never called while measuring
    keeps its hooks (nothing says it is small)."""
    a = _Adapt
    measured = a.seen - 1 if a.steps > 1 and a.seen > 1 else a.seen
    step_ns = (_now() - a.t0) / measured if measured > 0 else 0.0
    per_step = max(measured, 1)
    # the step as it will be: less what every module's hooks cost it now
    step_ns -= cost * sum(acc[1] for acc in a.accs) / per_step
    spend, budget = 0.0, BUDGET * max(step_ns, 0.0)
    own = _without_inner_hooks(a.accs, cost)
    thin = _thin_wrappers(a.accs, limit)
    keep_ids = set()
    rest = []
    for acc in a.accs:
        if acc[1] == 0 or (id(acc) in thin and not acc[2]):
            continue
        ns = own.get(id(acc), acc[0])
        heavy = (ns / per_step >= SHARE * step_ns and
                 ns >= SHARE_FACTOR * cost * acc[1])
        if acc[2] or ns >= limit * acc[1] or heavy:
            keep_ids.add(id(acc))
            spend += cost * acc[1] / per_step
        else:
            rest.append(acc)
    rest.sort(key=lambda acc: own.get(id(acc), acc[0]) / acc[1], reverse=True)
    for acc in rest:
        c = cost * acc[1] / per_step
        if spend + c > budget:
            break
        spend += c
        keep_ids.add(id(acc))

    def keep(acc):
        return acc[1] == 0 or id(acc) in keep_ids
    return keep


def _auto_switch(keep, kept, folded):
    """auto(): per-module hooks on the kept modules of every root seen, then
    the global hooks go (no module call pays for them any more)."""
    done = set()
    for root, names in list(_Auto.roots.items()):
        for path, m in root.named_modules():
            if id(m) in done or id(m) not in names:
                continue
            lvl = names[id(m)][1]
            if _Auto.depth is not None and lvl > _Auto.depth:
                continue
            done.add(id(m))
            fwd, bw_hook, acc = _regions_for(root, path)
            if acc[1] == 0 and not acc[2]:
                continue            # never called: nothing to keep
            if not keep(acc):
                folded.append(acc[3])
                continue
            kept.append(acc[3])
            _Auto.kept_handles.extend(
                _module_hooks(m, fwd, bw_hook if _Auto.backward else None))
    while _Auto.handles:
        try:
            _Auto.handles.pop().remove()
        except Exception:
            pass


def _info(kept, folded, cost, limit, why=""):
    """INFO torch.modules.*: what was folded, after which step, and why
    (kept_why: why nothing was folded, when something decided it)."""
    folded = sorted(set(folded))
    kept = sorted(set(kept) - set(folded))
    names, size = [], 0
    for i, n in enumerate(folded):
        if size + len(n) + 2 > _NAMES_MAX:
            names.append("... (%d more)" % (len(folded) - i))
            break
        names.append(n)
        size += len(n) + 2
    info = getattr(prism._prism, "_info", None)
    if info is None:
        return
    try:
        info("torch.modules.after_steps", prism.step_index() + 1)
        info("torch.modules.cost_ns", int(cost))
        info("torch.modules.threshold_ns", int(limit))
        info("torch.modules.kept", len(kept))
        info("torch.modules.folded", len(folded))
        info("torch.modules.folded_names", ", ".join(names))
        if why:
            info("torch.modules.kept_why", why)
    except Exception:
        pass


_Adapt.decide = decide
