"""prism.plot and the reference's ProfilePlotter
(`from prism.profiling.visualization import ProfilePlotter`) on a profile
recorded for real: the reference's own lines (Example 4's "Create
visualizations") write PNG files, and every figure's data are the
analysis' (bar lengths the operations' totals, the step line the steps'
durations, the fit line the leak fit's ends, the call tree's widths the
roots' shares).  Without matplotlib, drawing raises ImportError naming it
while `import prism.plot` still works.
"""
import os
import subprocess
import sys
import tempfile
import shutil
import unittest

import prism
from pyutil import SANITIZE, clean_env, run_py

# Under a SANITIZE pass the interpreter runs with libasan preloaded, which
# matplotlib's C++ extensions do not survive (ASan's __cxa_throw
# interceptor finds no libstdc++ when ft2font throws): skipped, as torch is.
HAVE_MPL = False
if not SANITIZE:
    try:
        import matplotlib  # noqa: F401
        HAVE_MPL = True
    except ImportError:
        pass

RECORD = """
import prism
assert prism.init(output=%r)
keep = []
for i in range(40):
    with prism.step():
        with prism.region("load_batch"):
            sum(range(20000))
        with prism.region("forward"):
            with prism.region("layer1"):
                sum(range(40000 if i %% 10 else 120000))
            with prism.region("layer2"):
                keep.append(bytearray(256 * 1024))
        with prism.region("optimizer_step"):
            sum(range(5000))
prism.shutdown()
"""


@unittest.skipUnless(HAVE_MPL, "no matplotlib in this interpreter (or a SANITIZE pass)")
class Plots(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="prism-plot-")
        cls.path = os.path.join(cls.dir, "run.cbor")
        run_py(RECORD % cls.path)
        cls.p = prism.load(cls.path)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def png(self, name):
        with open(os.path.join(self.dir, name), "rb") as f:
            head = f.read(8)
        self.assertEqual(head, b"\x89PNG\r\n\x1a\n", name)

    def test_reference_example(self):
        from prism.profiling import ProfileAnalyzer
        from prism.profiling.visualization import ProfilePlotter
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            analyzer = ProfileAnalyzer(self.path)
            plotter = ProfilePlotter(analyzer)
            plotter.plot_timing_breakdown().savefig("timing.png")
            plotter.plot_memory_timeline().savefig("memory.png")
            plotter.create_report("full_report.png")
        finally:
            os.chdir(cwd)
        for name in ("timing.png", "memory.png", "full_report.png"):
            self.png(name)

    def test_figures_hold_the_analysis(self):
        import prism.plot as plot
        ax = plot.timing_breakdown(self.p, n=4).axes[0]
        got = sorted(round(b.get_width() * 1e6) for b in ax.patches)
        want = sorted(o["total_ns"] for o in self.p.ops[:4])
        self.assertEqual(len(got), 4)
        for g, w in zip(got, want):
            self.assertLessEqual(abs(g - w), 1)
        ax = plot.step_times(self.p).axes[0]
        y = ax.lines[0].get_ydata()
        self.assertEqual([round(v * 1e6) for v in y], [int(d) for d in self.p.step_durations_ns])
        fit = self.p.memory["host_leak"]
        ax = plot.memory_timeline(self.p).axes[0]
        fits = [ln for ln in ax.lines if ln.get_label().startswith("fit:")]
        if fit["have_fit"]:
            self.assertEqual(len(fits), 1)
            self.assertAlmostEqual(fits[0].get_ydata()[0], fit["start_mb"])
            self.assertAlmostEqual(fits[0].get_ydata()[-1], fit["end_mb"])
        ax = plot.flame_graph(self.p).axes[0]
        roots = self.p.tree["roots"]
        total = sum(r["total_ns"] for r in roots)
        top = sorted(round(r.get_width(), 6) for r in ax.patches if r.get_y() >= ax.get_ylim()[1] - 1)
        self.assertEqual(top, sorted(round(r["total_ns"] / total, 6) for r in roots
                                     if r["total_ns"] / total >= 0.002))

    def test_path_and_profile_alike(self):
        import prism.plot as plot
        out = os.path.join(self.dir, "page.svg")
        self.assertEqual(plot.create_report(self.path, out), out)
        with open(out, "rb") as f:
            self.assertIn(b"<svg", f.read(4096))


class WithoutMatplotlib(unittest.TestCase):
    def test_clear_error(self):
        p = subprocess.run([sys.executable, "-c", """
import sys
sys.modules["matplotlib"] = None          # as if not installed
import prism.plot
from prism.profiling.visualization import ProfilePlotter
try:
    prism.plot.timing_breakdown("nothing.cbor")
except ImportError as e:
    print("ImportError:", e)
"""], env=clean_env(PYTHONPATH=os.environ.get("PYTHONPATH", "")), capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ImportError: prism.plot needs matplotlib", p.stdout)


if __name__ == "__main__":
    unittest.main()
