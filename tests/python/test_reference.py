"""prism.profiling: the reference profiler's API over prism.

Three parts: the configuration and its table in docs/REFERENCE.md (no session); the
profiler, callback and analyzer against a fake ``prism`` session (patched
module functions: one process has one session, so these cannot use real
ones); and tests/python/reference_script.py, a script written against the
reference's documentation, run for real in subprocesses, its profiles read
back with prism.load.
"""
import contextlib
import dataclasses
import errno
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

import prism
from prism import profiling
from prism.profiling import (FIELD_MAPPING, Bottleneck, BottleneckType, ProfileAnalyzer,
                             ProfilerCallback, ProfilerConfig, TrainingProfiler)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("reference_script.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# The reference's Configuration Reference: field -> (type, default).
REFERENCE = {
    "enabled": (bool, True), "collect_timing": (bool, True), "collect_memory": (bool, True),
    "collect_gpu_ops": (bool, True), "sample_rate": (float, 0.1),
    "adaptive_sampling": (bool, True), "use_cuda_events": (bool, True),
    "cuda_sync_per_epoch": (bool, False), "warmup_samples": (int, 2),
    "active_samples": (int, 5), "record_shapes": (bool, True), "with_flops": (bool, True),
    "with_modules": (bool, True), "output_dir": (Path, None), "storage_format": (str, "binary"),
    "export_chrome_trace": (bool, True), "bottleneck_threshold_pct": (float, 10.0),
    "memory_leak_threshold_mb": (float, 10.0),
}
# Where PRISM's default differs (the dataclass docstring and docs/REFERENCE.md say why).
PRISM_DEFAULTS = {"sample_rate": 1.0, "warmup_samples": 0, "active_samples": 0}


def readme_table():
    """docs/REFERENCE.md's ProfilerConfig table: {field: [cells]}."""
    text = (ROOT / "docs" / "REFERENCE.md").read_text(encoding="utf-8")
    head = "# The reference's API"
    if head not in text:
        raise AssertionError(f"docs/REFERENCE.md has no {head!r} section")
    rows, seen = {}, False
    for line in text[text.index(head):].splitlines()[1:]:
        if line.startswith("|"):
            seen = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            m = re.fullmatch(r"`(\w+)`", cells[0])
            if m:
                rows[m.group(1)] = cells
        elif seen or line.startswith("#"):
            break
    return rows


class ConfigTest(unittest.TestCase):
    def test_fields_and_defaults(self):
        fields = {f.name: f for f in dataclasses.fields(ProfilerConfig)}
        self.assertEqual(list(fields), list(REFERENCE))
        c = ProfilerConfig()
        for name, (_, default) in REFERENCE.items():
            want = PRISM_DEFAULTS.get(name, default)
            self.assertEqual(getattr(c, name), want, name)
        self.assertEqual(set(FIELD_MAPPING), set(REFERENCE))

    def test_unknown_field_is_a_type_error(self):
        with self.assertRaises(TypeError):
            ProfilerConfig(sampling_rate=0.5)

    def test_bad_values(self):
        bad = [("sample_rate", 0), ("sample_rate", 1.5), ("sample_rate", float("nan")),
               ("sample_rate", "0.1"), ("sample_rate", True), ("enabled", "yes"),
               ("enabled", 2), ("warmup_samples", -1), ("active_samples", 1.5),
               ("active_samples", 2**32), ("storage_format", "xml"),
               ("bottleneck_threshold_pct", -1), ("bottleneck_threshold_pct", 101),
               ("memory_leak_threshold_mb", float("inf")), ("output_dir", 3),
               ("output_dir", "")]
        for name, value in bad:
            with self.subTest(field=name, value=value):
                with self.assertRaisesRegex(ValueError, name):
                    ProfilerConfig(**{name: value})

    def test_values_are_normalised(self):
        c = ProfilerConfig(enabled=1, sample_rate=1, output_dir="out")
        self.assertIs(c.enabled, True)
        self.assertIsInstance(c.sample_rate, float)
        self.assertEqual(c.output_dir, Path("out"))
        c.sample_rate = 7                       # validated again when a profiler starts
        with self.assertRaises(ValueError):
            TrainingProfiler(c)

    def test_init_kwargs(self):
        c = ProfilerConfig(collect_timing=False, sample_rate=0.25, adaptive_sampling=False,
                           warmup_samples=3, active_samples=4, bottleneck_threshold_pct=20,
                           memory_leak_threshold_mb=5)
        self.assertEqual(c.init_kwargs(), {
            "enabled": True, "collect_timing": False, "collect_memory": True,
            "collect_gpu_ops": True, "sample_rate": 0.25, "adaptive_sampling": False,
            "warmup_steps": 3, "active_steps": 4, "bottleneck_threshold_pct": 20.0,
            "memory_leak_threshold_mb": 5.0})

    def test_readme_table_matches_the_dataclass(self):
        rows = readme_table()
        self.assertEqual(set(rows), set(REFERENCE), "docs/REFERENCE.md table vs ProfilerConfig fields")
        for name, (kind, detail) in FIELD_MAPPING.items():
            what = rows[name][2]
            with self.subTest(field=name, kind=kind):
                if kind == "init":
                    self.assertIn(f"prism.init({detail}=", what)
                elif kind == "none":
                    self.assertIn("no effect", what)
                elif kind == "save":
                    self.assertIn("save()", what)
                elif kind == "instrument":
                    self.assertIn("instrument(", what)
                elif kind == "window":
                    self.assertIn("operator window", what)
                else:
                    self.assertEqual(kind, "session")
                default = PRISM_DEFAULTS.get(name)
                if default is not None:
                    self.assertIn(f"default {default!r}", what.replace("`", ""))


class FakeSession:
    """prism's recording functions, faked: calls are logged, files are real."""

    NAMES = ("init", "recording", "output_path", "shutdown", "export", "load",
             "step_begin", "step_end", "epoch", "counter")

    def __init__(self, running=None, start=True):
        self.calls = []
        self.out = running
        self.running = running is not None
        self.start = start

    def init(self, output=None, **kw):
        self.calls.append(("init", output, kw))
        if not self.start:
            return False
        self.out = output.replace("%%", "%")
        Path(self.out).write_bytes(b"\xd9\xd9\xf7 profile")
        self.running = True
        return True

    def recording(self):
        return self.running

    def output_path(self):
        return self.out

    def shutdown(self):
        self.calls.append(("shutdown",))
        self.running = False

    def export(self, path, out, format):
        self.calls.append(("export", path, out, format))
        Path(out).write_text("{}")

    def load(self, path, **kw):
        self.calls.append(("load", path))
        return types.SimpleNamespace(json={"schema": "prism.analyze/1", "file": path})

    def step_begin(self):
        self.calls.append(("step_begin",))

    def step_end(self):
        self.calls.append(("step_end",))

    def epoch(self, n):
        self.calls.append(("epoch", n))

    def counter(self, name, value):
        self.calls.append(("counter", name, value))

    @contextlib.contextmanager
    def patched(self):
        with contextlib.ExitStack() as stack:
            for n in self.NAMES:
                stack.enter_context(mock.patch.object(prism, n, getattr(self, n)))
            yield self

    def names(self):
        return [c[0] for c in self.calls]


class ProfilerTest(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="prism-ref-"))
        self.addCleanup(shutil.rmtree, self.dir, True)

    def test_init_gets_the_config_and_a_temporary_file(self):
        out = self.dir / "100%p"
        cfg = ProfilerConfig(output_dir=out, sample_rate=0.5, warmup_samples=1,
                             collect_memory=False, memory_leak_threshold_mb=3)
        with FakeSession().patched() as fake:
            p = TrainingProfiler(cfg)
            name, output, kw = fake.calls[0]
            self.assertEqual(name, "init")
            self.assertEqual(kw, cfg.init_kwargs())
            prefix = os.path.abspath(out).replace("%", "%%") + "/.prism-"
            self.assertTrue(output.startswith(prefix), output)
            self.assertTrue(output.endswith(".cbor.part"))
            self.assertTrue(Path(fake.out).exists())
            self.assertTrue(p.recording)
            p.save(self.dir / "run.pt")

    def test_save_moves_the_file_and_exports(self):
        dest = self.dir / "sub" / "run.pt"
        with FakeSession().patched() as fake:
            p = TrainingProfiler(ProfilerConfig(output_dir=self.dir, storage_format="json"))
            temp = fake.out
            self.assertEqual(p.save(dest), dest)
            self.assertFalse(Path(temp).exists())
            self.assertTrue(dest.read_bytes().startswith(b"\xd9\xd9\xf7"))
            self.assertIn(("export", str(dest), str(self.dir / "sub" / "run.trace.json"),
                           "chrome-trace"), fake.calls)
            self.assertLess(fake.names().index("shutdown"), fake.names().index("export"))
            doc = json.loads((self.dir / "sub" / "run.analyze.json").read_text())
            self.assertEqual(doc["schema"], "prism.analyze/1")
            self.assertEqual(p.saved_path, dest)
            self.assertNotIn(temp, profiling._unsaved)
            with self.assertRaisesRegex(RuntimeError, "already saved"):
                p.save(self.dir / "again.pt")
            self.assertFalse((self.dir / "again.pt").exists())

    def test_no_chrome_trace_when_not_asked(self):
        with FakeSession().patched() as fake:
            p = TrainingProfiler(ProfilerConfig(output_dir=self.dir, export_chrome_trace=False))
            p.save(self.dir / "run")
            self.assertNotIn("export", fake.names())
            self.assertTrue((self.dir / "run").exists())

    def test_across_file_systems_it_copies(self):
        real = os.replace
        failed = []

        def replace(src, dst):
            if not failed:
                failed.append(src)
                raise OSError(errno.EXDEV, "Invalid cross-device link")
            return real(src, dst)

        with FakeSession().patched() as fake, mock.patch.object(profiling.os, "replace", replace):
            p = TrainingProfiler(ProfilerConfig(output_dir=self.dir, export_chrome_trace=False))
            temp = fake.out
            p.save(self.dir / "x.cbor")
        self.assertEqual(failed, [temp])
        self.assertFalse(Path(temp).exists())
        self.assertTrue((self.dir / "x.cbor").exists())
        self.assertEqual([f.name for f in self.dir.iterdir()], ["x.cbor"])

    def test_disabled_records_nothing_and_save_warns(self):
        with FakeSession().patched() as fake:
            p = TrainingProfiler(ProfilerConfig(enabled=False, output_dir=self.dir))
            self.assertEqual(fake.calls, [])
            with self.assertWarnsRegex(RuntimeWarning, "disabled"):
                self.assertIsNone(p.save(self.dir / "run.pt"))
        self.assertEqual(list(self.dir.iterdir()), [])

    def test_session_that_does_not_start_warns(self):
        with FakeSession(start=False).patched():
            with self.assertWarnsRegex(RuntimeWarning, "did not start"):
                p = TrainingProfiler(ProfilerConfig(output_dir=self.dir))
            with self.assertWarnsRegex(RuntimeWarning, "nothing saved"):
                self.assertIsNone(p.save(self.dir / "run.pt"))
        self.assertEqual(list(self.dir.iterdir()), [])

    def test_joins_a_running_session_and_copies_its_file(self):
        theirs = self.dir / "prism-run.cbor"
        theirs.write_bytes(b"\xd9\xd9\xf7 theirs")
        with FakeSession(running=str(theirs)).patched() as fake:
            p = TrainingProfiler(ProfilerConfig(output_dir=self.dir, export_chrome_trace=False))
            self.assertNotIn("init", fake.names())
            self.assertTrue(p.recording)
            p.save(self.dir / "mine.pt")
            self.assertIn("shutdown", fake.names())
        self.assertEqual((self.dir / "mine.pt").read_bytes(), theirs.read_bytes())
        self.assertTrue(theirs.exists())

    def test_profile_region_is_prism_region(self):
        with FakeSession().patched():
            p = TrainingProfiler(ProfilerConfig(output_dir=self.dir, export_chrome_trace=False))
            self.assertIs(p.profile_region("forward"), prism.region("forward"))
            p.save(self.dir / "r.cbor")

        @TrainingProfiler(ProfilerConfig(enabled=False)).profile_region("decorated")
        def f(x):
            return x + 1
        self.assertEqual(f(1), 2)


