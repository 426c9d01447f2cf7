"""prism.profiling's DataLoadingProfiler and PreprocessingProfiler on real
DataLoaders with worker processes (tests/python/sweep_data.py: a dataset
whose __getitem__ burns its own thread's CPU time, a transform that does).

Each run is a child interpreter (one PRISM session per process; torch is
imported there).  What is asserted is what the sweep guarantees by its own
accounting, never a time: the recommendation is the fastest configuration
measured, or one within the stated tolerance of it; no batch starts past
the budget's end; the recorded profile has one step per timed batch and one
epoch per configuration.
"""
import json
import os
import subprocess
import sys
import unittest

from pyutil import B, TempDirTest, run_py, torch_env, torch_skip

HERE = os.path.dirname(os.path.abspath(__file__))

SWEEP = """
import json, sys
sys.path.insert(0, {here!r})
from sweep_data import Burning
from prism.profiling import DataLoadingProfiler
p = DataLoadingProfiler(time_budget_s={budget}, max_batches={maxb}, output={out!r})
rows = p.profile_configuration_range(Burning({n}, {ms}), batch_sizes={sizes}, worker_counts={workers})
pick, why = p.recommend()
print(json.dumps({{
    "rows": [dict(vars(r), name=r.name) for r in rows],
    "pick": pick.name if pick else None, "why": why, "elapsed": p.elapsed_s,
    "budget": p.time_budget_s, "tolerance": p.tolerance, "table": p.table()}}))
"""


