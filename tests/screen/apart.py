# apart.py KIND MIN: read a prism-top screen (UTF-8) on stdin and check that
# no two rows of a list render the same (issue 34): the rows of the test's
# traces all have different names and the same figures, so two equal rows
# mean two names cut alike.  KIND: tree (siblings: rows at one indentation
# between shallower ones), ops (the operations under the header), summary
# (the Top operations).  Compare mode: each side on its own, side by side
# (split at the divider) or stacked (split at the BASE / NEW label rows).
# Exits 1 naming the rows when two match, or when fewer than MIN rows were
# seen (a test that saw nothing proves nothing).
import re
import sys

kind, least = sys.argv[1], int(sys.argv[2])
lines = sys.stdin.read().split("\n")
body = lines[1:-2]                      # below the tabs, above the status line

sides = []
div = body[0].find("\u2502") if body else -1
if div > 0 and sum(1 for l in body if len(l) > div and l[div] == "\u2502") > len(body) // 2:
    sides = [[l[:div] for l in body], [l[div + 1:] for l in body]]
else:
    cur = []
    for l in body:
        if re.match(r"^. (BASE|NEW ) ", l):
            if cur:
                sides.append(cur)
            cur = []
        else:
            cur.append(l)
    sides.append(cur)

MARK = re.compile(r"^( *)([\u25be\u25b8\u00b7]) (.*)$")


def rows_of(side):
    """The groups of rows that must differ."""
    if kind == "tree":
        groups, stack = [], []          # stack: (indent, rows) open groups
        for l in side:
            if "Details" in l:
                break
            m = MARK.match(l)
            if not m:
                continue
            ind = len(m.group(1))
            while stack and stack[-1][0] > ind:
                groups.append(stack.pop()[1])
            if stack and stack[-1][0] == ind:
                stack[-1][1].append(l.rstrip())
            else:
                stack.append((ind, [l.rstrip()]))
        groups += [g for _, g in stack]
        return groups
    start = None
    for i, l in enumerate(side):
        if (kind == "ops" and re.search(r"by \w+ [\u2193\u2191]", l)) or \
           (kind == "summary" and l.strip() == "Top operations"):
            start = i + 1
            break
    if start is None:
        return []
    rows = []
    for l in side[start:]:
        if not l.strip():
            break
        rows.append(l.rstrip())
    return [rows]


seen, bad = 0, []
for side in sides:
    for g in rows_of(side):
        seen += len(g)
        dup = {r for r in g if g.count(r) > 1}
        bad += sorted(dup)
if bad:
    print("rows alike: " + " | ".join(bad))
    sys.exit(1)
if seen < least:
    print("only %d rows seen (want %d)" % (seen, least))
    sys.exit(1)
print("%d rows apart" % seen)
