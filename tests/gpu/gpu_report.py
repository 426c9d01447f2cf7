#!/usr/bin/env python3
"""gpu_report.py WORK [--json OUT.json] - the figures of PRISM's device check.

Reads what tests/gpu/run_gpu_checks.sh left in WORK:
  dump/<name>.txt      `prism-top dump` of each PRISM profile
  prof/<name>.json.gz  torch.profiler traces (Chrome trace, Kineto layout)
  res/<name>.json      one record per timed run: rc, wall_s, the RESULT line
  ana/<name>.json      `prism-top analyze --format json` (profiles and traces)
  logs/checks.log      tests/gpu/checks.sh's output (cuda_train)
and prints a text summary (and writes the same figures as JSON).

Per PRISM profile: gpu.status, footer, records by type, kernels between the
two marker kernels (torch_train.py: spin_kernel), kernels whose correlation
id has no runtime-API record (launched through the driver API, or before
CUPTI attached), kernel start minus launch-call start (negative: the clocks
disagree), NVTX 'train_step' regions, steps, GPU memory samples.
Per torch.profiler trace: kernels, kernels between the markers, launches by
cuda_runtime vs cuda_driver.  Then PRISM against torch.profiler over the same
steps, and the timings of the four ways of running the same training.
Standard library only.
"""

import collections
import glob
import gzip
import json
import os
import re
import statistics
import sys

RE_GPU = re.compile(r"^gpu\s+t=(\d+)\.(\d{9}) (\w+) dur (\d+) ns device (\d+) stream (\d+) "
                    r"corr (\d+)(?: (.*))?$")
