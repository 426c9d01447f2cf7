"""test_torch.py - prism.torch, python -m prism and prism-run -- python on a real
(small) PyTorch training run, tests/python/train_small.py.

Each profile is read by the built `prism-top analyze --format json` ($B/bin):
the expected module paths are among its ops, there is exactly one step per
optimizer step, and each planted problem is found with the right region.
Run with PYTHONPATH=$B/python and B set (tests/python/run.sh does); skipped
without torch or under the sanitizers (PRISM_TEST_SANITIZE=1).
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "train_small.py")
B = os.path.abspath(os.environ.get("B") or "build")
PYTHONPATH = os.path.join(B, "python")
PRISM_TOP = os.path.join(B, "bin", "prism-top")
PRISM_RUN = os.path.join(B, "bin", "prism-run")

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

SKIP = None
if os.environ.get("PRISM_TEST_SANITIZE") == "1":
    SKIP = "sanitizer build: the extension is not loaded into a sanitized interpreter"
elif not HAVE_TORCH:
    SKIP = "PyTorch is not installed for %s" % sys.executable

EPOCHS, STEPS = 2, 8                    # 16 optimizer steps per run
MODULES = ["Net.forward", "encoder", "encoder.0", "encoder.2", "mixer", "mixer.up",
           "mixer.down", "head"]
BACKWARD = ["backward", "head (backward)", "mixer.down (backward)", "encoder.0 (backward)"]
LOOP = ["optimizer.step", "data_loading"]


def env(**extra):
    e = dict(os.environ)
    e["PYTHONPATH"] = PYTHONPATH + (":" + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    for k in [k for k in e if k.startswith("PRISM_")]:
        del e[k]
    e.update(extra)
    return e


def run(argv, cwd, **extra):
    p = subprocess.run(argv, cwd=cwd, env=env(**extra), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def analyze(path):
    p = subprocess.run([PRISM_TOP, "analyze", path, "--format", "json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 0, "prism-top analyze %s: %s" % (path, p.stderr)
    return json.loads(p.stdout)


def train_args(*more, epochs=EPOCHS, steps=STEPS):
    return [TRAIN, "--epochs", str(epochs), "--steps", str(steps)] + list(more)


def item_line():
    with open(TRAIN) as f:
        for n, line in enumerate(f, 1):
            if "total += loss.item()" in line and "PLANT-ITEM" in line:
                return n
    raise AssertionError("no PLANT-ITEM line in train_small.py")


@unittest.skipIf(SKIP, SKIP)
class TorchTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="prism-torch-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def profile(self, mode, plant="none", extra_env=None, **kw):
        """Run train_small.py profiled `mode` (extra_env: variables for
        it); returns the analysis."""
        out = os.path.join(self.dir, "%s-%s.cbor" % (mode, plant))
        args = train_args("--plant", plant, **kw)
        if mode in ("regions", "instrument"):
            argv = [sys.executable] + args + ["--profile", mode, "-o", out]
        elif mode == "python-m":
            argv = [sys.executable, "-m", "prism", "-o", out] + args
        elif mode == "prism-run":
            argv = [PRISM_RUN, "-o", out, "--", sys.executable] + args
        rc, so, se = run(argv, self.dir, **(extra_env or {}))
        self.assertEqual(rc, 0, se)
        self.assertIn("steps=", so)
        if mode in ("python-m", "prism-run"):
            self.assertEqual(se.strip().splitlines()[-1], "prism: profile written to %s" % out,
                             se)
        self.assertTrue(os.path.exists(out), se)
        return analyze(out)

    def check_run(self, d, names, steps):
        self.assertTrue(d["complete"])
        self.assertEqual(d["steps"]["count"], steps)
        ops = {o["name"]: o for o in d["ops"]}
        for n in names:
            self.assertIn(n, ops, sorted(ops))
        return ops

    # ---- the four ways -----------------------------------------------------

    def test_explicit_regions(self):
        d = self.profile("regions")
        ops = self.check_run(d, ["forward", "backward"] + LOOP, EPOCHS * STEPS)
        self.assertEqual(ops["optimizer.step"]["calls"], EPOCHS * STEPS)

    def test_instrument(self):
        # every module in every step: adaptive folding is test_adapt.py's
        d = self.profile("instrument", extra_env={"PRISM_TORCH_MODULES": "all"})
        ops = self.check_run(d, MODULES + BACKWARD + LOOP, EPOCHS * STEPS)
        for n in ["Net.forward", "mixer.up", "optimizer.step", "backward"]:
            self.assertEqual(ops[n]["calls"], EPOCHS * STEPS, n)
        self.assertEqual(ops["mixer.up"]["heaviest_path"], "Net.forward/mixer/mixer.up")
        self.assertEqual(ops["head (backward)"]["heaviest_path"], "backward/head (backward)")
        # one wait per batch, and the one that ends each epoch
        self.assertEqual(ops["data_loading"]["calls"], EPOCHS * (STEPS + 1))
        self.assertEqual(d["summary"]["dropped"], 0)

    def test_python_m(self):
        d = self.profile("python-m")
        ops = self.check_run(d, MODULES + BACKWARD + LOOP + ["MSELoss.forward"], EPOCHS * STEPS)
        self.assertEqual(ops["optimizer.step"]["calls"], EPOCHS * STEPS)

    def test_instrument_under_zero_code(self):
        # issue 32: a script that calls prism.torch.instrument() itself, run
        # by python -m prism and by prism-run, whose zero-code hooks are on
        # too: no exception in the user's code (it was a TypeError in
        # backward), every module and backward segment recorded once
        for mode in ("python-m", "prism-run"):
            out = os.path.join(self.dir, "both-%s.cbor" % mode)
            args = train_args("--profile", "instrument", "-o", out, epochs=1)
            argv = ([sys.executable, "-m", "prism", "-o", out] if mode == "python-m"
                    else [PRISM_RUN, "-o", out, "--", sys.executable]) + args
            rc, so, se = run(argv, self.dir, PRISM_TORCH_MODULES="all")
            self.assertEqual(rc, 0, se)
            self.assertNotIn("Traceback", se)
            d = analyze(out)
            ops = self.check_run(d, MODULES + BACKWARD + LOOP, STEPS)
            for n in ["Net.forward", "mixer.up", "head (backward)"]:
                self.assertEqual(ops[n]["calls"], STEPS, (mode, n))
            self.assertEqual(ops["mixer.up"]["heaviest_path"], "Net.forward/mixer/mixer.up")

    def test_models_shared_between_threads(self):
        # issue 32: one model used by several threads at once (inference
        # and input-gradient threads beside the training thread), hooked by
        # zero-code auto() and by instrument() twice over: no exception in
        # any thread, every thread's results equal to the unprofiled ones,
        # and the steps are the training thread's alone
        out = os.path.join(self.dir, "threads.cbor")
        code = r"""
