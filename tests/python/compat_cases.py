"""compat_cases.py - small deterministic training scripts, one per pattern a
PyTorch program may rely on, for tests/python/test_compat.py.

    python compat_cases.py CASE plain
    python -m prism -o OUT compat_cases.py CASE zero
    python compat_cases.py CASE instrument OUT     (prism.init + prism.torch.instrument)

Prints "R ..." lines: each step's loss and, at the end, every parameter and
its gradient, each element as float.hex (bitwise comparable); the three ways
must print the same.  "SKIP <reason>" when this torch cannot run the case.
CPU only, one thread, deterministic algorithms, fixed seeds.
"""

import os
import sys

import torch

CASE = sys.argv[1]
MODE = sys.argv[2]
OUT = sys.argv[3] if len(sys.argv) > 3 else None

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
STEPS = 4
_handles = []


def hexes(t):
    return " ".join(float(v).hex() for v in t.detach().float().reshape(-1).tolist())


def report(model, losses, tag=""):
    for i, loss in enumerate(losses):
        print("R %sloss %d %s" % (tag, i, float(loss).hex()))
    for name, p in model.named_parameters():
        print("R %sparam %s %s" % (tag, ascii(name), hexes(p)))
        if p.grad is not None:
            print("R %sgrad %s %s" % (tag, ascii(name), hexes(p.grad)))
    sys.stdout.flush()


def skip(reason):
    print("SKIP " + reason.replace("\n", " "))
    sys.stdout.flush()
    sys.exit(0)


class Net(torch.nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.l1 = torch.nn.Linear(8, 16)
        self.act = torch.nn.ReLU(inplace=inplace)
        self.l2 = torch.nn.Linear(16, 16)
        self.head = torch.nn.Linear(16, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.l2(self.act(self.l1(x)))))


def setup(make=Net, lr=0.05, loader=None):
    torch.manual_seed(0)
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    instrument(model, opt, loader)
    return model, opt


def instrument(model, opt, loader=None):
    if MODE != "instrument":
        return
    import prism
    import prism.torch
    if not _handles:
        assert prism.init(output=OUT), "prism.init failed"
    _handles.append(prism.torch.instrument(model, opt, loader))


def batches(n=STEPS, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(4, 8, generator=g), torch.randn(4, 1, generator=g)) for _ in range(n)]


def train(model, opt, data, fwd=None, tag=""):
    losses = []
    for x, y in data:
        opt.zero_grad()
        out = fwd(model, x) if fwd else model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


# ---- the cases ---------------------------------------------------------------

def case_hook_output():
    """The program's own tensor hooks on module outputs (the inner and the
    model's), one of them changing the gradient."""
    model, opt = setup()
    seen = []

    def fwd(m, x):
        h = m.l1(x)
        h.register_hook(lambda g: g * 0.5)
        out = m.head(torch.tanh(m.l2(m.act(h))))
        out.register_hook(lambda g: seen.append(g.sum().item()))
        return out
    report(model, train(model, opt, batches(), fwd))
    print("R seen %s" % " ".join(float(v).hex() for v in seen))


