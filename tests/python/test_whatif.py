"""What fixing the input stall is worth (issue 29's "what if"): a real
DataLoader whose Dataset.__getitem__ sleeps 5 ms a sample (whatif_train.py),
recorded by python -m prism.  The data_loading finding's `worth` projects the
step if the wait were zero; the workload's own clock gives the truth in the
same run: its mean step less the mean time it waited in next() for a batch.
Within 10 % of it (a ratio of two figures of one run: the machine's load
moves both alike)."""
import json
import os
import subprocess
import sys
import unittest

from pyutil import PRISM_TOP, TempDirTest, torch_env, torch_skip

HERE = os.path.dirname(os.path.abspath(__file__))


@unittest.skipIf(torch_skip(), torch_skip())
class WhatIfTest(TempDirTest):
    def test_input_stall_worth_the_step_without_it(self):
        out = self.path("wi.cbor")
        p = subprocess.run([sys.executable, "-m", "prism", "-o", out,
                            os.path.join(HERE, "whatif_train.py"), "5"],
                           env=torch_env(with_prism=True), capture_output=True, text=True,
                           timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        own = dict(line.split() for line in p.stdout.splitlines() if line.startswith("mean_"))
        truth = int(own["mean_step_ns"]) - int(own["mean_wait_ns"])
        a = subprocess.run([PRISM_TOP, "analyze", out, "--format", "json"], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(a.returncode, 0, a.stderr)
        d = json.loads(a.stdout)
        data = [b for b in d["bottlenecks"] if b["type"] == "data_loading"]
        self.assertTrue(data, d["bottlenecks"])
        w = data[0]["worth"]
        self.assertIsNotNone(w)
        print("projected %.2f ms, the workload's clock %.2f ms (step %.2f ms)"
              % (w["step_without_ns"] / 1e6, truth / 1e6, int(own["mean_step_ns"]) / 1e6))
        self.assertLess(abs(w["step_without_ns"] - truth), 0.10 * truth)
        self.assertAlmostEqual(w["speedup"], w["step_ns"] / w["step_without_ns"],
                               delta=1e-4 * w["speedup"])
        for b in d["bottlenecks"]:
            if b["type"] in ("hot_operation", "memory_leak", "slow_steps"):
                self.assertIsNone(b["worth"])
        txt = subprocess.run([PRISM_TOP, "analyze", out], capture_output=True, text=True,
                             timeout=300).stdout
        self.assertRegex(txt, r"Worth: the step [0-9.]+ ms -> [0-9.]+ ms if the wait were zero "
                              r"\(x[0-9.]+ steps/s\)")


if __name__ == "__main__":
    unittest.main()
