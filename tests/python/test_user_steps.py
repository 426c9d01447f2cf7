"""test_user_steps.py - a program that marks its own steps (`with
prism.step():` around each iteration) beside prism.torch's automatic steps
(instrument() with steps=True, or python -m prism): its steps are the
steps, one per iteration, and PRISM says once that it marks none of its
own (both at once cut each iteration in two: 80 steps for 40 iterations,
a median of half-iterations, with no word; a user's trial).  The program's
output is unchanged.  torch 2.13 and 1.13."""

import subprocess
import sys
import unittest

from pyutil import TempDirTest, prism_top_json, torch_env, torch_skip, write_script

SKIP = torch_skip()

SCRIPT = r'''
import contextlib, sys, torch, prism, prism.torch
torch.manual_seed(0); torch.set_num_threads(1)
m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 4))
opt = torch.optim.SGD(m.parameters(), 0.01)
mode = sys.argv[1]
if mode == "instrument":
    prism.init(output=sys.argv[2])
    prism.torch.instrument(m, opt)
for i in range(12):
    if mode == "begin_end":
        prism.step_begin()
    with (prism.step() if mode != "begin_end" else contextlib.nullcontext()):
        x = torch.randn(32, 64)
        loss = m(x).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        with torch.no_grad():
            m(x)                # a metric forward, inside the program's step
    if mode == "begin_end":
        prism.step_end()
print("loss %.17g" % float(loss.detach()))
'''

LINE = "prism: the program marks its own steps (prism.step)"


@unittest.skipIf(SKIP, SKIP or "")
class UserSteps(TempDirTest):
    def run_mode(self, mode, zero_code):
        out = self.path(mode + ".cbor")
        script = write_script(self, "loop.py", SCRIPT)
        cmd = [sys.executable] + (["-m", "prism", "-o", out] if zero_code else [])
        p = subprocess.run(cmd + [script, mode, out], env=torch_env(with_prism=True),
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        plain = subprocess.run([sys.executable, script, "plain", out],
                               env=torch_env(with_prism=True),
                               capture_output=True, text=True, timeout=600)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual(p.stdout, plain.stdout)
        self.assertEqual(p.stderr.count(LINE), 1, p.stderr)
        return prism_top_json("analyze", out, "--format", "json")

    def check(self, an):
        self.assertEqual(an["steps"]["count"], 12)
        ops = {o["name"]: o for o in an["ops"]}
        # the metric forward is in the program's step, not an eval pass
        self.assertNotIn("eval", ops, sorted(ops))

    def test_instrument(self):
        self.check(self.run_mode("instrument", False))

    def test_python_m_prism(self):
        self.check(self.run_mode("zero", True))

    def test_step_begin_end(self):
        self.check(self.run_mode("begin_end", True))


if __name__ == "__main__":
    unittest.main()