def case_odd_module_names():
    """Submodules named from file names PRISM cannot take as they are: a
    lone surrogate (os.listdir's surrogateescape of a non-UTF-8 name) and a
    NUL."""
    class Odd(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.add_module("img_\udcff_jpg", torch.nn.Linear(8, 16))
            self.add_module("nul\0x", torch.nn.Linear(16, 1))

        def forward(self, x):
            return getattr(self, "nul\0x")(torch.tanh(getattr(self, "img_\udcff_jpg")(x)))
    model, opt = setup(Odd)
    report(model, train(model, opt, batches()))


def case_hook_param():
    """A hook on a parameter (gradient clamped) and on a module's output."""
    model, opt = setup()
    model.l1.weight.register_hook(lambda g: g.clamp(-0.01, 0.01))

    def on_l2(m, i, o):
        o.register_hook(lambda g: g * 2.0)
    h = model.l2.register_forward_hook(on_l2)
    report(model, train(model, opt, batches()))
    h.remove()


def case_forward_hook():
    model, opt = setup()
    model.l2.register_forward_hook(lambda m, i, o: o * 1.5)
    report(model, train(model, opt, batches()))


def case_forward_pre_hook():
    model, opt = setup()
    model.l1.register_forward_pre_hook(lambda m, i: (i[0] * 0.5,))
    report(model, train(model, opt, batches()))


def case_full_backward_hook():
    model, opt = setup()
    model.l2.register_full_backward_hook(
        lambda m, gi, go: tuple(g * 0.25 if g is not None else None for g in gi))
    report(model, train(model, opt, batches()))


def case_global_module_hooks():
    mm = torch.nn.modules.module
    calls = []
    a = mm.register_module_forward_hook(lambda m, i, o: calls.append(type(m).__name__))
    b = mm.register_module_full_backward_hook(
        lambda m, gi, go: tuple(g * 0.5 if g is not None else None for g in gi))
    model, opt = setup()
    report(model, train(model, opt, batches()))
    a.remove()
    b.remove()
    print("R calls %d %s" % (len(calls), ",".join(sorted(set(calls)))))


def case_inplace():
    """In-place ops on module outputs: +=, ReLU(inplace=True), mul_(), relu_()."""
    model, opt = setup(lambda: Net(inplace=True))

    def fwd(m, x):
        h = m.l1(x)
        h += 1
        z = m.l2(m.act(h))
        z.mul_(0.5)
        return m.head(z).relu_()
    report(model, train(model, opt, batches(), fwd))


def case_compile():
    """torch.compile of a module and of a function (default backend, CPU)."""
    if not hasattr(torch, "compile"):
        skip("torch %s has no torch.compile" % torch.__version__)
    torch.manual_seed(0)
    base = Net()
    cmodel = torch.compile(base)

    @torch.compile
    def loss_fn(out, y):
        return ((out - y) ** 2).mean()
    opt = torch.optim.SGD(base.parameters(), lr=0.05, momentum=0.9)
    instrument(cmodel, opt)
    losses = []
    for x, y in batches():
        opt.zero_grad()
        loss = loss_fn(cmodel(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    report(base, losses)


def case_compile_steps():
    """A compiled module trained past PRISM's adaptive decision (after 5
    steps): the module hooks dynamo guards on stay as they were, so it
    compiles once, as it does without PRISM (the count of graphs dynamo
    made is a result line)."""
    if not hasattr(torch, "compile"):
        skip("torch %s has no torch.compile" % torch.__version__)
    torch.manual_seed(0)
    base = Net()
    cmodel = torch.compile(base)
    opt = torch.optim.SGD(base.parameters(), lr=0.05, momentum=0.9)
    instrument(cmodel, opt)
    losses = train(cmodel, opt, batches(10))
    report(base, losses)
    from torch._dynamo.utils import counters
    print("R dynamo graphs %d, frames %d" % (counters["stats"]["unique_graphs"],
                                             counters["stats"]["calls_captured"]))


def case_autocast_bf16():
    model, opt = setup()

    def fwd(m, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return m(x).float()
    report(model, train(model, opt, batches(), fwd))


def _checkpoint(reentrant):
    from torch.utils.checkpoint import checkpoint
    model, opt = setup()

    def fwd(m, x):
        if reentrant:
            x = x.requires_grad_()      # reentrant needs an input that requires grad
        h = checkpoint(lambda t: m.l2(m.act(m.l1(t))), x, use_reentrant=reentrant)
        return m.head(torch.tanh(h))
    report(model, train(model, opt, batches(), fwd))


def case_checkpoint_reentrant():
    _checkpoint(True)


def case_checkpoint_nonreentrant():
    _checkpoint(False)


def case_grad_accum():
    model, opt = setup()
    losses = []
    data = batches(8)
    for i in range(0, 8, 4):
        opt.zero_grad()
        for x, y in data[i:i + 4]:
            loss = torch.nn.functional.mse_loss(model(x), y) / 4
            loss.backward()
            losses.append(loss.item())
        opt.step()
    report(model, losses)


def case_grad_clip():
    model, opt = setup(lr=0.5)
    losses, norms = [], []
    for x, y in batches():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x) * 10, y)
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1).item())
        opt.step()
        losses.append(loss.item())
    report(model, losses)
    print("R norms %s" % " ".join(float(v).hex() for v in norms))


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def case_custom_function():
    model, opt = setup()

    def fwd(m, x):
        return m.head(Square.apply(m.l2(m.act(m.l1(x)))))
    report(model, train(model, opt, batches(), fwd))


