"""What the Python tests share: the build directory, running a Python child
(one PRISM session per process: every recording runs in its own child), a
temporary directory per test."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

B = os.path.abspath(os.environ.get("B", "build"))
PRISM_TOP = os.path.join(B, "bin", "prism-top")
SANITIZE = os.environ.get("PRISM_TEST_SANITIZE") == "1"


def clean_env(**extra):
    """The environment for a child: no PRISM_* variable but those given."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PRISM_") or k == "PRISM_TEST_SANITIZE"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def torch_env(with_prism=False, **extra):
    """A child's environment for a PyTorch program: torch never runs under
    the preloaded ASan runtime; the prism module only where asked for."""
    env = clean_env(**extra)
    env.pop("PYTHONPATH", None)
    if with_prism:
        env["PYTHONPATH"] = os.path.join(B, "python")
    else:
        env.pop("LD_PRELOAD", None)
        env.pop("ASAN_OPTIONS", None)
    return env


def run_py(code, env=None, cwd=None, timeout=300, check=True):
    """Run code (dedented) in a child interpreter; its CompletedProcess."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                       env=env if env is not None else clean_env(), cwd=cwd,
                       capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("child failed (%d):\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
    return p


def prism_top(*args, check=True):
    p = subprocess.run([PRISM_TOP] + [str(a) for a in args], capture_output=True,
                       timeout=300)
    if check and p.returncode != 0:
        raise AssertionError("prism-top %s: %d: %s" % (args, p.returncode, p.stderr))
    return p


def prism_top_json(*args):
    return json.loads(prism_top(*args).stdout)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="prism-py-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, name):
        return os.path.join(self.tmp, name)


def op_names(profile):
    """The names of the recorded regions (not `(outside regions)`)."""
    return {o["name"] for o in profile.ops if not o.get("unattributed")}


def thread_paths(tree):
    """{thread name: set of 'a/b' paths} from a prism.tree/1 dict."""
    out = {}
    for t in tree["threads"]:
        paths = set()

        def walk(n, pre):
            p = pre + "/" + n["name"] if pre else n["name"]
            paths.add(p)
            for c in n.get("children", []):
                walk(c, p)
        for r in t["roots"]:
            walk(r, "")
        out.setdefault(t["name"], set()).update(paths)
    return out


def torch_skip():
    """Why the PyTorch tests cannot run here, or None."""
    if SANITIZE:
        return "sanitizer build: the extension is not loaded into a sanitized interpreter"
    try:
        import torch  # noqa: F401
    except ImportError:
        return "PyTorch is not installed for %s" % sys.executable
    return None


def prism_child_env():
    """A child's environment that imports this build's prism (its package
    directory on PYTHONPATH), no PRISM_* variable set."""
    import prism
    env = clean_env()
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(prism.__file__)))
    return env


def run_script_under_prism(script, out_dir, *prism_args):
    """`python -m prism [prism_args] -o OUT_DIR/run.cbor SCRIPT OUT_DIR`: the
    script writes OUT_DIR/measured.json.  Returns (CompletedProcess, the
    script's measured dict or None, the profile loaded or None)."""
    import prism
    cbor = os.path.join(out_dir, "run.cbor")
    proc = subprocess.run([sys.executable, "-m", "prism"] + list(prism_args) +
                          ["-o", cbor, script, out_dir], env=prism_child_env(),
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return proc, None, None
    with open(os.path.join(out_dir, "measured.json")) as f:
        measured = json.load(f)
    return proc, measured, prism.load(cbor)


def python_m_prism(test, script, out, *args, **env):
    """`python -m prism -o OUT SCRIPT ARGS` in a child (torch_env with this
    build's prism, env: more variables), asserting it exits 0; returns
    (its CompletedProcess, `prism-top analyze OUT --format json`)."""
    p = subprocess.run([sys.executable, "-m", "prism", "-o", out, script] + [str(a) for a in args],
                       env=torch_env(with_prism=True, **env), capture_output=True, text=True,
                       timeout=600)
    test.assertEqual(p.returncode, 0, p.stderr)
    return p, prism_top_json("analyze", out, "--format", "json")


def write_script(test, name, text):
    """text into the test's temporary folder as name; its path."""
    path = test.path(name)
    with open(path, "w") as f:
        f.write(text)
    return path