import sys, threading
import torch, torch.nn as nn
import prism, prism.torch as pt
sys.path.insert(0, %(here)r)
from train_small import Net
torch.manual_seed(0)
shared = nn.Sequential(nn.Linear(16, 32), nn.Sequential(nn.Linear(32, 32), nn.Tanh()),
                       nn.Linear(32, 4))
xs = [torch.randn(3, 16, generator=torch.Generator().manual_seed(i)) for i in range(4)]
def work(x):
    x = x.clone().requires_grad_(True)
    y = shared(x)
    g, = torch.autograd.grad(y.square().sum(), x)
    with torch.no_grad():
        z = shared(x)
    return y.detach(), g, z
want = [work(x) for x in xs]                 # before PRISM: the truth
assert prism.init(output=%(out)r)
pt.auto()
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
h1 = pt.instrument(shared)
h2 = pt.instrument(shared)                  # twice, on a model others share
h3 = pt.instrument(model, opt)
errors, done = [], threading.Event()
def thread(i):
    try:
        n = 0
        while n < 40 or not done.is_set():
            got = work(xs[i])
            for a, b in zip(got, want[i]):
                if not torch.allclose(a, b, rtol=1e-5, atol=1e-6):
                    errors.append("thread %%d: result changed" %% i)
                    return
            with torch.no_grad():
                model(torch.randn(2, 64))   # the trained model, read beside training
            n += 1
    except BaseException as e:
        errors.append("thread %%d: %%s: %%s" %% (i, type(e).__name__, e))
ts = [threading.Thread(target=thread, args=(i,), name="infer-%%d" %% i) for i in range(4)]
for t in ts:
    t.start()
