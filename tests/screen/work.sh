# Screen test: work counters.  A training loop with a planted memory-bound
# op ("normalize", 3 FLOP per 8 bytes by its flops/bytes counters): the
# Bottlenecks pane lists memory_bound, and the Tree's details of the region
# give its work and intensity.
. tests/screen/lib.sh
P=$(profile t --memory-bound-mb 8)
start 110 34 "$TOP $P"
wait_for "1 Summary"
keys 7; wait_for "\| Bottlenecks \|"
expect "memory_bound +(HIGH|MEDIUM|LOW)"
keys 2; wait_for "\| Tree \|"
keys / n o r m a l Enter
keys n; wait_for "\| Tree \| normalize \|"
wait_for "Work +[0-9.]+ GFLOP over [0-9.]+ GB: 0\.38 FLOP/byte \(ridge 10\)"
keys q; wait_for "__EXIT__ 0"
# the report names it too, and --ridge moves the line
"$TOP" analyze "$P" | grep -q "Memory-bound: 'normalize' does 0.38 FLOP/byte" ||
    fail "analyze: no memory_bound for normalize"
"$TOP" analyze "$P" --ridge 0.1 | grep -q "memory_bound" && fail "--ridge 0.1 still memory-bound"
echo ok
