# Screen test: the Flame on a small transformer's torch.profiler trace
# whose regions share long starts (issue 34): "encoder.layers.N.self_attn"
# and the like under TinyTransformer.forward and backward.  At 120x40: no
# two frames of a row show the same label of 4 columns or more (the start
# they share folds into "…", the layer index stays; shorter ones are what
# fits), zoomed into forward the labels read "…N.self_attn"; the rows below
# the flame list the selected frame's children by whole name with their
# figures, and moving (h/j/k) changes the list or its mark.  80x24 shows the
# part of the list that fits.  Compare mode at 120x40: the two flames
# stack (NEW's title below BASE's), each full width with its list.
. tests/screen/lib.sh
A="$TMPD/a.json" N="$TMPD/b.json"
python3 - "$A" "$N" <<'PY' || fail "traces"
import json, sys
def trace(scale, path):
    ev, t = [], 1000.0
    def span(name, ts, dur):
        ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1,
                   "ts": ts, "dur": dur})
    for step in range(4):
        s0 = t
        f0 = x = t + 5
        for i in range(6):
            for leaf, d in (("self_attn", 300), ("linear1", 120), ("linear2", 110)):
                dd = d * scale * (1 + 0.1 * i)
                span("encoder.layers.%d.%s" % (i, leaf), x, dd)
                x += dd + 3
        span("TinyTransformer.forward", f0, x - f0 + 2)
        b0 = y = x + 10
        for i in reversed(range(6)):
            for leaf, d in (("linear2", 220), ("linear1", 240), ("self_attn", 600)):
                dd = d * scale * (1 + 0.1 * i)
                span("encoder.layers.%d.%s (backward)" % (i, leaf), y, dd)
                y += dd + 3
        span("backward", b0, y - b0 + 2)
        span("ProfilerStep#%d" % step, s0, y - s0 + 20)
        t = y + 40
    json.dump({"schemaVersion": 1, "traceEvents": ev}, open(path, "w"))
trace(1.0, sys.argv[1])
trace(1.3, sys.argv[2])
PY

# labels of each frame row (screen rows 3 on, frames split at '|' and '>'
# without colour): any two of 4 columns or more that are the same
dup_labels() {
    screen | sed -n '3,$p' | awk '/^ *$/ { exit } { print }' |
        python3 -c '
import re, sys
for n, line in enumerate(sys.stdin):
    seen = set()
    for lab in re.split("[|>*]", line.rstrip("\n")):
        lab = lab.rstrip()
        if len(lab) >= 4 and lab in seen:
            print("row %d: %r twice" % (n + 3, lab))
        seen.add(lab)
'
}

start 120 40 "NO_COLOR=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm $TOP $A"
wait_for "1 Summary"
type_keys 3; wait_for "^ all  \["
wait_for "^ frames under backward \(18\) +total +share +calls"
expect "^ encoder\.layers\.3\.self_attn \(backward\) +[0-9.]+ ?[^ ]*s +[0-9.]+% +4 calls"
expect "^ encoder\.layers\.0\.linear1 \(backward\) "
d=$(dup_labels); [ -z "$d" ] || fail "labels alike: $d"
expect "…5\.s…rd\)"                                 # the layer index, not "enco…"
expect_not "enco…"
# j: the widest child, a leaf: the list shows it among its siblings, marked
type_keys j; wait_for "^>encoder\.layers\.[0-9]\.self_attn \(backward\) "
m1=$(screen | grep "^>encoder")
type_keys h; wait_for "^>encoder\.layers\.[0-9]\.linear[12] \(backward\) "
[ "$(screen | grep "^>encoder")" != "$m1" ] || fail "the mark did not move"
# k, h: forward; its children listed, whole
type_keys k h; wait_for "^ frames under TinyTransformer\.forward \(18\)"
expect "^ encoder\.layers\.5\.self_attn +[0-9.]+ ?[^ ]*s +[0-9.]+% +4 calls"
expect_not "^>encoder"
# zoomed into forward: "…N.self_attn", and still no two alike
type_keys Enter; wait_for "^ all > TinyTransformer\.forward  \["
wait_for "…4\.self_attn"
d=$(dup_labels); [ -z "$d" ] || fail "labels alike, zoomed: $d"
# 80x24: the part of the list that fits, said so in its header
resize 80 24
wait_for "^ frames under .*\(1-[0-9]+ of 18\)"
expect "^ encoder\.layers\.0\.linear1 "
# too small, then back: nothing breaks
resize 40 12; wait_for "TinyTransformer|all"
resize 120 40; wait_for "^ frames under TinyTransformer\.forward \(18\)"
type_keys q; wait_for "__EXIT__ 0"

# compare at 120x40: stacked, each side full width with its list
start 120 40 "TERM=xterm-256color $TOP $A $N"
wait_for "1 Summary"
type_keys 3; wait_for "\| Flame"
wait_for "^. NEW  b\.json"
base=$(screen | grep -n "^. BASE a\.json" | cut -d: -f1)
new=$(screen | grep -n "^. NEW  b\.json" | cut -d: -f1)
[ -n "$base" ] && [ -n "$new" ] && [ "$new" -gt "$base" ] || fail "not stacked: BASE at $base, NEW at $new"
[ "$(screen | grep -Ec "^ all  \[")" -eq 2 ] || fail "not two flames at the line start"
[ "$(screen | grep -Ec "^ frames under backward ")" -eq 2 ] || fail "not two lists"
[ "$(screen | grep -Ec "^ encoder\.layers\.0\.self_attn \(backward\) .* +\+[0-9.]+ ?[^ ]*s \+30\.0%")" -eq 2 ] ||
    fail "the lists lack whole names with their change"
expect "…5\.s…rd\)"
type_keys q; wait_for "__EXIT__ 0"
echo ok
