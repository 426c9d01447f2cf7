# Screen test: the panes on a deterministic reference profile (the
# project's writer; two threads, GPU records): the Tree against an expected
# screen (volatile parts masked), drill-down, sort, search, a jump from a
# bottleneck to its region, flame zoom and breadcrumb, the GPU and Memory
# panes.  PRISM_UPDATE_GOLDEN=1 rewrites the expected screen.
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
keys j Enter; wait_for "\| Tree \| decode_batch \|"
# Flame: zoom into the selection, the breadcrumb shows the path; Esc zooms out
keys 3; wait_for "\| Flame"
keys Enter; wait_for "all > decode_batch  \["
keys Escape; wait_for "^ all  \["
# GPU and Memory panes
keys 6; wait_for "Busy .* idle 97\.5%"
expect "gemm_kernel_128x256"
keys 5; wait_for "GPU used +peak"      # the series with the worse verdict
keys g; wait_for "Host RSS +peak"
keys 4; wait_for "\| Ops \|"
keys q; wait_for "__EXIT__ 0"
echo ok
