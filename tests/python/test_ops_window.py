"""test_ops_window.py - the operator window (issue 35): `python -m prism
--op-steps 3 --op-warmup 2` on a small transformer of our own
(tests/python/ops_train.py, which counts its own FLOPs from its layer
sizes).  Checked: exactly steps 2-4 are window steps, flagged in the file
and left out of the step times; aten operators lie under the module regions
they ran in, forward and backward, and only in the window's steps; the
FLOPs a step equal the script's own count; the losses are bit for bit those
of the unprofiled script; a hot region's advice names its heaviest
operator; DataLoader workers forked in a window step do not inherit it;
torch.compile keeps the window off, and says so; bad settings are
refused."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from pyutil import prism_child_env, torch_skip

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "ops_train.py")
B = os.path.abspath(os.environ.get("B") or "build")
PRISM_TOP = os.path.join(B, "bin", "prism-top")
STEPS = 8

SKIP = torch_skip()


def truth_of(stdout):
    line = [l for l in stdout.splitlines() if l.startswith("TRUTH ")][-1]
    return json.loads(line[6:])


def run(args, env=None):
    return subprocess.run([sys.executable] + args, env=env or prism_child_env(),
                          capture_output=True, text=True, timeout=600)


def top(*args):
    p = subprocess.run([PRISM_TOP] + list(args), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


@unittest.skipIf(SKIP, SKIP or "")
class OpWindow(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="prism-ops-")
        cls.out = os.path.join(cls.dir, "ops.cbor")
        p = run(["-m", "prism", "-o", cls.out, "--op-steps", "3", "--op-warmup", "2",
                 SCRIPT, str(STEPS)])
        assert p.returncode == 0, p.stderr
        cls.stderr = p.stderr
        cls.truth = truth_of(p.stdout)
        cls.an = json.loads(top("analyze", cls.out, "--format", "json"))
        cls.txt = top("analyze", cls.out)
        folded = os.path.join(cls.dir, "all.folded")
        top("export", "--format", "folded", cls.out, "-o", folded)
        with open(folded) as f:
            cls.folded = f.read().splitlines()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def test_window_steps_flagged_and_not_timed(self):
        st = self.an["steps"]
        self.assertEqual(st["count"], STEPS)
        ops = [s["index"] for s in st["series"] if s.get("ops")]
        self.assertEqual(ops, [2, 3, 4])
        self.assertEqual(st["op_steps"], 3)
        self.assertEqual(st["timed"], STEPS - 3)
        w = self.an["op_window"]
        self.assertEqual((w["steps"], w["first_step"], w["last_step"]), (3, 2, 4))
        self.assertIn("Operator window: steps 2-4 (3 steps", self.txt)
        self.assertIn("3 in the operator window, left out of the step times", self.txt)
        for b in self.an["bottlenecks"]:     # the window's slow steps are no finding
            m = re.search(r"; steps ([0-9, ]+)[;.]", b["evidence"])
            if b["type"] == "slow_steps" and m:
                self.assertFalse({2, 3, 4} & {int(x) for x in m.group(1).split(",")}, b)

    def test_operators_under_their_modules(self):
        def paths(op):
            return [l.rsplit(" ", 1)[0] for l in self.folded if (";" + op) in l]
        qkv = [p for p in paths("aten::addmm [96, 64x32, 32x96]")]
        self.assertTrue(qkv, "no qkv product")
        for p in qkv:
            self.assertRegex(p, r"blocks;blocks\.[01];blocks\.[01]\.qkv;aten::addmm ")
        fwd = [p for p in paths("aten::bmm ") if "backward" not in p]
        self.assertTrue(fwd, "no attention product")
        for p in fwd:                       # written out in Block.forward itself
            self.assertRegex(p, r";blocks;blocks\.[01];aten::bmm ")
        back = [p for p in paths("aten::mm ") if "(backward)" in p]
        self.assertTrue(back, "no operator under a backward segment")
        self.assertTrue(all(any(n.endswith("(backward)") for n in p.split(";")[:-1])
                            for p in back))
        ops = [o for o in self.an["ops"] if o.get("op")]
        self.assertTrue(ops and all("::" in o["name"] for o in ops))

    def test_operators_only_in_the_window(self):
        f = os.path.join(self.dir, "outside.folded")
        top("export", "--format", "folded", "--steps", "5-7", self.out, "-o", f)
        with open(f) as fh:
            text = fh.read()
        self.assertIn("blocks", text)
        self.assertNotIn("aten::", text)
        f = os.path.join(self.dir, "inside.folded")
        top("export", "--format", "folded", "--steps", "3-3", self.out, "-o", f)
        with open(f) as fh:
            self.assertIn("aten::", fh.read())

    def test_flops_are_the_scripts_own_count(self):
        w = self.an["op_window"]
        self.assertEqual(int(round(w["flops_per_step"])), self.truth["flops"])
        self.assertEqual(w["dtype"], "f32")
        self.assertGreater(w["achieved_flops"], 0)
        regions = {r["path"]: r for r in w["regions"]}
        self.assertIn("backward", regions)
        self.assertIsNone(w["mfu"])                  # no GPU: achieved FLOP/s only

    def test_results_identical(self):
        p = run([SCRIPT, str(STEPS)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(truth_of(p.stdout)["losses"], self.truth["losses"])

    def test_hot_region_names_its_operator(self):
        # every region over 1 % of the step is hot: the forward and backward
        # blocks are, whatever this machine's load does to their shares
        an = json.loads(top("analyze", self.out, "--threshold", "1", "--format", "json"))
        recs = [b["recommendation"] for b in an["bottlenecks"] if b["type"] == "hot_operation"]
        self.assertTrue(any("In the operator window (3 steps)" in r and "'aten::" in r
                            for r in recs), recs)

    def test_off_without_the_option(self):
        out = os.path.join(self.dir, "plain.cbor")
        p = run(["-m", "prism", "-o", out, SCRIPT, "4"])
        self.assertEqual(p.returncode, 0, p.stderr)
        an = json.loads(top("analyze", out, "--format", "json"))
        self.assertIsNone(an["op_window"])
        self.assertNotIn("op_steps", an["steps"])
        self.assertFalse(any("::" in o["name"] for o in an["ops"]))

    def test_bad_settings_refused(self):
        p = run(["-m", "prism", "--op-steps", "x", SCRIPT, "1"])
        self.assertEqual(p.returncode, 2)
        p = run(["-c", "import prism; prism.init(output='x.cbor', op_steps=-1)"])
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("op_steps must be an int >= 0", p.stderr)
        env = prism_child_env()
        env["PRISM_OP_STEPS"] = "many"
        out = os.path.join(self.dir, "badenv.cbor")
        p = run(["-m", "prism", "-o", out, SCRIPT, "3"], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("PRISM_OP_STEPS=many is not an integer", p.stderr)

    def test_flop_steps_count_without_operators(self):
        out = os.path.join(self.dir, "flops.cbor")
        p = run(["-m", "prism", "-o", out, "--flop-steps", "2", "--op-warmup", "3", SCRIPT,
                 str(STEPS)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(truth_of(p.stdout)["losses"], self.truth["losses"])
        an = json.loads(top("analyze", out, "--format", "json"))
        w = an["op_window"]
        self.assertEqual((w["steps"], w["first_step"], w["operators"]), (2, 3, 0))
        self.assertEqual(int(round(w["flops_per_step"])), self.truth["flops"])
        self.assertEqual(w["dtype"], "f32")
        self.assertFalse(any("::" in o["name"] for o in an["ops"]))
        paths = {r["path"]: r["flops_per_step"] for r in w["regions"]}
        qkv = [v for k, v in paths.items() if k.endswith("blocks.0.qkv (backward)")]
        self.assertEqual(qkv, [2 * 2 * 64 * 32 * 96])   # its weight and input gradients
        self.assertIn("FLOP count: steps 3-4 (2 steps", top("analyze", out))

    def test_reference_config_shapes_and_flops(self):
        # ProfilerConfig's record_shapes / with_flops shape the window, which
        # only op_steps turns on
        code = (
            "import sys, torch\n"
            "from prism.profiling import ProfilerConfig, TrainingProfiler\n"
            "torch.manual_seed(0)\n"
            "m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))\n"
            "opt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
            "p = TrainingProfiler(ProfilerConfig(record_shapes=False, with_flops=%s,\n"
            "                                    output_dir=sys.argv[1]))\n"
            "p.instrument(m, opt)\n"
            "x = torch.randn(4, 8); y = torch.randint(0, 2, (4,))\n"
            "for _ in range(6):\n"
            "    torch.nn.functional.cross_entropy(m(x), y).backward(); opt.step(); opt.zero_grad()\n"
            "p.save(sys.argv[2])\n")
        env = prism_child_env()
        env.update(PRISM_OP_STEPS="2", PRISM_OP_WARMUP="1")
        for flops in (True, False):
            out = os.path.join(self.dir, "ref-%s.cbor" % flops)
            p = run(["-c", code % flops, self.dir, out], env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            w = json.loads(top("analyze", out, "--format", "json"))["op_window"]
            self.assertEqual(w["steps"], 2)
            names = [o["name"] for o in w["heaviest"]]
            self.assertIn("aten::addmm f32", names)          # no shapes, the dtype stays
            self.assertFalse(any("[" in n for n in names), names)
            self.assertEqual(w["flops_per_step"] > 0, flops)
        del env["PRISM_OP_STEPS"]                    # the window is op_steps' to turn on
        out = os.path.join(self.dir, "ref-off.cbor")
        p = run(["-c", code % True, self.dir, out], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIsNone(json.loads(top("analyze", out, "--format", "json"))["op_window"])

    def test_autocast(self):
        out = os.path.join(self.dir, "amp.cbor")
        p = run(["-m", "prism", "-o", out, "--op-steps", "2", "--op-warmup", "2", SCRIPT, "5",
                 "--amp"])
        self.assertEqual(p.returncode, 0, p.stderr)
        plain = run([SCRIPT, "5", "--amp"])
        self.assertEqual(truth_of(p.stdout)["losses"], truth_of(plain.stdout)["losses"])
        w = json.loads(top("analyze", out, "--format", "json"))["op_window"]
        self.assertEqual(w["dtype"], "bf16")
        self.assertGreater(w["flops_per_step"], 0)

    def test_forked_workers_do_not_inherit_it(self):
        # an epoch's workers are forked in the tail of step 3, a window step
        out = os.path.join(self.dir, "loader.cbor")
        p = run(["-m", "prism", "-o", out, "--op-steps", "3", "--op-warmup", "2", SCRIPT,
                 str(STEPS), "--loader"])
        self.assertEqual(p.returncode, 0, p.stderr)
        t = truth_of(p.stdout)
        self.assertEqual(t["worker_modes"], 0)
        self.assertEqual(t["losses"], self.truth["losses"])
        an = json.loads(top("analyze", out, "--format", "json"))
        self.assertEqual(an["op_window"]["steps"], 3)

    def test_compile_keeps_it_off(self):
        import torch
        if not hasattr(torch, "compile"):
            self.skipTest("torch %s has no torch.compile" % torch.__version__)
        out = os.path.join(self.dir, "compiled.cbor")
        p = run(["-m", "prism", "-o", out, "--op-steps", "2", "--op-warmup", "1", SCRIPT, "4",
                 "--compile"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("the operator window is off: the program uses torch.compile", p.stderr)
        an = json.loads(top("analyze", out, "--format", "json"))
        self.assertIsNone(an["op_window"])
        self.assertEqual(truth_of(p.stdout)["losses"][:1], self.truth["losses"][:1])


if __name__ == "__main__":
    unittest.main()
