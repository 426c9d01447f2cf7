"""PRISM's build backend (PEP 517): `pip install .` and `pip wheel .` from
the repository root, offline, with nothing to install first.

It runs the Makefile once, into a build directory of its own (PRISM_BUILD_DIR,
default build/pip), for the programs and the Python package, then writes the
wheel itself (zipfile), laid out as `make install` lays out PREFIX, the
environment's prefix being PREFIX:

    bin/prism-top, bin/prism-run            (the wheel's scripts: the binaries)
    lib/libprism-inject.so, lib/libprism.so.N    (prism-run's CUDA injection)
    lib/prism/python/prism/                 (the package: *.py, _prism.abi3.so)
    lib/prism/python/site/sitecustomize.py  (what prism-run puts on PYTHONPATH)
    <site-packages>/prism-profiler.pth      (../../../lib/prism/python: import prism)

so prism-run finds its injection library and the package next to itself as
it does after `make install`.  The extension uses CPython's stable ABI (3.10):
one wheel, tagged cp310-abi3-<platform>, serves CPython 3.10 and later.  The
binaries link libcbor, libxxhash, libyajl, zlib and ncurses dynamically: a
machine that installs the wheel needs those shared libraries (docs/INSTALL.md).

Environment: PRISM_BUILD_DIR (the build directory), PRISM_MAKE (make),
PRISM_JOBS (make -j, default the CPUs), CC and CFLAGS as for make.
"""

import base64
import csv
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "prism-profiler"
DIST = NAME.replace("-", "_")
TAG = "cp310-abi3-" + re.sub(r"[-.]", "_", sysconfig.get_platform())


def _project():
    """name, summary, requires-python of pyproject.toml's [project]."""
    text = open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8").read()
    out = {"description": "", "requires-python": ">=3.10"}
    section = None
    for line in text.splitlines():
        m = re.match(r"\s*\[([^\]]+)\]", line)
        if m:
            section = m.group(1).strip()
            continue
        m = re.match(r'\s*([\w-]+)\s*=\s*"([^"]*)"', line)
        if section == "project" and m:
            out[m.group(1)] = m.group(2)
    return out


def _version():
    with open(os.path.join(ROOT, "include", "prism", "profile.h"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#define PRISM_VERSION_STRING"):
                return line.split('"')[1]
    raise RuntimeError("include/prism/profile.h has no PRISM_VERSION_STRING")


def _build_dir():
    d = os.environ.get("PRISM_BUILD_DIR") or os.path.join(ROOT, "build", "pip")
    return os.path.abspath(d)


def _make(bdir):
    """make the programs and the package into bdir; {name: path}."""
    targets = {
        "prism-top": os.path.join(bdir, "bin", "prism-top"),
        "prism-run": os.path.join(bdir, "bin", "prism-run"),
        "inject": os.path.join(bdir, "lib", "libprism-inject.so"),
    }
    jobs = os.environ.get("PRISM_JOBS") or str(os.cpu_count() or 1)
    cmd = [os.environ.get("PRISM_MAKE", "make"), "-C", ROOT, "-j" + jobs, "BUILD=" + bdir,
           "PYTHON=" + sys.executable] + list(targets.values()) + ["python"]
    print("prism: " + " ".join(cmd), file=sys.stderr, flush=True)
    # the output of make on stderr: pip shows it with -v, or when it fails
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    ext = os.path.join(bdir, "python", "prism", "_prism.abi3.so")
    if not os.path.isfile(ext):
        raise RuntimeError("prism: the extension was not built: no Python.h for %s "
                           "(Debian: python3-dev)" % sys.executable)
    targets["ext"] = ext
    return targets


def _soname(path):
    """The SONAME of the libprism.so the injection library needs."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    m = re.search(r"\(NEEDED\).*\[(libprism\.so\.\d+)\]", out)
    return m.group(1) if m else None


class _Wheel:
    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        self.record.append((arcname, "sha256=" + digest.decode(), str(len(data))))

    def add_file(self, arcname, path, mode=None):
        with open(path, "rb") as f:
            data = f.read()
        if mode is None:
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
        self.add(arcname, data, mode)

    def close(self, record_name):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for row in self.record:
            w.writerow(row)
        w.writerow((record_name, "", ""))
        info = zipfile.ZipInfo(record_name, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = (0o100644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, buf.getvalue())
        self.zip.close()


def _metadata(version):
    p = _project()
    lines = ["Metadata-Version: 2.1", "Name: " + NAME, "Version: " + version,
             "Summary: " + p.get("description", ""),
             "Requires-Python: " + p.get("requires-python", ">=3.10")]
    return ("\n".join(lines) + "\n").encode()


# ---- PEP 517 hooks ---------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    bdir = _build_dir()
    built = _make(bdir)
    name = "%s-%s-%s.whl" % (DIST, version, TAG)
    data = "%s-%s.data" % (DIST, version)
    info = "%s-%s.dist-info" % (DIST, version)
    w = _Wheel(os.path.join(wheel_directory, name))
    pkg = os.path.join(bdir, "python", "prism")
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py") or f == "_prism.abi3.so":
            w.add_file("%s/data/lib/prism/python/prism/%s" % (data, f), os.path.join(pkg, f),
                       0o755 if f.endswith(".so") else 0o644)
    site = os.path.join(bdir, "python", "site", "sitecustomize.py")
    if os.path.isfile(site):
        w.add_file("%s/data/lib/prism/python/site/sitecustomize.py" % data, site, 0o644)
    w.add_file("%s/scripts/prism-top" % data, built["prism-top"], 0o755)
    w.add_file("%s/scripts/prism-run" % data, built["prism-run"], 0o755)
    w.add_file("%s/data/lib/libprism-inject.so" % data, built["inject"], 0o755)
    soname = _soname(built["inject"])
    if soname:   # the file itself (in the build, a link to libprism.so)
        w.add_file("%s/data/lib/%s" % (data, soname),
                   os.path.realpath(os.path.join(bdir, "lib", soname)), 0o755)
    # site-packages/../../../ is the environment's prefix (venv, /usr/local,
    # ~/.local): where the .data/data files went
    w.add("%s.pth" % NAME, b"../../../lib/prism/python\n")
    w.add(info + "/METADATA", _metadata(version))
    w.add(info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: prism_backend\n"
                            "Root-Is-Purelib: false\nTag: %s\n" % TAG).encode())
    w.close(info + "/RECORD")
    return name
