"""test_torch_trace.py - real torch.profiler traces through the importer.

torch 2.x writes Kineto's layout (with_stack is off there: test_kineto2.py
reads its Python frames); Debian's python3-torch 1.13 (CPU, built without Kineto) writes the legacy
autograd-profiler layout: a bare JSON array of `X` events with
"pid": "CPU functions", no `cat`, no args, no [memory] events (checked:
profile_memory=True adds none to the export).  tests/python/trace_loop.py
makes the traces during the test: record_function regions nested as in its
code, a planted hot region (heavy_block), a schedule of wait 1, warmup 1,
active 3 (ProfilerStep#N), record_shapes, profile_memory, with_stack; a
heavy and a light run, and a PRISM profile of the same loop (prism.step,
prism.region).  Checked through `prism-top analyze --format json`, export,
convert, compare and prism.load: the steps, the tree, the memory samples
(what the trace holds), the hot region, gzip = plain, convert = the trace,
before/after and trace/profile comparisons naming the common regions.

Skipped without torch.  Under the sanitizers (PRISM_TEST_SANITIZE=1) the
traces are still made (torch runs without the preloaded ASan runtime) and
read by the sanitized prism-top; only the PRISM profile of the loop, which
needs torch and the sanitized extension in one interpreter, is skipped."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import pyutil
from pyutil import SANITIZE, torch_env
import traceutil as tu

LOOP = os.path.join(tu.HERE, "trace_loop.py")
ACTIVE = 3
REGIONS = ["data_loading", "forward", "encoder", "heavy_block", "head", "backward",
           "optimizer_step"]
NESTED = [("forward", "encoder"), ("forward", "heavy_block"), ("forward", "head")]

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
SKIP = None if HAVE_TORCH else "PyTorch is not installed for %s" % sys.executable



def make(mode, out, heavy, with_prism=False):
    p = subprocess.run([sys.executable, LOOP, mode, "-o", out, "--heavy", str(heavy)],
                       env=torch_env(with_prism), capture_output=True, text=True, timeout=300)
    if p.returncode != 0 or not os.path.exists(out):
        raise AssertionError("trace_loop.py %s failed (%d): %s" % (mode, p.returncode,
                                                                  p.stderr[-2000:]))
    return out


def trace_events(path):
    with open(path) as f:
        d = json.load(f)
    return d if isinstance(d, list) else d["traceEvents"]


def parents(tree_json, name):
    """The names right above every node called name (None: a root)."""
    return [names[-2] if len(names) > 1 else None
            for _, names, _ in tu.walk(tree_json) if names[-1] == name]


def strip_step(path):
    """A path without a leading ProfilerStep#N level, if the importer
    keeps one."""
    return re.sub(r"^ProfilerStep(#\d+)?/", "", path)


@unittest.skipIf(SKIP, SKIP)
class TorchTraceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="prism-trace-")
        cls.heavy = make("torch", os.path.join(cls.tmp, "heavy.json"), 300000)
        cls.light = make("torch", os.path.join(cls.tmp, "light.json"), 3000)
        cls.gz = tu.gzip_copy(cls.heavy, os.path.join(cls.tmp, "heavy.pt.trace.json.gz"))
        cls.events = trace_events(cls.heavy)
        cls.d = tu.analyze(cls.heavy)
        cls.t = tu.tree(cls.heavy, cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_trace_layout(self):
        """What this torch writes, so the tests below check the right thing:
        torch 1.13 (Debian, no Kineto) the legacy layout, torch 2.x Kineto's
        (test_kineto2.py reads it with every option)."""
        with open(self.heavy) as f:
            doc = json.load(f)
        if int(torch.__version__.split(".")[0]) >= 2:
            self.assertIsInstance(doc, dict)
            self.assertEqual(doc["schemaVersion"], 1)
            self.assertTrue(all("cat" in e for e in self.events if e.get("ph") == "X"))
            self.assertEqual(self.d["header"]["config"][0]["value"], "kineto")
            return
        self.assertTrue(all(e.get("ph") == "X" for e in self.events))
        self.assertTrue(all(e.get("pid") == "CPU functions" for e in self.events))
        self.assertTrue(all("cat" not in e for e in self.events))

    def test_steps(self):
        steps = sorted((e for e in self.events if e["name"].startswith("ProfilerStep#")),
                       key=lambda e: e["ts"])
        self.assertEqual(len(steps), ACTIVE)
        s = self.d["steps"]
        self.assertEqual(s["count"], ACTIVE)
        self.assertEqual([x["duration_ns"] for x in s["series"]],
                         [int(round(e["dur"] * 1000)) for e in steps])
        self.assertTrue(self.d["complete"])

    def test_tree(self):
        """The record_function regions nested as in the code, with the aten
        ops under them."""
        ops = {o["name"]: o for o in self.d["ops"]}
        for n in REGIONS:
            self.assertIn(n, ops, sorted(ops))
            self.assertEqual(ops[n]["calls"], ACTIVE, n)
        for outer, inner in NESTED:
            self.assertEqual(set(parents(self.t, inner)), {outer}, inner)
        for n in ["data_loading", "forward", "backward", "optimizer_step"]:
            for p in parents(self.t, n):
                self.assertTrue(p is None or p.startswith("ProfilerStep"), (n, p))
        under_encoder = {names[-1] for _, names, _ in tu.walk(self.t) if "encoder" in names[:-1]}
        self.assertIn("aten::linear", under_encoder)
        # nothing under heavy_block but the scaling (aten::mul and its kin)
        self.assertEqual(strip_step(ops["heavy_block"]["heaviest_path"]), "forward/heavy_block")

    def test_memory_samples(self):
        """profile_memory=True: memory samples where the trace holds
        [memory] events; torch 1.13's legacy export holds none, and then
        none may be made up."""
        mem = [e for e in self.events if e.get("name") == "[memory]"]
        if mem:
            self.assertGreater(self.d["memory"]["samples"], 0)
        else:
            self.assertEqual(self.d["memory"]["samples"], 0)
            self.assertFalse(self.d["memory"]["have_gpu"])

    @unittest.skipIf(SANITIZE, "the hot region is timing: torch with libasan preloaded runs its "
                               "allocations unevenly slower (the plain build checks it)")
    def test_hot_region(self):
        hot = [b for b in self.d["bottlenecks"] if b["type"] == "hot_operation"]
        self.assertTrue(hot, self.d["bottlenecks"])
        # the planted block is found hot; whether it or backward's matmul
        # leads depends on how the machine shares its cores (a busy one
        # stretches the backward), so the order is not asserted
        found = [b for b in hot if strip_step(b["path"] or "") == "forward/heavy_block"]
        self.assertEqual(len(found), 1, hot)
        self.assertIn(found[0]["severity"], ("HIGH", "MEDIUM"), found[0])

    def test_gz_equals_plain(self):
        g = tu.analyze(self.gz)
        msg = tu.same_analysis(self.d, g)
        self.assertIsNone(msg, msg)
        with gzip.open(self.gz) as f:               # the copy really is compressed
            self.assertIn(f.read(64).lstrip()[:1], (b"[", b"{"))

    def test_convert(self):
        out = os.path.join(self.tmp, "heavy.cbor")
        tu.ok("convert", self.heavy, "-o", out)
        self.assertLess(os.path.getsize(out), os.path.getsize(self.heavy))
        c = tu.analyze(out)
        msg = tu.same_analysis(self.d, c)
        self.assertIsNone(msg, msg)
        self.assertEqual(c["header"]["format_major"], 1)
        self.assertEqual(c["header"]["format_minor"], 1)
        # the converted profile is checksummed: a flipped byte is found
        with open(out, "rb") as f:
            b = bytearray(f.read())
        b[len(b) // 2] ^= 0xFF
        bad = os.path.join(self.tmp, "flipped.cbor")
        with open(bad, "wb") as f:
            f.write(b)
        r = tu.run_top("analyze", bad, "--format", "json")
        self.assertIn(r.rc, (0, 2), r)
        if r.rc == 0:
            rd = json.loads(r.stdout)["reader"]
            self.assertGreater(rd["bad_checksum"] + rd["damaged_runs"] + rd["malformed"], 0)

    def test_export_dump(self):
        folded = tu.ok("export", self.heavy, "--format", "folded", "-o", "-").stdout
        self.assertTrue(re.search(r"(^|;)forward;heavy_block \d+$", folded, re.M), folded[:2000])
        d = tu.dump(self.heavy)
        self.assertEqual(len(re.findall(r"^step ", d, re.M)), ACTIVE)
        self.assertIn("enter heavy_block", d)

    def test_prism_load(self):
        import prism
        p = prism.load(self.heavy)
        self.assertEqual(p.ops, self.d["ops"])
        self.assertEqual(p.steps["count"], ACTIVE)
        self.assertIn("heavy_block", {b["region"] for b in p.bottlenecks})
        pg = prism.load(self.gz)
        self.assertEqual(pg.ops, self.d["ops"])

    def test_compare_before_after(self):
        """heavy -> light: heavy_block much faster, the rest matched."""
        c = json.loads(tu.ok("compare", self.heavy, self.light, "--format", "json").stdout)
        regions = {strip_step(r["path"]): r for r in c["regions"]}
        hb = regions.get("forward/heavy_block")
        self.assertIsNotNone(hb, sorted(regions))
        self.assertEqual(hb["status"], "both")
        self.assertLess(hb["new_ns"] * 5, hb["base_ns"], hb)
        both = {r["name"] for r in c["regions"] if r["status"] == "both"}
        for n in REGIONS:
            self.assertIn(n, both)
        # (the runs' totals are not compared: the rest of each loop is the
        # same work, and a busy machine can stretch either run's share of it)
        self.assertIn("total_ns", c["new"])
        txt = tu.ok("compare", self.heavy, self.light).stdout
        self.assertIn("heavy_block", txt)
        tu.ok("compare", self.heavy, self.gz, "--format", "json")

    @unittest.skipIf(SANITIZE, "the PRISM profile needs torch and the sanitized extension "
                     "in one interpreter")
    def test_compare_with_prism_profile(self):
        """The same loop recorded by the prism module and by torch.profiler:
        compare runs either way and names the common regions."""
        prof = make("prism", os.path.join(self.tmp, "loop.cbor"), 300000, with_prism=True)
        for a, b in [(prof, self.heavy), (self.heavy, prof)]:
            c = json.loads(tu.ok("compare", a, b, "--format", "json").stdout)
            both = {r["name"] for r in c["regions"] if r["status"] == "both"}
            for n in REGIONS:
                self.assertIn(n, both, "%s vs %s" % (os.path.basename(a), os.path.basename(b)))
            paths = {r["path"] for r in c["regions"] if r["status"] == "both"}
            self.assertIn("forward/heavy_block", paths)
            self.assertEqual(c["base"]["steps"], ACTIVE)
            self.assertEqual(c["new"]["steps"], ACTIVE)
            txt = tu.ok("compare", a, b).stdout
            self.assertIn("heavy_block", txt)


if __name__ == "__main__":
    unittest.main()
