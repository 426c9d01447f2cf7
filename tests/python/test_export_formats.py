"""test_export_formats.py - the files `prism-top export` writes for other
tools, read back with real parsers, on profiles made by the project's own
writers (refprofile, trainloop) and a torch.profiler trace
(tests/fixtures/kineto/basic.json, imported):

  chrome-trace  a valid Trace Event Format file (trace_check.check_chrome):
                named, balanced B/E, spans that nest with no partial
                overlap even as ts + dur in doubles, metadata for every
                track; the training thread on the first track, the steps
                right after it, steps never nested in one another
  speedscope    valid against speedscope's published schema
                (tests/fixtures/speedscope/file-format-schema.json, with
                python3-jsonschema; skipped with a message without it) and
                structurally (trace_check.check_speedscope); the training
                thread is profile 0, activeProfileIndex 0; frames are the
                region names
  folded        --unit ns|us|ms: integers, no zero stacks, the sum the
                rounded sum of the nanoseconds
  stdout        no -o (and -o -) writes the same bytes as -o FILE; a reader
                that goes away (| head) ends the run quietly

Run with B set (tests/python/run.sh does)."""
import json
import os
import signal
import subprocess
import unittest

from pyutil import B, PRISM_TOP, TempDirTest, prism_top
import trace_check as tc

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(os.path.dirname(HERE), "fixtures", "speedscope",
                      "file-format-schema.json")
KINETO = os.path.join(os.path.dirname(HERE), "fixtures", "kineto", "basic.json")

try:
    import jsonschema
except ImportError:            # python3-jsonschema (make deps installs it)
    jsonschema = None


class Profiles(TempDirTest):
    """A refprofile, a trainloop run and the Kineto fixture."""

    def refprofile(self):
        p = self.path("ref.cbor")
        subprocess.run([os.path.join(B, "bin", "refprofile"), "-o", p, "--threads", "3"],
                       check=True, capture_output=True, timeout=120)
        return p

    def trainloop(self):
        p = self.path("loop.cbor")
        subprocess.run([os.path.join(B, "bin", "trainloop"), "--output", p, "--steps", "15",
                        "--epochs", "2", "--workers", "2"], check=True,
                       capture_output=True, timeout=300)
        return p

    def profiles(self):
        return [("refprofile", self.refprofile()), ("trainloop", self.trainloop()),
                ("kineto", KINETO)]

    def export(self, path, fmt, *more):
        r = prism_top("export", path, "--format", fmt, *more)
        self.assertEqual(r.stderr, b"")
        return r.stdout

    def training_thread(self, path):
        a = json.loads(prism_top("analyze", path, "--format", "json").stdout)
        return a["summary"]["training_thread"]


class ChromeTraceTest(Profiles):
    def test_valid_trace_event_format(self):
        for what, path in self.profiles():
            with self.subTest(what):
                doc = json.loads(self.export(path, "chrome-trace"))
                self.assertEqual(tc.check_chrome(doc), [])
                ends = [e for e in doc["traceEvents"] if e["ph"] == "E"]
                self.assertTrue(all(e.get("name") for e in ends))

    def test_training_thread_first_steps_next(self):
        for what, path in self.profiles()[:2]:
            with self.subTest(what):
                doc = json.loads(self.export(path, "chrome-trace"))
                pid = doc["otherData"]["pid"]
                names = tc.thread_names(doc)
                tracks = tc.chrome_tracks(doc)
                tids = sorted(t for (p, t) in tracks if p == pid)
                # speedscope orders by pid then tid; Perfetto by sort index
                self.assertEqual(names[(pid, tids[0])], self.training_thread(path))
                self.assertEqual(names[(pid, tids[1])], "steps")
                sort = {(e["pid"], e["tid"]): e["args"]["sort_index"]
                        for e in doc["traceEvents"]
                        if e["ph"] == "M" and e["name"] == "thread_sort_index"}
                self.assertEqual(sorted(tids, key=lambda t: sort[(pid, t)]), tids)
                steps = sorted(tracks[(pid, tids[1])])
                self.assertGreater(len(steps), 10)
                for a, b in zip(steps, steps[1:]):     # in sequence, never nested
                    self.assertLessEqual(a[1], b[0], (a, b))

    def test_checker_catches_what_speedscope_misreads(self):
        """The checker fails the old export's faults: E without a name,
        an X whose ts + dur passes the next step's start."""
        ev = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "p"}},
              {"name": "thread_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "t"}},
              {"name": "a", "ph": "B", "pid": 1, "tid": 0, "ts": 1.0},
              {"ph": "E", "pid": 1, "tid": 0, "ts": 2.0}]
        self.assertNotEqual(tc.check_chrome({"traceEvents": ev}), [])
        steps = [{"name": "s1", "ph": "X", "pid": 1, "tid": 0, "ts": 39500.002, "dur": 91.035},
                 {"name": "s2", "ph": "X", "pid": 1, "tid": 0, "ts": 39591.037, "dur": 5.0}]
        self.assertGreater(steps[0]["ts"] + steps[0]["dur"], steps[1]["ts"])
        self.assertNotEqual(tc.check_chrome({"traceEvents": ev[:2] + steps}), [])


