"""test_trace_fixtures.py - the Kineto layout (torch 2.x with CUDA) through
the importer, on the hand-made traces of tests/fixtures/kineto (made by its
make_fixtures.py; every figure below follows from the numbers there):

  basic.json      the GPU pane's data (kernels, copies, memsets, API time,
                  idle share), launches attributed to the CPU op that made
                  them (through correlation), steps from ProfilerStep#N,
                  rank from distributedInfo, the base time, device names,
                  [memory] events as memory samples; no GPU finding
  gpu_stall.json  gpu_idle (HIGH) and cpu_gpu_sync found
  messy.json      opens, with its anomalies counted and reported

Each fixture also goes through gzip, `prism-top convert` and compare.
Run with B set (tests/python/run.sh does)."""
import json
import os
import re
import unittest

from pyutil import TempDirTest
import traceutil as tu

MS = 1000000
US = 1000
MIB = 1 << 20


def fixture(name):
    return os.path.join(tu.FIXTURES, name)


def by_name(ops):
    return {o["name"]: o for o in ops}


def node_sum(tree_json, name, field):
    return sum(n.get(field, 0) for _, _, n in tu.walk(tree_json) if n["name"] == name)


def findings(d, kind):
    return [b for b in d["bottlenecks"] if b["type"] == kind]


class BasicTest(TempDirTest):
    """basic.json: 4 steps of 4.99 ms; per step a 4 MiB HtoD copy (100 us),
    three kernels (2000 + 100 + 2200 us), a 16 MiB memset (50 us); the GPU
    span 19.48 ms, busy 17.8 ms; runtime calls 55.5 us per step."""

    F = fixture("basic.json")

    def setUp(self):
        super().setUp()
        self.d = tu.analyze(self.F)

    def test_opens_complete(self):
        self.assertTrue(self.d["complete"])
        self.assertEqual(self.d["reader"].get("malformed", 0), 0)

    def test_steps(self):
        s = self.d["steps"]
        self.assertEqual(s["count"], 4)
        self.assertEqual([x["duration_ns"] for x in s["series"]], [4990 * US] * 4)

    def test_rank_and_header(self):
        h = self.d["header"]
        self.assertEqual(h["rank"], 3)                      # distributedInfo.rank
        self.assertGreaterEqual(h["start_unix_ns"], 1700000000000000000)   # baseTimeNanoseconds
        self.assertLess(h["start_unix_ns"], 1700000000000000000 + 10 ** 9)

    def test_device_name(self):
        self.assertIn("NVIDIA H100 80GB HBM3", tu.dump(self.F))   # deviceProperties

    def test_gpu_pane(self):
        g = self.d["gpu"]
        self.assertTrue(g["present"])
        self.assertEqual(g["launches"], 12)
        self.assertEqual(g["kernel_ns"], 4 * (2000 + 100 + 2200) * US)
        self.assertEqual(g["copy_ns"], 4 * 100 * US)
        self.assertEqual(g["memset_ns"], 4 * 50 * US)
        self.assertEqual(g["busy_ns"], 17800 * US)
        self.assertEqual(g["span_ns"], 19480 * US)
        self.assertAlmostEqual(g["idle_share"], 1 - 17800 / 19480, places=6)
        self.assertEqual(g["api_ns"], 4 * 55500)
        k = {x["name"]: x for x in g["kernels"]}
        self.assertEqual(k["ampere_sgemm_128x64_tn"]["count"], 4)
        self.assertEqual(k["ampere_sgemm_128x64_tn"]["total_ns"], 8 * MS)
        self.assertEqual(k["ampere_sgemm_64x64_nn"]["count"], 4)
        self.assertEqual(k["ampere_sgemm_64x64_nn"]["total_ns"], 8800 * US)
        elt = [n for n in k if n.startswith("void at::native::vectorized_elementwise_kernel<4")]
        self.assertEqual(len(elt), 1, sorted(k))
        self.assertEqual(k[elt[0]]["count"], 4)
        self.assertEqual(len(g["copies"]), 1, g["copies"])
        c = g["copies"][0]
        self.assertEqual(c["kind"], "HtoD")
        self.assertEqual(c["count"], 4)
        self.assertEqual(c["bytes"], 16 * MIB)

    def test_no_gpu_finding(self):
        types = {b["type"] for b in self.d["bottlenecks"]}
        self.assertNotIn("gpu_idle", types)                  # 8.6 % idle
        self.assertNotIn("cpu_gpu_sync", types)

    def test_launches_attributed(self):
        """Each kernel belongs to the CPU op that launched it, on its
        thread: correlation -> cudaLaunchKernel -> the enclosing op."""
        t = tu.tree(self.F, self.tmp)
        self.assertEqual(node_sum(t, "aten::addmm", "gpu_launches"), 4)
        self.assertEqual(node_sum(t, "aten::addmm", "gpu_ns"), 8 * MS)
        self.assertEqual(node_sum(t, "aten::clamp_min", "gpu_launches"), 4)
        self.assertEqual(node_sum(t, "aten::mm", "gpu_launches"), 4)      # autograd thread
        self.assertEqual(node_sum(t, "aten::mm", "gpu_ns"), 8800 * US)

    def test_regions_nested_per_thread(self):
        t = tu.tree(self.F, self.tmp)
        paths = {}
        for th, names, _ in tu.walk(t):
            paths.setdefault(tuple(names[-3:]), set()).add(th)
        for tail in [("forward", "aten::linear", "aten::addmm"),
                     ("forward", "aten::relu", "aten::clamp_min"),
                     ("aten::to", "aten::_to_copy", "aten::copy_"),
                     ("optimizer_step", "aten::zero_", "aten::fill_")]:
            self.assertIn(tail, paths, sorted(paths))
        # the autograd thread's ops are a tree of their own, not under main's
        mm = [names for th, names, _ in tu.walk(t) if names[-1] == "aten::mm"]
        self.assertTrue(mm)
        for names in mm:
            self.assertIn("AddmmBackward0", names)
            self.assertNotIn("backward", names)
        threads = {th for th, names, _ in tu.walk(t) if names[-1] == "aten::mm"}
        threads_fwd = {th for th, names, _ in tu.walk(t) if names[-1] == "forward"}
        self.assertTrue(threads.isdisjoint(threads_fwd), (threads, threads_fwd))
        # python_function events are regions too
        ops = by_name(self.d["ops"])
        self.assertEqual(ops["data_loading"]["calls"], 4)
        self.assertEqual(ops["torch/utils/data/dataloader.py(628): __next__"]["calls"], 4)

    def test_memory_samples(self):
        m = self.d["memory"]
        self.assertGreaterEqual(m["samples"], 9)             # 9 GPU events (and 8 CPU)
        self.assertTrue(m["have_gpu"])
        self.assertEqual(m["peak_gpu_used_bytes"], 513 * MIB)      # Total Allocated
        self.assertEqual(m["peak_gpu_reserved_bytes"], 1024 * MIB)  # Total Reserved

    def test_no_anomalies(self):
        a = tu.anomalies(tu.dump(self.F))
        self.assertEqual(tu.counted(a, "overlap"), 0, a)
        self.assertEqual(tu.counted(a, "missing"), 0, a)
        self.assertEqual(tu.counted(a, "negative"), 0, a)

    def test_gz_convert_prism_load(self):
        gz = tu.gzip_copy(self.F, self.path("basic.pt.trace.json.gz"))
        msg = tu.same_analysis(self.d, tu.analyze(gz))
        self.assertIsNone(msg, msg)
        out = self.path("basic.cbor")
        tu.ok("convert", self.F, "-o", out)
        with open(out, "rb") as f:
            self.assertEqual(f.read(3), b"\xd9\xd9\xf7")    # a PRISM profile
        c = tu.analyze(out)
        msg = tu.same_analysis(self.d, c)
        self.assertIsNone(msg, msg)
        self.assertEqual(c["header"]["rank"], 3)
        import prism
        p = prism.load(self.F)
        self.assertEqual(p.ops, self.d["ops"])
        self.assertEqual(p.steps["count"], 4)


