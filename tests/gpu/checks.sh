#!/bin/sh
# checks.sh - PRISM's GPU checks on samples/cuda_train, for a machine WITH an
# NVIDIA GPU; one phase of tests/gpu/run_gpu_checks.sh (which builds first:
# make all and $B/bin/cuda_train_plain, -DCUDA_TRAIN_PLAIN).  By hand, from
# the repository root after a build:
#
#   KEEP=/tmp/gc sh tests/gpu/checks.sh
#   STEPS=200 SIZE=2048 RUNS=5 sh tests/gpu/checks.sh
#
# What it does:
#   1. counts: runs both under prism-run and checks that every kernel, copy
#      and memset the sample launched is in the profile (the sample prints
#      what it issued), that runtime API records sit on a CPU thread's
#      stream, that NVTX ranges became regions, and that gpu.status is "ok";
#   2. the warm-up/active window: only the active steps' kernels recorded;
#   3. analysis: `prism-top analyze` finds the planted cpu_gpu_sync stall,
#      and a run with --leak-mb reports GPU memory growth;
#   4. overhead: median loop time over RUNS runs with and without
#      profiling (target <= 2 %), and the host time of one kernel launch
#      with and without profiling, and under the bare CUPTI client
#      ($B/lib/libcupti_bare.so, tests/gpu/cupti_bare.c: CUPTI's own cost
#      with PRISM's kinds); target: PRISM <= 1 us a launch beyond CUPTI's
#      own (without the bare client: <= 1 us added in all), printed.
# Every run is under timeout(1) (RUN_S seconds, default 60).  The profiles
# stay in KEEP (default: a temporary folder, removed).
# Exit status: 0 all checks passed, 1 a check failed, 77 no GPU here.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
STEPS=${STEPS:-100}
SIZE=${SIZE:-1024}
RUNS=${RUNS:-5}
LAUNCHES=${LAUNCHES:-20000}
RUN_S=${RUN_S:-60}
if [ -n "${KEEP:-}" ]; then
    T=$KEEP
    mkdir -p "$T" || exit 1
else
    T=$(mktemp -d "${TMPDIR:-/tmp}/prism-gpu-XXXXXX")
    trap 'rm -rf "$T"' EXIT
fi
failed=0

say() { printf '%s\n' "$*"; }
check() {   # check NAME CONDITION-EXIT-STATUS DETAIL
    if [ "$2" -eq 0 ]; then say "PASS  $1${3:+  ($3)}"; else say "FAIL  $1${3:+  ($3)}"; failed=1; fi
}
field() {   # field NAME LINE: the value of NAME=... in a "cuda_train:" line
    printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
median() { sort -n | awk '{v[NR]=$1} END {if (NR==0) print 0; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
count() {   # count FILE TYPE: GPU records of that type in the profile
    "$B/bin/prism-top" dump "$1" | grep -c "^gpu .* $2 dur "
}
t() { timeout -k 5 "$RUN_S" "$@"; }     # every run: bounded

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    say "no NVIDIA GPU here (nvidia-smi -L failed): nothing checked"
    exit 77
fi
for f in "$B/bin/cuda_train" "$B/bin/cuda_train_plain" "$B/bin/prism-run"; do
    [ -x "$f" ] || { say "FAIL  $f was not built"; exit 1; }
done
RUN="t $B/bin/prism-run"

say "== counts: instrumented program through prism-run"
line=$($RUN -o "$T/train.cbor" -- "$B/bin/cuda_train" --steps 20 --size "$SIZE" --nvtx \
       --launch-bench 1000 | grep '^cuda_train:')
say "$line"
dump="$T/train.txt"
"$B/bin/prism-top" dump "$T/train.cbor" >"$dump"
status=$(sed -n 's/^info    gpu.status = "\(.*\)"$/\1/p' "$dump" | tail -n 1)
say "gpu.status: $status"
case $status in ok:*) ok=0 ;; *) ok=1 ;; esac
check "gpu.status is ok" $ok
for t in kernel memcpy memset; do
    want=$(field "$t" "$(printf '%s' "$line" | sed 's/kernels=/kernel=/')")
    got=$(count "$T/train.cbor" "$t")
    [ "$got" = "$want" ]; check "every $t recorded" $? "launched $want, recorded $got"
done
apis=$(grep -c '^gpu .* api dur .* cudaLaunchKernel' "$dump")
[ "$apis" -gt 0 ]; check "cudaLaunchKernel API records" $? "$apis"
! grep '^gpu .* api dur ' "$dump" | grep -q ' stream 0 '
check "API records on a CPU thread's stream" $?
layers=$(grep -c '^region .* enter layer$' "$dump")
[ "$layers" -gt 0 ]; check "NVTX ranges became regions" $? "$layers enter events named layer"
! grep -q '^dropped .* gpu total [1-9]' "$dump"
check "no GPU records dropped" $?

say "== counts: unmodified program through prism-run (injection)"
line=$($RUN -o "$T/plain.cbor" -- "$B/bin/cuda_train_plain" --steps 20 --size "$SIZE" \
       | grep '^cuda_train:')
say "$line"
for t in kernel memcpy memset; do
    want=$(field "$t" "$(printf '%s' "$line" | sed 's/kernels=/kernel=/')")
    got=$(count "$T/plain.cbor" "$t")
    [ "$got" = "$want" ]; check "injected: every $t recorded" $? "launched $want, recorded $got"
