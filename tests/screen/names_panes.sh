# Screen test: the explorer's name columns keep what tells rows apart
# (issue 34).  A torch.profiler trace of a 12-layer model whose module
# names differ only in the layer index (encoder.layers.N.self_attn...,
# forward and "(backward)"), every leaf the same time, so two rows that
# read the same are two names cut alike.  At each size of the terminal
# matrix from 40x12 to 300x100 and at 120x40, one profile and two side by
# side (or stacked): the Tree fully expanded, Ops and the Summary's top
# operations, typed key by key; tests/screen/apart.py checks no two
# sibling rows, operations or top operations render the same.  At 120x40
# the layer index and "(backward)" of the backward rows show.
. tests/screen/lib.sh
T="$TMPD/layers.json"
python3 - "$T" <<'PY'
import json, sys
ev = [{"name": "thread_name", "ph": "M", "ts": 0, "pid": 1, "tid": 1, "args": {"name": "main"}}]
def x(name, ts, dur):
    ev.append({"name": name, "ph": "X", "cat": "user_annotation", "ts": ts, "dur": dur,
               "pid": 1, "tid": 1})
ts = 100
for s in range(3):
    t0 = ts
    t = ts + 10
    for i in range(12):                 # forward: layer > attention > out_proj, linear1
        l0 = t
        t += 1
        x("encoder.layers.%d.self_attn.out_proj" % i, t + 1, 100)
        x("encoder.layers.%d.self_attn" % i, t, 102)
        t += 103
        x("encoder.layers.%d.linear1" % i, t, 100)
        t += 101
        x("encoder.layers.%d" % i, l0, t - l0)
    x("TinyTransformer.forward", ts + 5, t - ts)
    t += 10
    b0 = t
    for i in reversed(range(12)):       # backward: flat, under one parent
        x("encoder.layers.%d.linear1 (backward)" % i, t, 100)
        t += 101
        x("encoder.layers.%d.self_attn.out_proj (backward)" % i, t, 100)
        t += 101
    x("backward", b0 - 1, t - b0 + 2)
    x("ProfilerStep#%d" % (s + 1), t0, t - t0 + 20)
    ts = t + 40
ev.append({"name": "end", "ph": "i", "ts": ts + 10, "pid": 1, "tid": 1, "s": "t"})
json.dump({"schemaVersion": 1, "traceEvents": ev}, open(sys.argv[1], "w"))
PY
cp "$T" "$TMPD/again.json"

check() {                               # check KIND MIN WHAT
    screen | python3 tests/screen/apart.py "$1" "$2" > "$TMPD/apart.txt" ||
        fail "$3: $(cat "$TMPD/apart.txt")"
}

for size in 40x12 80x24 120x40 200x50 300x100; do
    cols=${size%x*} rows=${size#*x}
    for files in "$T" "$T $TMPD/again.json"; do
        what="$size, $(echo "$files" | wc -w) file(s)"
        start "$cols" "$rows" "LANG=C.UTF-8 $TOP $files"
        wait_for "\| Summary( \||$)"
        # the Summary's top operations (when the Summary has room for them:
        # 24 rows for one profile, 40 for two)
        n=$(echo "$files" | wc -w)
        if [ "$rows" -ge $((n * 16 + 8)) ]; then
            wait_for "Top operations"
            check summary 3 "$what Summary"
        fi
        type_keys 4
        wait_for "\| Ops( \||$)"
        wait_for "by total"
        check ops 4 "$what Ops"
        type_keys 2
        wait_for "\| Tree( \||$)"
        type_keys e                     # every level open
        wait_for "· "
        check tree 4 "$what Tree"
        # page through the Tree: every screen of it
        for p in 1 2 3 4 5 6; do
            type_keys NPage
            wait_for "\| Tree( \||$)"
            check tree 1 "$what Tree, page $p"
        done
        type_keys q
        wait_for "__EXIT__ 0"
    done
done

# 120x40, two files: the backward rows keep the layer index and the suffix
start 120 40 "LANG=C.UTF-8 $TOP $T $TMPD/again.json"
wait_for "\| Summary( \||$)"
type_keys 2
wait_for "\| Tree( \||$)"
type_keys e
wait_for "· "
type_keys End                           # backward is the last root
for i in 11 10 9; do
    wait_for "(encoder\.layers\.|…)$i\.linear1 \(backward\)"
done
type_keys 4
wait_for "by total"
expect "(encoder\.layers\.|…)[0-9]+\.s(elf_attn)?\.out_proj \(backward\)"
type_keys q
wait_for "__EXIT__ 0"
echo ok