class CallbackTest(unittest.TestCase):
    def run_hooks(self, hooks, cb=None):
        """All the calls the hooks made, in order."""
        return [c for _, calls in self.per_hook(hooks, cb) for c in calls]

    def per_hook(self, hooks, cb=None):
        """[(hook, [the calls it made])]."""
        cb = cb or ProfilerCallback()
        out = []
        with FakeSession().patched() as fake:
            for name, args, kwargs in hooks:
                before = len(fake.calls)
                self.assertIsNone(getattr(cb, name)(*args, **kwargs))
                out.append((name, fake.calls[before:]))
        return out

    def test_reference_trainer_hooks(self):
        got = self.per_hook([
            ("on_sample_start", (0,), {}), ("on_epoch_start", (0,), {}),
            ("on_epoch_end", (0, 0.5), {}), ("on_epoch_start", (1,), {}),
            ("on_epoch_end", (1,), {"loss": 0.25}), ("on_sample_end", (0, {"loss": 0.25}), {}),
            ("on_sample_start", (1,), {}), ("on_epoch_start", (0,), {}),
            ("on_epoch_end", (0, "not a number"), {}), ("on_epoch_start", (1,), {}),
            ("on_training_end", (), {})])
        self.assertEqual(got, [
            ("on_sample_start", [("epoch", 0)]),
            ("on_epoch_start", [("step_begin",)]),
            ("on_epoch_end", [("counter", "loss", 0.5), ("step_end",)]),
            ("on_epoch_start", [("step_begin",)]),
            ("on_epoch_end", [("counter", "loss", 0.25), ("step_end",)]),
            ("on_sample_end", []),
            ("on_sample_start", [("epoch", 1)]),
            ("on_epoch_start", [("step_begin",)]),
            ("on_epoch_end", [("step_end",)]),
            ("on_epoch_start", [("step_begin",)]),
            ("on_training_end", [("step_end",)])])

    def test_generic_trainer_hooks(self):
        hf = (object(), types.SimpleNamespace(epoch=0.0), object())   # args, state, control
        calls = self.run_hooks([
            ("on_train_begin", hf, {}), ("on_epoch_begin", hf, {}),
            ("on_step_begin", hf, {}), ("on_step_end", hf, {}),
            ("on_step_begin", hf, {}), ("on_step_end", hf, {}),
            ("on_epoch_end", hf, {}), ("on_epoch_begin", (7,), {"logs": {}}),
            ("on_train_batch_begin", (0,), {}), ("on_train_batch_end", (0, {"loss": 1.0}), {}),
            ("on_train_batch_start", (object(), object(), [], 1), {}),
            ("on_evaluate", hf, {}), ("on_train_end", hf, {})])
        self.assertEqual(calls, [
            ("epoch", 0), ("step_begin",), ("step_end",), ("step_begin",), ("step_end",),
            ("epoch", 7), ("step_begin",), ("step_end",), ("step_begin",), ("step_end",)])

    def test_a_step_begun_while_one_is_open_ends_it(self):
        calls = self.run_hooks([("on_step_begin", (), {}), ("on_batch_begin", (), {}),
                                ("on_batch_end", (), {})])
        self.assertEqual(calls, [("step_begin",), ("step_end",), ("step_begin",),
                                 ("step_end",)])

    def test_only_on_names_are_hooks(self):
        cb = ProfilerCallback()
        self.assertIsNone(cb.on_something_new(1, x=2))
        with self.assertRaises(AttributeError):
            cb.something_else

    def test_optimizer_steps_replace_the_hooks_steps(self):
        cb = ProfilerCallback()
        cb.steps_by_optimizer = True
        calls = self.run_hooks([("on_sample_start", (2,), {}), ("on_epoch_start", (0,), {}),
                                ("on_epoch_end", (0, 1.5), {}), ("on_training_end", (), {})],
                               cb)
        self.assertEqual(calls, [("epoch", 2), ("counter", "loss", 1.5)])

    def test_profiler_forwards_to_its_callback(self):
        with FakeSession().patched() as fake:
            p = TrainingProfiler(ProfilerConfig(enabled=False))
            self.assertIs(p.callback, p.callback)
            p.start_sample(3)
            p.start_epoch(0)
            p.end_epoch(0, 2.0)
            p.end_sample(3)
        self.assertEqual(fake.calls, [("epoch", 3), ("step_begin",), ("counter", "loss", 2.0),
                                      ("step_end",)])


