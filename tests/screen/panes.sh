# Screen test: the panes on a deterministic reference profile (the
# project's writer; two threads, GPU records): the Tree against an expected
# screen (volatile parts masked), drill-down, sort, search, a jump from a
# bottleneck to its region, flame zoom and breadcrumb, the GPU and Memory
# panes.  The Tree: reversed sort (r), the filter (\\: matches and their
# ancestors, all open; clearing brings the expansion back), a jump from
# Ops shown with its parents above it, Esc back; at 200 columns the extra
# columns with figures aligned by display width ("µs" is one column less
# than its bytes); at 40 columns names elided in the middle.
# PRISM_UPDATE_GOLDEN=1 rewrites the expected screen.
. tests/screen/lib.sh
REF="$TMPD/ref.cbor"
"$B/bin/refprofile" -o "$REF" >/dev/null || fail "refprofile"
EXP=tests/screen/expected/tree_100x30.txt
start 100 30 "TERM=xterm $TOP $REF"
wait_for "1 Summary"
keys 2; wait_for "\| Tree \|"
if [ "${PRISM_UPDATE_GOLDEN:-}" = 1 ]; then
    masked > "$EXP"
else
    masked | diff -u "$EXP" - || fail "the Tree differs from $EXP"
fi
# drill-down: open backward, its children show; close it again
keys g; wait_for "\| Tree \| step \|"
keys j j; wait_for "\| Tree \| step/backward \|"
keys Right; wait_for "layer\.[0-9]\.grad"
keys Left; wait_gone "layer\.[0-9]\.grad"
# sort by self: the loader's decode_batch (all self time) comes first
keys s; wait_for "by self"
expect "^ [.·] decode_batch"
# r reverses the sort: the least self time first, the header says so
keys r; wait_for "by self ↑"
expect "sorted by self, ascending"
keys r; wait_for "by self ↓"
expect "^ [.·] decode_batch"
# the filter: matching rows and their ancestors, all open; cleared: as before
keys s s s; wait_for "by total ↓"
type_keys '\' a t t e n Enter
wait_for "filter: atten \(10 rows\)"
expect "^ +[.·] attention "
expect "^   ▾ forward "
expect_not "data_loading|decode_batch|mlp"
type_keys '\' BSpace BSpace BSpace BSpace BSpace Enter
wait_for "filter cleared"
expect "^   ▸ backward "
expect "^   ▸ forward "
expect "^ [.·] decode_batch"
expect_not "filter:"
# search: n moves the selection to the next match
keys / a t t e n t Enter
keys n; wait_for "\| Tree \| step/forward/layer\.[0-9]/attention \|"
# Bottlenecks: Enter jumps to the blamed region in the Tree
keys 7; wait_for "\| Bottlenecks \|"
expect "gpu_idle +HIGH"
# the GPU memory leak (4 MB/step, steady) ranks first: Enter shows memory
expect "memory_leak +HIGH"
keys Enter; wait_for "Trend LEAK"
keys 7; wait_for "\| Bottlenecks \|"
# gpu_idle blames the training thread's region that launches nothing (not
# the loader thread's decode_batch beside it)
keys j Enter; wait_for "\| Tree \| step/backward \|"
# Flame: zoom into the selection, the breadcrumb shows the path; Esc zooms out
# a level at a time
keys 3; wait_for "\| Flame"
keys Enter; wait_for "all > step > backward  \["
keys Escape; wait_for "all > step  \["          # out one level, then to all frames
keys Escape; wait_for "^ all  \["
# GPU and Memory panes
keys 6; wait_for "Busy .* idle 97\.5%"
expect "gemm_kernel_128x256"
keys 5; wait_for "GPU used +peak"      # the series with the worse verdict
keys g; wait_for "Host RSS +peak"
keys 4; wait_for "\| Ops \|"
keys q; wait_for "__EXIT__ 0"

# a jump from Ops to a row above the Tree's view: its parents show above it
BIG="$TMPD/big.cbor"
"$B/bin/refprofile" -o "$BIG" --layers 12 >/dev/null || fail "refprofile"
start 100 24 "TERM=xterm $TOP $BIG"
wait_for "1 Summary"
keys 2; wait_for "\| Tree \|"
keys e G; wait_for "\| Tree \| decode_batch \|"
keys 4; wait_for "\| Ops \|"
type_keys / l a y e r . 5 . g r a d Enter
keys Enter; wait_for "\| Tree \| step/backward/layer\.5\.grad \|"
sel=$(screen | grep -En "^ +[.·] layer\.5\.grad " | cut -d: -f1)
par=$(screen | grep -En "^   ▾ backward " | cut -d: -f1)
root=$(screen | grep -En "^ ▾ step " | cut -d: -f1)
[ -n "$sel" ] && [ -n "$par" ] && [ -n "$root" ] && [ "$root" -lt "$par" ] && [ "$par" -lt "$sel" ] ||
    fail "layer.5.grad without its parents above it (rows $root $par $sel)"
