"""test_adapt.py - adaptive module regions (prism._torch_adapt): every module
is measured for the first adapt_steps optimizer steps, then the modules too
small to be worth their hooks are folded into their parents.

Each case runs a small deterministic CPU model in a child interpreter: tiny
Linear/ReLU modules (tens of microseconds a call) beside a deliberately
heavy one (a 5 ms sleep in its forward: far above 50 x PRISM's cost per
call on any machine).  The step budget (BUDGET, which also keeps the
largest small modules while they cost under 0.5 % of a step) is set to 0
in the children that count folded modules, so which modules fold depends
on the per-call threshold alone.  Checked: the folding happens after step
K (folded modules have K calls, kept ones one per step), the profile and
the report say which were folded, PRISM_TORCH_MODULES=all keeps every
module, the program's own forward hooks and tensor hooks keep working,
and losses and weights are bit for bit those of the run without PRISM.
"""
import json
import os
import subprocess
import sys
import textwrap
import unittest

from pyutil import PRISM_TOP, SANITIZE, TempDirTest, prism_top, torch_env

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

SKIP = None
if SANITIZE:
    SKIP = "sanitizer build: the extension is not loaded into a sanitized interpreter"
elif not HAVE_TORCH:
    SKIP = "PyTorch is not installed for %s" % sys.executable

STEPS, K = 10, 3

# The model and its loop, shared by every child.  Tiny: 0 (Linear), 1 (ReLU),
# 3 (Linear); heavy: 2 (its forward sleeps 5 ms).  The program's own hooks:
# a forward hook on the tiny module 3 and a tensor hook on the model's
# output (it scales the gradient: a result that would change if it were
# lost); both count their calls.
MODEL = r'''
import sys, time, torch
torch.manual_seed(0)
torch.set_num_threads(1)

class Heavy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        time.sleep(0.005)
        return self.lin(x)

def make():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), Heavy(),
                               torch.nn.Linear(8, 2))

counts = {"fwd_hook": 0, "tensor_hook": 0}

def fwd_hook(module, inputs, out):
    counts["fwd_hook"] += 1

def tensor_hook(grad):
    counts["tensor_hook"] += 1
    return grad * 0.5

def train(model, opt, steps):
    model[3].register_forward_hook(fwd_hook)
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    y = torch.randn(4, 2, generator=torch.Generator().manual_seed(2))
    loss_fn = torch.nn.MSELoss()
    losses = []
    for i in range(steps):
        out = model(x)
        out.register_hook(tensor_hook)
        loss = loss_fn(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.detach().clone())
    return torch.stack(losses), [p.detach().clone() for p in model.parameters()]
'''


