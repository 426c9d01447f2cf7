"""test_kineto2.py - real Kineto traces from torch 2.x's torch.profiler,
made during the run by kineto2_loop.py (a CPU training loop over a
DataLoader, nested modules, SGD) with record_shapes, profile_memory,
with_stack, with_modules, schedule(wait=1, warmup=1, active=N) and
tensorboard_trace_handler (plain and use_gzip), and read fully by
prism-top (analyze --format json, dump, export, convert) and prism.load:

* the module hierarchy (nn.Module: Net_0 > Sequential_0 > Linear_0) as the
  call path, the aten ops under it, the Python frames (with_stack);
* every cpu_op, record_function range and Python frame a region, every
  [memory] event a memory event, the flows counted, nothing repaired as
  an anomaly (no overflow track, nothing unsorted or unknown);
* ProfilerStep#N as steps, DataLoader and optimizer ranges once per step;
* the Python frames that enclose the steps (<module>) hold them: no
  unattributed_time, no region outside the steps longer than the trace is;
* the leak verdict for a loop that keeps 12 MB per step;
* the trace's metadata: start = baseTimeNanoseconds + the first event (never
  1970-01-01), host_name, a command line (never "Run ?"), schemaVersion,
  trace_id;
* a DataLoader with worker processes never advised "loading inline".

Debian's torch 1.13 writes the legacy layout (test_torch_trace.py): the
tests skip there with that reason.  Offline twins on committed traces:
tests/import_kineto2_test.c (tests/fixtures/kineto2/)."""
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from pyutil import SANITIZE, torch_env
import traceutil as tu

LOOP = os.path.join(tu.HERE, "kineto2_loop.py")
ACTIVE = 3
LEAK_ACTIVE = 6
DL = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
OPT = ["Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad"]
REGION_CATS = ("cpu_op", "user_annotation", "python_function")

try:
    import torch
    _major = int(torch.__version__.split(".")[0])
    SKIP = None if _major >= 2 else (
        "torch %s writes the legacy autograd layout, not Kineto's (test_torch_trace.py "
        "covers it)" % torch.__version__)
except ImportError:
    SKIP = "PyTorch is not installed for %s" % sys.executable


def make(out, *args):
    p = subprocess.run([sys.executable, LOOP, "-o", out] + list(args), env=torch_env(),
                       capture_output=True, text=True, timeout=300)
    traces = re.findall(r"^trace=(.*)$", p.stdout, re.M)
    if p.returncode != 0 or len(traces) != 1:
        raise AssertionError("kineto2_loop.py %s failed (%d): %s%s" % (
            " ".join(args), p.returncode, p.stdout[-500:], p.stderr[-2000:]))
    return traces[0]


def load(path):
    with (gzip.open(path) if path.endswith(".gz") else open(path, "rb")) as f:
        return json.load(f)


def config(d):
    return {c["key"]: c["value"] for c in d["header"]["config"]}


