"""import_bench.py - opening torch.profiler traces: prism-top on generated
Kineto-shaped traces of 100 MB and 1 GB (bench/gen/gen_kineto.py), with
Python's json.load of the same file as the baseline.

Per size, interleaved (each round runs every variant once, in turn, the
order rotating from round to round):
  prism-top analyze TRACE             (stdout to /dev/null)
  prism-top analyze TRACE.json.gz     (the same, gzip -1)
  prism-top convert TRACE -o OUT.cbor
  prism-top analyze OUT.cbor          (the converted profile, for scale)
  python3 -c 'import json; json.load(open(TRACE))'
and the explorer: prism-top TRACE in a detached
tmux (160x50), the time until its first screen shows (anything drawn: the
progress line while the trace loads) and until the loaded explorer shows
(the Summary pane counting the trace's events, no progress line left), and
its peak RSS then.

Figures: wall s, MB/s of JSON (MB = 10^6 bytes) and events/s by wall time,
MB/s by CPU time (user + sys: the machine may be shared), peak RSS and
peak RSS / file size; medians of 3 rounds at 100 MB, 1 round at 1 GB; then
ratios against json.load.  Targets (issue 14): >= 100 MB/s of JSON on one
core, peak RSS <= 0.25 x the JSON size.

The traces go to $TMPDIR (else /tmp) and are removed afterwards; the 1 GB
figures are skipped with a line when less than 3 GB is free there, the
json.load baseline when memory is short for it.  Prints figures; never fails
on time (it fails only when prism-top crashes or rejects a trace it opened
in the probe).  Run by `make bench` ($(PYTHON), PYTHONPATH=$(B)/python:
prism-top is found beside it as $(B)/bin/prism-top, or given by PRISM_TOP).

    PYTHONPATH=build/python /usr/bin/python3 bench/import_bench.py [--sizes 100,1000]
    PRISM_BENCH_IMPORT_SIZES=100 make bench     (sizes in MB)
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "gen"))
import gen_kineto  # noqa: E402

GB = 1 << 30


def find_top():
    """prism-top: $PRISM_TOP, else beside $(B)/python on PYTHONPATH, else build/."""
    if os.environ.get("PRISM_TOP"):
        return os.environ["PRISM_TOP"]
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and os.path.basename(os.path.normpath(p)) == "python":
            cand = os.path.join(os.path.dirname(os.path.normpath(p)), "bin", "prism-top")
            if os.access(cand, os.X_OK):
                return cand
    return os.path.join(HERE, "..", "build", "bin", "prism-top")


def mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Run:
    """One child's wall time, CPU time (s), peak RSS (bytes), exit status."""

    def __init__(self, argv, timeout):
        err = tempfile.TemporaryFile()
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err)
        fired = []
        killer = threading.Timer(timeout, lambda: (fired.append(1), p.kill()))
        killer.start()
        _, status, ru = os.wait4(p.pid, 0)
        self.wall = time.perf_counter() - t0
        killer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        self.rc = p.returncode
        self.timed_out = bool(fired)
        self.cpu = ru.ru_utime + ru.ru_stime
        self.rss = ru.ru_maxrss * 1024
        err.seek(0)
        self.err = err.read().decode(errors="replace").strip()
        err.close()


def run_checked(name, argv, timeout):
    r = Run(argv, timeout)
    if r.rc != 0:
        why = ("killed after %d s" % timeout if r.timed_out else
               "killed by signal %d" % -r.rc if r.rc < 0 else "exit %d" % r.rc)
        first = r.err.splitlines()[0] if r.err else ""
        raise SystemExit("import_bench: FAILED: %s (%s): %s\n  %s" % (name, why, first, " ".join(argv)))
    return r


# ---- the explorer in tmux ----