@unittest.skipIf(SKIP, SKIP)
class AdaptTest(TempDirTest):
    def child(self, body, args=(), env=None, python_m=False):
        """Run MODEL + body; returns stdout (asserting success)."""
        src = self.path("child.py")
        with open(src, "w") as f:
            f.write(MODEL + textwrap.dedent(body))
        out = self.path("out.cbor")
        argv = [sys.executable]
        if python_m:
            argv += ["-m", "prism", "-o", out]
        argv += [src] + list(args)
        p = subprocess.run(argv, env=torch_env(with_prism=True, **(env or {})), cwd=self.tmp,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout, out

    def analyze(self, out):
        return json.loads(prism_top("analyze", out, "--format", "json").stdout)

    def ops(self, d):
        return {o["name"]: o for o in d["ops"]}

    def check_folded(self, d, tiny, kept):
        f = d["summary"]["folded_modules"]
        self.assertIsNotNone(f, d["summary"])
        self.assertEqual(f["after_steps"], K)
        names = f["names"].split(", ")
        for n in tiny:
            self.assertIn(n, names)
        for n in kept:
            self.assertNotIn(n, names)
        self.assertEqual(f["folded"], len(names))
        self.assertGreater(f["threshold_ns"], f["cost_ns"])
        ops = self.ops(d)
        for n in tiny:              # recorded while measured, then folded
            self.assertEqual(ops[n]["calls"], K, n)
        for n in kept:
            self.assertEqual(ops[n]["calls"], STEPS, n)
        self.assertEqual(d["steps"]["count"], STEPS)

    def test_instrument_folds_tiny_keeps_heavy(self):
        so, out = self.child('''
            import prism, prism.torch, prism._torch_adapt as A
            A.BUDGET = 0
            prism.init(output="out.cbor")
            model = make()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            h = prism.torch.instrument(model, opt, adapt_steps=%d)
            train(model, opt, %d)
            print(counts["fwd_hook"], counts["tensor_hook"])
            prism.shutdown()
            ''' % (K, STEPS))
        self.assertEqual(so.split(), [str(STEPS), str(STEPS)])
        d = self.analyze(out)
        self.check_folded(d, ["0", "1", "3", "2.lin"], ["Sequential.forward", "2"])
        ops = self.ops(d)
        self.assertEqual(ops["3 (backward)"]["calls"], K)      # backward folded too
        # 2.lin owned 2's output segment while measured; 2 owns it after
        self.assertEqual(ops["2 (backward)"]["calls"], STEPS - K)
        # the text report says so
        text = prism_top("analyze", out).stdout.decode()
        self.assertIn("Modules folded: 4 of 6 module regions after step %d" % K, text)
        self.assertIn("folded: 0, 1, 2.lin, 3", text)

    def test_thin_wrappers_folded(self):
        """Wrappers whose one child runs once a call and who add nothing of
        their own are folded even though each holds the whole heavy step
        (30 nested ones were all kept as heavy: the step x1.85); the heavy
        module inside stays."""
        so, out = self.child('''
            import prism, prism.torch, prism._torch_adapt as A
            A.BUDGET = 0
            class Wrap(torch.nn.Module):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner
                def forward(self, x):
                    return self.inner(x) + 0.0
            prism.init(output="out.cbor")
            torch.manual_seed(0)
            model = torch.nn.Sequential(Wrap(Wrap(Wrap(Heavy()))), torch.nn.Linear(8, 8),
                                        torch.nn.ReLU(), torch.nn.Linear(8, 2))
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            h = prism.torch.instrument(model, opt, adapt_steps=%d)
            train(model, opt, %d)
            prism.shutdown()
            ''' % (K, STEPS))
        d = self.analyze(out)
        self.check_folded(d, ["0", "0.inner", "0.inner.inner", "1", "2", "3"],
                          ["Sequential.forward", "0.inner.inner.inner"])

    def test_heavy_with_one_child_kept_at_a_high_cost(self):
        """A heavy module with one child (2: a 5 ms sleep around 2.lin) is no
        thin wrapper, even when a busy machine's inflated cost a call (here
        500 us: 50 x it is 25 ms) puts it under the per-call bar: it stays as
        heavy (under torch 1.13 beside a CI run it was folded as a wrapper)."""
        so, out = self.child('''
            import prism, prism.torch, prism._torch_adapt as A
            A.BUDGET = 0
            A._cost_per_call = lambda: 500000
            prism.init(output="out.cbor")
            model = make()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            h = prism.torch.instrument(model, opt, adapt_steps=%d)
            train(model, opt, %d)
            prism.shutdown()
            ''' % (K, STEPS))
        d = self.analyze(out)
        self.check_folded(d, ["0", "1", "3", "2.lin"], ["Sequential.forward", "2"])

    def test_python_m_folds_and_keeps_user_hooks(self):
        so, out = self.child('''
            import prism._torch_adapt as A
            A.BUDGET = 0
            model = make()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            train(model, opt, %d)
            print(counts["fwd_hook"], counts["tensor_hook"])
            mm = torch.nn.modules.module
            print(len(mm._global_forward_pre_hooks), len(mm._global_forward_hooks))
            ''' % STEPS, env={"PRISM_TORCH_ADAPT_STEPS": K}, python_m=True)
        lines = so.splitlines()
        self.assertEqual(lines[0].split(), [str(STEPS), str(STEPS)])
        self.assertEqual(lines[1].split(), ["0", "0"])     # the global hooks went
        d = self.analyze(out)
        self.check_folded(d, ["0", "1", "3", "2.lin", "MSELoss.forward"],
                          ["Sequential.forward", "2"])

    def test_all_keeps_every_module(self):
        so, out = self.child('''
            model = make()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            train(model, opt, %d)
            ''' % STEPS, env={"PRISM_TORCH_MODULES": "all", "PRISM_TORCH_ADAPT_STEPS": K},
            python_m=True)
        d = self.analyze(out)
        self.assertIsNone(d["summary"]["folded_modules"])
        ops = self.ops(d)
        for n in ("Sequential.forward", "0", "1", "2", "2.lin", "3", "MSELoss.forward",
                  "3 (backward)"):
            self.assertEqual(ops[n]["calls"], STEPS, n)
        self.assertNotIn("Modules folded", prism_top("analyze", out).stdout.decode())

    def test_results_identical(self):
        """Losses and weights bit for bit, the folding in the middle of the
        run (adaptive, both entry points) and with every module kept."""
        body = '''
            import prism, prism.torch, prism._torch_adapt as A
            A.BUDGET = 0
            model = make()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            l0, p0 = train(model, opt, %d)
            c0 = dict(counts)
            prism.init(output="out.cbor")
            counts.update(fwd_hook=0, tensor_hook=0)
            model = make()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            if sys.argv[1] == "auto":
                prism.torch.auto(adapt_steps=%d)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
            else:
                prism.torch.instrument(model, opt, adapt_steps=%d, modules=sys.argv[1])
            l1, p1 = train(model, opt, %d)
            prism.shutdown()
            assert counts == c0, (counts, c0)
            assert torch.equal(l0, l1), (l0, l1)
            assert all(torch.equal(a, b) for a, b in zip(p0, p1))
            print("same")
            ''' % (STEPS, K, K, STEPS)
        for mode in ("adaptive", "all", "auto"):
            so, out = self.child(body, args=[mode])
            self.assertEqual(so.strip(), "same", mode)
            d = self.analyze(out)
            self.assertEqual(d["steps"]["count"], STEPS, mode)
            if mode != "all":
                self.assertIsNotNone(d["summary"]["folded_modules"], mode)

    def test_bad_values(self):
        so, out = self.child('''
            import prism, prism.torch
            for kw in ({"modules": "some"}, {"adapt_steps": 0}, {"adapt_steps": True}):
                try:
                    prism.torch.instrument(make(), **kw)
                except ValueError:
                    print("ValueError")
            ''', env={"PRISM_TORCH_MODULES": "x", "PRISM_TORCH_ADAPT_STEPS": "-1"})
        self.assertEqual(so.split(), ["ValueError"] * 3)


if __name__ == "__main__":
    unittest.main()