class GpuStallTest(TempDirTest):
    """gpu_stall.json: 4 steps of 10 ms: 6 ms loading data with the GPU
    idle, 2.53 ms of GPU work, 1.77 ms in cudaDeviceSynchronize inside
    torch.cuda.synchronize (a python_function)."""

    F = fixture("gpu_stall.json")

    def setUp(self):
        super().setUp()
        self.d = tu.analyze(self.F)

    def test_gpu(self):
        g = self.d["gpu"]
        self.assertEqual(g["busy_ns"], 4 * 2530 * US)
        self.assertEqual(g["span_ns"], 32990 * US)
        self.assertAlmostEqual(g["idle_share"], 1 - 10120 / 32990, places=6)
        self.assertEqual(self.d["steps"]["count"], 4)

    def test_gpu_idle(self):
        f = findings(self.d, "gpu_idle")
        self.assertEqual(len(f), 1, self.d["bottlenecks"])
        self.assertEqual(f[0]["severity"], "HIGH")
        self.assertIn("69.3%", f[0]["description"])

    def test_cpu_gpu_sync(self):
        f = findings(self.d, "cpu_gpu_sync")
        self.assertEqual(len(f), 1, self.d["bottlenecks"])
        self.assertGreater(f[0]["share"], 0.15)
        self.assertLess(f[0]["share"], 0.20)

    def test_data_loading(self):
        f = findings(self.d, "data_loading")
        self.assertTrue(f, self.d["bottlenecks"])
        self.assertTrue(f[0]["path"].endswith("data_loading"), f[0])

    def test_compare_with_basic(self):
        """basic -> gpu_stall: the common regions named, the sync new."""
        r = tu.ok("compare", fixture("basic.json"), self.F, "--format", "json")
        c = json.loads(r.stdout)
        both = {x["name"] for x in c["regions"] if x["status"] == "both"}
        for n in ["data_loading", "forward", "backward", "optimizer_step", "aten::addmm"]:
            self.assertIn(n, both)
        new = {x["name"] for x in c["regions"] if x["status"] == "new"}
        self.assertIn("torch/cuda/__init__.py(801): synchronize", new)
        kinds = {b["type"] for b in c["bottlenecks_new"]}
        self.assertIn("gpu_idle", kinds)
        # the text report and the compare mode's non-terminal output run too
        tu.ok("compare", fixture("basic.json"), self.F)