class AnalyzerUnitTest(unittest.TestCase):
    def fake_profile(self):
        return types.SimpleNamespace(
            path="p.cbor", complete=True,
            summary={"share_denominator_ns": 2_000_000_000, "region_ns": 5},
            steps={"count": 0, "timed": 0, "sampled": 0, "series": []},
            memory={"have_gpu": False, "peak_gpu_used_bytes": None, "leak_detected": False,
                    "peak_rss_bytes": 3 << 20},
            gpu={"present": False, "span_ns": 0},
            bottlenecks=[
                {"type": "hot_operation", "severity": "HIGH", "share": 0.5,
                 "description": "d", "evidence": "e", "recommendation": "r",
                 "path": "step/forward"},
                {"type": "memory_leak", "severity": "MEDIUM", "share": 12.0,
                 "description": "leak", "evidence": "", "recommendation": "fix it",
                 "path": None},
                {"type": "a_new_kind", "severity": "LOW", "share": 0.1,
                 "description": "", "evidence": "", "recommendation": "", "path": "x"}])

    def test_bottlenecks(self):
        b = ProfileAnalyzer(self.fake_profile()).identify_bottlenecks()
        self.assertEqual([x.type for x in b[:2]],
                         [BottleneckType.HOT_OPERATION, BottleneckType.MEMORY_LEAK])
        self.assertEqual(b[2].type.value, "a_new_kind")
        self.assertEqual([x.severity for x in b], ["high", "medium", "low"])
        self.assertEqual(b[0].impact_ms, 1000.0)
        self.assertEqual(b[1].impact_ms, 0.0)
        self.assertEqual((b[0].region, b[0].path, b[0].fix), ("forward", "step/forward", "r"))
        self.assertIsNone(b[1].region)
        self.assertIsInstance(b[0], Bottleneck)

    def test_summary_without_steps(self):
        s = ProfileAnalyzer(self.fake_profile()).get_summary()
        self.assertEqual((s["total_epochs"], s["total_samples"]), (0, 0))
        self.assertEqual(s["total_time_ms"], 5e-6)
        self.assertEqual(s["peak_gpu_memory_mb"], 0.0)
        self.assertEqual((s["device"], s["prism_peak_rss_mb"]), ("cpu", 3.0))

    def test_bad_file_is_a_profile_error(self):
        with tempfile.NamedTemporaryFile(suffix=".pt") as f:
            f.write(b"not a profile at all")
            f.flush()
            with self.assertRaises(prism.ProfileError) as e:
                ProfileAnalyzer(f.name)
            self.assertIn(f.name, str(e.exception))


