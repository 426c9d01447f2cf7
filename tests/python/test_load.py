"""prism.load / compare / export (python/src/_prism_read.c): the same C code
as prism-top, so the same dicts and bytes; bad files raise ProfileError with
prism-top's words.  Profiles are recorded by a child interpreter into a
temporary directory, one with planted findings."""
import json
import os
import subprocess
import sys
import unittest

from pyutil import PRISM_TOP, TempDirTest, prism_top, prism_top_json, run_py

import prism

# Steps of a few ms: "hot" holds most of each (a hot operation), "data" a
# smaller part; `leak` MB more host memory kept every step.
RECORD = """
import time, prism
prism.init(output=%(out)r)
keep = []
def spin(s):
    # the thread's own CPU time: the same work however busy the machine is
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass
for i in range(30):
    with prism.step():
        with prism.region("data"):
            spin(0.0003)
        with prism.region("model"):
            with prism.region("hot"):
                spin(%(hot)f)
            with prism.region("cold"):
                spin(0.0002)
        keep.append(bytearray(%(leak)d << 20))
prism.shutdown()
"""


def record(out, hot=0.003, leak=0):
    run_py(RECORD % {"out": out, "hot": hot, "leak": leak})


class Agreement(TempDirTest):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="prism-py-load-")
        cls.a = os.path.join(cls.dir, "a.cbor")
        cls.b = os.path.join(cls.dir, "b.cbor")
        record(cls.a, hot=0.003, leak=0)
        record(cls.b, hot=0.0005, leak=0)

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, True)

    def test_load_is_analyze_json(self):
        p = prism.load(self.a)
        self.assertEqual(p.json, prism_top_json("analyze", self.a, "--format", "json"))
        self.assertEqual(p.path, self.a)
        self.assertTrue(p.complete)
        self.assertEqual(p.steps["count"], 30)
        self.assertEqual(p.summary, p.json["summary"])
        self.assertEqual([o["name"] for o in p.top_operations(2)],
                         [o["name"] for o in p.json["ops"][:2]])
        self.assertEqual(len(p.top_operations(100)), len(p.json["ops"]))

    def test_cpu_load(self):
        # who used the CPUs: the process ran (the training thread spins),
        # the machine's figures come with the 1.2 memory samples
        p = prism.load(self.a)
        c = p.cpu_load
        self.assertEqual(c, p.summary["cpu_load"])
        self.assertGreater(c["process"], 0)
        self.assertGreater(c["ncpu"], 0)
        self.assertIsNotNone(c["machine"])
        self.assertGreaterEqual(c["other_processes"], 0)
        self.assertGreaterEqual(c["worker_processes"], 0)
        self.assertLessEqual(c["machine"], c["ncpu"] + 0.01)

    def test_bottlenecks_with_region_and_fix(self):
        p = prism.load(self.a)
        self.assertTrue(p.bottlenecks, "the planted hot operation is found")
        hot = [b for b in p.bottlenecks if b["type"] == "hot_operation"]
        self.assertTrue(hot, p.bottlenecks)
        self.assertEqual(hot[0]["region"], "hot")
        self.assertEqual(hot[0]["path"], "model/hot")
        for b in p.bottlenecks:
            self.assertEqual(b["fix"], b["recommendation"])
            self.assertIn(b["severity"], ("LOW", "MEDIUM", "HIGH"))
            self.assertTrue(b["evidence"])
        self.assertEqual([{k: v for k, v in b.items() if k not in ("region", "fix")}
                          for b in p.bottlenecks], p.json["bottlenecks"])

    def test_thresholds_are_prism_top_options(self):
        p = prism.load(self.a, threshold_pct=99, leak_threshold_mb=5, ridge=3)
        self.assertEqual(p.json, prism_top_json("analyze", self.a, "--format", "json",
                                                "--threshold", "99", "--leak-threshold", "5",
                                                "--ridge", "3"))
        self.assertFalse([b for b in p.bottlenecks if b["type"] == "hot_operation"])
        with self.assertRaises(ValueError):
            prism.load(self.a, threshold_pct=-1)

    def test_compare_is_compare_json(self):
        want = prism_top_json("compare", self.a, self.b, "--format", "json")
        self.assertEqual(prism.compare(self.a, self.b), want)
        self.assertEqual(prism.compare(prism.load(self.a), self.b), want)
        hot = [d for d in want["regions"] if d["path"] == "model/hot"]
        self.assertEqual(len(hot), 1)
        # b's hot region is a sixth of a's CPU time: per step, the median
        # (a's is at least its 3 ms of CPU; a busy machine stretches a few
        # of b's calls by a time slice, not most of them)
        self.assertLess(hot[0]["new_median_ns"], hot[0]["base_median_ns"])

    def test_outside_regions_node(self):
        # the step time outside data and model (the step's own entry and
        # exit, the bytearray): a root of its own, an op, flagged
        p = prism.load(self.a)
        n = p.unattributed
        self.assertIsNotNone(n)
        self.assertEqual(n["name"], "(outside regions)")
        self.assertIs(n["unattributed"], True)
        self.assertGreater(n["total_ns"], 0)
        self.assertEqual(n["total_ns"], n["self_ns"])
        self.assertTrue(1 <= n["calls"] <= 30)
        self.assertEqual(p.summary["unattributed_ns"], n["total_ns"])
        ops = [o for o in p.json["ops"] if o.get("unattributed")]
        self.assertEqual([o["name"] for o in ops], ["(outside regions)"])
        named = [o for o in p.json["ops"] if o["name"] != "(outside regions)"]
        self.assertFalse(any(o.get("unattributed") for o in named))
        # regions still hold most of each step: it is no hot operation
        self.assertFalse(any("outside regions" in b.get("description", "")
                             for b in p.bottlenecks if b.get("type") == "hot_operation"))

    def test_tree_is_export_json(self):
        p = prism.load(self.a)
        self.assertEqual(p.tree, prism_top_json("export", self.a, "--format", "json", "-o", "-"))
        self.assertEqual(p.tree["schema"], "prism.tree/1")

    def test_export_writes_what_prism_top_writes(self):
        for fmt in ("chrome-trace", "csv", "folded", "json"):
            with self.subTest(format=fmt):
                mine = self.path("mine." + fmt)
                theirs = self.path("theirs." + fmt)
                prism.export(self.a, mine, format=fmt)
                prism_top("export", self.a, "--format", fmt, "-o", theirs)
                with open(mine, "rb") as f, open(theirs, "rb") as g:
                    self.assertEqual(f.read(), g.read())
        prism.load(self.a).export(self.path("p.csv"), format="csv")
        with open(self.path("p.csv"), "rb") as f, open(self.path("mine.csv"), "rb") as g:
            self.assertEqual(f.read(), g.read())
        with self.assertRaises(ValueError):
            prism.export(self.a, self.path("x"), format="svg")
        with self.assertRaises(OSError):
            prism.export(self.a, os.path.join(self.tmp, "no", "such", "dir.csv"), format="csv")

    def test_numpy_arrays(self):
        import numpy as np
        p = prism.load(self.a)
        d = p.step_durations_ns
        self.assertIsInstance(d, np.ndarray)
        self.assertEqual(d.dtype, np.int64)
        self.assertEqual(d.tolist(), [s["duration_ns"] for s in p.steps["series"]])
        ms = p.memory_series
        self.assertEqual(set(ms), {"t_ns", "rss_bytes", "gpu_used_bytes", "gpu_reserved_bytes",
                                   "step"})
        n = p.memory["samples"]
        for k, v in ms.items():
            self.assertIsInstance(v, np.ndarray)
            self.assertEqual(v.dtype, np.int64)
            self.assertEqual(len(v), n, k)
        self.assertTrue((np.diff(ms["t_ns"]) >= 0).all())
        self.assertEqual(ms["rss_bytes"].max(), p.memory["peak_rss_bytes"])
        tagged = ms["step"][ms["step"] >= 0]
        self.assertTrue(len(tagged) > 0 and tagged.max() < 30)
        self.assertEqual(set(p.leak), {"host", "gpu"})
        self.assertEqual(p.leak["host"], p.memory["host_leak"])
        self.assertIsNone(p.leak["gpu"])

    def test_lists_without_numpy(self):
        r = run_py("""
            import sys
            sys.modules["numpy"] = None          # import numpy fails
            import prism
            p = prism.load(%r)
            assert type(p.step_durations_ns) is list, type(p.step_durations_ns)
            assert all(type(v) is list for v in p.memory_series.values())
            assert len(p.step_durations_ns) == 30
            print("ok")
        """ % self.a)
        self.assertEqual(r.stdout.strip(), "ok")