STEPS = 12
for _ in range(STEPS):
    x = torch.randn(4, 64)
    loss = model(x).square().mean() + shared(torch.randn(2, 16)).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
done.set()
for t in ts:
    t.join()
assert not errors, errors
for x, w in zip(xs, want):
    for a, b in zip(work(x), w):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)
h1.remove(); h2.remove(); h3.remove()
prism.shutdown()
print("ok")
""" % {"here": HERE, "out": out}
        rc, so, se = run([sys.executable, "-c", code], self.dir, PRISM_TORCH_MODULES="all")
        self.assertEqual((rc, so), (0, "ok\n"), se)
        self.assertNotIn("Traceback", se)
        d = analyze(out)
        self.assertTrue(d["complete"])
        self.assertEqual(d["steps"]["count"], 12)       # the training thread's only
        self.assertEqual(d["summary"]["training_thread"], "MainThread")
        ops = {o["name"]: o for o in d["ops"]}
        self.assertEqual(ops["optimizer.step"]["calls"], 12)
        # the shared model: recorded once per call, whoever hooked it
        self.assertGreaterEqual(ops["Sequential.forward"]["calls"], 12 + 4 * 40 * 2)
        self.assertIn("1.0", ops)                       # its inner modules
        self.assertIn("1.0 (backward)", ops)            # and their backward segments
        self.assertEqual(d["summary"]["dropped"], 0)

    def test_prism_run(self):
        d = self.profile("prism-run", epochs=1)
        ops = self.check_run(d, MODULES + BACKWARD + LOOP, STEPS)
        self.assertEqual(ops["Net.forward"]["calls"], STEPS)
        self.assertIn("train_small.py", " ".join(d["header"]["argv"]))

    # ---- instrument(): exceptions, undo, twice, LR schedulers ------------------

    def test_instrument_api(self):
        out = os.path.join(self.dir, "api.cbor")
        code = r"""
import sys, warnings
import torch, torch.nn as nn
import prism, prism.torch as pt
warnings.simplefilter("error")          # an LR scheduler warning fails the run
sys.path.insert(0, %(here)r)
from train_small import Net
orig = {n: getattr(torch.Tensor, n) for n in ("item", "cpu", "tolist", "numpy", "backward")}
orig_bw = torch.autograd.backward
assert prism.init(output=%(out)r)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = torch.utils.data.DataLoader(torch.randn(12, 64), batch_size=2)
h = pt.instrument(model, opt, loader)
h2 = pt.instrument(model, opt, loader)   # twice: nothing more is recorded
sched = torch.optim.lr_scheduler.StepLR(opt, 2)
calls = [0]
def boom(mod, inp):
    calls[0] += 1
    if calls[0] %% 2 == 0:
        raise RuntimeError("planted")
model.mixer.down.register_forward_pre_hook(boom)
steps = 0
for x in loader:
    try:
        loss = model(x).square().mean()
    except RuntimeError:
        continue                        # the forward raised inside mixer
    loss.backward()
    opt.step()
    opt.zero_grad()
    sched.step()
    steps += 1
assert steps == 3, steps
# the scheduler's own wrapper of opt.step saw every step: torch 1.x counts
# them on the optimizer, torch 2.x sets a flag
if hasattr(opt, "_step_count"):
    assert opt._step_count == 3, opt._step_count
else:
    assert getattr(opt, "_opt_called", False), "the scheduler never saw opt.step"