class MessyTest(TempDirTest):
    """messy.json: 3 good steps, 3 events that overlap aten::linear without
    nesting, zero and negative durations, the events out of order, 5 events
    missing a field, 2 of unknown categories."""

    F = fixture("messy.json")

    def test_opens_with_counts(self):
        r = tu.ok("analyze", self.F, "--format", "json")
        d = json.loads(r.stdout)
        self.assertEqual(d["steps"]["count"], 3)
        ops = by_name(d["ops"])
        for n in ["forward", "backward", "optimizer_step", "aten::linear", "aten::mm"]:
            self.assertIn(n, ops)
        self.assertEqual(ops["aten::mm"]["calls"], 3)
        self.assertEqual(ops["forward"]["calls"], 3)

    def test_anomalies_counted(self):
        a = tu.anomalies(tu.dump(self.F))
        self.assertTrue(a, "no import.* INFO counters in the dump")
        self.assertEqual(tu.counted(a, "overlap"), 3, a)
        self.assertGreaterEqual(tu.counted(a, "negative", "zero", "dur"), 1, a)
        self.assertGreaterEqual(tu.counted(a, "unsorted", "order"), 1, a)
        self.assertGreaterEqual(tu.counted(a, "missing"), 1, a)
        self.assertGreaterEqual(tu.counted(a, "unknown", "categor"), 2, a)

    def test_reported_by_analyze(self):
        txt = tu.analyze_text(self.F)
        self.assertRegex(txt, r"\b3 overlapping events?\b")
        self.assertRegex(txt, r"(?i)unknown categor")

    def test_overlapping_kept(self):
        """The overlapping events are not lost: moved to a track of their
        own (another thread row of the same thread), still counted."""
        d = tu.analyze(self.F)
        ops = by_name(d["ops"])
        self.assertEqual(ops["aten::overlapper"]["calls"], 3)
        t = tu.tree(self.F, self.tmp)
        for _, names, _ in tu.walk(t):
            if names[-1] == "aten::overlapper":
                self.assertNotIn("aten::linear", names)

    def test_convert(self):
        out = self.path("messy.cbor")
        tu.ok("convert", self.F, "-o", out)
        msg = tu.same_analysis(tu.analyze(self.F), tu.analyze(out))
        self.assertIsNone(msg, msg)


class CliTest(TempDirTest):
    """Every command takes a trace where it takes a profile."""

    def test_commands(self):
        f = fixture("basic.json")
        gz = tu.gzip_copy(f, self.path("b.json.gz"))
        tu.ok("analyze", gz)
        tu.ok("compare", f, gz, "--format", "json")
        for fmt in ["chrome-trace", "csv", "folded", "json"]:
            out = self.path("x." + fmt)
            tu.ok("export", gz, "--format", fmt, "-o", out)
            self.assertGreater(os.path.getsize(out), 0)
        d = tu.dump(gz)
        self.assertEqual(len(re.findall(r"^step ", d, re.M)), 4)
        self.assertGreater(len(re.findall(r"^gpu ", d, re.M)), 12)
        r = tu.ok(f)                                 # not a terminal: the report
        self.assertIn("ampere_sgemm", r.stdout)
        r = tu.ok(f, gz)                             # compare mode, not a terminal
        self.assertTrue(r.stdout)

    def test_detected_by_content(self):
        """Not by name: a trace called .cbor opens, a profile called .json too."""
        odd = self.path("trace.cbor")
        with open(fixture("basic.json"), "rb") as a, open(odd, "wb") as b:
            b.write(b"\n \t" + a.read())                  # leading blanks
        self.assertEqual(tu.analyze(odd)["steps"]["count"], 4)
        prof = self.path("profile.json")
        tu.ok("convert", fixture("basic.json"), "-o", prof)
        self.assertEqual(tu.analyze(prof)["steps"]["count"], 4)


if __name__ == "__main__":
    unittest.main()
