"""prism.measure: the "cookbook.measure" PerformanceProfiler over prism.

Two parts: the API in this process with no session (some readings faked
through a patched ``prism.system_read``, so energy, disk and network figures
are exact); and tests/python/measure_script.py, the document's examples run
for real under ``python -m prism``, their results checked against the
profile that session wrote (prism.load).  No check depends on an idle
machine: times are compared with each other, never with a budget.
"""
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
import warnings
from unittest import mock

import prism
from prism import measure
from prism._measure_metrics import MB, PerformanceMetrics, leak_fit
from prism.measure import PerformanceProfiler

from pyutil import TempDirTest, prism_child_env, run_script_under_prism

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "measure_script.py")
SUMMARY = re.compile(r"Peak RAM: \d+\.\d (GB|MB), Wall Time: \d+\.\ds, GPU Util: (n/a|\d+%)")
# 2 * batch * (in * out) for each Linear of the document's nn.Sequential
SEQUENTIAL_FLOPS = 2 * 32 * (784 * 512 + 512 * 10)


def torch_or_none():
    try:
        import torch
        return torch
    except ImportError:
        return None


def has_flop_counter():
    try:
        from torch.utils.flop_counter import FlopCounterMode  # noqa: F401
        return True
    except ImportError:
        return False


def cuda_available():
    torch = torch_or_none()
    return bool(torch and torch.cuda.is_available())




class FakeSystem:
    """prism.system_read's dicts, each reading later than the one before by
    fixed amounts: 1 s, 0.5 s user + 0.25 s system CPU, 1 MB read, 2 MB
    written, 3 MB received, 1 MB sent, 10 J; RSS fixed at 100 MB."""

    def __init__(self, **overrides):
        self.n = itertools.count()
        self.overrides = overrides

    def __call__(self):
        i = next(self.n)
        r = {"mono_ns": i * 10**9, "rss": 100 << 20, "mem_total": 1000 << 20,
             "io_read_bytes": i << 20, "io_write_bytes": i * (2 << 20),
             "net_rx_bytes": i * (3 << 20), "net_tx_bytes": i << 20,
             "cpu_user_ns": i * 500_000_000, "cpu_sys_ns": i * 250_000_000,
             "cpu_energy_uj": i * 10_000_000}
        r.update(self.overrides)
        return r


def sampler_threads():
    return [t for t in threading.enumerate() if t.name == "prism.measure sampler"]


class LeakRuleTest(unittest.TestCase):
    def test_rule(self):
        line = [(t / 10, 300 + 20 * t) for t in range(11)]               # +200 MB, steady
        self.assertEqual(leak_fit(line), (True, leak_fit(line)[1]))
        self.assertAlmostEqual(leak_fit(line)[1], 200.0)
        step = [(0.0, 300.0)] + [(t / 10, 316.0) for t in range(1, 11)]   # once, then flat
        self.assertFalse(leak_fit(step)[0])
        freed = [(t / 10, 300 + (10 if t % 2 else 0)) for t in range(11)]
        self.assertFalse(leak_fit(freed)[0])
        small = [(t / 10, 300 + 1.5 * t) for t in range(11)]             # 15 MB < 16 MB
        self.assertFalse(leak_fit(small)[0])
        big = [(t / 10, 1000 + 4.5 * t) for t in range(11)]              # 45 MB < 5 % of 1000
        self.assertFalse(leak_fit(big)[0])
        self.assertEqual(leak_fit([(0.0, 300.0), (0.05, 340.0)])[0], True)   # two readings
        self.assertEqual(leak_fit([(0.0, 300.0)]), (False, None))
        self.assertEqual(leak_fit([(1.0, 300.0), (1.0, 400.0)]), (False, None))