h.remove()
h2.remove()
assert all(getattr(torch.Tensor, n) is f for n, f in orig.items()), "patches left"
assert torch.autograd.backward is orig_bw
assert type(loader) is torch.utils.data.DataLoader
assert not model._forward_hooks and not model.mixer._forward_pre_hooks
model(torch.randn(2, 64)).sum().backward()   # after remove: nothing recorded
opt.step()
print("ok", steps)
prism.shutdown()
""" % {"here": HERE, "out": out}
        rc, so, se = run([sys.executable, "-c", code], self.dir)
        self.assertEqual((rc, so), (0, "ok 3\n"), se)
        d = analyze(out)
        self.assertEqual(d["steps"]["count"], 3)
        ops = {o["name"]: o for o in d["ops"]}
        self.assertEqual(ops["Net.forward"]["calls"], 6)        # 3 raised, 3 did not
        self.assertEqual(ops["optimizer.step"]["calls"], 3)
        self.assertEqual(ops["data_loading"]["calls"], 7)
        for o in d["ops"]:                  # the raised forwards left nothing open
            if o.get("unattributed"):       # `(outside regions)`: no region
                continue
            self.assertEqual(o["heaviest_path"].count("Net.forward"),
                             0 if o["name"] in ("backward", "optimizer.step", "data_loading")
                             or o["name"].endswith("(backward)") else 1, o)
        self.assertEqual(ops["mixer.down"]["heaviest_path"], "Net.forward/mixer/mixer.down")

    def test_auto_after_torch_import(self):
        """auto() with torch imported already; a second auto() is harmless;
        a module outside the model (the loss) is a root of its own; depth."""
        out = os.path.join(self.dir, "auto.cbor")
        code = r"""
import torch, torch.nn as nn
import prism, prism.torch as pt
assert prism.init(output=%(out)r)
pt.auto(depth=1)
pt.auto()
model = nn.Sequential(nn.Linear(8, 8), nn.Sequential(nn.Linear(8, 8), nn.ReLU()))
opt = torch.optim.Adam(model.parameters())
loader = torch.utils.data.DataLoader(torch.randn(10, 8), batch_size=2, num_workers=2)
loss_fn = nn.MSELoss()
for x in loader:
    loss_fn(model(x), x).backward()
    opt.step()
    opt.zero_grad()
with torch.no_grad():
    model(torch.randn(2, 8))        # evaluation: no step begins