class HostLeak(TempDirTest):
    def test_planted_leak_is_found_with_its_fit(self):
        out = self.path("leak.cbor")
        record(out, hot=0.001, leak=8)
        p = prism.load(out, leak_threshold_mb=4)
        self.assertEqual(p.json, prism_top_json("analyze", out, "--format", "json",
                                                "--leak-threshold", "4"))
        self.assertTrue(p.leak["host"]["have_fit"])
        self.assertGreater(p.leak["host"]["slope_mb_per_step"], 4)
        self.assertIn("memory_leak", [b["type"] for b in p.bottlenecks])


class BadInput(TempDirTest):
    def expect(self, path, exact_reason=None, analyze=True):
        with self.assertRaises(prism.ProfileError) as cm:
            prism.load(path)
        e = cm.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.path, path)
        self.assertTrue(e.reason)
        self.assertIsInstance(e.offset, int)
        readable = os.path.isfile(path) and os.access(path, os.R_OK)
        if e.offset == 0 and not readable:     # nothing read: no byte position
            self.assertEqual(str(e), "%s: %s" % (path, e.reason))
        else:
            self.assertEqual(str(e), "%s: %s at byte %d" % (path, e.reason, e.offset))
        # the words prism-top prints
        r = prism_top("analyze", path, check=False)
        self.assertEqual(r.returncode, 2)
        if analyze:
            self.assertEqual(r.stderr.decode().strip(), "prism-top: " + str(e))
        if exact_reason:
            self.assertIn(exact_reason, e.reason)
        return e

    def test_missing_file(self):
        e = self.expect(self.path("missing.cbor"), "No such file")
        self.assertEqual(e.offset, 0)

    def test_directory(self):
        # `prism-top analyze DIR` reads a job's rank files (issue 17): here
        # none, in its own words
        self.expect(self.tmp, analyze=False)
        r = prism_top("analyze", self.tmp, check=False)
        self.assertIn("no profiles in", r.stderr.decode())

    def test_garbage(self):
        p = self.path("garbage.cbor")
        with open(p, "wb") as f:
            f.write(b"this is not a profile at all\n" * 10)
        self.expect(p)

    def test_truncated_in_the_header(self):
        good = self.path("good.cbor")
        record(good, hot=0.0001)
        with open(good, "rb") as f:
            data = f.read()
        p = self.path("cut.cbor")
        with open(p, "wb") as f:
            f.write(data[:20])
        e = self.expect(p)
        self.assertLessEqual(e.offset, 20)

    def test_chrome_trace_export_error(self):
        p = self.path("garbage.cbor")
        with open(p, "wb") as f:
            f.write(b"\x00" * 64)
        with self.assertRaises(prism.ProfileError) as cm:
            prism.export(p, self.path("out.json"))
        r = prism_top("export", p, "--format", "chrome-trace", "-o", self.path("x.json"),
                      check=False)
        self.assertEqual(r.stderr.decode().strip(), "prism-top: " + str(cm.exception))
        self.assertFalse(os.path.exists(self.path("out.json")))

    def test_empty_file(self):
        p = self.path("empty.cbor")
        open(p, "wb").close()
        e = self.expect(p, "empty")
        self.assertEqual(e.offset, 0)

    def test_export_format_is_not_cut_at_a_nul(self):
        good = self.path("good.cbor")
        record(good, hot=0.0001)
        h = prism.load(good)._h
        for fmt in ("csv\0x", "json\0", "\udcff"):
            with self.subTest(format=fmt), self.assertRaises(ValueError):
                h.export(fmt, self.path("out"))
        self.assertFalse(os.path.exists(self.path("out")))

    def test_pickles(self):
        import pickle
        e = prism.ProfileError("/p", "bad", 7)
        f = pickle.loads(pickle.dumps(e))
        self.assertEqual((f.path, f.reason, f.offset, str(f)), ("/p", "bad", 7, "/p: bad at byte 7"))


if __name__ == "__main__":
    unittest.main()
