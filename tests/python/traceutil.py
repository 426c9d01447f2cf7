"""What the trace tests share (test_torch_trace.py, test_trace_fixtures.py,
test_trace_hostile.py): running prism-top on a trace with a time limit and
the child's own peak RSS, reading its analysis, tree and dump, and the
importer's anomaly counters (INFO `import.*`, as `dump` prints them)."""
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

from pyutil import PRISM_TOP, SANITIZE

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures", "kineto")


class Run:
    """One finished child: rc (negative: killed by that signal), stdout,
    stderr (text), maxrss (bytes, this child alone), timed_out."""

    def __init__(self, argv, rc, out, err, maxrss, timed_out):
        self.argv, self.rc, self.stdout, self.stderr = argv, rc, out, err
        self.maxrss, self.timed_out = maxrss, timed_out

    def __repr__(self):
        return "<%s: rc %s%s, rss %d MB, stderr %r>" % (
            " ".join(self.argv[1:]), self.rc, " TIMED OUT" if self.timed_out else "",
            self.maxrss >> 20, self.stderr[-500:])


# The child's peak RSS: wait4's ru_maxrss of a child counts the memory of
# the process it was forked from (Linux keeps the pre-exec high-water mark
# across exec), and this interpreter may hold torch.  So a small interpreter
# (-S -E: no site, a few MB) forks and waits for prism-top, and writes its
# wait status and ru_maxrss to a file.
_SPAWN = """
import os, sys
out, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write("%d %d" % (status, ru.ru_maxrss))
"""


def run_top(*args, timeout=60):
    """prism-top ARGS with a time limit (then killed, timed_out set); its
    exit status as subprocess gives it (negative: the signal), output, and
    its own peak RSS.  Output goes to files, so a chatty child never
    blocks."""
    argv = [PRISM_TOP] + [str(a) for a in args]
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe, \
            tempfile.NamedTemporaryFile(mode="r") as fr:
        p = subprocess.Popen([sys.executable, "-S", "-E", "-c", _SPAWN, fr.name] + argv,
                             stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        timed_out = False
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        fo.seek(0)
        fe.seek(0)
        out = fo.read().decode("utf-8", "replace")
        err = fe.read().decode("utf-8", "replace")
        res = fr.read().split()
    if len(res) == 2:
        rc, maxrss = os.waitstatus_to_exitcode(int(res[0])), int(res[1]) * 1024
    else:                               # killed before it could say
        rc, maxrss = -signal.SIGKILL if timed_out else p.returncode, 0
    return Run(argv, rc, out, err, maxrss, timed_out)


def ok(*args, timeout=120):
    """prism-top ARGS that must succeed; its Run."""
    r = run_top(*args, timeout=timeout)
    if r.rc != 0 or r.timed_out:
        raise AssertionError("prism-top %s failed: %r" % (" ".join(map(str, args)), r))
    return r


def analyze(path):
    return json.loads(ok("analyze", path, "--format", "json").stdout)


def analyze_text(path):
    return ok("analyze", path).stdout


def tree(path, tmp):
    out = os.path.join(tmp, "tree-%d.json" % abs(hash(path)))
    ok("export", path, "--format", "json", "-o", out)
    with open(out) as f:
        return json.load(f)


def dump(path):
    return ok("dump", path).stdout


def info(dump_text):
    """{key: value} of the INFO records in a dump ("info    KEY = VALUE")."""
    out = {}
    for m in re.finditer(r"^info\s+(\S+) = (.*)$", dump_text, re.M):
        v = m.group(2).strip()
        try:
            v = int(v)
        except ValueError:
            v = v.strip('"')
        out[m.group(1)] = v
    return out


def anomalies(dump_text):
    """The importer's counters: the INFO keys under import. with an integer."""
    return {k: v for k, v in info(dump_text).items()
            if k.startswith("import.") and isinstance(v, int)}


def counted(anom, *words):
    """The sum of the counters whose key holds any of words."""
    return sum(v for k, v in anom.items() if any(w in k for w in words))


def walk(tree_json):
    """Yield (thread name, [names from the root], node) for every node."""
    for t in tree_json["threads"]:
        stack = [([r["name"]], r) for r in reversed(t["roots"])]
        while stack:
            names, n = stack.pop()
            yield t["name"], names, n
            for c in reversed(n.get("children", [])):
                stack.append((names + [c["name"]], c))


def gzip_copy(src, dst):
    with open(src, "rb") as f, gzip.open(dst, "wb", compresslevel=6) as g:
        g.write(f.read())
    return dst


def same_analysis(a, b, keys=("ops", "steps", "bottlenecks", "gpu", "memory", "work")):
    """The parts of two analyses that must be equal; a message or None."""
    for k in keys:
        if a.get(k) != b.get(k):
            return "%s differs:\n%s\n%s" % (k, json.dumps(a.get(k))[:1500],
                                           json.dumps(b.get(k))[:1500])
    for k in ("nodes", "threads", "events", "span_ns"):
        if a["summary"].get(k) != b["summary"].get(k):
            return "summary.%s differs: %r vs %r" % (k, a["summary"].get(k),
                                                    b["summary"].get(k))
    return None


# One line naming the file and a byte offset, as prism-top's other errors:
# "FILE: what is wrong at byte N" (also "... (at byte N)").
ERROR_LINE = r"^(?P<file>.+?): .*\bbyte (?P<off>\d+)\b.*$"

RSS_SLACK = 64 << 20


def rss_limit(input_bytes):
    """Peak RSS the importer may use for an input: 4x + 64 MB (sanitizers:
    their shadow memory and quarantine on top; then only crashes count)."""
    return None if SANITIZE else 4 * input_bytes + RSS_SLACK