@unittest.skipIf(SKIP, SKIP)
class Kineto2Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="prism-kineto2-")
        d = lambda n: os.path.join(cls.tmp, n)
        cls.workers = make(d("workers"), "--workers", "2", "--gzip")
        cls.leak = make(d("leak"), "--leak", "12", "--active", str(LEAK_ACTIVE))
        cls.nostack = make(d("nostack"), "--workers", "2", "--no-stack")
        cls.doc = load(cls.workers)
        cls.d = tu.analyze(cls.workers)
        cls.t = tu.tree(cls.workers, cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_tensorboard_files(self):
        """<worker>.<timestamp>.pt.trace.json, .gz with use_gzip: both load,
        and they are what they say (the real Kineto layout)."""
        self.assertRegex(os.path.basename(self.workers), r"^worker0\.\d+\.pt\.trace\.json\.gz$")
        self.assertRegex(os.path.basename(self.leak), r"^worker0\.\d+\.pt\.trace\.json$")
        with open(self.workers, "rb") as f:
            self.assertEqual(f.read(2), b"\x1f\x8b")
        self.assertEqual(self.doc["schemaVersion"], 1)
        self.assertTrue(self.doc["with_modules"] and self.doc["with_stack"])
        for path in (self.workers, self.leak, self.nostack):
            d = tu.analyze(path)
            self.assertTrue(d["complete"], path)
            self.assertEqual(config(d)["import.layout"], "kineto")
        self.assertTrue(config(self.d)["import.gzip"])

    def test_metadata(self):
        """Start from baseTimeNanoseconds (never 1970-01-01), the host, a
        command line (never "Run ?"), the schema and the trace's id."""
        h = self.d["header"]
        ev = [e for e in self.doc["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") in REGION_CATS]
        first = min(int(round(e["ts"] * 1000)) for e in ev)
        start = self.doc["baseTimeNanoseconds"] + first
        self.assertLessEqual(abs(h["start_unix_ns"] - start), 1000)
        self.assertGreater(h["start_unix_ns"], 1577836800 * 10**9)        # after 2020
        self.assertEqual(h["host"], self.doc["host_name"])
        self.assertEqual(h["argv"], ["python", "kineto2_loop.py"])
        cfg = config(self.d)
        self.assertEqual(cfg["import.schema_version"], 1)
        self.assertEqual(cfg["import.trace_id"], self.doc["trace_id"])
        dump = tu.dump(self.workers)
        self.assertNotIn("1970-01-01", dump)
        self.assertIn("argv: python kineto2_loop.py", dump)
        txt = tu.analyze_text(self.workers)
        self.assertIn("Command: python kineto2_loop.py", txt)
        self.assertNotIn("1970", txt)
        # without with_stack: the name it was saved under (a gzip trace's is
        # a temporary file's: then its id, tests/import_kineto2_test.c)
        n = tu.analyze(self.nostack)["header"]
        self.assertEqual(n["argv"], [load(self.nostack)["traceName"]])
        self.assertEqual(n["argv"], [self.nostack])

    def test_read_fully(self):
        """Every op, range and Python frame a region, every [memory] event
        kept, the flows counted, nothing an anomaly."""
        ev = self.doc["traceEvents"]
        regions = [e for e in ev if e.get("ph") == "X" and e.get("cat") in REGION_CATS
                   and not e["name"].startswith("ProfilerStep#")]
        mem = [e for e in ev if e.get("name") == "[memory]"]
        flows = [e for e in ev if e.get("ph") in ("s", "f", "t")]
        self.assertTrue(mem and flows)
        cfg = config(self.d)
        self.assertEqual(cfg["import.events"], len(ev))
        self.assertEqual(cfg["import.regions"], len(regions))
        self.assertEqual(cfg["import.memory_events"], len(mem))
        self.assertEqual(cfg["import.flows"], len(flows))
        for k in ("import.overlapping_moved", "import.overlapping_dropped", "import.unsorted",
                  "import.unknown_category", "import.unknown_phase", "import.missing_fields",
                  "import.bad_numbers"):
            self.assertNotIn(k, cfg)
        self.assertGreater(self.d["memory"]["samples"], 0)
        names = {t["name"] for t in self.t["threads"]}
        self.assertFalse([n for n in names if "(overlap" in n], names)
        ops = {o["name"] for o in self.d["ops"]}
        # a Python object's address differs per run: read as " at 0x...>"
        # so that the same code has the same name in every trace
        addr = re.compile(r" at 0x[0-9a-fA-F]{6,}>")
        self.assertFalse({addr.sub(" at 0x...>", e["name"]) for e in regions} - ops)
        self.assertFalse([n for n in ops if addr.search(n)])

    def test_module_hierarchy(self):
        """with_modules: nn.Module: Net_0 > Sequential_0 > Linear_0, with
        the Python frames between them and the aten ops below."""
        chain = ["nn.Module: Net_0", "nn.Module: Sequential_0", "nn.Module: Linear_0"]
        found = False
        for _, names, _ in tu.walk(self.t):
            mods = [n for n in names if n.startswith("nn.Module: ")]
            if mods[:3] == chain and names[-1] == "aten::addmm":
                found = True
                self.assertTrue(any(re.match(r"kineto2_loop\.py\(\d+\): forward$", n)
                                    for n in names), names)
                self.assertEqual(names[0].split("(")[0], "kineto2_loop.py")
        self.assertTrue(found)
        ops = {o["name"]: o for o in self.d["ops"]}
        for m in chain + ["nn.Module: ReLU_0", "nn.Module: Linear_1"]:
            self.assertEqual(ops[m]["calls"], ACTIVE, m)
        folded = tu.ok("export", self.workers, "--format", "folded", "-o", "-").stdout
        self.assertRegex(folded, r"nn\.Module: Net_0;.*nn\.Module: Sequential_0;.*"
                                 r"nn\.Module: Linear_0;.*aten::addmm")

    def test_steps(self):
        steps = sorted((e for e in self.doc["traceEvents"]
                        if e.get("name", "").startswith("ProfilerStep#")), key=lambda e: e["ts"])
        self.assertEqual(len(steps), ACTIVE)
        s = self.d["steps"]
        self.assertEqual(s["count"], ACTIVE)
        self.assertEqual([x["duration_ns"] for x in s["series"]],
                         [int(round(e["dur"] * 1000)) for e in steps])
        self.assertEqual(len(re.findall(r"^step ", tu.dump(self.workers), re.M)), ACTIVE)

    def test_python_frames_hold_the_steps(self):
        """with_stack: the script's <module> frame opens before the first
        ProfilerStep and closes after the last.  It holds the steps: no
        unattributed_time, and no region is outside the steps for longer
        than the trace is (before, between and after the steps)."""
        for path, d in ((self.workers, self.d), (self.leak, tu.analyze(self.leak))):
            types = [b["type"] for b in d["bottlenecks"]]
            self.assertNotIn("unattributed_time", types, path)
            o = d["summary"]["outside_steps"]
            out = o["before_ns"] + o["between_ns"] + o["after_ns"]
            names = [r["name"] for r in o["regions"]]
            self.assertTrue(any(n.startswith("kineto2_loop.py(") and n.endswith("<module>")
                                for n in names), names)
            for r in o["regions"]:
                self.assertLessEqual(r["ns"], out, (path, r, o))

    def test_dataloader_and_optimizer(self):
        """The ranges once per step, the DataLoader's inside the Python
        __next__ that opens it and holding what it calls."""
        ops = {o["name"]: o for o in self.d["ops"]}
        for n in [DL] + OPT:
            self.assertEqual(ops[n]["calls"], ACTIVE, n)
        for _, names, node in tu.walk(self.t):
            if names[-1] == DL:
                self.assertRegex(names[-2], r"^torch/utils/data/dataloader\.py\(\d+\): __next__$")
                self.assertTrue(node.get("children"))

    def test_leak_verdict(self):
        d = tu.analyze(self.leak)
        self.assertEqual(d["steps"]["count"], LEAK_ACTIVE)
        self.assertTrue(d["memory"]["leak_detected"])
        self.assertEqual(d["memory"]["host_leak"]["verdict"], "leak")
        self.assertAlmostEqual(d["memory"]["host_leak"]["slope_mb_per_step"], 12.0, delta=1.0)
        self.assertIn("memory_leak", [b["type"] for b in d["bottlenecks"]])
        self.assertFalse(tu.analyze(self.workers)["memory"]["leak_detected"])

    def test_workers_never_inline(self):
        """num_workers=2: the loading is in worker processes, whatever the
        trace holds of them."""
        for path in (self.workers, self.nostack):
            d = tu.analyze(path)
            ops = {o["name"] for o in d["ops"]}
            self.assertIn(DL, ops)
            for b in d["bottlenecks"]:
                self.assertNotIn("loading inline", b["evidence"], path)
                if b["type"] == "data_loading":
                    self.assertNotIn("DataLoader(num_workers>0)", b["recommendation"])
            self.assertNotIn("loading inline", tu.analyze_text(path))

    def test_convert_and_load(self):
        out = os.path.join(self.tmp, "workers.cbor")
        tu.ok("convert", self.workers, "-o", out)
        c = tu.analyze(out)
        msg = tu.same_analysis(self.d, c)
        self.assertIsNone(msg, msg)
        self.assertEqual(c["header"]["argv"], self.d["header"]["argv"])
        self.assertEqual(c["header"]["start_unix_ns"], self.d["header"]["start_unix_ns"])

    @unittest.skipIf(SANITIZE, "prism.load needs the sanitized extension in this interpreter")
    def test_prism_load(self):
        import prism
        for path in (self.workers, self.leak):
            p = prism.load(path)
            self.assertEqual(p.ops, tu.analyze(path)["ops"])
        p = prism.load(self.leak)
        self.assertEqual(p.steps["count"], LEAK_ACTIVE)
        self.assertIn("nn.Module: Linear_0", {o["name"] for o in p.ops})


if __name__ == "__main__":
    unittest.main()
