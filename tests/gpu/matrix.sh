#!/bin/sh
# matrix.sh - where PRISM's overhead on a GPU comes from: the same runs with
# one part of PRISM on at a time, interleaved, medians and the ratio to the
# unprofiled runs of the same round.  A phase of run_gpu_checks.sh
# (PHASES=matrix); by hand after a build, from the repository root:
#
#   PY=python3 REPS=3 STEPS=120 OUTF=/tmp/matrix.txt sh tests/gpu/matrix.sh
#
# Rows (torch_train.py, ms per steady step; prism-run for every PRISM row):
#   plain          no PRISM
#   session        the session, CPU sampling, memory: no CUPTI, no torch hooks
#   torch-hooks    + the zero-code PyTorch regions (prism.torch.auto)
#   cupti-kernels  CUPTI: kernels, copies, memsets only (no torch hooks)
#   cupti-runtime  + runtime API records (kernel -> launching thread/region)
#   cupti-all      every kind PRISM records by default (no torch hooks)
#   full           everything: what `prism-run python train.py` does
#   full-window    everything, CUPTI's activity on steps 5-14 only (the
#                  steady steps 20+ run with its kinds off): leaving it on
#   torch.profiler no PRISM: torch.profiler (CPU and CUDA activities) over
#                  the same steady steps, the peer's cost measured beside
# then samples/cuda_train --launch-bench: host ns per cudaLaunchKernel,
# plain, under the same CUPTI kind sets, and under the bare CUPTI client
# (tests/gpu/cupti_bare.c, no PRISM: CUPTI's own cost; PRISM's per launch
# is its row less the bare row of the same kinds).
# Each command runs under timeout(1) (RUN_S, default 60).
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
PY=${PY:-python3}
REPS=${REPS:-2}
STEPS=${STEPS:-120}
RUN_S=${RUN_S:-60}
LAUNCHES=${LAUNCHES:-20000}
OUTF=${OUTF:-/dev/stdout}
T=$(mktemp -d "${TMPDIR:-/tmp}/prism-matrix-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
TR=tests/gpu/torch_train.py
RUN="$B/bin/prism-run"

# row NAME ENV...: the environment of a PRISM row ('-' for plain)
ROWS="plain:-
session:PRISM_COLLECT_GPU=0 PRISM_PY_TORCH=0
torch-hooks:PRISM_COLLECT_GPU=0
cupti-kernels:PRISM_PY_TORCH=0 PRISM_CUPTI_KINDS=memcpy,memset
cupti-runtime:PRISM_PY_TORCH=0 PRISM_CUPTI_KINDS=memcpy,memset,runtime
cupti-all:PRISM_PY_TORCH=0
full:
full-window:PRISM_WARMUP_STEPS=5 PRISM_ACTIVE_STEPS=10
torch.profiler:@"

one() {     # one NAME ENV CMD...: the RESULT field steady_ms_per_step
    name=$1 envs=$2
    shift 2
    if [ "$envs" = - ]; then
        timeout -k 5 "$RUN_S" "$@" >"$T/out" 2>&1
    elif [ "$envs" = @ ]; then      # torch.profiler, no PRISM
        timeout -k 5 "$RUN_S" "$@" --torch-profiler "$T/tp.json" >"$T/out" 2>&1
    else
        # shellcheck disable=SC2086
        timeout -k 5 "$RUN_S" env $envs "$RUN" -o "$T/$name.cbor" -- "$@" >"$T/out" 2>&1
    fi
    sed -n 's/^RESULT .*"steady_ms_per_step": \([0-9.]*\).*/\1/p' "$T/out" | tail -n 1
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

r=0
while [ $r -lt "$REPS" ]; do
    printf '%s\n' "$ROWS" | while IFS=: read -r name envs; do
        # shellcheck disable=SC2086
        v=$(one "$name" "$envs" "$PY" "$TR" --steps "$STEPS" ${TORCH_ARGS:-})
        [ -n "$v" ] && echo "$v" >>"$T/t.$name"
    done
    r=$((r + 1))
done
{
    echo "== torch_train.py, $STEPS steps, $REPS interleaved rounds: ms per steady step (median)"
    base=$(median <"$T/t.plain" 2>/dev/null)
    printf '%s\n' "$ROWS" | while IFS=: read -r name envs; do
        m=$(median <"$T/t.$name" 2>/dev/null)
        [ -n "$m" ] || { printf '  %-14s no result\n' "$name"; continue; }
        printf '  %-14s %8.3f ms  x%.3f   (%s)\n' "$name" "$m" \
            "$(awk -v a="$base" -v b="$m" 'BEGIN { print (a > 0 ? b / a : 0) }')" \
            "$(tr '\n' ' ' <"$T/t.$name")"
    done
} >>"$OUTF"

# host ns per launch, samples/cuda_train
LROWS="plain:-
cupti-kernels:PRISM_CUPTI_KINDS=memcpy,memset
cupti-runtime:PRISM_CUPTI_KINDS=memcpy,memset,runtime
cupti-all:
no-gpu:PRISM_COLLECT_GPU=0
bare-kernels:!CUPTI_BARE_KINDS=kernel
bare-all:!CUPTI_BARE_KINDS=all"
BARE=$B/lib/libcupti_bare.so
CUPTI_LIB=${CUPTI_LIB:-$(ls "${CUDA_HOME:-/usr/local/cuda}"/targets/*/lib/libcupti.so.1[0-9] \
    "${CUDA_HOME:-/usr/local/cuda}"/lib64/libcupti.so.1[0-9] 2>/dev/null | head -n 1)}
r=0
while [ $r -lt 3 ]; do
    printf '%s\n' "$LROWS" | while IFS=: read -r name envs; do
        if [ "$envs" = - ]; then
            l=$(timeout -k 5 "$RUN_S" "$B/bin/cuda_train" --steps 1 --size 64 \
                --launch-bench "$LAUNCHES" 2>/dev/null | grep '^cuda_train:')
        elif [ "${envs#!}" != "$envs" ]; then       # the bare client, no PRISM
            [ -f "$BARE" ] || continue
            # shellcheck disable=SC2086
            l=$(timeout -k 5 "$RUN_S" env ${envs#!} CUDA_INJECTION64_PATH="$BARE" \
                CUPTI_BARE_LIB="$CUPTI_LIB" "$B/bin/cuda_train" --steps 1 --size 64 \
                --launch-bench "$LAUNCHES" 2>/dev/null | grep '^cuda_train:')
        else
            # shellcheck disable=SC2086
            l=$(timeout -k 5 "$RUN_S" env $envs "$RUN" -o "$T/l.cbor" -- "$B/bin/cuda_train" \
                --steps 1 --size 64 --launch-bench "$LAUNCHES" 2>/dev/null | grep '^cuda_train:')
        fi
        echo "$l" | sed -n 's/.*launch_host_ns=\([0-9.]*\).*/\1/p' >>"$T/l.$name"
    done
    r=$((r + 1))
done
{
    echo "== cuda_train --launch-bench $LAUNCHES: host ns per cudaLaunchKernel (median of 3)"
    base=$(median <"$T/l.plain")
    printf '%s\n' "$LROWS" | while IFS=: read -r name envs; do
        m=$(median <"$T/l.$name")
        [ -n "$m" ] || { printf '  %-14s no result\n' "$name"; continue; }
        printf '  %-14s %9.1f ns  added %8.1f ns\n' "$name" "$m" \
            "$(awk -v a="$base" -v b="$m" 'BEGIN { print b - a }')"
    done
} >>"$OUTF"