RE_STEP = re.compile(r"^step\s+(\d+) epoch (\d+) start (\d+)\.(\d{9}) duration (\d+) ns")
RE_ENTER = re.compile(r"^region\s+t=(\d+)\.(\d{9}) thread (\d+) depth (\d+) enter (.*)$")
RE_THREAD = re.compile(r'^thread (\d+) tid (\d+) "(.*)"$')
RE_STATUS = re.compile(r'^info\s+gpu\.status = "(.*)"$')
RE_FOOTER = re.compile(r"^footer\s+end .* events (\d+) dropped (\d+) chunks (\d+) (\w+)$")
RE_DROP = re.compile(r"^dropped thread (\d+) (gpu|cpu) total (\d+)")
RE_MEM = re.compile(r"^memory\s+.*?gpu(\d+) used (\d+) reserved (\d+)")
MARK = "spin_kernel"


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def parse_dump(path):
    kinds = collections.Counter()
    kernels = []            # (start, dur, corr, name)
    api = {}                # corr -> (start, stream, name)
    api_names = collections.Counter()
    steps = []
    threads = {}
    enters = collections.Counter()
    status, footer, gpu_dropped, mem = None, None, 0, []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("gpu "):
                m = RE_GPU.match(line.rstrip("\n"))
                if not m:
                    kinds["unparsed"] += 1
                    continue
                t = int(m.group(1)) * 10 ** 9 + int(m.group(2))
                typ, dur, stream, corr = m.group(3), int(m.group(4)), int(m.group(6)), int(m.group(7))
                rest = m.group(8) or ""
                kinds[typ] += 1
                if typ == "kernel":
                    kernels.append((t, dur, corr, rest.rsplit(" grid ", 1)[0]))
                elif typ == "api":
                    api[corr] = (t, stream, rest)
                    api_names[rest] += 1
            elif line.startswith("region"):
                m = RE_ENTER.match(line.rstrip("\n"))
                if m:
                    enters[m.group(5)] += 1
            elif line.startswith("step "):
                m = RE_STEP.match(line)
                if m:
                    s = int(m.group(3)) * 10 ** 9 + int(m.group(4))
                    steps.append((int(m.group(1)), s, s + int(m.group(5))))
            elif line.startswith("thread "):
                m = RE_THREAD.match(line.rstrip("\n"))
                if m:
                    threads[int(m.group(1))] = m.group(3)
            elif line.startswith("info"):
                m = RE_STATUS.match(line.rstrip("\n"))
                if m:
                    status = m.group(1)
            elif line.startswith("footer"):
                m = RE_FOOTER.match(line.rstrip("\n"))
                footer = m.group(4) if m else line.strip()
            elif line.startswith("dropped"):
                m = RE_DROP.match(line)
                if m and m.group(2) == "gpu":
                    gpu_dropped = max(gpu_dropped, int(m.group(3)))
            elif line.startswith("memory"):
                m = RE_MEM.match(line)
                if m:
                    mem.append(int(m.group(2)))
    kernels.sort()
    r = {"status": status, "footer": footer, "records": dict(kinds), "gpu_dropped": gpu_dropped,
         "kernels": len(kernels), "steps": len(steps),
         "api_top": api_names.most_common(8)}
    # kernels between the markers
    marks = [k for k in kernels if MARK in k[3]]
    r["markers"] = len(marks)
    inwin = []
    if len(marks) >= 2:
        a, b = marks[0][0], marks[-1][0]
        inwin = [k for k in kernels if a < k[0] < b and MARK not in k[3]]
        r["kernels_in_window"] = len(inwin)
        r["window_names"] = collections.Counter(k[3] for k in inwin)
    # correlation to a runtime API call, and the launch-to-start delay
    unmatched = collections.Counter()
    deltas, neg, launch_threads = [], 0, collections.Counter()
    for t, dur, corr, name in kernels:
        c = api.get(corr)
        if c is None:
            unmatched[name] += 1
            continue
        d = t - c[0]
        deltas.append(d)
        if d < -1000:
            neg += 1
        launch_threads[threads.get(c[1], "stream %d" % c[1])] += 1
    nk = len(kernels)
    r["kernels_with_api"] = nk - sum(unmatched.values())
    r["kernels_without_api"] = sum(unmatched.values())
    r["unmatched_top"] = unmatched.most_common(6)
    r["launch_threads"] = launch_threads.most_common(6)
    r["kernel_minus_launch_ns"] = {
        "n": len(deltas), "negative_over_1us": neg, "min": min(deltas) if deltas else None,
        "p50": pct(deltas, 0.5), "p99": pct(deltas, 0.99), "max": max(deltas) if deltas else None}
    r["nvtx_train_step_regions"] = enters.get("train_step", 0)
    r["region_enters"] = sum(enters.values())
    r["top_regions"] = enters.most_common(8)
    if steps:
        durs = [e - s for _, s, e in steps]
        r["step_ms_p50"] = round(statistics.median(durs) / 1e6, 3)
        # kernels per step (by start time inside the step's span)
        per = []
        j = 0
        for idx, s, e in sorted(steps, key=lambda x: x[1]):
            while j < nk and kernels[j][0] < s:
                j += 1
            k = j
            n = 0
            while k < nk and kernels[k][0] < e:
                n += 1
                k += 1
            per.append((idx, n))
        r["kernels_per_step"] = per
    r["gpu_mem_samples"] = len(mem)
    r["gpu_mem_max_mb"] = round(max(mem) / 2 ** 20, 1) if mem else None
    return r


