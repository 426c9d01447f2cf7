"""test_iteration.py - the zero-code step is the whole loop body (issue 25):
a training script of our own (tests/python/iteration_train.py: metrics
written after optimizer.step(), a checkpoint every 6 steps, an eval pass
over a validation DataLoader with worker processes each epoch) under
`python -m prism`, its own clock as the truth.  Checked: one step per
optimizer step; the steps hold the work after optimizer.step() (their sum
within 5 points of the script's own iterations, the checkpoint steps the
slow ones); the eval pass is an `eval` phase outside the steps."""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import shutil
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "iteration_train.py")
B = os.path.abspath(os.environ.get("B") or "build")
PRISM_TOP = os.path.join(B, "bin", "prism-top")

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


@unittest.skipIf(SKIP, SKIP or "")
class WholeIteration(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="prism-iter-")
        out = os.path.join(cls.dir, "it.cbor")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
        env["PYTHONPATH"] = os.path.join(B, "python")
        p = subprocess.run([sys.executable, "-m", "prism", "-o", out, SCRIPT, cls.dir],
                           env=env, cwd=cls.dir, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        line = [l for l in p.stdout.splitlines() if l.startswith("CLOCK ")][-1]
        cls.clock = json.loads(line[6:])
        sys.path.insert(0, os.path.join(B, "python"))
        import prism
        cls.prof = prism.load(out)
        a = subprocess.run([PRISM_TOP, "analyze", out, "--format", "json"],
                           capture_output=True, text=True, timeout=120)
        assert a.returncode == 0, a.stderr
        cls.an = json.loads(a.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def test_one_step_per_optimizer_step(self):
        self.assertEqual(self.an["steps"]["count"], self.clock["opt_steps"])

    def test_steps_hold_the_work_after_the_optimizer_step(self):
        prism_s = sum(self.prof.step_durations_ns) / 1e9
        own_s = sum(self.clock["iter_s"])
        # the script's iterations run from its fetch to the end of its tail
        self.assertLess(abs(prism_s - own_s) / own_s, 0.05, (prism_s, own_s))
        # the metrics sink alone is a large part of it: inside the steps
        self.assertGreater(prism_s, self.clock["metrics_s"] + self.clock["ckpt_s"])

    def test_checkpoint_steps_are_the_slow_ones(self):
        d = list(self.prof.step_durations_ns)
        med = statistics.median(d)
        per_ckpt = self.clock["ckpt_s"] / len(self.clock["ckpt_steps"]) * 1e9
        for i in self.clock["ckpt_steps"]:
            self.assertGreater(d[i], med + per_ckpt / 2, (i, d[i], med, per_ckpt))

    def test_eval_is_its_own_phase(self):
        ops = {o["name"]: o for o in self.an["ops"]}
        self.assertIn("eval", ops, sorted(ops))
        ev = ops["eval"]
        self.assertEqual(ev["heaviest_path"], "eval")      # a root: in no step
        # the eval pass's time, by the script's clock, is in the eval phase
        self.assertGreater(ev["total_ns"] / 1e9, 0.5 * self.clock["eval_s"])
        # and in no step: the steps' sum matched the script's iterations


if __name__ == "__main__":
    unittest.main()