class Tmux:
    def __init__(self):
        self.sock = "prism-import-bench-%d" % os.getpid()

    def __call__(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.sock] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, check=check).stdout

    def kill(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


PROGRESS = re.compile(r"[0-9.]+ ?[KMG]i?B\b.*[0-9.]+ ?[KMG]i?B/s\b|[Ll]oading|building the profile")


def is_progress(screen):
    """A loading line: a size and a rate ("reading F: 42 of 100 MB, 159 MB/s"),
    or the build after it ("read 100 MB (170 MB/s); building the profile")."""
    return PROGRESS.search(screen) is not None


# the Summary pane once the trace's events are in: "..., 382686 events, ..."
LOADED = re.compile(r"\b[1-9][0-9.]*(?: [kMGTP])? events")   # fmt_count: "1.2 M events"


def explorer(top, trace, timeout):
    """(first screen s, ready s, what the first screen was, peak RSS bytes)"""
    tm = Tmux()
    try:
        t0 = time.perf_counter()
        tm("new-session", "-d", "-s", "b", "-x", "160", "-y", "50",
           "exec env TERM=xterm %s %s" % (top, trace))
        pid = int(tm("display-message", "-p", "-t", "b", "#{pane_pid}").strip() or 0)
        first = ready = None
        what = ""
        rss = 0
        while time.perf_counter() - t0 < timeout:
            screen = tm("capture-pane", "-p", "-t", "b", check=False)
            now = time.perf_counter() - t0
            if first is None and screen.strip():
                first = now
                what = "progress line" if is_progress(screen) else "the explorer"
            if "1 Summary" in screen and LOADED.search(screen) and not is_progress(screen):
                ready = now
                break
            if not tm("list-sessions", check=False).strip():
                break
            time.sleep(0.01)
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        rss = int(line.split()[1]) * 1024
        except (OSError, ValueError):
            pass
        if ready is None:
            what += " (the loaded explorer never showed; last screen: %r)" % (
                " | ".join(l.strip() for l in screen.splitlines() if l.strip())[:200])
        return first, ready, what, rss
    finally:
        tm.kill()


# ---- one size ----

def fmt_mb(b):
    return "%.0f MB" % (b / 1e6) if b >= 1e6 else "%.1f MB" % (b / 1e6)


def bench_size(top, tmp, mb, rounds, with_json, with_convert):
    trace = os.path.join(tmp, "trace_%g.json" % mb)
    cbor = os.path.join(tmp, "trace_%g.cbor" % mb)
    t = time.perf_counter()
    g = gen_kineto.generate(trace, int(mb * 1e6))
    gen_s = time.perf_counter() - t
    size = g["bytes"]
    print("trace: %s, %d events, %d steps, %d kernels, %d distinct python_function names "
          "(generated in %.1f s, %.0f MB/s)" % (fmt_mb(size), g["events"], g["steps"], g["kernels"],
                                                g["names"], gen_s, size / 1e6 / gen_s))
    limit = max(120, 2 * mb)   # s: a hang is reported, never waited for
    gz = trace + ".gz"
    variants = [("prism-top analyze", [top, "analyze", trace])]
    if shutil.which("gzip"):
        with open(gz, "wb") as f:
            subprocess.run(["gzip", "-1", "-c", trace], stdout=f, check=True)
        variants.append(("analyze the .json.gz", [top, "analyze", gz]))
    if with_convert:
        variants += [("prism-top convert", [top, "convert", trace, "-o", cbor]),
                     ("analyze the .cbor", [top, "analyze", cbor])]
    if with_json:
        variants.append(("python json.load", [sys.executable, "-c",
                                              "import json, sys; json.load(open(sys.argv[1]))",
                                              trace]))
    res = {name: [] for name, _ in variants}
    ui = []
    for rnd in range(rounds):
        k = rnd % len(variants)     # the order rotates each round
        for name, argv in variants[k:] + variants[:k]:
            res[name].append(run_checked(name, argv, limit))
        if shutil.which("tmux"):
            # the loaded explorer is waited for up to 20 s or 5x analyze's time
            ui.append(explorer(top, trace, max(20, 5 * max(r.wall for r in res["prism-top analyze"]))))
    cbor_size = os.path.getsize(cbor) if os.path.exists(cbor) else 0
    med = lambda xs: statistics.median(xs)
    print("  %-20s %8s %8s %9s %9s %10s %9s" %
          ("(median of %d)" % rounds if rounds > 1 else "(1 run)", "wall s", "MB/s", "Mevents/s",
           "cpu MB/s", "peak RSS", "RSS/file"))
    fig = {}
    for name, _ in variants:
        rs = res[name]
        wall, cpu, rss = med([r.wall for r in rs]), med([r.cpu for r in rs]), max(r.rss for r in rs)
        fig[name] = (wall, cpu, rss)
        print("  %-20s %8.2f %8.0f %9.2f %9.0f %10s %9.3f" %
              (name, wall, size / 1e6 / wall, g["events"] / 1e6 / wall, size / 1e6 / max(cpu, 1e-9),
               fmt_mb(rss), rss / size))
    notes = ["the .json.gz (gzip -1) is %s" % fmt_mb(os.path.getsize(gz))] \
        if os.path.exists(gz) else []
    if with_convert:
        notes.append("the .cbor is %s, %.3f x the JSON" % (fmt_mb(cbor_size), cbor_size / size))
    print("  (MB/s and events/s: of the JSON, on every row%s)" % "".join("; " + n for n in notes))
    a = fig["prism-top analyze"]
    met = lambda ok: "met" if ok else "NOT met"
    line = ("  targets: >= 100 MB/s on one core: analyze %s (%.0f MB/s by CPU time); "
            "peak RSS <= 0.25 x file: analyze %s (%.3f)" %
            (met(size / 1e6 / a[1] >= 100), size / 1e6 / a[1], met(a[2] <= 0.25 * size),
             a[2] / size))
    if with_convert:
        c = fig["prism-top convert"]
        line += ", convert (the import alone, no analysis) %s (%.3f)" % (
            met(c[2] <= 0.25 * size), c[2] / size)
    print(line)
    if with_json:
        j = fig["python json.load"]
        conv = (" (convert %.2fx)" % (j[0] / fig["prism-top convert"][0])
                if with_convert else "")
        print("  vs json.load: analyze %.2fx its speed%s, %.2fx its CPU time; "
              "peak RSS %.3fx of json.load's (%s vs %s)" %
              (j[0] / a[0], conv, a[1] / j[1], a[2] / j[2], fmt_mb(a[2]), fmt_mb(j[2])))
    if ui:
        firsts = [u[0] for u in ui if u[0] is not None]
        readies = [u[1] for u in ui if u[1] is not None]
        print("  explorer (tmux 160x50, %d runs): first screen %s (%s), loaded explorer %s, "
              "peak RSS %s (%.3f x file)" %
              (len(ui), "%.2f s" % med(firsts) if firsts else "never", ui[0][2],
               "%.2f s" % med(readies) if readies else "never",
               fmt_mb(max(u[3] for u in ui)), max(u[3] for u in ui) / size))
    for f in (trace, cbor, gz):
        if os.path.exists(f):
            os.unlink(f)


def probe(top, tmp):
    """Whether prism-top opens a small Kineto trace and converts it: ('' or
    the reason it does not open, '' or the reason it does not convert)."""
    f = os.path.join(tmp, "probe.json")
    gen_kineto.generate(f, 200000)
    why = lambda r: "" if r.rc == 0 else (r.err.splitlines() or ["exit %d" % r.rc])[0]
    try:
        return (why(Run([top, "analyze", f], 60)),
                why(Run([top, "convert", f, "-o", f + ".cbor"], 60)))
    finally:
        for x in (f, f + ".cbor"):
            if os.path.exists(x):
                os.unlink(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=os.environ.get("PRISM_BENCH_IMPORT_SIZES", "100,1000"),
                    help="trace sizes in MB, comma-separated (default 100,1000)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds for sizes up to 100 MB")
    a = ap.parse_args()
    top = find_top()
    if not os.access(top, os.X_OK):
        print("import_bench: no prism-top at %s: skipped" % top)
        return 0
    base = os.environ.get("TMPDIR") or "/tmp"
    tmp = tempfile.mkdtemp(prefix="prism-import-bench-", dir=base)
    try:
        why, why_convert = probe(top, tmp)
        if why:
            print("import_bench: prism-top cannot open a Kineto trace (%s): skipped" % why)
            return 0
        if why_convert:
            print("import_bench: prism-top convert fails on a Kineto trace (%s): "
                  "no convert figures" % why_convert)
        if not shutil.which("tmux"):
            print("import_bench: no tmux: the explorer's first screen is not measured")
        for mb in [float(s) for s in a.sizes.split(",") if s.strip()]:
            free = shutil.disk_usage(tmp).free
            print("== Kineto-shaped trace, %g MB (in %s, %.1f GB free)" % (mb, base, free / GB))
            if mb >= 1000 and free < 3 * GB:
                print("  skipped: less than 3 GB free in %s" % base)
                continue
            if free < 3 * mb * 1e6:
                print("  skipped: less than %.1f GB free in %s" % (3 * mb / 1e3, base))
                continue
            # json.load holds the whole document as Python objects: ~5x the file
            with_json = mem_available() > 8 * mb * 1e6
            if not with_json:
                print("  json.load baseline skipped: %.1f GB of memory available, it needs ~%.1f GB"
                      % (mem_available() / GB, 8 * mb / 1e3))
            bench_size(top, tmp, mb, a.rounds if mb <= 100 else 1, with_json, not why_convert)
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