SANITIZE = os.environ.get("PRISM_TEST_SANITIZE") == "1"


def clean_env(*first):
    """The environment without PRISM_* (no session from it), prism importable."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PRISM_") or k == "PRISM_TEST_SANITIZE"}
    path = [*first, str(Path(prism.__file__).resolve().parent.parent)]
    env["PYTHONPATH"] = os.pathsep.join(path + [p for p in [env.get("PYTHONPATH")] if p])
    return env


class ReferenceScriptTest(unittest.TestCase):
    """The reference's documented usage, run for real, read back with prism.load.

    With torch (a small model on the CPU) where /usr/bin/python3 has it, and
    once without (the script's pure-Python model); under the sanitizers
    (PRISM_TEST_SANITIZE=1: libasan preloaded) always without torch.
    """

    runs = {}

    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp(prefix="prism-refscript-"))
        # A torch that does not import: the script falls back to pure Python.
        hide = cls.dir / "no-torch"
        (hide / "torch").mkdir(parents=True)
        (hide / "torch" / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
        (hide / "run").mkdir()
        env = clean_env(str(hide)) if SANITIZE else clean_env()

        def run(scenario, cwd=cls.dir, key=None, env=env):
            cls.runs[key or scenario] = subprocess.run(
                [PYTHON, str(SCRIPT), scenario], cwd=cwd, env=env,
                capture_output=True, text=True, timeout=300)

        for s in ("programmatic", "regions", "detailed"):
            run(s)
        run("detailed", cwd=hide / "run", key="detailed, no torch", env=clean_env(str(hide)))
        for a, b in (("detailed_profile.pt", "before_optimization.pt"),
                     ("my_profile.pt", "after_optimization.pt")):
            if (cls.dir / a).exists():
                shutil.copyfile(cls.dir / a, cls.dir / b)
        run("analyze")
        run("configs")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def ok(self, scenario):
        r = self.runs[scenario]
        self.assertEqual(r.returncode, 0, f"{scenario}: stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        self.assertIn("Profiler installed successfully!", r.stdout)
        return r

    def load(self, name):
        p = prism.load(str(self.dir / name))
        self.assertTrue(p.complete, name)
        return p

    def test_every_scenario_runs(self):
        for s in self.runs:
            with self.subTest(scenario=s):
                self.ok(s)
                self.assertNotIn("never saved", self.runs[s].stderr)
        self.assertEqual(sorted(f.name for f in self.dir.rglob(".prism-*")), [])

    def test_trainer_callback_profile(self):
        self.ok("programmatic")
        p = self.load("my_profile.pt")
        s = ProfileAnalyzer(str(self.dir / "my_profile.pt")).get_summary()
        steps = p.steps
        self.assertEqual(steps["count"], 5 * 8)                 # samples x epochs
        self.assertEqual(s["total_epochs"], steps["count"])
        self.assertEqual(s["total_samples"], 5)
        self.assertEqual(sorted({x["epoch"] for x in steps["series"]}), [0, 1, 2, 3, 4])
        self.assertEqual(s["total_time_ms"], steps["total_ns"] / 1e6)
        self.assertEqual(s["avg_epoch_time_ms"], steps["mean_ns"] / 1e6)
        self.assertGreater(s["total_time_ms"], 0)
        self.assertEqual(s["prism_sampled_steps"], steps["sampled"])
        # the report as one page: analyze --format html's, the same bytes
        page = str(self.dir / "report.html")
        ProfileAnalyzer(str(self.dir / "my_profile.pt")).save_html(page)
        cli = subprocess.run([os.path.join(os.environ.get("B", "build"), "bin", "prism-top"),
                              "analyze", "--format", "html", str(self.dir / "my_profile.pt")],
                             capture_output=True, check=True).stdout
        with open(page, "rb") as f:
            self.assertEqual(f.read(), cli)
        # sample_rate=0.1 with adaptive sampling: the first 10 steps, then 1 in 10.
        self.assertGreaterEqual(steps["sampled"], 10)
        self.assertLess(steps["sampled"], steps["count"])
        # The trainer's regions: inside a step only in sampled steps.
        counts = {o["name"]: o["count"] for o in ProfileAnalyzer(p).get_top_operations(10)}
        self.assertEqual(counts["measurement_system"], 5)
        for name in ("forward_pass", "loss_computation", "backward_pass", "optimizer_step"):
            self.assertEqual(counts[name], steps["sampled"], name)
        self.assertEqual(s["memory_leak_detected"], p.memory["leak_detected"])
        self.assertEqual(s["prism_peak_rss_mb"], p.memory["peak_rss_bytes"] / 2**20)

    def test_config_reached_the_collector(self):
        self.ok("programmatic")
        header = {kv["key"]: kv["value"] for kv in self.load("my_profile.pt").header["config"]}
        want = ProfilerConfig(enabled=True, sample_rate=0.1, collect_memory=True,
                              collect_timing=True, collect_gpu_ops=True,
                              adaptive_sampling=True).init_kwargs()
        for key, value in want.items():
            with self.subTest(key=key):
                if isinstance(value, float):
                    self.assertTrue(math.isclose(header[key], value), (header[key], value))
                else:
                    self.assertEqual(header[key], value)

    def test_chrome_trace_and_loss_counter(self):
        self.ok("programmatic")
        with open(self.dir / "my_profile.trace.json", encoding="utf-8") as f:
            trace = json.load(f)
        events = trace["traceEvents"]
        self.assertEqual(sum(1 for e in events if e.get("cat") == "step"), 40)
        self.assertEqual(sum(1 for e in events if e.get("ph") == "C"
                             and e.get("name") == "loss"), 40)

    def test_context_manager_regions(self):
        self.ok("regions")
        p = self.load("custom_regions.pt")
        a = ProfileAnalyzer(p)
        ops = {op["name"]: op for op in a.get_top_operations(10)}
        for name in ("data_loading", "forward_pass", "backward_pass"):
            self.assertEqual(ops[name]["count"], 1, name)
        s = a.get_summary()
        self.assertEqual(s["total_epochs"], 0)
        self.assertEqual(s["total_time_ms"], p.summary["region_ns"] / 1e6)

    def test_custom_regions_top_operations(self):
        self.ok("detailed")
        p = self.load("detailed_profile.pt")
        top = ProfileAnalyzer(str(self.dir / "detailed_profile.pt")).get_top_operations(n=10)
        counts = {op["name"]: op["count"] for op in top}
        self.assertEqual(counts["data_preparation"], 5)
        for name in ("forward", "loss", "backward", "optimizer"):
            self.assertEqual(counts[name], 40, name)
        self.assertEqual([(o["name"], o["count"], o["total_ms"]) for o in top],
                         [(o["name"], o["calls"], o["total_ns"] / 1e6) for o in p.ops[:10]])
        found = ProfileAnalyzer(p).identify_bottlenecks()
        self.assertEqual([(b.type.value, b.severity, b.description) for b in found],
                         [(b["type"], b["severity"].lower(), b["description"])
                          for b in p.bottlenecks])

    def test_pure_python_loop(self):
        self.ok("detailed, no torch")
        path = self.dir / "no-torch" / "run" / "detailed_profile.pt"
        counts = {o["name"]: o["count"] for o in ProfileAnalyzer(str(path)).get_top_operations()}
        self.assertEqual((counts["data_preparation"], counts["forward"]), (5, 40))

    def test_analysis_examples(self):
        r = self.ok("analyze")
        s = ProfileAnalyzer(str(self.dir / "my_profile.pt")).get_summary()
        self.assertIn(f"Total time: {s['total_time_ms']:.1f} ms", r.stdout)
        self.assertIn("PRISM Training Profile Report", r.stdout)
        self.assertIn(f"  Total epochs: {s['total_epochs']}", r.stdout)
        self.assertIn("Speedup: ", r.stdout)
        self.assertIn("Critical bottlenecks: ", r.stdout)

    def test_configuration_examples(self):
        r = self.ok("configs")
        self.assertEqual(r.stdout.count("ProfilerConfig("), 4)


INSTRUMENT = """
import sys, torch
from prism.profiling import TrainingProfiler, ProfilerConfig
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
profiler = TrainingProfiler(ProfilerConfig(with_modules=sys.argv[1] == "1",
                                           export_chrome_trace=False))
profiler.instrument(model, opt)
cb = profiler.callback
cb.on_sample_start(0)
for epoch in range(3):
    cb.on_epoch_start(epoch)
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    cb.on_epoch_end(epoch, float(loss.detach()))
cb.on_sample_end(0)
cb.on_training_end()
profiler.save(sys.argv[2])
"""


def have_torch():
    r = subprocess.run([PYTHON, "-c", "import torch"], env=clean_env(), capture_output=True)
    return r.returncode == 0


@unittest.skipIf(SANITIZE, "PyTorch under the sanitizers: not run")
class InstrumentTest(unittest.TestCase):
    """TrainingProfiler.instrument: with_modules, and steps from the optimizer."""

    def test_with_and_without_modules(self):
        if not have_torch():
            self.skipTest(f"no torch for {PYTHON}")
        with tempfile.TemporaryDirectory(prefix="prism-refinst-") as d:
            ops = {}
            for flag in ("1", "0"):
                out = os.path.join(d, f"m{flag}.cbor")
                r = subprocess.run([PYTHON, "-c", INSTRUMENT, flag, out], cwd=d,
                                   env=clean_env(), capture_output=True, text=True,
                                   timeout=300)
                self.assertEqual(r.returncode, 0, r.stderr)
                p = prism.load(out)
                # One step per optimizer step: the callback's hooks add none.
                self.assertEqual(p.steps["count"], 3)
                ops[flag] = {o["name"]: o["calls"] for o in p.ops if not o.get("unattributed")}
            self.assertEqual(ops["1"]["Sequential.forward"], 3)
            self.assertEqual(ops["1"]["2"], 3)
            self.assertEqual(ops["1"]["optimizer.step"], 3)
            self.assertEqual(ops["0"], {"backward": 3, "optimizer.step": 3})


if __name__ == "__main__":
    unittest.main()