keys Escape; wait_for "\| Ops \|"                  # the frame's back, not eaten by the Tree
# the mouse (SGR reports): a click selects a row, a double click folds it,
# the wheel scrolls three rows; click BUTTON ROW [N] as in ops.sh
click() {
    seq=$(printf '\033[<%d;10;%dM\033[<%d;10;%dm' "$1" "$2" "$1" "$2")
    [ "${3:-1}" = 2 ] && seq="$seq$seq"
    tm send-keys -t "$S" -l "$seq"
}
keys 2; wait_for "\| Tree \| step/backward/layer\.5\.grad \|"
row=$(screen | grep -En "^     [.·] layer\.4\.grad " | cut -d: -f1)
[ -n "$row" ] || fail "no layer.4.grad row"
click 0 "$row"; wait_for "\| Tree \| step/backward/layer\.4\.grad \|"
row=$(screen | grep -En "^   ▾ backward " | cut -d: -f1)
click 0 "$row" 2; wait_for "^   ▸ backward "
expect "\| Tree \| step/backward \|"
keys e; wait_for "expanded all"
keys g; wait_for "\| Tree \| step \|"
sixth=$(screen | sed -n 6p)
tm send-keys -t "$S" -l "$(printf '\033[<65;10;8M')"      # wheel down
wait_for "^$(printf '%s' "$sixth" | sed 's/[].[*^$\\/]/\\&/g')\$"
[ "$(screen | sed -n 3p)" = "$sixth" ] || fail "the wheel did not scroll three rows"
keys q; wait_for "__EXIT__ 0"

# 200 columns: more columns, a wide bar, figures aligned by display width
start 200 50 "TERM=xterm LANG=C.UTF-8 $TOP $REF"
wait_for "1 Summary"
keys 2 e; wait_for "expanded all"
expect "total +self +calls +% +mean +%par +step avg +step max"
expect "█{30}"
screen | python3 -c '
import re, sys
sys.stdin.reconfigure(encoding="utf-8")
lines = sys.stdin.read().split("\n")
head = next(l for l in lines if " total " in l)
ends = {m.group(1): m.end() for m in re.finditer(r"(total|self|mean)\b", head)}
fig = re.compile(r"[0-9.]+ (?:ns|µs|us|ms|s)\b")
rows = [l for l in lines if l.startswith(" ") and fig.search(l) and ("▾" in l or "·" in l)]
assert len(rows) > 15, rows
for l in rows:
    got = [m.end() for m in fig.finditer(l)][:3]
    assert got == [ends["total"], ends["self"], ends["mean"]], (got, ends, l)
' || fail "figures not aligned under their titles at 200 columns"
keys q; wait_for "__EXIT__ 0"

# 40 columns without UTF-8: a long name's words shortened, then its middle elided with "..",
# figures whole; 60 columns with UTF-8: its words shortened from the left
# ("o.param_groups..."), the last word whole
LONG="$TMPD/long.json"
cat > "$LONG" <<'JSON'
{"schemaVersion": 1, "traceEvents": [
{"name": "ProfilerStep#1", "ph": "X", "cat": "user_annotation", "ts": 100, "dur": 1000, "pid": 1, "tid": 1},
{"name": "optimizer.param_groups.0.fused_adam_step", "ph": "X", "cat": "user_annotation", "ts": 110, "dur": 500, "pid": 1, "tid": 1}
]}
JSON
start 40 24 "TERM=xterm LANG=C LC_ALL=C $TOP --no-follow $LONG"
wait_for "\| Summary( \||$)"
keys 2; wait_for "\| Tree"
wait_for "^ \. o\.p\.0\.f\.\.am_step +500\.0 us +500\.0 us$"
screen | python3 tests/screen/whole.py 40 0 || fail "a figure cut at 40 columns"
keys q; wait_for "__EXIT__ 0"
start 60 24 "TERM=xterm LANG=C.UTF-8 $TOP --no-follow $LONG"
wait_for "\| Summary( \||$)"
keys 2; wait_for "\| Tree"
wait_for "^ · o\.param_groups\.0\.fused_adam_step +500\.0 µs +500\.0 µs$"   # words shortened from the left
keys q; wait_for "__EXIT__ 0"
echo ok
