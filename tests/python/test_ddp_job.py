"""test_ddp_job.py - a real distributed PyTorch job (issue 17): Debian's
torch, DistributedDataParallel over gloo on CPU, 3 ranks as processes
(tests/python/ddp_job.py), rank 1 slower in its `slow_block` module.  DDP's
all-reduce makes the other ranks wait for it every backward pass, so step
times agree and only work tells the ranks apart.

Recorded two ways during the test, each read as a job by `prism-top
analyze DIR --format json`:
  - PRISM profiles (prism.torch.instrument, CPU samples): the wait is
    measured (blocked at the end of the backward pass); rank 1 is the one
    straggler, its cause the slow_block module, the others' waiting region
    a backward segment;
  - torch.profiler traces (the legacy layout torch 1.13 writes, no rank in
    them: ranks by file order): gloo's all-reduce runs on the process
    group's own thread; the job still names rank 1 and its matmuls.

Skipped without torch; the PRISM half also under the sanitizers (torch and
the sanitized extension cannot share an interpreter)."""
import os
import shutil
import subprocess
import sys
import unittest

import pyutil
from pyutil import SANITIZE

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "ddp_job.py")
TEARDOWN_ABORT = "terminate called without an active exception"
SLOW = 1


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed for %s" % sys.executable)
class DdpJob(pyutil.TempDirTest):
    def run_job(self, trace):
        out = os.path.join(self.tmp, "trace" if trace else "prism")
        cmd = [sys.executable, JOB, out, "--ranks", "3", "--slow-rank", str(SLOW),
               "--slow-iters", "100", "--steps", "8"] + (["--trace"] if trace else [])
        env = pyutil.torch_env(not trace, OMP_NUM_THREADS=1)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        if p.returncode != 0 and TEARDOWN_ABORT in p.stderr:
            # torch's gloo teardown now and then aborts a rank as it exits
            # (std::terminate from a C++ thread left joinable); once in a
            # fresh-clone CI run with PRISM already shut down.  One retry,
            # said on stderr; a second abort fails the test.
            sys.stderr.write("test_ddp_job: a rank aborted in torch's teardown; once more\n")
            shutil.rmtree(out, True)
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        files = sorted(f for f in os.listdir(out) if not f.startswith("."))
        self.assertEqual(len(files), 3, files)
        return out, pyutil.prism_top_json("analyze", out, "--format", "json")

    def check(self, j, cause_words):
        self.assertEqual(j["ranks_count"], 3)
        self.assertEqual([s["rank"] for s in j["stragglers"]], [SLOW], j["stragglers"])
        s = j["stragglers"][0]
        self.assertTrue(any(w in s["cause"]["path"] for w in cause_words), s["cause"])
        self.assertGreaterEqual(s["slowed"], s["steps"] // 2)
        ranks = {r["rank"]: r for r in j["ranks"]}

        def waiting(fig):               # the share of its step a rank waited
            return fig["wait_median_ns"] / max(1, fig["wait_median_ns"] + fig["work_median_ns"])
        for r, fig in ranks.items():
            if r != SLOW:   # the others spent most of the step waiting, more than it
                self.assertGreater(fig["wait_median_ns"], fig["work_median_ns"], fig)
                # (not "it waited less than it worked": on a busy machine the
                # others are preempted too and it waits for them; seen 51 %)
                self.assertGreater(waiting(fig), waiting(ranks[SLOW]), (fig, ranks[SLOW]))

    @unittest.skipIf(SANITIZE, "torch and the sanitized extension in one interpreter")
    def test_prism_profiles(self):
        out, j = self.run_job(trace=False)
        self.check(j, ["slow_block"])
        self.assertTrue(j["stragglers"][0]["wait_region"]["wait"])
        # the text report says the same, and a rank summary merges alike
        txt = pyutil.prism_top("analyze", out).stdout.decode()
        self.assertIn("rank %d is a straggler" % SLOW, txt)
        self.assertIn("waiting for the slowest rank", txt)

    @unittest.skipIf(SANITIZE, "which module makes a rank slow is timing: torch with libasan "
                               "preloaded runs its allocations unevenly slower (the plain build checks it)")
    def test_torch_traces(self):
        out, j = self.run_job(trace=True)
        # the planted matmul, or on a busy machine (whose noise spreads the
        # excess over the step) the forward that holds it: the rank is
        # right either way, the cause only coarser
        self.check(j, ["aten::mm", "matmul", "DistributedDataParallel.forward"])


if __name__ == "__main__":
    unittest.main()