class NoSessionTest(TempDirTest):
    """The API in this process: no session runs here."""

    def setUp(self):
        super().setUp()
        self.assertFalse(prism.recording())

    def test_constructor(self):
        p = PerformanceProfiler()
        self.assertEqual((p.track_gpu, p.track_carbon, p.detailed_memory, p.memory_interval,
                          p.enable_line_profiling, p.estimate_flops,
                          p.carbon_intensity_g_per_kwh),
                         (True, False, False, 0.5, False, False, None))
        for bad in (0, -1, float("nan"), float("inf"), "0.5", True, None):
            with self.subTest(memory_interval=bad):
                with self.assertRaisesRegex(ValueError, "memory_interval"):
                    PerformanceProfiler(memory_interval=bad)
        for bad in (-1, float("nan"), "400", True):
            with self.subTest(carbon=bad):
                with self.assertRaisesRegex(ValueError, "carbon_intensity"):
                    PerformanceProfiler(carbon_intensity_g_per_kwh=bad)

    def test_fields(self):
        d = PerformanceMetrics().to_dict()
        self.assertEqual(list(d["memory"])[:5], ["peak_ram_mb", "final_ram_mb", "initial_ram_mb",
                                                 "peak_gpu_mb", "memory_leak_detected"])
        self.assertEqual(list(d["timing"]), ["wall_time_s", "cpu_time_s", "user_time_s",
                                             "system_time_s"])
        self.assertEqual(list(d["compute"]), ["estimated_flops", "flops_per_second",
                                              "gpu_utilization_percent",
                                              "cpu_utilization_percent"])
        self.assertEqual(list(d["system"])[:4], ["cpu_percent", "memory_percent",
                                                 "disk_io_percent", "network_io_mb"])
        self.assertIn("disk_write_mb", d["system"])
        self.assertIn("carbon_g", d["system"])

    def test_block_and_results(self):
        p = PerformanceProfiler(memory_interval=0.01, detailed_memory=True)
        self.assertFalse(p.has_results())
        with self.assertRaises(LookupError):
            p.get_metrics()
        with p.profile("work") as block:
            total = sum(i * i for i in range(200_000))
        self.assertIsNotNone(block)
        self.assertEqual(total, sum(i * i for i in range(200_000)))
        m = p.get_metrics()
        self.assertIs(m, p.get_metrics("work"))
        self.assertTrue(m.completed)
        self.assertIsNone(m.error)
        self.assertGreater(m.timing.wall_time_s, 0)
        self.assertAlmostEqual(m.timing.cpu_time_s, m.timing.user_time_s + m.timing.system_time_s)
        self.assertLessEqual(m.memory.initial_ram_mb, m.memory.peak_ram_mb)
        self.assertLessEqual(m.memory.final_ram_mb, m.memory.peak_ram_mb)
        self.assertGreaterEqual(len(m.memory.samples), 2)
        self.assertIsNone(m.system.disk_io_percent)
        self.assertIn("per-process", m.unavailable["system.disk_io_percent"])
        self.assertEqual(sampler_threads(), [])
        d = m.to_dict()
        self.assertEqual(json.loads(json.dumps(d, allow_nan=False)), d)
        self.assertRegex(m.summary(), SUMMARY)
        if not cuda_available():
            self.assertTrue(m.summary().endswith("GPU Util: n/a"))
            self.assertIsNone(m.compute.gpu_utilization_percent)
            self.assertIsNone(m.memory.peak_gpu_mb)
            self.assertIn("memory.peak_gpu_mb", m.unavailable)
        with self.assertRaises(LookupError):
            p.get_metrics("other")

    def test_summary_format(self):
        m = PerformanceMetrics()
        m.memory.peak_ram_mb = 2.4 * 1024
        m.timing.wall_time_s = 45.2
        m.compute.gpu_utilization_percent = 78.0
        self.assertEqual(m.summary(), "Peak RAM: 2.4 GB, Wall Time: 45.2s, GPU Util: 78%")
        m.memory.peak_ram_mb = 512.04
        m.compute.gpu_utilization_percent = None
        self.assertEqual(m.summary(), "Peak RAM: 512.0 MB, Wall Time: 45.2s, GPU Util: n/a")

    def test_error_in_block(self):
        p = PerformanceProfiler(memory_interval=0.01)

        class Boom(Exception):
            pass
        err = Boom("bad input")
        with self.assertRaises(Boom) as cm:
            with p.profile("failing"):
                sum(range(100_000))
                raise err
        self.assertIs(cm.exception, err)
        self.assertTrue(p.has_results())
        m = p.get_metrics()
        self.assertFalse(m.completed)
        self.assertEqual(m.error, "Boom: bad input")
        self.assertGreater(m.timing.wall_time_s, 0)
        self.assertEqual(sampler_threads(), [])
        with self.assertRaises(KeyboardInterrupt):
            with p.profile("interrupted"):
                raise KeyboardInterrupt
        self.assertEqual(p.get_metrics().error, "KeyboardInterrupt")

    def test_timing_breakdown(self):
        p = PerformanceProfiler()
        walls = {}
        for name in ("a", "b", "a"):
            with p.profile(name):
                sum(range(10_000))
            walls[name] = walls.get(name, 0.0) + p.get_metrics().timing.wall_time_s
        b = p.get_timing_breakdown()
        self.assertEqual(list(b), ["a", "b"])
        for name in b:
            self.assertAlmostEqual(b[name], walls[name])
        b["a"] = -1                               # a copy
        self.assertGreater(p.get_timing_breakdown()["a"], 0)

    def test_current_memory(self):
        p = PerformanceProfiler()
        with open("/proc/self/statm") as f:
            resident = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB
        self.assertLess(abs(p.get_current_memory() - resident), 0.1 * resident + 16)
        if not cuda_available():
            self.assertEqual(p.get_current_gpu_memory(), 0.0)

    def test_fake_readings(self):
        p = PerformanceProfiler(track_gpu=False, track_carbon=True,
                                carbon_intensity_g_per_kwh=400, memory_interval=1000)
        with mock.patch.object(prism, "system_read", FakeSystem()):
            with p.profile("x"):
                pass
        m = p.get_metrics()
        self.assertEqual(m.timing.wall_time_s, 1.0)
        self.assertEqual((m.timing.user_time_s, m.timing.system_time_s, m.timing.cpu_time_s),
                         (0.5, 0.25, 0.75))
        self.assertEqual(m.compute.cpu_utilization_percent, 75.0)
        self.assertAlmostEqual(m.system.cpu_percent, 75.0 / measure._cpus())
        self.assertEqual((m.system.disk_read_mb, m.system.disk_write_mb), (1.0, 2.0))
        self.assertEqual(m.system.network_io_mb, 4.0)
        self.assertEqual(m.system.memory_percent, 10.0)
        self.assertEqual(m.system.energy_j, 10.0)
        self.assertAlmostEqual(m.system.carbon_g, 10.0 / 3.6e6 * 400)
        self.assertEqual(m.memory.peak_ram_mb, 100.0)
        self.assertFalse(m.memory.memory_leak_detected)
        self.assertIsNone(m.memory.peak_gpu_mb)
        self.assertEqual(m.unavailable["memory.peak_gpu_mb"], "track_gpu=False")
        self.assertNotIn("system.carbon_g", m.unavailable)

    def test_carbon_needs_an_intensity(self):
        p = PerformanceProfiler(track_carbon=True, memory_interval=1000)
        with mock.patch.object(prism, "system_read", FakeSystem()):
            with p.profile("x"):
                pass
        m = p.get_metrics()
        self.assertEqual(m.system.energy_j, 10.0)
        self.assertIsNone(m.system.carbon_g)
        self.assertIn("carbon_intensity_g_per_kwh", m.unavailable["system.carbon_g"])
        unread = dict(cpu_energy_uj=None, io_read_bytes=None, io_write_bytes=None,
                      net_rx_bytes=None, rss=None)
        p = PerformanceProfiler(track_carbon=True, carbon_intensity_g_per_kwh=400,
                                memory_interval=1000)
        with mock.patch.object(prism, "system_read", FakeSystem(**unread)):
            with p.profile("y"):
                pass
        m = p.get_metrics()
        self.assertIsNone(m.system.energy_j)
        self.assertIn("RAPL", m.unavailable["system.energy_j"])
        self.assertEqual(m.unavailable["system.carbon_g"], "no energy reading")
        self.assertIsNone(m.system.disk_write_mb)
        self.assertIsNone(m.system.network_io_mb)
        self.assertIsNone(m.memory.peak_ram_mb)
        self.assertRegex(m.summary(), r"^Peak RAM: n/a, ")

    def test_instrumentation_never_raises(self):
        def broken():
            raise OSError("no /proc")
        p = PerformanceProfiler(memory_interval=0.001)
        with mock.patch.object(prism, "system_read", broken):
            with p.profile("x"):
                value = sum(range(1000))
        self.assertEqual(value, sum(range(1000)))
        self.assertFalse(p.has_results())
        with mock.patch.object(prism, "counter", side_effect=RuntimeError("counter")):
            with p.profile("y"):
                value = sum(range(1000))
        self.assertEqual(value, sum(range(1000)))
        self.assertEqual(p.get_metrics().operation_name, "y")
        self.assertEqual(sampler_threads(), [])

    def test_line_profiling_warns_once(self):
        with mock.patch.object(measure, "_line_warned", []):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                PerformanceProfiler(enable_line_profiling=True)
                PerformanceProfiler(enable_line_profiling=True)
                PerformanceProfiler()
        self.assertEqual(len(w), 1)
        self.assertIn("python -m prism", str(w[0].message))

    @unittest.skipIf(torch_or_none() is None, "PyTorch is not installed")
    def test_estimate_flops(self):
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))
        x = torch.randn(32, 784)
        want = model(x)
        p = PerformanceProfiler(estimate_flops=True)
        with p.profile("flops_analysis"):
            output = model(x)
        self.assertTrue(torch.equal(output, want))
        c = p.get_metrics().compute
        if has_flop_counter():
            self.assertEqual(c.estimated_flops, SEQUENTIAL_FLOPS)
            self.assertAlmostEqual(c.flops_per_second,
                                   SEQUENTIAL_FLOPS / p.get_metrics().timing.wall_time_s)
        else:
            self.assertIsNone(c.estimated_flops)
            self.assertIsNone(c.flops_per_second)
            self.assertIn("FlopCounterMode", p.get_metrics().unavailable["compute.estimated_flops"])
        p = PerformanceProfiler()
        with p.profile("no_flops"):
            model(x)
        self.assertIsNone(p.get_metrics().compute.estimated_flops)
        self.assertEqual(p.get_metrics().unavailable["compute.estimated_flops"],
                         "estimate_flops=False")


