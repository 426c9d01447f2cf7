"""test_compat.py - PRISM never changes the program: each case of
tests/python/compat_cases.py (a small deterministic training script, one
pattern a PyTorch program relies on) runs three ways -- plain, zero-code
(`python -m prism`), prism.torch.instrument() -- and must exit 0 with no
traceback and print the same losses, parameters and gradients, bit for bit
(float.hex).  Where PRISM ran, its profile must be readable (prism-top
analyze).  A case this torch cannot run (torch.compile on 1.13) prints
"SKIP <reason>" in all three ways and is skipped with that reason.

test_compile_regions: a torch.compile'd module is the region compiled:<Class>
in every step, a compiled function compiled:<qualname>, and dynamo's compile
time the region "torch.compile (compile)" in the first step only.

Skipped without torch and under the sanitizers (PRISM_TEST_SANITIZE=1).
"""

import json
import os
import subprocess
import sys
import unittest

from pyutil import SANITIZE, TempDirTest, prism_top, torch_env

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_PY = os.path.join(HERE, "compat_cases.py")

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

SKIP = None
if SANITIZE:
    SKIP = "sanitizer build: the extension is not loaded into a sanitized interpreter"
elif not HAVE_TORCH:
    SKIP = "PyTorch is not installed for %s" % sys.executable

CASES = ["hook_output", "hook_param", "forward_hook", "forward_pre_hook", "full_backward_hook",
         "global_module_hooks", "inplace", "compile", "compile_steps", "autocast_bf16",
         "checkpoint_reentrant",
         "checkpoint_nonreentrant", "grad_accum", "grad_clip", "ddp", "fsdp", "custom_function",
         "no_grad_eval", "generator_pipeline", "iterable_dataset", "odd_module_names",
         "save_copy", "lr_scheduler"]


def run(argv, with_prism):
    p = subprocess.run(argv, env=torch_env(with_prism=with_prism), capture_output=True,
                       text=True, timeout=600, cwd=HERE)
    return p


def results(out):
    return [line for line in out.splitlines() if line.startswith("R ")]


def skip_reason(out):
    for line in out.splitlines():
        if line.startswith("SKIP "):
            return line[5:]
    return None


@unittest.skipIf(SKIP, SKIP)
class Compat(TempDirTest):
    def three_ways(self, case):
        """Run case plain, zero-code and instrument(); check and return
        {way: (CompletedProcess, profile paths)}."""
        z = self.path(case + ".zero.cbor")
        i = self.path(case + ".inst.cbor")
        ways = {
            "plain": (run([sys.executable, CASES_PY, case, "plain"], False), []),
            "zero": (run([sys.executable, "-m", "prism", "-o", z, CASES_PY, case, "zero"], True),
                     [z]),
            "instrument": (run([sys.executable, CASES_PY, case, "instrument", i], True),
                           [i] if case not in ("ddp", "fsdp")
                           else [i + ".rank0", i + ".rank1"]),
        }
        for way, (p, _) in ways.items():
            msg = "%s %s: exit %d\n%s\n%s" % (case, way, p.returncode, p.stdout[-3000:],
                                              p.stderr[-3000:])
            self.assertEqual(p.returncode, 0, msg)
            self.assertNotIn("Traceback", p.stderr, msg)
            if not skip_reason(p.stdout):       # a skipped case ends at its SKIP line
                self.assertIn("DONE", p.stdout, msg)
        why = skip_reason(ways["plain"][0].stdout)
        for way in ("zero", "instrument"):
            self.assertEqual(skip_reason(ways[way][0].stdout), why,
                             "%s: skipped plain but not %s (or the reverse)" % (case, way))
        if why:
            self.skipTest(why)
        base = results(ways["plain"][0].stdout)
        self.assertGreater(len(base), 4, ways["plain"][0].stdout)
        for way in ("zero", "instrument"):
            got = results(ways[way][0].stdout)
            diff = [(a, b) for a, b in zip(base, got) if a != b][:3]
            self.assertEqual(len(got), len(base), "%s %s: %d result lines, plain %d"
                             % (case, way, len(got), len(base)))
            self.assertEqual(diff, [], "%s %s: not bitwise the plain run's" % (case, way))
        for way in ("zero", "instrument"):
            for f in ways[way][1]:
                self.assertTrue(os.path.exists(f), "%s %s: no profile %s\n%s"
                                % (case, way, f, ways[way][0].stderr[-2000:]))
                rep = json.loads(prism_top("analyze", f, "--format", "json").stdout)
                self.assertIsInstance(rep, dict)
        return ways


    def test_no_compile_imports(self):
        """A program that never compiles (forwards only: torch 2's backward,
        its optimizers and use_deterministic_algorithms import dynamo
        themselves): python -m prism imports no torch._dynamo,
        torch._inductor nor sympy into it, and adds no warnings filter (it
        imported all three, and sympy's filter, to register dynamo's compile
        callbacks)."""
        script = self.path("fwd.py")
        with open(script, "w") as f:
            f.write("import sys, warnings, torch\n"
                    "m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())\n"
                    "for i in range(8):\n"
                    "    m(torch.ones(2, 4))\n"
                    "print('R', [k for k in ('torch._dynamo', 'torch._inductor', 'sympy')"
                    " if k in sys.modules])\n"
                    "print('R', [(w[0], w[2].__name__) for w in warnings.filters])\n")
        plain = run([sys.executable, script], False)
        z = self.path("fwd.cbor")
        zero = run([sys.executable, "-m", "prism", "-o", z, script], True)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual(zero.returncode, 0, zero.stderr)
        self.assertEqual(results(zero.stdout), results(plain.stdout))
        self.assertEqual(len(results(plain.stdout)), 2, plain.stdout)


