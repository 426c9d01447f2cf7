"""Build and install the prism package from a PRISM checkout:

    pip install --no-build-isolation ./python        # offline, any venv

It compiles the same C sources as `make` (libcollect, the format library,
the analysis and prism-top's report writers, python/src) with the same
flags into one extension, prism/_prism.abi3.so (the stable ABI of CPython
3.10: one build serves 3.10 and later).  Needs a C11 compiler, the Python
headers (Debian: python3-dev), libcbor and xxHash (libcbor-dev,
libxxhash-dev) and setuptools.  pip builds in ./python/build.
"""
import glob
import os

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def rel(*parts):
    """A path relative to this directory (setuptools wants relative sources)."""
    return os.path.relpath(os.path.join(TOP, *parts), HERE)


def version():
    with open(os.path.join(TOP, "include", "prism", "profile.h")) as f:
        for line in f:
            if line.startswith("#define PRISM_VERSION_STRING"):
                return line.split('"')[1]
    return "0"


# The Makefile's objects: libprism (format, libcollect without the injection
# entry), libprism-analysis, the report writers of prism-top (no curses).
SOURCES = sorted(glob.glob(os.path.join(HERE, "src", "*.c")))
SOURCES = [os.path.relpath(s, HERE) for s in SOURCES]
for pattern in ("base/*.c", "format/*.c", "libcollect/*.c", "analysis/*.c", "import/*.c", "present/*.c"):
    SOURCES += sorted(rel(os.path.relpath(p, TOP))
                      for p in glob.glob(os.path.join(TOP, pattern))
                      if not p.endswith(os.sep + "inject.c"))
SOURCES += [rel("reports", f) for f in ("analyze_json.c", "compare_cmd.c", "export.c",
                                    "export_speedscope.c", "export_trace.c",
                                    "export_trace_gpu.c", "report.c")]

# ALL_CFLAGS of the Makefile (warnings aside)
CFLAGS = ["-std=c11", "-fPIC", "-pthread", "-O2", "-g"]
MACROS = [("_GNU_SOURCE", None), ("Py_LIMITED_API", "0x030A0000")]
INCLUDES = [rel("include"), rel("base"), rel("format"), rel("samples", "lib"), rel("present"), rel("reports"), "src"]
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
if os.environ.get("CUPTI") != "0" and os.path.exists(os.path.join(CUDA_HOME, "include",
                                                                  "cupti.h")):
    MACROS.append(("PRISM_HAVE_CUPTI_HEADERS", None))
    CFLAGS += ["-isystem", os.path.join(CUDA_HOME, "include")]

ext = Extension(
    "prism._prism",
    sources=SOURCES,
    include_dirs=INCLUDES,
    define_macros=MACROS,
    extra_compile_args=CFLAGS,
    extra_link_args=["-pthread", "-Wl,--version-script=" + os.path.join("src", "prism.map"),
                     "-Wl,-Bsymbolic"],
    libraries=["cbor", "xxhash", "yajl", "z", "dl", "m"],
    py_limited_api=True,
)

setup(
    name="prism-profiler",
    version=version(),
    description="PRISM: a low-overhead profiler for training loops (recording and analysis)",
    packages=["prism"],
    package_dir={"prism": "prism"},
    ext_modules=[ext],
    python_requires=">=3.10",
    options={"bdist_wheel": {"py_limited_api": "cp310"}},
    zip_safe=False,
)
