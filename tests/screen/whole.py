"""whole.py WIDTH SPLIT: read a captured screen on stdin and fail (exit 1,
naming the line) when a figure is cut at the right edge of a pane: at the
screen's edge, or at the divider column SPLIT of compare mode's two sides
(0: one pane; -1: find it, the divider on the second line at the middle).  A pane filled to its last column must end in a whole
token: a word, or a number with its unit; never a number cut short ("27.1"
of "27.17 ms", "share 1", "p=0."), a number without its unit ("27.17 m")
or an elided figure ("12…", "..3")."""
import re
import sys

width, split = int(sys.argv[1]), int(sys.argv[2])
# "flame": the Flame pane, whose frame rows (from the third line to the
# first blank one) hold labels, not figures ("0…" of "layer.0.grad")
flame = len(sys.argv) > 3 and sys.argv[3] == "flame"
UNIT = r"(ns|µs|us|ms|s|%|pp|B|KB|MB|GB)"
WHOLE = re.compile(r"^(\(absent\)|[+-]?[0-9][0-9.]*" + UNIT + r"?|[^0-9]*[A-Za-z)\]%:]|[\u2500-\u259f]+|-+"
                   r"|[^0-9]*[\u2026~])$")    # a name elided at its end: no figure in it
bad = []
sys.stdin.reconfigure(encoding="utf-8", errors="replace")
sys.stdout.reconfigure(encoding="utf-8", errors="replace")
lines = sys.stdin.read().split("\n")[:-1]
if split < 0:
    mid = (width - 1) // 2
    # the divider on the body's first rows ("x": ACS without its charset)
    split = mid if len(lines) > 5 and all(len(l) > mid and l[mid] in "\u2502|x"
                                          for l in lines[1:5]) else 0
frames = set()
if flame:       # each flame: the rows after its breadcrumb ("all  [..."), to a blank one
    for side in ([(0, split), (split + 1, width)] if split else [(0, width)]):
        inside = False
        for i in range(len(lines)):
            part = lines[i][side[0]:side[1]].strip()
            if part.startswith(("all  [", "[thread ")):
                inside = True
                continue
            if not part or part.startswith("frames "):
                inside = False
            if inside:
                frames.add((i, side))
for n, line in enumerate(lines, 1):
    if any(i == n - 1 for i, _ in frames):
        line = "".join(" " if any(i == n - 1 and a <= k < b for i, (a, b) in frames) else ch
                       for k, ch in enumerate(line))
    line = line.ljust(width)
    # a figure cut short: a number standing alone whose end is an ellipsis
    # ("27.1…"), or an ellipsis then digits and a unit ("…7 ms"); not a
    # name's label ("0…d" of "layer.0.grad", "…3.self_attn")
    if re.search(r"(^|[ (=+-])[0-9][0-9.]*(…|\.\.)(?=\s|$)|(…|[^.]\.\.)[0-9.]+ ?"
                 r"(ns|µs|us|ms|s|%)(?=\s|$)", line):
        bad.append((n, line, "an elided figure"))
    panes = [line[:split], line[split + 1:]] if split else [line]
    for p in panes:
        if not p or p[-1] == " ":
            continue
        toks = p.split()
        last = toks[-1]
        prev = toks[-2] if len(toks) > 1 else ""
        if re.fullmatch(r"[mµun]", last) and re.fullmatch(r"[+-]?[0-9.]+", prev):
            bad.append((n, line, "a unit cut: " + prev + " " + last))
        elif (prev in ("share", "total", "self", "min", "mean", "max", "std", "base", "new")
              and re.fullmatch(r"[+-]?[0-9.]+", last)):
            bad.append((n, line, "a figure cut: " + prev + " " + last))
        elif (re.fullmatch(r"[+-]?[0-9.]+", last) and p.rfind("(") > p.rfind(")")):
            bad.append((n, line, "a figure in an open parenthesis: " + last))
        elif not WHOLE.match(last) or re.search(r"(p=|^share|^x)$", last):
            bad.append((n, line, "cut: " + last))
for n, line, why in bad:
    print("line %d: %s\n  %s" % (n, why, line.rstrip()))
sys.exit(1 if bad else 0)