class FakeCuda:
    """torch.cuda as prism.measure asks it, one device (MB figures)."""

    def __init__(self, allocated, peak):
        self.allocated, self.peak = allocated << 20, peak << 20

    def device_count(self):
        return 1

    def memory_allocated(self, device):
        return self.allocated

    def max_memory_allocated(self, device):
        return self.peak

    def utilization(self):
        return 50

    def mem_get_info(self):
        return (30 << 30, 100 << 30)


class CudaBranchTest(unittest.TestCase):
    """The CUDA paths against a fake torch.cuda (no GPU on the test machines)."""

    def run_block(self, cuda, inside):
        p = PerformanceProfiler(memory_interval=1000)
        with mock.patch.object(measure, "_cuda", lambda: cuda):
            with p.profile("gpu"):
                inside()
            self.assertAlmostEqual(p.get_current_gpu_memory(), 0.7)
        return p.get_metrics()

    def test_peak_rose_in_the_block(self):
        cuda = FakeCuda(allocated=100, peak=100)

        def inside():
            cuda.allocated, cuda.peak = 200 << 20, 500 << 20    # a transient 500 MB
        m = self.run_block(cuda, inside)
        self.assertEqual(m.memory.peak_gpu_mb, 500.0)
        self.assertEqual(m.compute.gpu_utilization_percent, 50.0)
        self.assertTrue(m.summary().endswith("GPU Util: 50%"))
        self.assertNotIn("memory.peak_gpu_mb", m.unavailable)

    def test_peak_before_the_block(self):
        cuda = FakeCuda(allocated=100, peak=1000)               # the program's earlier peak

        def inside():
            cuda.allocated = 300 << 20
        m = self.run_block(cuda, inside)
        self.assertEqual(m.memory.peak_gpu_mb, 300.0)
        self.assertEqual(cuda.peak, 1000 << 20)                 # never reset

    def test_no_cuda(self):
        p = PerformanceProfiler()
        with mock.patch.object(measure, "_cuda", lambda: None), \
                mock.patch.object(measure, "_no_cuda_reason", lambda: "no CUDA device"):
            with p.profile("cpu"):
                pass
            self.assertEqual(p.get_current_gpu_memory(), 0.0)
        m = p.get_metrics()
        self.assertIsNone(m.memory.peak_gpu_mb)
        self.assertEqual(m.unavailable["compute.gpu_utilization_percent"], "no CUDA device")


