"""prism.bottleneck: document 004's BottleneckProfiler over prism.

Two parts.  tests/python/bottleneck_script.py (the document's training loop,
only the imports changed) runs for real under ``python -m prism`` in
subprocesses -- once plainly, once with a planted input stall -- and its
profiles are read back with prism.load.  The API's edges (stop without
start, double start, exceptions, the monitor thread, no session) run in
this process, which has no PRISM session; the one check that needs a
session (an exception's region is closed) runs in a child.  Nothing waits
on time: the monitor is waited on through wait_for_samples (a condition).
"""
import importlib.util
import json
import os
import subprocess
import sys
import threading
import types
import unittest
import warnings

import prism
from prism import bottleneck
from prism._bottleneck_report import map_findings
from prism.bottleneck import (BottleneckProfile, BottleneckProfiler, BottleneckProfilerConfig,
                              BottleneckType, CPUTracker, GPUTracker, IOTracker,
                              MemoryTracker)

from pyutil import B, TempDirTest, clean_env, run_py, torch_env, torch_skip

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bottleneck_script.py")
OPS = ("preprocessing", "model_inference", "training_step")
MONITOR = "prism-bottleneck-monitor"


def run_script(tmp, *args):
    """The script under python -m prism: (its result.json, the Profile, stderr)."""
    out = os.path.join(tmp, "p.cbor")
    p = subprocess.run([sys.executable, "-m", "prism", "-o", out, SCRIPT, tmp, *args],
                       env=torch_env(with_prism=True), cwd=tmp, capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError("script failed (%d):\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
    with open(os.path.join(tmp, "result.json")) as f:
        return json.load(f), prism.load(out), p.stderr, out


@unittest.skipIf(torch_skip(), torch_skip())
class ScriptTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.tmp = tempfile.mkdtemp(prefix="prism-bneck-")
        cls.res, cls.prof, cls.stderr, cls.file = run_script(cls.tmp)
        cls.ops = {o["name"]: o for o in cls.prof.ops}

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.tmp, True)

    def test_operations_are_regions_with_their_calls(self):
        n = self.res["batches"] * 2                        # two epochs
        for name in OPS:
            self.assertEqual(self.res["operations"][name]["calls"], n, name)
            self.assertEqual(self.ops[name]["calls"], n, name)
        for e in range(2):
            self.assertEqual(self.ops[f"epoch_{e}_data_loading"]["calls"], 1)

    def test_execution_time_agrees_with_the_region(self):
        # execution_time is mono_ns (prism.system_read) read just outside the
        # region: it includes the two readings per call (tens of µs; more
        # when the machine is busy and preempts there), the region does not;
        # and the region's clock is libcollect's tick converted by a
        # measured ratio.  So: the region is at most execution_time (1 %
        # for the conversion), and the difference is bounded loosely.
        for name in OPS + ("epoch_0_data_loading",):
            mine = self.res["operations"][name]["execution_time"]
            region = self.ops[name]["total_ns"] / 1e9
            calls = self.ops[name]["calls"]
            self.assertLessEqual(region, mine * 1.01 + 1e-5, name)
            self.assertLessEqual(mine - region, 0.5 * mine + 0.002 * calls, name)

    def test_memory_threshold_fires_from_the_monitor(self):
        mem = [b for b in self.res["bottlenecks"]
               if b["bottleneck_type"] == "memory_allocation"
               and b["operation_name"] == "high_memory_usage"]
        self.assertEqual(len(mem), 1, self.res["bottlenecks"])
        self.assertEqual(mem[0]["source"], "monitor")
        self.assertGreaterEqual(mem[0]["frequency"], 1)
        self.assertLessEqual(mem[0]["frequency"], self.res["samples"])
        self.assertEqual(mem[0]["severity"], 0.8)

    def test_samples_are_prism_counters(self):
        out = os.path.join(self.tmp, "trace.json")
        prism.export(self.file, out, format="chrome-trace")
        with open(out) as f:
            text = f.read()
        self.assertIn("bottleneck.memory_usage", text)
        self.assertIn("bottleneck.cpu_usage", text)

    def test_report(self):
        report = self.res["report"]
        self.assertIn("Session ID: complete_training", report)
        self.assertIn("Total Bottlenecks Detected: %d" % len(self.res["bottlenecks"]), report)
        self.assertIn("**high_memory_usage**", report)
        self.assertIn("#### Memory_Allocation", report)
        path = os.path.join(self.tmp, "reports", "complete_training_report.md")
        with open(path) as f:
            self.assertIn("Session ID: complete_training", f.read())

    def test_monitor_gone_after_stop(self):
        self.assertNotIn(MONITOR, self.res["threads"])

    def test_png_or_one_line(self):
        png = os.path.join(self.tmp, "reports", "complete_training_visualizations.png")
        if importlib.util.find_spec("matplotlib") is None:
            self.assertFalse(os.path.exists(png))
            lines = [l for l in self.stderr.splitlines() if "matplotlib" in l]
            self.assertEqual(len(lines), 1, self.stderr)
        else:
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_input_stall_maps_to_data_loading(self):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="prism-bneck-") as tmp:
            res, prof, _, path = run_script(tmp, "stall")
            self.assertIn("data_loading", [b["type"] for b in prof.bottlenecks])
            mapped = BottleneckProfiler.from_profile(path)
        dl = [b for b in mapped if b.prism_type == "data_loading"]
        self.assertTrue(dl)
        self.assertTrue(all(b.bottleneck_type is BottleneckType.DATA_LOADING for b in dl))
        self.assertTrue(all(b.source == "prism" and 0 <= b.severity <= 1 for b in dl))