def _make(case):
    def test(self):
        self.three_ways(case)
    test.__name__ = "test_" + case
    test.__doc__ = "compat case %s: plain, python -m prism, instrument() alike" % case
    return test


for _c in CASES:
    setattr(Compat, "test_" + _c, _make(_c))


@unittest.skipIf(SKIP, SKIP)
class CompileRegions(TempDirTest):
    def step_regions(self, cbor):
        """[(step name, {region name: count})] from the chrome-trace export."""
        out = self.path("trace.json")
        prism_top("export", cbor, "--format", "chrome-trace", "-o", out)
        with open(out) as f:
            d = json.load(f)
        ev = d["traceEvents"] if isinstance(d, dict) else d
        steps = sorted((e for e in ev if e.get("cat") == "step"), key=lambda e: e["ts"])
        rows = []
        for s in steps:
            a, b = s["ts"], s["ts"] + s["dur"]
            names = {}
            for e in ev:
                if e.get("ph") == "X" and "cat" not in e and a <= e["ts"] <= b:  # a region
                    names[e["name"]] = names.get(e["name"], 0) + 1
            rows.append((s["name"], names))
        return rows

    def test_compile_regions(self):
        if not hasattr(torch, "compile"):
            self.skipTest("torch %s has no torch.compile" % torch.__version__)
        z = self.path("c.cbor")
        p = run([sys.executable, "-m", "prism", "-o", z, CASES_PY, "compile", "zero"], True)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertNotIn("global hooks on modules", p.stderr)   # PRISM's hooks: no torch warning
        rows = self.step_regions(z)
        self.assertEqual(len(rows), 4, rows)
        fn = "compiled:case_compile.<locals>.loss_fn"
        for name, regions in rows:
            self.assertIn("compiled:Net", regions, (name, regions))
            self.assertIn(fn, regions, (name, regions))
            self.assertIn("compiled:Net (backward)", regions, (name, regions))
        self.assertIn("torch.compile (compile)", rows[0][1], rows[0])
        for name, regions in rows[-2:]:
            self.assertNotIn("torch.compile (compile)", regions, (name, regions))
        # the compile nests in the compiled region: compiled:Net;torch.compile (compile)
        folded = prism_top("export", z, "--format", "folded").stdout.decode()
        self.assertIn("compiled:Net;torch.compile (compile) ", folded)

    def test_compile_instrument(self):
        """instrument(torch.compile(model)): the same compiled:<Class> region."""
        if not hasattr(torch, "compile"):
            self.skipTest("torch %s has no torch.compile" % torch.__version__)
        i = self.path("i.cbor")
        p = run([sys.executable, CASES_PY, "compile", "instrument", i], True)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        rows = self.step_regions(i)
        self.assertEqual(len(rows), 4, rows)
        for name, regions in rows:
            self.assertIn("compiled:Net", regions, (name, regions))
        self.assertTrue(any("torch.compile (compile)" in r for _, r in rows[:1]), rows)
        for name, regions in rows[-2:]:
            self.assertNotIn("torch.compile (compile)", regions, (name, regions))


if __name__ == "__main__":
    unittest.main()
