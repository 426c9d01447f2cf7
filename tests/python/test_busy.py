"""test_busy.py - verdicts on a busy machine with PyTorch (issue 26): a
compute-only training script of our own (tests/python/busy_train.py: a
frozen trunk of matmuls computing most of each step, a small trainable
head, one intra-op thread, nothing that blocks) under `python -m prism`
while busy-loop processes started here (at least two, at least one a core)
take the cores, its own clock as the truth.  Checked: no off_cpu_wait
finding (preempted compute is waiting for a CPU, never blocked); the first
finding is hot_operation on the trunk, its wall share of the step within 5
points of the script's own clock, its evidence splitting the time into
running, waiting for a CPU and blocked.  The hogs are stopped (killed and
reaped) whatever happens; no sleeps, no timing assertions beyond the
share against the script's clock."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "busy_train.py")
B = os.path.abspath(os.environ.get("B") or "build")
PRISM_TOP = os.path.join(B, "bin", "prism-top")

from pyutil import torch_skip

SKIP = torch_skip()


def hogs_start():
    """Busy loops in their own processes: at least two, one a core."""
    n = max(2, os.cpu_count() or 1)
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             stdin=subprocess.DEVNULL) for _ in range(n)]


def hogs_stop(hogs):
    for h in hogs:
        h.kill()
    for h in hogs:
        h.wait()


@unittest.skipIf(SKIP, SKIP or "")
class ComputeBesideHogs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="prism-busy-")
        out = os.path.join(cls.dir, "busy.cbor")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
        env["PYTHONPATH"] = os.path.join(B, "python")
        hogs = hogs_start()
        cls.nhogs = len(hogs)
        try:
            p = subprocess.run([sys.executable, "-m", "prism", "-o", out, SCRIPT], env=env,
                               cwd=cls.dir, capture_output=True, text=True, timeout=600)
        finally:
            hogs_stop(hogs)
        assert p.returncode == 0, p.stderr
        line = [l for l in p.stdout.splitlines() if l.startswith("CLOCK ")][-1]
        cls.clock = json.loads(line[6:])
        a = subprocess.run([PRISM_TOP, "analyze", out, "--format", "json"],
                           capture_output=True, text=True, timeout=120)
        assert a.returncode == 0, a.stderr
        cls.an = json.loads(a.stdout)
        cls.found = cls.an["bottlenecks"]
        for b in cls.found:
            print("    %-14s %-6s %5.1f%% %s | %s" % (b["type"], b["severity"],
                                                     100.0 * b["share"], b["description"],
                                                     b["evidence"]))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def setUp(self):
        if not self.an["summary"]["cpu_samples"]:
            self.skipTest("the profile holds no CPU samples (%s)"
                          % self.an["summary"]["cpu_sampler"])

    def test_no_off_cpu_wait(self):
        waits = [b for b in self.found if b["type"] == "off_cpu_wait"]
        self.assertEqual(waits, [], "%d hogs" % self.nhogs)

    def test_trunk_first_by_its_wall_share(self):
        own = self.clock["trunk_s"] / sum(self.clock["iter_s"])
        self.assertTrue(self.found)
        first = self.found[0]
        self.assertEqual(first["type"], "hot_operation", self.found)
        self.assertTrue((first["path"] or "").endswith("trunk"), first)
        print("  trunk: %.1f%% vs %.1f%% by the script's clock, %d hogs"
              % (100.0 * first["share"], 100.0 * own, self.nhogs))
        self.assertLess(abs(first["share"] - own), 0.05, (first["share"], own))
        self.assertIn("waiting for a CPU", first["evidence"])


if __name__ == "__main__":
    unittest.main()