class ApiTest(TempDirTest):
    def profiler(self, **kw):
        kw.setdefault("output_dir", self.path("out"))
        p = BottleneckProfiler(BottleneckProfilerConfig(**kw))
        self.addCleanup(lambda: p.is_profiling and p.stop_profiling())
        return p

    def test_enum_is_the_documents(self):
        self.assertEqual([(m.name, m.value) for m in BottleneckType], [
            ("DATA_LOADING", "data_loading"), ("PREPROCESSING", "preprocessing"),
            ("MEMORY_ALLOCATION", "memory_allocation"), ("GPU_TRANSFER", "gpu_transfer"),
            ("CPU_COMPUTATION", "cpu_computation"), ("I_O_OPERATION", "i_o_operation"),
            ("NETWORK_LATENCY", "network_latency"), ("SYNCHRONIZATION", "synchronization")])

    def test_config_defaults_and_checks(self):
        c = BottleneckProfilerConfig()
        self.assertEqual((c.bottleneck_threshold, c.memory_threshold, c.gpu_threshold,
                          c.sampling_interval), (0.05, 0.8, 0.9, 0.1))
        for name, v in (("memory_threshold", 0), ("gpu_threshold", 1.5),
                        ("sampling_interval", -1), ("bottleneck_threshold", "x")):
            with self.assertRaisesRegex(ValueError, name):
                BottleneckProfilerConfig(**{name: v})

    def test_stop_without_start(self):
        p = self.profiler()
        with self.assertWarns(RuntimeWarning):
            self.assertIsNone(p.stop_profiling())
        self.assertEqual(p.get_bottleneck_summary(), {})
        self.assertIsNone(p.generate_optimization_report())

    def test_double_start_keeps_one_session_and_one_monitor(self):
        p = self.profiler()
        sid = p.start_profiling("one")
        with self.assertWarns(RuntimeWarning):
            self.assertEqual(p.start_profiling("two"), sid)
        self.assertEqual([t.name for t in threading.enumerate()].count(MONITOR), 1)
        s = p.stop_profiling()
        self.assertEqual(s.session_id, "one")

    def test_monitor_samples_and_is_gone_after_stop(self):
        p = self.profiler(sampling_interval=0.01, memory_threshold=1.0)
        p.start_profiling()
        t = p.profiling_thread
        self.assertTrue(t.daemon)
        self.assertTrue(p.wait_for_samples(3, timeout=120))
        s = p.stop_profiling()
        self.assertFalse(t.is_alive())
        self.assertNotIn(MONITOR, [x.name for x in threading.enumerate()])
        self.assertGreaterEqual(s.samples, 4)           # three and the last one at stop
        self.assertEqual(len(s.memory_profile), s.samples)
        self.assertEqual(s.bottlenecks, [])             # nobody uses 100 % of memory

    def test_memory_rule_relative_to_the_measured_share(self):
        share = MemoryTracker().get_current_stats()["used_percent"]
        self.assertGreater(share, 0)
        p = self.profiler(memory_threshold=share / 100 / 2, enable_real_time_monitoring=False,
                          generate_visualizations=False)
        p.start_profiling("m")
        s = p.stop_profiling()                           # the last sample alone
        self.assertEqual([(b.bottleneck_type, b.frequency) for b in s.bottlenecks],
                         [(BottleneckType.MEMORY_ALLOCATION, 1)])
        report = p.generate_optimization_report()
        self.assertIn("high_memory_usage", report.read_text())

    def test_exception_propagates_and_is_recorded(self):
        p = self.profiler(enable_real_time_monitoring=False)
        p.start_profiling("x")
        err = KeyError("boom")
        with self.assertRaises(KeyError) as cm:
            with p.profile_operation("fails", BottleneckType.I_O_OPERATION):
                raise err
        self.assertIs(cm.exception, err)
        st = p.stop_profiling().operations["fails"]
        self.assertEqual((st.calls, st.errors, st.operation_type),
                         (1, 1, BottleneckType.I_O_OPERATION))
        self.assertGreater(st.execution_time, 0)

    def test_no_session_anywhere(self):
        self.assertFalse(prism.recording())
        p = self.profiler()
        with p.profile_operation("outside"):           # no profiling session either
            x = sum(range(1000))
        self.assertEqual(x, 499500)
        p.start_profiling("s")
        with p.profile_operation("inside", BottleneckType.PREPROCESSING):
            pass
        s = p.stop_profiling()
        self.assertEqual(list(s.operations), ["inside"])
        self.assertIsNone(s.prism_output)
        with self.assertRaises(RuntimeError):
            p.analyze()

    def test_trackers_shapes(self):
        self.assertGreater(MemoryTracker().get_current_memory(), 0)
        self.assertEqual(set(MemoryTracker().get_current_stats()),
                         {"used_mb", "used_percent", "available_gb", "total_gb"})
        g = GPUTracker().get_current_stats()
        self.assertIn("memory_mb", g)
        self.assertIn("memory_used_percent", g)
        if not g["available"]:
            self.assertEqual((g["memory_mb"], g["memory_used_percent"]), (0.0, 0.0))
            self.assertTrue(g["reason"])
        c = CPUTracker().get_current_stats()
        self.assertEqual(c["count"], os.cpu_count())
        self.assertGreaterEqual(c["usage_percent"], 0.0)
        io = IOTracker().get_current_stats()
        self.assertIn("io_read_mb", io)
        self.assertIn("net_rx_mb_per_s", io)

    def test_finding_table(self):
        kinds = ["data_loading", "io_wait", "communication_wait", "cpu_gpu_sync",
                 "hot_operation", "cpu_contention", "memory_leak", "memory_bound",
                 "gpu_idle", "launch_bound", "slow_steps"]
        fake = types.SimpleNamespace(
            ops=[{"name": "fwd", "calls": 7, "total_ns": 2_000_000_000}],
            bottlenecks=[{"type": k, "severity": "HIGH", "share": 0.4, "region": "fwd",
                          "recommendation": "fix it", "worth": None} for k in kinds])
        got = map_findings(fake, BottleneckType, BottleneckProfile)
        T = BottleneckType
        self.assertEqual([b.bottleneck_type for b in got], [
            T.DATA_LOADING, T.I_O_OPERATION, T.NETWORK_LATENCY, T.SYNCHRONIZATION,
            T.CPU_COMPUTATION, T.CPU_COMPUTATION, T.MEMORY_ALLOCATION, T.MEMORY_ALLOCATION,
            T.GPU_TRANSFER, T.GPU_TRANSFER, "slow_steps"])
        self.assertEqual((got[0].frequency, got[0].execution_time, got[0].suggestions),
                         (7, 2.0, ["fix it"]))
        declared = map_findings(fake, T, BottleneckProfile, {"fwd": T.PREPROCESSING})
        self.assertIs(declared[4].bottleneck_type, T.PREPROCESSING)   # hot_operation on fwd

    def test_reexports(self):
        from prism import _dataload
        self.assertIs(bottleneck.DataLoadingProfiler, _dataload.DataLoadingProfiler)
        self.assertIs(bottleneck.PreprocessingProfiler, _dataload.PreprocessingProfiler)


class SessionChildTest(TempDirTest):
    def test_region_closed_after_an_exception(self):
        out = self.path("x.cbor")
        env = clean_env(PYTHONPATH=os.path.join(B, "python"))
        run_py("""
            import prism
            from prism.bottleneck import BottleneckProfiler, BottleneckProfilerConfig
            prism.init(output=%r)
            p = BottleneckProfiler(BottleneckProfilerConfig(enable_real_time_monitoring=False))
            p.start_profiling("c")
            for i in range(3):
                try:
                    with p.profile_operation("boom"):
                        raise ValueError(i)
                except ValueError:
                    pass
                with prism.region("after"):
                    pass
            s = p.stop_profiling()
            assert s.operations["boom"].errors == 3
            assert s.prism_output == %r, s.prism_output
            prism.shutdown()
            found = p.analyze()
            assert all(b.source == "prism" for b in found)
        """ % (out, out), env=env)
        prof = prism.load(out)
        roots = {r["name"]: r for t in prof.tree["threads"] for r in t["roots"]}
        self.assertEqual(roots["boom"]["calls"], 3)
        self.assertEqual(roots["after"]["calls"], 3)        # not inside an open "boom"
