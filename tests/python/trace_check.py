"""Checkers for the files `prism-top export` writes for other tools, with
nothing but the json module: the Trace Event Format (chrome-trace) and
speedscope's file format (its structure; the schema check is the test's,
with jsonschema).  Each returns a list of problems, empty when the file is
good, so a test can show them all.

Trace Event Format, as Perfetto, chrome://tracing and speedscope read it:
required fields per phase; "B"/"E" named, balanced per track and in time
order; "X" with dur >= 0; on every track the spans (B/E pairs and X, their
end computed as a reader does, ts + dur in doubles) nest properly -- one
ends before the next begins, or lies inside it, never a partial overlap;
process and thread names for every track that has spans."""
import math
from collections import defaultdict

META_KEYS = {"process_name": "name", "process_labels": "labels",
             "process_sort_index": "sort_index", "thread_name": "name",
             "thread_sort_index": "sort_index"}


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _need(e, i, problems, *fields):
    for f in fields:
        if f not in e:
            problems.append("event %d (%s): no %r" % (i, e.get("ph"), f))
            return False
    for f in ("ts", "dur"):
        if f in fields and not _num(e[f]):
            problems.append("event %d: %s %r is not a number" % (i, f, e[f]))
            return False
    if "name" in fields and not isinstance(e["name"], str):
        problems.append("event %d: name %r is not a string" % (i, e["name"]))
        return False
    return True


def spans_nest(spans):
    """spans: [(start, end, label)] of one track.  The partial overlaps."""
    bad = []
    stack = []
    for s, e, label in sorted(spans, key=lambda x: (x[0], -x[1])):
        while stack and stack[-1][1] <= s:
            stack.pop()
        if stack and e > stack[-1][1]:
            bad.append("%s [%r, %r] overlaps %s [%r, %r]"
                       % (label, s, e, stack[-1][2], stack[-1][0], stack[-1][1]))
        stack.append((s, e, label))
    return bad


def chrome_tracks(doc):
    """{(pid, tid): [(start, end, name)]} of the spans (B/E pairs and X)."""
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    spans, open_ = defaultdict(list), defaultdict(list)
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if e.get("ph") == "B":
            open_[key].append(e)
        elif e.get("ph") == "E" and open_[key]:
            b = open_[key].pop()
            spans[key].append((b["ts"], e["ts"], b["name"]))
        elif e.get("ph") == "X":
            spans[key].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    return spans


def check_chrome(doc):
    problems = []
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return ["no traceEvents array"]
    stacks = defaultdict(list)
    last_ts = {}
    named_pids, named_tids, used = set(), set(), set()
    for i, e in enumerate(events):
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
            problems.append("event %d: not an object with a ph" % i)
            continue
        ph = e["ph"]
        key = (e.get("pid"), e.get("tid"))
        if ph in ("B", "E"):
            if not _need(e, i, problems, "name", "ts", "pid", "tid"):
                continue
            if key in last_ts and e["ts"] < last_ts[key]:
                problems.append("event %d: %s at %r before %r on track %r"
                                % (i, ph, e["ts"], last_ts[key], key))
            last_ts[key] = e["ts"]
            used.add(key)
            if ph == "B":
                stacks[key].append(e["name"])
            elif not stacks[key]:
                problems.append("event %d: E %r with nothing open on %r" % (i, e["name"], key))
            elif stacks[key][-1] != e["name"]:
                problems.append("event %d: E %r closes %r on %r"
                                % (i, e["name"], stacks[key][-1], key))
                stacks[key].pop()
            else:
                stacks[key].pop()
        elif ph == "X":
            if _need(e, i, problems, "name", "ts", "dur", "pid", "tid"):
                used.add(key)
                if e["dur"] < 0:
                    problems.append("event %d: X %r with dur %r" % (i, e["name"], e["dur"]))
        elif ph in ("i", "I"):
            if _need(e, i, problems, "name", "ts", "pid") and e.get("s", "t") not in "gpt":
                problems.append("event %d: instant scope %r" % (i, e.get("s")))
        elif ph == "C":
            if _need(e, i, problems, "name", "ts", "pid", "args"):
                if not isinstance(e["args"], dict) or not all(_num(v)
                                                               for v in e["args"].values()):
                    problems.append("event %d: counter args %r" % (i, e["args"]))
        elif ph == "M":
            if not _need(e, i, problems, "name", "pid", "args"):
                continue
            want = META_KEYS.get(e["name"])
            if want is None or not isinstance(e["args"], dict) or want not in e["args"]:
                problems.append("event %d: metadata %r args %r" % (i, e["name"], e["args"]))
                continue
            if e["name"].startswith("thread_") and "tid" not in e:
                problems.append("event %d: %s without tid" % (i, e["name"]))
            if e["name"].endswith("sort_index") and not isinstance(e["args"][want], int):
                problems.append("event %d: sort index %r" % (i, e["args"][want]))
            if e["name"] == "process_name":
                named_pids.add(e["pid"])
            if e["name"] == "thread_name":
                named_tids.add(key)
        else:
            problems.append("event %d: unknown phase %r" % (i, ph))
    for key, st in stacks.items():
        if st:
            problems.append("track %r: %d B without E (%r)" % (key, len(st), st[-1]))
    for key in used:
        if key[0] not in named_pids:
            problems.append("pid %r has no process_name" % (key[0],))
        if key not in named_tids:
            problems.append("track %r has no thread_name" % (key,))
    for key, spans in chrome_tracks(events).items():
        problems += ["track %r: %s" % (key, b) for b in spans_nest(spans)]
    return problems


def thread_names(doc):
    """{(pid, tid): name} from the thread_name metadata."""
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def check_speedscope(doc):
    """The structure the schema cannot state: frames exist, every O has its
    C of the same frame, properly nested, in non-decreasing time within
    [startValue, endValue]."""
    problems = []
    frames = doc.get("shared", {}).get("frames", [])
    profiles = doc.get("profiles", [])
    api = doc.get("activeProfileIndex", 0)
    if profiles and not (isinstance(api, int) and 0 <= api < len(profiles)):
        problems.append("activeProfileIndex %r of %d profiles" % (api, len(profiles)))
    for p in profiles:
        name = p.get("name")
        if p.get("type") != "evented":
            continue
        lo, hi = p["startValue"], p["endValue"]
        if hi < lo:
            problems.append("%r: endValue %r < startValue %r" % (name, hi, lo))
        stack, last = [], None
        for k, ev in enumerate(p["events"]):
            at, fr = ev["at"], ev["frame"]
            if not (isinstance(fr, int) and 0 <= fr < len(frames)):
                problems.append("%r event %d: frame %r of %d" % (name, k, fr, len(frames)))
                continue
            if last is not None and at < last:
                problems.append("%r event %d: at %r before %r" % (name, k, at, last))
            if not lo <= at <= hi:
                problems.append("%r event %d: at %r outside [%r, %r]" % (name, k, at, lo, hi))
            last = at
            if ev["type"] == "O":
                stack.append(fr)
            elif not stack:
                problems.append("%r event %d: C with nothing open" % (name, k))
            elif stack.pop() != fr:
                problems.append("%r event %d: C of frame %r closes another" % (name, k, fr))
        if stack:
            problems.append("%r: %d frames never closed" % (name, len(stack)))
    return problems