prism.shutdown()
print("ok")
""" % {"out": out}
        rc, so, se = run([sys.executable, "-c", code], self.dir)
        self.assertEqual((rc, so), (0, "ok\n"), se)
        d = analyze(out)
        self.assertEqual(d["steps"]["count"], 5)
        ops = {o["name"]: o for o in d["ops"]}
        for n in ("Sequential.forward", "0", "1", "MSELoss.forward", "optimizer.step",
                  "data_loading", "backward", "0 (backward)", "1 (backward)"):
            self.assertIn(n, ops, sorted(ops))
        self.assertNotIn("1.0", ops)        # depth 1
        self.assertEqual(ops["Sequential.forward"]["calls"], 6)
        self.assertEqual(ops["optimizer.step"]["calls"], 5)

    # ---- planted problems, one per run ---------------------------------------

    def bottlenecks(self, d, kind):
        return [b for b in d["bottlenecks"] if b["type"] == kind]

    def test_plant_leak(self):
        # losses kept with their graph: ~1.3 MiB of activations per step
        d = self.profile("instrument", "leak", epochs=2, steps=15)
        self.assertEqual(d["steps"]["count"], 30)
        fit = d["memory"]["host_leak"]
        self.assertTrue(fit["leak"], fit)
        self.assertGreater(fit["growth_mb"], 16, fit)
        found = self.bottlenecks(d, "memory_leak")
        self.assertEqual(len(found), 1, d["bottlenecks"])

    def test_plant_slow_data(self):
        d = self.profile("instrument", "slow_data")
        found = self.bottlenecks(d, "data_loading")
        self.assertEqual(len(found), 1, d["bottlenecks"])
        self.assertEqual(found[0]["path"], "data_loading")
        self.assertIn(found[0]["severity"], ("HIGH", "MEDIUM"))

    def test_plant_heavy(self):
        d = self.profile("instrument", "heavy")
        hot = self.bottlenecks(d, "hot_operation")
        self.assertTrue(hot, d["bottlenecks"])
        top = max(hot, key=lambda b: b["share"])
        self.assertIn(top["path"], ("Net.forward/mixer/mixer.up", "backward/mixer.up (backward)"))
        # HIGH on a quiet machine; a busy one stretches the waits around it
        # and its share of the step may drop a level
        self.assertIn(top["severity"], ("HIGH", "MEDIUM"))
        for b in hot:                       # nothing else comes near it
            # (shares are of wall time: on a busy machine a region the
            # scheduler preempts can cross the threshold, never the planted one)
            if "mixer.up" in b["path"]:
                continue
            self.assertNotEqual(b["severity"], "HIGH", b)
            if b["path"] == "data_loading":
                # the wait for the loader's worker processes, which a busy
                # machine starves (seen: 22.8 % of the step, 70 % of it
                # waiting for a CPU or blocked): below the planted module
                self.assertLess(b["share"], top["share"], (b, top))
            else:
                # its time running: a region preempted on a busy machine
                # waits for a CPU too (seen beside a CI run, a busy run and
                # a CPU hog: optimizer.step 16.7 % of the step, 44 % of it
                # waiting for a CPU, against the planted 32.9 %)
                m = re.search(r"waiting for a CPU (\d+)%", b.get("evidence", ""))
                running = b["share"] * (1 - int(m.group(1)) / 100.0) if m else b["share"]
                self.assertLess(running, top["share"] / 2, (b, top))

    def test_plant_item(self):
        d = self.profile("instrument", "item")
        name = ".item() at train_small.py:%d" % item_line()
        ops = {o["name"]: o for o in d["ops"]}
        self.assertIn(name, ops, sorted(ops))
        self.assertEqual(ops[name]["calls"], d["steps"]["count"])
        self.assertEqual(d["steps"]["count"], EPOCHS * STEPS)
        # on CPU a .item() is not a stall: no finding blames it
        for b in d["bottlenecks"]:
            self.assertNotEqual(b["type"], "cpu_gpu_sync", b)
            self.assertNotIn(".item()", b["path"] or "", b)

    # ---- python -m prism and the shell around it --------------------------------

    def script(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_python_m_exception_and_status(self):
        boom = self.script("boom.py", "import sys\nprint(sys.argv)\n"
                                      "def f():\n    raise RuntimeError('boom')\nf()\n")
        out = os.path.join(self.dir, "boom.cbor")
        rc, so, se = run([sys.executable, "-m", "prism", "-o", out, "boom.py", "a"], self.dir)
        self.assertEqual(rc, 1)
        self.assertIn("['boom.py', 'a']", so)
        lines = se.strip().splitlines()
        self.assertEqual(lines[0], "Traceback (most recent call last):")
        self.assertEqual(lines[1], '  File "%s", line 5, in <module>' % boom)
        self.assertEqual(lines[-2], "RuntimeError: boom")
        self.assertEqual(lines[-1], "prism: profile written to %s" % out)
        self.assertTrue(analyze(out)["complete"])
        self.script("ex.py", "import sys\nprint('torch' in sys.modules)\nsys.exit(3)\n")
        rc, so, se = run([sys.executable, "-m", "prism", "-o", out, "ex.py"], self.dir)
        self.assertEqual((rc, so), (3, "False\n"))          # torch not imported for it
        self.assertEqual(se, "prism: profile written to %s\n" % out)
        rc, so, se = run([sys.executable, "-m", "prism", "--bogus", "ex.py"], self.dir)
        self.assertEqual(rc, 2)
        self.assertIn("--bogus", se)
        # a KeyboardInterrupt (Ctrl-C) ends it as it ends plain python: its
        # atexit functions run, then it dies of SIGINT (not exit 130)
        self.script("kbi.py", "import atexit\natexit.register(lambda: print('atexit'))\n"
                              "raise KeyboardInterrupt\n")
        plain = run([sys.executable, "kbi.py"], self.dir)
        rc, so, se = run([sys.executable, "-m", "prism", "-o", out, "kbi.py"], self.dir)
        self.assertEqual(plain[0], -signal.SIGINT)
        self.assertEqual((rc, so), (plain[0], plain[1]))
        self.assertEqual(se.strip().splitlines()[-2:],
                         ["KeyboardInterrupt", "prism: profile written to %s" % out])
        self.assertTrue(analyze(out)["complete"])
        # a child the program forks that ends with sys.exit() (or returns)
        # writes no profile and says nothing: one last line, the parent's
        self.script("fk.py", "import os, sys\npid = os.fork()\nif pid == 0:\n"
                             "    print('child')\n    sys.exit(4)\n"
                             "print('child', os.WEXITSTATUS(os.waitpid(pid, 0)[1]))\n")
        plain = run([sys.executable, "fk.py"], self.dir)
        rc, so, se = run([sys.executable, "-m", "prism", "-o", out, "fk.py"], self.dir)
        self.assertEqual((rc, sorted(so.splitlines())), (plain[0], sorted(plain[1].splitlines())))
        self.assertEqual(se, "prism: profile written to %s\n" % out)

    def test_python_m_module_and_options(self):
        out = os.path.join(self.dir, "m-%p.cbor")
        rc, so, se = run([sys.executable, "-m", "prism", "-o", out, "--no-memory", "--depth", "1",
                          "--flush-ms", "50", "-m", "json.tool", "--help"], self.dir)
        self.assertEqual(rc, 0, se)
        self.assertIn("json.tool", so)
        last = se.strip().splitlines()[-1]
        self.assertTrue(last.startswith("prism: profile written to "), se)
        path = last[len("prism: profile written to "):]
        self.assertTrue(os.path.exists(path))
        self.assertNotIn("%p", path)
        conf = {c["key"]: c["value"] for c in analyze(path)["header"]["config"]}
        self.assertIn(conf.get("collect_memory"), (False, 0), conf)

    def test_depth(self):
        out = os.path.join(self.dir, "d.cbor")
        rc, so, se = run([sys.executable, "-m", "prism", "-o", out, "--depth", "1"]
                         + train_args("--workers", "0", epochs=1, steps=4), self.dir)
        self.assertEqual(rc, 0, se)
        ops = {o["name"] for o in analyze(out)["ops"]}
        self.assertIn("mixer", ops)
        self.assertNotIn("mixer.up", ops)
        self.assertNotIn("encoder.0", ops)

    # ---- prism-run -- python -----------------------------------------------------

    def test_prism_run_shebang_and_child(self):
        """A script run by its #! line is seen as Python; a child interpreter
        writes its own file (pid before the extension)."""
        child = self.script("child.py", "print('child')\n")
        parent = self.script("parent.py", "#!/usr/bin/env python3\nimport subprocess, sys\n"
                                          "subprocess.run([sys.executable, %r], check=True)\n"
                                          % child)
        os.chmod(parent, 0o755)
        out = os.path.join(self.dir, "run.cbor")
        rc, so, se = run([PRISM_RUN, "-o", out, "--", parent], self.dir,
                         PATH=os.path.dirname(sys.executable) + ":" + os.environ.get("PATH", ""))
        self.assertEqual(rc, 0, se)
        self.assertEqual(so, "child\n")
        files = sorted(f for f in os.listdir(self.dir) if f.startswith("run") and
                       f.endswith(".cbor"))
        self.assertEqual(len(files), 2, files)
        self.assertIn("run.cbor", files)
        lines = se.strip().splitlines()
        self.assertEqual(len(lines), 2, se)
        for f in files:
            self.assertIn("prism: profile written to %s" % os.path.join(self.dir, f), lines)
            self.assertTrue(analyze(os.path.join(self.dir, f))["complete"])

    def test_prism_run_no_package(self):
        """Without the package: one line says so, the program runs."""
        rc, so, se = run([PRISM_RUN, "-o", os.path.join(self.dir, "x.cbor"), "--",
                          sys.executable, "-c", "print(1)"], self.dir,
                         PRISM_PYTHONPATH=self.dir)
        self.assertEqual((rc, so), (0, "1\n"))
        self.assertEqual(len(se.strip().splitlines()), 1, se)
        self.assertIn("prism Python package", se)


class NoTorchTest(unittest.TestCase):
    """`import prism.torch` without torch says what is missing; prism works."""

    @unittest.skipIf(os.environ.get("PRISM_TEST_SANITIZE") == "1", "sanitizer build")
    def test_import_error(self):
        code = ("import sys\n"
                "class Block:\n"
                "    def find_spec(self, name, path=None, target=None):\n"
                "        if name == 'torch' or name.startswith('torch.'):\n"
                "            raise ImportError('hidden', name=name)\n"
                "sys.meta_path.insert(0, Block())\n"
                "import prism\n"
                "with prism.region('x'):\n"
                "    pass\n"
                "try:\n"
                "    import prism.torch\n"
                "except ImportError as e:\n"
                "    print('ImportError:', e)\n")
        rc, so, se = run([sys.executable, "-c", code], HERE)
        self.assertEqual(rc, 0, se)
        self.assertIn("ImportError: prism.torch needs PyTorch", so)
        self.assertIn("the core 'prism' module", so)


if __name__ == "__main__":
    unittest.main()