class SpeedscopeTest(Profiles):
    def test_valid_speedscope_file(self):
        if jsonschema is None:
            self.skipTest("python3-jsonschema not installed: schema check skipped")
        with open(SCHEMA, encoding="utf-8") as f:
            schema = json.load(f)
        for what, path in self.profiles():
            with self.subTest(what):
                doc = json.loads(self.export(path, "speedscope"))
                jsonschema.validate(doc, schema)
                self.assertEqual(tc.check_speedscope(doc), [])

    def test_structure(self):
        for what, path in self.profiles():
            with self.subTest(what):
                doc = json.loads(self.export(path, "speedscope"))
                self.assertEqual(tc.check_speedscope(doc), [])
                self.assertEqual(doc["activeProfileIndex"], 0)
                self.assertTrue(doc["exporter"].startswith("prism-top@"))
                self.assertTrue(doc["name"])
                units = {p["unit"] for p in doc["profiles"]}
                self.assertEqual(units, {"nanoseconds"})
                self.assertTrue(any(p["events"] for p in doc["profiles"]))

    def test_training_thread_first(self):
        for what, path in self.profiles()[:2]:
            with self.subTest(what):
                doc = json.loads(self.export(path, "speedscope"))
                names = [p["name"] for p in doc["profiles"]]
                self.assertEqual(names[0], self.training_thread(path))
                self.assertEqual(names[1], "steps")
                frames = {f["name"] for f in doc["shared"]["frames"]}
                self.assertIn("step", frames)

    def test_frames_are_the_region_names(self):
        path = self.refprofile()
        doc = json.loads(self.export(path, "speedscope"))
        tree = json.loads(self.export(path, "json"))
        names = set()

        def walk(n):
            names.add(n["name"])
            for c in n["children"]:
                walk(c)
        for r in tree["roots"]:
            walk(r)
        frames = {f["name"] for f in doc["shared"]["frames"]}
        self.assertEqual(frames | {"step"}, names | {"step"})

    def test_schema_rejects_a_broken_file(self):
        if jsonschema is None:
            self.skipTest("python3-jsonschema not installed: schema check skipped")
        with open(SCHEMA, encoding="utf-8") as f:
            schema = json.load(f)
        doc = json.loads(self.export(self.refprofile(), "speedscope"))
        doc["profiles"][0]["unit"] = "fortnights"
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(doc, schema)
        doc = json.loads(self.export(self.refprofile(), "speedscope"))
        doc["profiles"][0]["events"].pop()
        self.assertNotEqual(tc.check_speedscope(doc), [])


class FoldedUnitTest(Profiles):
    def lines(self, path, unit=None):
        out = self.export(path, "folded", *(["--unit", unit] if unit else []))
        rows = [ln.rsplit(" ", 1) for ln in out.decode().splitlines()]
        return {stack: int(v) for stack, v in rows}

    def test_units(self):
        path = self.trainloop()
        ns = self.lines(path)
        self.assertEqual(ns, self.lines(path, "ns"))
        total = sum(ns.values())
        for unit, div in (("us", 1000), ("ms", 1000000)):
            with self.subTest(unit):
                v = self.lines(path, unit)
                self.assertTrue(all(x > 0 for x in v.values()))
                self.assertLessEqual(abs(sum(v.values()) - total / div), 0.5)
                self.assertLessEqual(set(v), set(ns))
                for stack, x in v.items():      # each within a unit of its own time
                    self.assertLessEqual(abs(x - ns[stack] / div), 1.0, stack)
        self.assertLess(len(self.lines(path, "ms")), len(ns))    # zero stacks left out

    def test_bad_unit(self):
        path = self.refprofile()
        for args in (["--format", "folded", "--unit", "s"],
                     ["--format", "csv", "--unit", "us"]):
            r = prism_top("export", path, *args, check=False)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(len(r.stderr.splitlines()), 1)


class StdoutTest(Profiles):
    def test_stdout_equals_file(self):
        path = self.refprofile()
        for fmt in ("chrome-trace", "speedscope", "csv", "folded", "json"):
            with self.subTest(fmt):
                out = self.path("x." + fmt)
                prism_top("export", path, "--format", fmt, "-o", out)
                with open(out, "rb") as f:
                    want = f.read()
                self.assertEqual(self.export(path, fmt), want)
                self.assertEqual(self.export(path, fmt, "-o", "-"), want)

    def test_closed_pipe_is_quiet(self):
        path = self.trainloop()
        for sigpipe in (signal.SIG_DFL, signal.SIG_IGN):
            for fmt in ("chrome-trace", "speedscope", "folded"):
                with self.subTest(fmt=fmt, sigpipe=sigpipe):
                    p = subprocess.Popen([PRISM_TOP, "export", path, "--format", fmt],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         preexec_fn=lambda s=sigpipe: signal.signal(
                                             signal.SIGPIPE, s))
                    p.stdout.read(10)
                    p.stdout.close()            # | head -c 10
                    err = p.stderr.read()
                    rc = p.wait(timeout=120)
                    self.assertIn(rc, (0, -signal.SIGPIPE))
                    self.assertEqual(err, b"")


if __name__ == "__main__":
    unittest.main()
