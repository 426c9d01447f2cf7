"""test_companions.py - frozen companions of the iteration belong to its
steps: a distillation teacher (one, or an ensemble of three) run under
no_grad at the start of each loop body, an EMA copy run after
optimizer.step() (tests/python/companions_train.py, no DataLoader), under
`python -m prism`, the script's own clock as the truth.  Before, each was
taken for an eval pass: the steps held 8 % of the loop, the teacher's 90 %
was "Outside steps: 'eval'", and the findings were about optimizer.step.
Checked: one step per optimizer step; the steps hold the loop (within 15
points of the script's clock, the first iteration's companions being an
eval pass: nothing has trained yet); the companion's region is the hot
operation; the EMA model's evaluation after the loop (6 forwards) is still
an eval pass.  No timing assertion: shares of the script's own clock."""

import json
import os
import unittest

from pyutil import TempDirTest, prism_top, python_m_prism, torch_skip, write_script

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "companions_train.py")
SKIP = torch_skip()


@unittest.skipIf(SKIP, SKIP or "")
class Companions(TempDirTest):
    def run_mode(self, mode):
        p, an = python_m_prism(self, SCRIPT, self.path(mode + ".cbor"), mode)
        clock = json.loads([l for l in p.stdout.splitlines() if l.startswith("CLOCK ")][-1][6:])
        return clock, an

    def check(self, mode, hot):
        clock, an = self.run_mode(mode)
        steps = an["steps"]
        self.assertEqual(steps["count"], clock["steps"], steps)
        held = steps["total_ns"] / 1e9 / clock["loop_s"]
        self.assertGreater(held, 0.85, (held, steps, clock))
        self.assertLess(held, 1.05, (held, steps, clock))
        top = an["bottlenecks"][0]
        self.assertEqual(top["type"], "hot_operation", top)
        self.assertIn(hot, top["description"], top)
        return clock, an

    def test_teacher_at_the_start(self):
        self.check("teacher", "'Teacher.forward'")

    def test_teacher_ensemble(self):
        self.check("ensemble", "'Teacher.forward'")

    def test_ema_after_the_step_and_its_evaluation(self):
        clock, an = self.check("ema", "'Net.forward'")
        outside = {o["name"]: o["ns"] for o in an["summary"]["outside_steps"]["regions"]}
        self.assertIn("eval", outside, an["summary"]["outside_steps"])
        # the evaluation's 6 forwards: the first may stay in the last step
        self.assertGreater(outside["eval"] / 1e9, clock["eval_s"] * 4 / 6,
                           (outside, clock))


if __name__ == "__main__":
    unittest.main()


TWO_OPT = r'''
import sys, torch
torch.manual_seed(0); torch.set_num_threads(1)
g = torch.nn.Linear(8, 8); d = torch.nn.Linear(8, 1)
og = torch.optim.SGD(g.parameters(), 1e-3); od = torch.optim.SGD(d.parameters(), 1e-3)
two = sys.argv[1] == "two"
for i in range(10):
    d(g(torch.randn(4, 8)).detach()).mean().backward(); od.step(); od.zero_grad()
    if two and i % 2:
        d(g(torch.randn(4, 8))).mean().backward(); og.step(); og.zero_grad()
'''


@unittest.skipIf(SKIP, SKIP or "")
class TwoOptimizers(TempDirTest):
    """Two optimizers (a GAN: D every iteration, G every 2nd): each
    optimizer step ends a step, 15 steps for 10 iterations, and the
    Summary says how many optimizers stepped (JSON steps.optimizers)."""

    def analyze(self, mode):
        out = self.path(mode + ".cbor")
        _, js = python_m_prism(self, write_script(self, "gan.py", TWO_OPT), out, mode)
        return prism_top("analyze", out).stdout.decode(), js

    def test_two_optimizers_said(self):
        txt, js = self.analyze("two")
        self.assertEqual(js["steps"]["count"], 15)
        self.assertEqual(js["steps"].get("optimizers"), 2, js["steps"])
        self.assertIn("  Optimizers: 2 stepped; each optimizer step ends a step", txt)

    def test_one_optimizer_not_said(self):
        txt, js = self.analyze("one")
        self.assertEqual(js["steps"]["count"], 10)
        self.assertNotIn("optimizers", js["steps"])
        self.assertNotIn("Optimizers:", txt)