done

say "== warm-up / active window"
line=$($RUN -o "$T/window.cbor" --warmup-steps 5 --active-steps 10 -- "$B/bin/cuda_train" \
       --steps 30 --size 256 --layers 4 | grep '^cuda_train:')
got=$(count "$T/window.cbor" kernel)
[ "$got" -eq 120 ]; check "only the 10 active steps' kernels" $? "want 10 x 12 = 120, got $got"

say "== analysis"
"$B/bin/prism-top" analyze "$T/train.cbor" --format json -o "$T/analyze.json"
grep -q '"type": *"cpu_gpu_sync"' "$T/analyze.json"
check "analyze finds the cpu_gpu_sync stall" $?
"$B/bin/prism-top" analyze "$T/train.cbor" | sed -n '/[Bb]ottleneck/,$p' | head -n 20
$RUN -o "$T/leak.cbor" --memory-ms 10 -- "$B/bin/cuda_train" --steps 40 --size 256 \
    --leak-mb 32 >/dev/null
"$B/bin/prism-top" analyze "$T/leak.cbor" --format json -o "$T/leak.json"
grep -q '"type": *"memory_leak"' "$T/leak.json"
check "analyze finds the 32 MB/step GPU leak" $?
allocs=$(count "$T/leak.cbor" alloc)
[ "$allocs" -ge 40 ]; check "cudaMalloc recorded as allocations" $? "$allocs alloc records"

say "== overhead ($RUNS runs each, $STEPS steps of size $SIZE)"
: >"$T/base" ; : >"$T/prof"
i=0
while [ $i -lt "$RUNS" ]; do
    l=$(t "$B/bin/cuda_train" --steps "$STEPS" --size "$SIZE" | grep '^cuda_train:')
    field loop_ms "$l" >>"$T/base"
    l=$($RUN -o "$T/ovh.cbor" -- "$B/bin/cuda_train" --steps "$STEPS" --size "$SIZE" \
        | grep '^cuda_train:')
    field loop_ms "$l" >>"$T/prof"
    i=$((i + 1))
done
base=$(median <"$T/base")
prof=$(median <"$T/prof")
pct=$(awk -v a="$base" -v b="$prof" 'BEGIN { printf "%.2f", (b - a) / a * 100 }')
say "loop time: unprofiled $base ms, profiled $prof ms (medians): overhead $pct %"
awk -v p="$pct" 'BEGIN { exit !(p <= 2.0) }'; check "wall-time overhead <= 2 %" $? "$pct %"
# host time per launch: unprofiled, under PRISM, and under the bare CUPTI
# client with the same kinds (tests/gpu/cupti_bare.c: CUPTI's own cost),
# 3 interleaved rounds, medians
BARE=$B/lib/libcupti_bare.so
CUPTI_LIB=${CUPTI_LIB:-$(ls "${CUDA_HOME:-/usr/local/cuda}"/targets/*/lib/libcupti.so.1[0-9] \
    "${CUDA_HOME:-/usr/local/cuda}"/lib64/libcupti.so.1[0-9] 2>/dev/null | head -n 1)}
LB="--steps 1 --size 64 --launch-bench $LAUNCHES"
: >"$T/lb"; : >"$T/lp"; : >"$T/lc"
for r in 1 2 3; do
    # shellcheck disable=SC2086
    field launch_host_ns "$(t "$B/bin/cuda_train" $LB | grep '^cuda_train:')" >>"$T/lb"
    # shellcheck disable=SC2086
    field launch_host_ns "$($RUN -o "$T/launch.cbor" -- "$B/bin/cuda_train" $LB |
                           grep '^cuda_train:')" >>"$T/lp"
    if [ -f "$BARE" ]; then
        # shellcheck disable=SC2086
        v=$(field launch_host_ns "$(t env CUDA_INJECTION64_PATH="$BARE" \
            CUPTI_BARE_LIB="$CUPTI_LIB" CUPTI_BARE_KINDS=all "$B/bin/cuda_train" $LB |
            grep '^cuda_train:')")
        [ -n "$v" ] && echo "$v" >>"$T/lc"
    fi
done
nb=$(median <"$T/lb")
np=$(median <"$T/lp")
nc=
[ -s "$T/lc" ] && nc=$(median <"$T/lc")
added=$(awk -v a="$nb" -v b="$np" 'BEGIN { printf "%.1f", b - a }')
say "host time per launch: unprofiled $nb ns, profiled $np ns: added $added ns"
if [ -n "$nc" ]; then
    # CUPTI's own cost is not PRISM's to cut: the target is what PRISM adds to it
    own=$(awk -v c="$nc" -v b="$np" 'BEGIN { printf "%.1f", b - c }')
    say "  the bare CUPTI client (same kinds, no PRISM): $nc ns; PRISM beyond it: $own ns"
    awk -v d="$own" 'BEGIN { exit !(d <= 1000) }'
    check "host time per launch <= 1 us beyond CUPTI's own" $? "$own ns"
else
    awk -v d="$added" 'BEGIN { exit !(d <= 1000) }'
    check "host time per launch <= 1 us added (no bare CUPTI client built)" $? "$added ns"
fi

if [ $failed -eq 0 ]; then say "all GPU checks passed"; else say "some GPU checks FAILED"; fi
exit $failed