def case_no_grad_eval():
    model, opt = setup()
    evals = []
    data = batches()
    for x, y in data:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            evals.append(torch.nn.functional.mse_loss(model(data[0][0]), data[0][1]).item())
        with torch.inference_mode():
            evals.append(model(data[1][0]).sum().item())
        model.train()
    report(model, evals)


def _scale_out(m, i, o):
    return o * 1.0


def _hooks(m):
    return " ".join("%d,%d" % (len(c._forward_pre_hooks), len(c._forward_hooks))
                    for c in m.modules())


def case_save_copy():
    """Past the adaptive decision (its kept modules hold PRISM's own hooks
    from then on): copy.deepcopy (an EMA or eval copy), pickle,
    torch.save(model) and torch.jit.script work as without PRISM, and the
    copies carry no hook the program did not set."""
    import copy
    import io
    import pickle
    import warnings
    model, opt = setup()
    mine = model.l2.register_forward_hook(_scale_out)   # the program's own (picklable)
    losses = train(model, opt, batches(8))
    x = batches(1, seed=5)[0][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # torch.load's weights_only notices
        ema = copy.deepcopy(model)
        pick = pickle.loads(pickle.dumps(model))
        buf = io.BytesIO()
        torch.save(model, buf)
        buf.seek(0)
        try:
            saved = torch.load(buf, weights_only=False)
        except TypeError:                       # torch 1.13: no weights_only
            buf.seek(0)
            saved = torch.load(buf)
    for tag, m in (("deepcopy", ema), ("pickle", pick), ("torch.save", saved)):
        print("R %s hooks %s" % (tag, _hooks(m)))
        print("R %s out %s" % (tag, hexes(m(x))))
    mine.remove()                       # TorchScript takes no untyped hook
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm = torch.jit.script(model)
    print("R jit.script out %s" % hexes(sm(x)))
    print("R jit.script hooks %d" % len(sm._forward_hooks))

    class Pair:                         # TorchScript classes: script() finds
        def __init__(self, a: int):     # Pair in its caller's frame
            self.a = a

    class Holder:
        def __init__(self):
            self.p = Pair(3)

        def get(self) -> int:
            return self.p.a
    print("R jit.script class %d" % torch.jit.script(Holder)().get())
    report(model, losses)


def case_lr_scheduler():
    """An LR scheduler made before instrument(), then the loop in the right
    order and, in a second model, in the wrong one (scheduler.step() before
    optimizer.step()): torch's warnings are the program's, the same with
    PRISM (none for the first, its "before optimizer.step()" one for the
    second), and optimizer.step keeps its __wrapped__."""
    import warnings
    for order in ("right", "wrong"):
        torch.manual_seed(0)
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        instrument(model, opt)
        losses = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for x, y in batches(6):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                if order == "wrong":
                    sched.step()
                opt.step()
                if order == "right":
                    sched.step()
                losses.append(loss.item())
        for m in w:
            print("R %s warning %s: %s" % (order, m.category.__name__,
                                           str(m.message).split(".")[0]))
        print("R %s wrapped %s" % (order, hasattr(opt.step, "__wrapped__")))
        print("R %s lr %s" % (order, float(opt.param_groups[0]["lr"]).hex()))
        report(model, losses, order + " ")


def case_generator_pipeline():
    def gen(n):
        g = torch.Generator().manual_seed(3)
        for _ in range(n):
            x = torch.randn(4, 8, generator=g)
            yield x, x.sum(1, keepdim=True) * 0.1
    model, opt = setup()
    report(model, train(model, opt, gen(STEPS)))


class Stream(torch.utils.data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        for i in range(wid, self.n, nw):
            g = torch.Generator().manual_seed(100 + i)
            x = torch.randn(8, generator=g)
            yield x, x.sum(0, keepdim=True) * 0.1


def case_iterable_dataset():
    loader = torch.utils.data.DataLoader(Stream(STEPS * 4), batch_size=4, num_workers=2)
    model, opt = setup(loader=loader)
    report(model, train(model, opt, loader))


# ---- distributed (gloo, 2 processes on CPU) ------------------------------------

def _dist_main(rank, world, port, kind, q):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    import torch.distributed as dist
    import datetime
    # a collective that waits longer fails instead of hanging the suite
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    try:
        torch.manual_seed(0)
        base = Net()
        if kind == "ddp":
            model = torch.nn.parallel.DistributedDataParallel(base)
        else:
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
            model = FSDP(base, device_id=torch.device("cpu"), use_orig_params=True)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        if MODE == "instrument":
            import prism
            import prism.torch
            prism.init(output=OUT + ".rank%d" % rank)
            prism.torch.instrument(model, opt)
        data = batches(STEPS, seed=1 + rank)
        losses = train(model, opt, data)
        if kind == "fsdp":
            with FSDP.summon_full_params(model):
                params = [(n, hexes(p)) for n, p in model.named_parameters()]
        else:
            params = [(n, hexes(p)) for n, p in model.named_parameters()]
        q.put((rank, losses, params))
    finally:
        dist.destroy_process_group()
    # Leave without Python's teardown: torch 2.x can deadlock freeing the
    # DDP Reducer (~ProcessGroupGloo joins its worker thread while holding
    # the GIL; the worker, dropping the last all-reduce's ThreadLocalState,
    # waits for the GIL to free the contextvars that backward stashed in
    # TLS).  Plain runs hit it too, only less often; it is torch's, not the
    # program's.  The profile is closed first, as at any exit.
    sys.stdout.flush()
    prism_mod = sys.modules.get("prism")
    if prism_mod is not None and hasattr(prism_mod, "shutdown"):
        prism_mod.shutdown()
    os._exit(0)


def _free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _distributed(kind):
    import torch.distributed as dist
    import torch.multiprocessing as mp
    if not dist.is_available() or not dist.is_gloo_available():
        skip("torch %s has no gloo backend" % torch.__version__)
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    try:
        mp.spawn(_dist_main, args=(2, _free_port(), kind, q), nprocs=2, join=True)
    except Exception as e:
        if kind == "fsdp":
            msg = str(e).strip().splitlines()
            skip("FSDP on CPU with gloo, torch %s: %s" % (torch.__version__, msg[-1] if msg else e))
        raise
    res = sorted(q.get() for _ in range(2))
    for rank, losses, params in res:
        for i, loss in enumerate(losses):
            print("R rank%d loss %d %s" % (rank, i, float(loss).hex()))
        for n, h in params:
            print("R rank%d param %s %s" % (rank, n, h))


def case_ddp():
    _distributed("ddp")


def case_fsdp():
    _distributed("fsdp")


if __name__ == "__main__":
    fn = globals().get("case_" + CASE)
    if fn is None:
        sys.exit("compat_cases.py: no case %r" % CASE)
    fn()
    for h in _handles:
        h.remove()
    print("DONE")