@unittest.skipIf(torch_or_none() is None, "PyTorch is not installed")
class DocumentExamplesTest(unittest.TestCase):
    """The document's examples under python -m prism, against their profile."""

    @classmethod
    def setUpClass(cls):
        # not /dev/shm or a tmpfs: the disk check wants a file system that counts writes
        cls.dir = tempfile.mkdtemp(prefix="prism-measure-")
        cls.cbor = os.path.join(cls.dir, "run.cbor")
        cls.proc, cls.measured, cls.profile = run_script_under_prism(SCRIPT, cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0,
                         "stdout:\n%s\nstderr:\n%s" % (self.proc.stdout, self.proc.stderr))
        self.results = self.measured["results"]

    def result(self, example, name):
        return next(r["metrics"] for r in self.results
                    if r["example"] == example and r["name"] == name)

    def roots(self):
        """{name: node} of the main thread's top-level regions: the blocks
        (prism.torch's own `data_loading` waits are nested in them, so the
        document's `data_loading` block is told apart by its place)."""
        main = [t for t in self.profile.tree["threads"] if t["name"] == "MainThread"]
        self.assertEqual(len(main), 1)
        return {r["name"]: r for r in main[0]["roots"] if not r.get("unattributed")}

    def blocks(self):
        """{name: [metrics of each block of that name]}."""
        out = {}
        for r in self.results:
            out.setdefault(r["name"], []).append(r["metrics"])
        return out

    def test_output(self):
        out = self.proc.stdout
        for line in ("Training completed in ", "Peak memory usage: ", "Peak GPU memory: ",
                     "Operation breakdown:", "  data_loading: ", "Potential memory leak detected",
                     "Estimated FLOPs: ", "Operation failed: risky_operation: bad input",
                     "Partial timing: ", "measure_script: done"):
            self.assertIn(line, out)
        self.assertEqual(out.count("Potential memory leak detected"), 1, out)
        self.assertIn("prism: profile written to", self.proc.stderr)
        self.assertTrue(self.profile.complete)

    def test_every_block_is_a_region(self):
        roots = self.roots()
        blocks = self.blocks()
        self.assertEqual(set(roots), set(blocks))
        self.assertEqual(len(blocks), 12)
        for name, ms in blocks.items():
            self.assertEqual(roots[name]["calls"], len(ms), name)
        self.assertEqual(len(blocks["training_loop"]), 2)
        self.assertEqual(len(blocks["memory_leak_check"]), 2)

    def test_wall_time_agrees_with_the_profile(self):
        # Each block's region encloses its two readings: the region also
        # holds the readings themselves (tens of us, with their counters),
        # starting the sampler thread and, for the FLOPs block, entering
        # torch's FlopCounterMode.  On an idle machine the two agree within
        # a millisecond; a preemption in that window on a loaded one adds a
        # scheduler slice or more, hence 50 % + 50 ms above.  Below: the
        # profile's clock is converted to nanoseconds from its own
        # calibration against CLOCK_MONOTONIC, hence 1 % + 1 ms.
        roots = self.roots()
        for name, ms in self.blocks().items():
            wall = sum(m["timing"]["wall_time_s"] for m in ms)
            region = roots[name]["total_ns"] / 1e9
            with self.subTest(block=name, wall=wall, region=region):
                self.assertLessEqual(wall, region * 1.01 + 0.001)
                self.assertLessEqual(region, wall * 1.5 + 0.05)

    def test_cpu_time_is_bounded(self):
        cpus = self.measured["cpus"]
        for r in self.results:
            t = r["metrics"]["timing"]
            with self.subTest(block=r["name"], timing=t):
                self.assertGreaterEqual(t["cpu_time_s"], 0)
                self.assertLessEqual(t["cpu_time_s"], t["wall_time_s"] * cpus + 0.05)
                self.assertAlmostEqual(t["cpu_time_s"], t["user_time_s"] + t["system_time_s"])

    def test_disk_writes(self):
        measured = self.measured["io_measured"].get("load_dataset")
        if not measured:
            self.skipTest("/proc/self/io counts no write_bytes here (missing, or a tmpfs)")
        self.assertGreaterEqual(measured, 8 << 20)
        got = self.result("multi", "data_loading")["system"]["disk_write_mb"]
        self.assertGreaterEqual(got * MB, measured)

    def test_leak_verdicts(self):
        leak = self.result("leak", "memory_leak_check")["memory"]
        free = self.result("no_leak", "memory_leak_check")["memory"]
        self.assertTrue(leak["memory_leak_detected"], leak)
        self.assertGreater(leak["final_ram_mb"] - leak["initial_ram_mb"], 150)
        self.assertFalse(free["memory_leak_detected"], free)
        for m in (leak, free):
            self.assertGreaterEqual(len(m["samples"]), 2)
            self.assertEqual(m["samples"][0][1], m["initial_ram_mb"])
            self.assertEqual(m["samples"][-1][1], m["final_ram_mb"])
            self.assertEqual(max(b for _, b in m["samples"]), m["peak_ram_mb"])

    def test_flops(self):
        flops = self.result("flops", "flops_analysis")
        if has_flop_counter():
            self.assertEqual(flops["compute"]["estimated_flops"], SEQUENTIAL_FLOPS)
            self.assertIn("Estimated FLOPs: {:,}".format(SEQUENTIAL_FLOPS), self.proc.stdout)
        else:
            self.assertIsNone(flops["compute"]["estimated_flops"])
            self.assertIn("FlopCounterMode", flops["unavailable"]["compute.estimated_flops"])
            self.assertIn("Estimated FLOPs: n/a (torch ", self.proc.stdout)

    def test_error_block(self):
        m = self.result("errors", "potentially_failing_operation")
        self.assertFalse(m["completed"])
        self.assertEqual(m["error"], "ValueError: risky_operation: bad input")
        self.assertGreater(m["timing"]["wall_time_s"], 0)

    def test_dicts_summaries_breakdown(self):
        for r in self.results:
            self.assertEqual(json.loads(r["json"]), r["metrics"])
            self.assertRegex(r["summary"], SUMMARY)
        walls = {r["name"]: r["metrics"]["timing"]["wall_time_s"]
                 for r in self.results if r["example"] == "multi"}
        self.assertEqual(self.measured["breakdown"], walls)
        self.assertGreater(self.measured["current_ram"], 0)
        gpu = self.result("gpu", "gpu_intensive_task")
        if not cuda_available():
            self.assertIsNone(gpu["memory"]["peak_gpu_mb"])
            self.assertIn("Peak GPU memory: None MB", self.proc.stdout)

    def test_rss_counters(self):
        trace = os.path.join(self.dir, "trace.json")
        prism.export(self.cbor, trace, format="chrome-trace")
        with open(trace, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        rss = [e for e in events if e.get("ph") == "C" and e.get("name") == "measure.rss_mb"]
        # an entry and an exit reading per block, and the samples between
        samples = sum(len(r["metrics"]["memory"]["samples"] or []) for r in self.results)
        self.assertGreaterEqual(len(rss), max(2 * len(self.results), samples))


if __name__ == "__main__":
    unittest.main()
