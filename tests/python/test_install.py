"""Installing PRISM the ways the README gives: `pip install .` from the
repository root into a fresh virtual environment (no system site packages,
no index: offline), `pip wheel .` installed into a second one without the
build, and `make install` (the .pth that gives the system interpreter
`import prism`).  One build: pip's (PRISM_BUILD_DIR, a temporary
directory), which the wheel reuses; make install reuses $B."""
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import unittest

from pyutil import B, SANITIZE, TempDirTest, clean_env

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = os.environ.get("PYTHON") or sys.executable

SCRIPT = """\
import prism
for _ in range(12):
    with prism.step():
        with prism.region("parse"):
            sum(range(20000))
        with prism.region("hot_loop"):
            sum(range(200000))
"""


def child_env(**extra):
    """No PYTHONPATH (the venv alone must give prism), no make of ours."""
    env = clean_env(**extra)
    for k in ("PYTHONPATH", "LD_PRELOAD", "ASAN_OPTIONS", "MAKEFLAGS", "MAKELEVEL", "MFLAGS",
              "VIRTUAL_ENV", "PYTHONHOME"):
        env.pop(k, None)
    return env


class Install(TempDirTest):
    def run_ok(self, cmd, timeout=300, **kw):
        p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                           timeout=timeout, **kw)
        self.assertEqual(p.returncode, 0, "%s: %d\n%s\n%s" % (cmd, p.returncode, p.stdout,
                                                               p.stderr))
        return p

    def venv(self, name):
        d = self.path(name)
        self.run_ok([sys.executable, "-m", "venv", d], timeout=300, env=child_env())
        return d

    def check_venv(self, venv, env):
        """import prism, python -m prism, prism-top analyze and prism-run
        from the venv's bin, run outside the repository."""
        bindir = os.path.join(venv, "bin")
        py = os.path.join(bindir, "python")
        work = self.path("work-" + os.path.basename(venv))
        os.mkdir(work)
        with open(os.path.join(work, "script.py"), "w") as f:
            f.write(SCRIPT)
        kw = dict(env=env, cwd=work)
        p = self.run_ok([py, "-c", "import prism; print(prism.__file__)"], **kw)
        self.assertTrue(os.path.realpath(p.stdout.strip()).startswith(os.path.realpath(venv)),
                        p.stdout)
        p = self.run_ok([py, "-m", "prism", "-o", "run.cbor", "script.py"], **kw)
        self.assertIn("run.cbor", p.stderr)
        p = self.run_ok([os.path.join(bindir, "prism-top"), "analyze", "run.cbor"], **kw)
        self.assertIn("Steps: 12", p.stdout)
        self.assertIn("hot_loop", p.stdout)
        self.assertIn("Bottlenecks Detected", p.stdout)
        p = self.run_ok([os.path.join(bindir, "prism-run"), "--help"], **kw)
        self.assertIn("prism-run", p.stdout + p.stderr)
        # prism-run finds the package and its sitecustomize beside itself
        self.run_ok([os.path.join(bindir, "prism-run"), "-o", "ran.cbor", "--", py,
                     "script.py"], **kw)
        p = self.run_ok([os.path.join(bindir, "prism-top"), "analyze", "ran.cbor"], **kw)
        self.assertIn("Steps: 12", p.stdout)

    def test_pip_install_and_wheel(self):
        if SANITIZE:
            self.skipTest("the pip build is not sanitized: not with libasan preloaded")
        if importlib.util.find_spec("ensurepip") is None:
            self.skipTest("no ensurepip for %s (Debian: python3-venv)" % sys.executable)
        for tool in ("make", "cc", "readelf"):
            if shutil.which(tool) is None:
                self.skipTest("%s is not installed" % tool)
        build = self.path("build")
        env = child_env(PRISM_BUILD_DIR=build, PRISM_JOBS=2)
        v1 = self.venv("venv1")
        pip1 = [os.path.join(v1, "bin", "python"), "-m", "pip"]
        # build isolation on: the backend needs nothing from an index
        self.run_ok(pip1 + ["install", "--no-index", "-q", TOP], timeout=1800, env=env,
                    cwd=self.tmp)
        self.check_venv(v1, env)

        wheels = self.path("wheels")
        self.run_ok(pip1 + ["wheel", "--no-index", "-q", "-w", wheels, TOP], timeout=1800,
                    env=env, cwd=self.tmp)
        names = os.listdir(wheels)
        self.assertEqual(len(names), 1, names)
        self.assertRegex(names[0], r"^prism_profiler-[0-9.]+-cp310-abi3-linux_x86_64\.whl$")
        shutil.rmtree(build)             # the wheel stands alone
        v2 = self.venv("venv2")
        self.run_ok([os.path.join(v2, "bin", "python"), "-m", "pip", "install", "--no-index",
                     "--no-deps", "-q", os.path.join(wheels, names[0])], timeout=600, env=env,
                    cwd=self.tmp)
        self.check_venv(v2, env)
        # and leaves cleanly
        self.run_ok([os.path.join(v2, "bin", "python"), "-m", "pip", "uninstall", "-y", "-q",
                     "prism-profiler"], env=env, cwd=self.tmp)
        for gone in ("bin/prism-top", "bin/prism-run", "lib/prism/python/prism/__init__.py",
                     "lib/libprism-inject.so"):
            self.assertFalse(os.path.exists(os.path.join(v2, gone)), gone)

    def make_install(self, *args):
        return self.run_ok(["make", "--no-print-directory", "-C", TOP, "BUILD=" + B,
                            "PYTHON=" + PYTHON] + list(args), timeout=1800, env=child_env())

    def test_make_install_writes_a_pth(self):
        if SANITIZE:
            self.skipTest("make install of the sanitized build: not tested")
        if shutil.which("make") is None:
            self.skipTest("make is not installed")
        if not os.path.isfile(os.path.join(B, "python", "prism", "_prism.abi3.so")):
            self.skipTest("the extension is not built in %s" % B)
        # DESTDIR: the .pth lands in the interpreter's site directory, staged
        dest = self.path("dest")
        site = subprocess.run([PYTHON, "-c", "import site; print(site.getsitepackages()[0])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        self.make_install("install", "DESTDIR=" + dest, "PREFIX=/opt/prism")
        with open(dest + site + "/prism.pth") as f:
            self.assertEqual(f.read(), "/opt/prism/lib/prism/python\n")
        for f in ("bin/prism-top", "bin/prism-run", "lib/prism/python/prism/__init__.py",
                  "lib/prism/python/prism/_prism.abi3.so",
                  "lib/prism/python/site/sitecustomize.py"):
            self.assertTrue(os.path.isfile(dest + "/opt/prism/" + f), f)
        self.make_install("uninstall", "DESTDIR=" + dest, "PREFIX=/opt/prism")
        self.assertFalse(os.path.exists(dest + site + "/prism.pth"))

        # A real prefix and site directory: the interpreter imports from it
        prefix, sitedir = self.path("prefix"), self.path("site")
        self.make_install("install", "PREFIX=" + prefix, "PY_SITEDIR=" + sitedir)
        code = textwrap.dedent("""
            import site; site.addsitedir(%r)
            import prism; print(prism.__file__)
        """ % sitedir)
        # -S: no site directory of the interpreter's own (a prism installed there)
        p = self.run_ok([PYTHON, "-S", "-c", code], env=child_env(), cwd=self.tmp)
        self.assertEqual(p.stdout.strip(),
                         os.path.join(prefix, "lib", "prism", "python", "prism", "__init__.py"))
        self.make_install("uninstall", "PREFIX=" + prefix, "PY_SITEDIR=" + sitedir)
        self.assertFalse(os.path.exists(os.path.join(sitedir, "prism.pth")))


if __name__ == "__main__":
    unittest.main()