def parse_trace(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", errors="replace") as f:
        d = json.load(f)
    ev = d.get("traceEvents", []) if isinstance(d, dict) else d
    kern, rt, drv, cats = [], {}, {}, collections.Counter()
    for e in ev:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        c = e.get("cat", "")
        cats[c] += 1
        args = e.get("args") or {}
        corr = args.get("correlation")
        if c == "kernel":
            kern.append((float(e.get("ts", 0)), corr, e.get("name", "")))
        elif c == "cuda_runtime":
            rt[corr] = e.get("name", "")
        elif c == "cuda_driver":
            drv[corr] = e.get("name", "")
    kern.sort()
    r = {"kernels": len(kern), "cats": dict(cats.most_common(12))}
    via = collections.Counter()
    via_names = collections.Counter()
    for ts, corr, name in kern:
        if corr in rt:
            via["runtime"] += 1
        elif corr in drv:
            via["driver"] += 1
            via_names[drv[corr]] += 1
        else:
            via["none"] += 1
    r["launched_via"] = dict(via)
    r["driver_launch_calls"] = via_names.most_common(4)
    marks = [k for k in kern if MARK in k[2]]
    r["markers"] = len(marks)
    if len(marks) >= 2:
        a, b = marks[0][0], marks[-1][0]
        inwin = [k for k in kern if a < k[0] < b and MARK not in k[2]]
        r["kernels_in_window"] = len(inwin)
        r["window_names"] = collections.Counter(k[2] for k in inwin)
        drv_in = sum(1 for k in inwin if k[1] in drv)
        r["window_driver_launched"] = drv_in
    return r


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception as e:          # noqa: BLE001 - a report never fails on one file
        return {"error": "%s: %s" % (type(e).__name__, e)}


def fmt_names(c, n=8):
    return ["%6d  %s" % (v, k[:110]) for k, v in c.most_common(n)]


def compare(p, t):
    """PRISM window against torch.profiler window, by kernel name."""
    pw, tw = p.get("window_names"), t.get("window_names")
    if pw is None or tw is None:
        return None
    diff = collections.Counter()
    for k in set(pw) | set(tw):
        dv = pw.get(k, 0) - tw.get(k, 0)
        if dv:
            diff[k] = dv
    return {"prism": sum(pw.values()), "torch": sum(tw.values()),
            "names_prism": len(pw), "names_torch": len(tw),
            "name_diffs": sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:8]}


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    w = sys.argv[1]
    jout = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    rep = {"runs": {}, "prism": {}, "torch": {}, "analyze": {}, "compare": {}}
    out = []
    say = out.append

    # timed runs
    for f in sorted(glob.glob(os.path.join(w, "res", "*.json"))):
        rep["runs"][os.path.basename(f)[:-5]] = load_json(f)
    runs = rep["runs"]
    base = (runs.get("torch_plain") or {}).get("result") or {}
    say("== PyTorch training, same script (%s steps), five ways" % base.get("steps", "?"))
    say("%-14s %4s %8s %10s %9s %9s" % ("run", "rc", "wall_s", "ms/step", "vs plain", "export_s"))
    for name in ("torch_plain", "torch_prismrun", "torch_pym", "torch_prismtorch",
                 "torch_torchprof", "torch_plain2", "torch_ops",
                 "torch_coexist", "torch_prismrun_nofin", "torch_pym_nofin"):
        r = runs.get(name)
        if not r:
            continue
        res = r.get("result") or {}
        ms = res.get("steady_ms_per_step")
        b = base.get("steady_ms_per_step")
        rel = "%+.1f%%" % ((ms - b) / b * 100) if ms and b else "-"
        say("%-14s %4s %8s %10s %9s %9s" % (name.replace("torch_", ""), r.get("rc"),
                                             r.get("wall_s"), ms, rel, res.get("export_s", "")))
    if base:
        say("  device %s, torch %s, CUDA %s, cuDNN %s; cuda_ready %ss after start; first NVTX "
            "%ss after CUDA init" % (base.get("gpu"), base.get("torch"), base.get("cuda"),
                                     base.get("cudnn"), base.get("cuda_ready_s"),
                                     base.get("first_nvtx_after_cuda_s")))

    # PRISM profiles
    for f in sorted(glob.glob(os.path.join(w, "dump", "*.txt"))):
        name = os.path.basename(f)[:-4]
        try:
            rep["prism"][name] = parse_dump(f)
        except Exception as e:      # noqa: BLE001
            rep["prism"][name] = {"error": str(e)}
    for name, p in rep["prism"].items():
        say("")
        say("== PRISM profile %s" % name)
        if "error" in p:
            say("  cannot read the dump: %s" % p["error"])
            continue
        say("  gpu.status: %s" % p["status"])
        say("  footer: %s; GPU records dropped: %s; records: %s" % (p["footer"], p["gpu_dropped"],
                                                                   p["records"]))
        say("  kernels %d (markers %d, between markers %s); with a runtime-API record %d, "
            "without %d" % (p["kernels"], p["markers"], p.get("kernels_in_window", "-"),
                            p["kernels_with_api"], p["kernels_without_api"]))
        if p["unmatched_top"]:
            say("  kernels without a launch record (driver API / before attach), top:")
            for n, c in p["unmatched_top"]:
                say("    %6d  %s" % (c, n[:110]))
        d = p["kernel_minus_launch_ns"]
        say("  kernel start - launch call start (ns): n=%s min=%s p50=%s p99=%s max=%s; "
            "negative by >1us: %s" % (d["n"], d["min"], d["p50"], d["p99"], d["max"],
                                      d["negative_over_1us"]))
        say("  launching threads: %s" % ", ".join("%s: %d" % kv for kv in p["launch_threads"]))
        say("  steps %d (median %s ms); NVTX train_step regions %d; region enters %d; GPU memory "
            "samples %d (max %s MB)" % (p["steps"], p.get("step_ms_p50"),
                                        p["nvtx_train_step_regions"], p["region_enters"],
                                        p["gpu_mem_samples"], p["gpu_mem_max_mb"]))
        say("  API calls, top: %s" % ", ".join("%s %d" % kv for kv in p["api_top"]))
        per = p.get("kernels_per_step")
        if per and name.endswith("coexist"):
            # by tens of steps: where PRISM stops seeing kernels, if it does
            groups = collections.OrderedDict()
            for idx, c in per:
                groups.setdefault(idx // 10, []).append(c)
            say("  kernels per step, median by 10 steps: " + " ".join(
                "%d-%d:%s" % (g * 10, g * 10 + 9, statistics.median(v)) for g, v in groups.items()))
        elif per:
            cs = [c for _, c in per]
            say("  kernels per step: min %d, median %s, max %d" % (min(cs), statistics.median(cs),
                                                                 max(cs)))

    # torch.profiler traces
    for f in sorted(glob.glob(os.path.join(w, "prof", "*.json*"))):
        name = os.path.basename(f).split(".json")[0]
        try:
            rep["torch"][name] = parse_trace(f)
        except Exception as e:      # noqa: BLE001
            rep["torch"][name] = {"error": "%s: %s" % (type(e).__name__, e)}
    for name, t in rep["torch"].items():
        say("")
        say("== torch.profiler trace %s" % name)
        if "error" in t:
            say("  cannot read: %s" % t["error"])
            continue
        say("  kernels %d (markers %d, between markers %s, of which driver-API launched %s); "
            "launched via %s" % (t["kernels"], t["markers"], t.get("kernels_in_window", "-"),
                                 t.get("window_driver_launched", "-"), t["launched_via"]))
        if t["driver_launch_calls"]:
            say("  driver launch calls: %s" % t["driver_launch_calls"])
        say("  event categories: %s" % t["cats"])

    # PRISM against torch.profiler (same script, same steps between the markers)
    tr = rep["torch"].get("torch_trace")
    if tr and "error" not in tr:
        for name in ("torch_prismrun", "torch_pym", "torch_prismtorch"):
            p = rep["prism"].get(name)
            if not p or "error" in p:
                continue
            c = compare(p, tr)
            rep["compare"][name] = c
            say("")
            if c is None:
                say("== %s vs torch.profiler: no marker window in one of them" % name)
                continue
            say("== kernels between the markers: %s %d, torch.profiler %d (distinct names %d / %d)"
                % (name, c["prism"], c["torch"], c["names_prism"], c["names_torch"]))
            for k, v in c["name_diffs"]:
                say("    %+6d  %s" % (v, k[:110]))
    co_p, co_t = rep["prism"].get("torch_coexist"), rep["torch"].get("torch_coexist_trace")
    if co_p and co_t and "error" not in co_p and "error" not in co_t:
        say("")
        say("== PRISM + torch.profiler in one process: PRISM kernels %d, torch.profiler kernels %d"
            " (its window only); PRISM status: %s" % (co_p["kernels"], co_t["kernels"],
                                                      co_p["status"]))

    # analyze outputs: did they load, and the GPU figures
    for f in sorted(glob.glob(os.path.join(w, "ana", "*.json"))):
        if f.endswith(".tree.json"):
            continue
        name = os.path.basename(f)[:-5]
        a = load_json(f)
        g = a.get("gpu") or {}
        sy = a.get("system") or {}
        rep["analyze"][name] = {
            "system": {k: sy.get(k) for k in ("readings", "gpu_util_pct", "gpu_energy_mj",
                                              "cpu_energy_uj", "step_energy_j")},
            # the DataLoader workers' files merged (<profile>.workers/)
            "workers": {k: (a.get("workers") or {}).get(k)
                        for k in ("workers", "processes", "threads", "batches", "busy",
                                  "num_workers", "pin_ns")},
            "error": a.get("error"), "complete": a.get("complete"),
            "gpu_status": g.get("status"), "launches": g.get("launches"),
            "busy_ns": g.get("busy_ns"), "idle_share": g.get("idle_share"),
            "bottlenecks": [b.get("type") for b in (a.get("bottlenecks") or [])][:8]}
    if rep["analyze"]:
        say("")
        say("== prism-top analyze --format json")
        for name, a in rep["analyze"].items():
            if a["error"]:
                say("  %-22s ERROR %s" % (name, a["error"][:100]))
            else:
                say("  %-22s launches %s, GPU idle %s, bottlenecks %s" % (
                    name, a["launches"],
                    "%.1f%%" % (a["idle_share"] * 100) if a["idle_share"] is not None else "-",
                    ",".join(a["bottlenecks"])))
                sy = a["system"]
                if sy.get("readings"):      # format 1.3: NVML's utilisation and energy
                    say("  %-22s system: %s readings, GPU util %s %%, GPU energy %s mJ, "
                        "CPU energy %s uJ, %s J/step" % (
                            "", sy["readings"], sy["gpu_util_pct"], sy["gpu_energy_mj"],
                            sy["cpu_energy_uj"], sy["step_energy_j"]))
                wk = a["workers"]
                if wk.get("num_workers"):   # a DataLoader with worker processes
                    say("  %-22s workers: %s of %s merged (%s threads), %s batches, busy %s, "
                        "pin_memory %s ns/batch" % (
                            "", wk["processes"], wk["num_workers"], wk["threads"],
                            wk["batches"], wk["busy"], wk["pin_ns"]))

    # kernels credited to a CPU region (export --format json: the call tree)
    trees = sorted(glob.glob(os.path.join(w, "ana", "*.tree.json")))
    if trees:
        say("")
        say("== kernels credited to the region that launched them (call tree)")
    for f in trees:
        name = os.path.basename(f)[:-len(".tree.json")]
        t = load_json(f)
        if "error" in t:
            say("  %-22s ERROR %s" % (name, t["error"][:100]))
            continue
        selfs = []
        stack = [(r, r["name"]) for r in t.get("roots", [])]
        while stack:
            n, path = stack.pop()
            kids = n.get("children", [])
            own = n.get("gpu_launches", 0) - sum(k.get("gpu_launches", 0) for k in kids)
            if own > 0:
                selfs.append((own, path))
            stack.extend((k, path + " > " + k["name"]) for k in kids)
        credited = sum(r.get("gpu_launches", 0) for r in t.get("roots", []))
        launches = (rep["analyze"].get(name) or {}).get("launches")
        rep.setdefault("credited", {})[name] = {"credited_launches": credited,
                                                "launches": launches,
                                                "top_self": sorted(selfs, reverse=True)[:8]}
        say("  %-22s %s of %s kernel launches credited to a region%s" % (
            name, credited, launches,
            " (%.1f%%)" % (100.0 * credited / launches) if launches else ""))
        for own, path in sorted(selfs, reverse=True)[:5]:
            say("      %6d  %s" % (own, path[-110:]))

    # checks.sh
    lg = os.path.join(w, "logs", "checks.log")
    if os.path.exists(lg):
        with open(lg, errors="replace") as f:
            lines = [x.rstrip() for x in f]
        keep = [x for x in lines if x.startswith(("PASS", "FAIL", "loop time", "host time",
                                                  "gpu.status", "cuda_train:", "all GPU",
                                                  "some GPU", "no NVIDIA"))]
        rep["gpuchecks"] = keep
        say("")
        say("== tests/gpu/checks.sh (samples/cuda_train)")
        for x in keep:
            say("  " + x[:200])

    for p in rep["prism"].values():              # Counters: JSON-able, shorter
        if isinstance(p.get("window_names"), collections.Counter):
            p["window_names"] = p["window_names"].most_common(40)
    for t in rep["torch"].values():
        if isinstance(t.get("window_names"), collections.Counter):
            t["window_names"] = t["window_names"].most_common(40)
    print("\n".join(out))
    if jout:
        with open(jout, "w") as f:
            json.dump(rep, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