@unittest.skipIf(torch_skip(), torch_skip())
class SweepTest(TempDirTest):
    def sweep(self, budget=30, maxb=12, out=None, n=256, ms=1.0, sizes=(8,), workers=(0, 2)):
        code = SWEEP.format(here=HERE, budget=budget, maxb=maxb, out=out, n=n, ms=ms,
                            sizes=list(sizes), workers=list(workers))
        p = run_py(code, env=torch_env(with_prism=True), timeout=600)
        return json.loads(p.stdout.strip().splitlines()[-1])

    def test_recommends_the_fastest_within_its_tolerance(self):
        r = self.sweep()
        rows = r["rows"]
        self.assertEqual([(x["batch_size"], x["num_workers"]) for x in rows], [(8, 0), (8, 2)])
        for x in rows:
            self.assertIsNone(x["error"], x)
            self.assertGreaterEqual(x["batches"], 3)            # min_batches
            self.assertGreater(x["throughput_samples_per_second"], 0)
            self.assertGreater(x["cpu_usage_percent"], 0)
            self.assertGreater(x["memory_usage_mb"], 0)
            self.assertLessEqual(x["batch_time_p50_s"], x["batch_time_p95_s"])
            self.assertAlmostEqual(x["throughput_samples_per_second"],
                                   8 * x["throughput_batches_per_second"], delta=1e-6 *
                                   x["throughput_samples_per_second"] + 1e-9)
        self.assertTrue(rows[1]["persistent_workers"])
        self.assertEqual(rows[1]["prefetch_factor"], 2)
        self.assertIsNone(rows[0]["prefetch_factor"])
        best = max(x["throughput_samples_per_second"] for x in rows)
        pick = next(x for x in rows if x["name"] == r["pick"])
        self.assertGreaterEqual(pick["throughput_samples_per_second"],
                                (1 - r["tolerance"]) * best)
        self.assertIn("Recommended: " + r["pick"], r["table"])
        self.assertIn(r["pick"], r["why"])

    def test_no_batch_starts_past_the_budget(self):
        # a budget too short for max_batches: each configuration stops early
        r = self.sweep(budget=3, maxb=100000, n=4096, ms=2.0, workers=(0, 1))
        for x in r["rows"]:
            self.assertLess(x["batches"], 4096 // 8 - 1, x)     # cut by the budget, not the data
            # what ran past a configuration's share is at most its last batch and the
            # workers' shutdown, which the sweep cannot interrupt; it reports it
            self.assertGreaterEqual(x["overrun_s"], 0)
        self.assertLessEqual(r["elapsed"], r["budget"] + sum(x["overrun_s"] for x in r["rows"])
                             + sum(x["batch_time_p95_s"] for x in r["rows"]) + 5.0)

    def test_recorded_as_a_profile(self):
        out = self.path("sweep.cbor")
        r = self.sweep(out=out, maxb=6)
        self.assertTrue(os.path.exists(out))
        p = subprocess.run([os.path.join(B, "bin", "prism-top"), "analyze", out, "--format",
                            "json"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        d = json.loads(p.stdout)
        batches = sum(x["batches"] for x in r["rows"])
        self.assertEqual(d["steps"]["count"], batches)
        names = {o["name"] for o in d["ops"]}
        for x in r["rows"]:
            self.assertIn(x["name"] + ": next batch", names)
            self.assertIn(x["name"] + ": first batch", names)

    def test_a_failing_dataset_is_reported_not_raised(self):
        code = f"""
import sys
sys.path.insert(0, {HERE!r})
from sweep_data import Failing
from prism.profiling import DataLoadingProfiler
p = DataLoadingProfiler(time_budget_s=20, max_batches=4)
rows = p.profile_configuration_range(Failing(), batch_sizes=[4], worker_counts=[0, 1])
print([r.error for r in rows])
print(p.recommend()[1])
"""
        out = run_py(code, env=torch_env(with_prism=True), timeout=300).stdout
        self.assertIn("ValueError: planted", out)
        self.assertIn("no configuration delivered a batch", out)


@unittest.skipIf(torch_skip(), torch_skip())
class PreprocessingTest(TempDirTest):
    def test_function_and_batches(self):
        code = f"""
import json, sys, torch
sys.path.insert(0, {HERE!r})
from sweep_data import burn_transform
from prism.profiling import PreprocessingProfiler
pp = PreprocessingProfiler()
one = pp.profile_preprocessing_function(burn_transform, torch.ones(3, 4), num_iterations=5)
rows = pp.profile_batch_preprocessing(burn_transform, torch.ones(3, 4), batch_sizes=[1, 4])
print(json.dumps([vars(one)] + [vars(r) for r in rows]))
"""
        d = json.loads(run_py(code, env=torch_env(with_prism=True)).stdout.splitlines()[-1])
        self.assertEqual(d[0]["operation_name"], "burn_transform")
        self.assertEqual(d[0]["iterations"], 5)
        self.assertGreater(d[0]["mean_time_s"], 0)
        self.assertEqual([r["operation_name"] for r in d[1:]],
                         ["burn_transform_batch_1", "burn_transform_batch_4"])
        self.assertEqual([r["batch_size"] for r in d[1:]], [1, 4])
        for r in d:
            self.assertIsNone(r["error"])
            self.assertAlmostEqual(r["samples_per_second"],
                                   r["batch_size"] * r["throughput_per_second"], delta=1e-6 *
                                   r["samples_per_second"] + 1e-9)


@unittest.skipIf(torch_skip(), torch_skip())
class SweepCommandTest(TempDirTest):
    def run_m(self, *args):
        return subprocess.run([sys.executable, "-m", "prism", "sweep"] + list(args),
                              env=torch_env(with_prism=True), cwd=HERE, capture_output=True,
                              text=True, timeout=600)

    def test_table_and_recommendation(self):
        p = self.run_m("--batch-sizes", "8", "--workers", "0,1", "--budget", "20",
                       "--max-batches", "5", "sweep_data:make", "128", "0.5")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("samples/s", p.stdout)
        self.assertRegex(p.stdout, r"Recommended: batch_size=8 workers=[01]: ")
        self.assertRegex(p.stdout, r"\(2 configurations in [0-9.]+ s of a 20 s budget\)")

    def test_errors(self):
        p = self.run_m("--workers", "x", "sweep_data:make")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--workers: not a list of integers", p.stderr)
        p = self.run_m("--frobnicate", "1", "sweep_data:make")
        self.assertEqual(p.returncode, 2)
        p = self.run_m("sweep_data:no_such_thing")
        self.assertEqual(p.returncode, 1)
        self.assertIn("sweep_data:no_such_thing: AttributeError", p.stderr)
        p = self.run_m("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("MODULE:CALLABLE", p.stdout)


if __name__ == "__main__":
    unittest.main()
