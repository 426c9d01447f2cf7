#!/bin/sh
# run_gpu_checks.sh - PRISM's one-shot check on a machine WITH an NVIDIA GPU
# (a lent H100/H200: CUDA 13, PyTorch with CUDA, no network, maybe no
# Debian mirror).  Not part of `make test` (tests/gpu/offline_test.sh is).
# From the repository root (tests/gpu/README.md: prepare, carry, run):
#
#   sh tests/gpu/run_gpu_checks.sh
#   PHASES='build torch report' sh tests/gpu/run_gpu_checks.sh
#
# Phases (PHASES picks some; each command runs under timeout(1), none starts
# after BUDGET seconds (default 420), the report ends by BUDGET+60; a failed
# phase never stops the next):
#   facts   GPU, driver, OS, toolchain, Python/torch, the libcupti files
#           on disk and the one torch loads (tests/gpu/probe.py)
#   deps    DEBS (default gpu-run/debs, from tests/gpu/deps.sh collect)
#           unpacked into DEPS_DIR (tests/gpu/deps.sh unpack): the build
#           then takes its headers and libraries from there, no apt-get
#   build   make -j all (CUPTI backend, prism-run, cuda_train, the Python
#           module), cuda_train_plain (nvcc -DCUDA_TRAIN_PLAIN)
#   checks  tests/gpu/checks.sh: samples/cuda_train under prism-run
#   torch   tests/gpu/torch_train.py five ways, timed: plain, prism-run,
#           python -m prism, prism.torch, torch.profiler (CPU+CUDA); plain again;
#           python -m prism --op-steps 5 (the operator window: its section of
#           analyze, with the MFU)
#   matrix  tests/gpu/matrix.sh: where the overhead comes from (one part
#           of PRISM on at a time, interleaved rounds, medians, ratios)
#   fixtures (only when PHASES names it) short runs kept as test fixtures
#           (tests/fixtures/gpu/): the
#           torch script with AMP, a per-step loss.item() waiting for 6
#           big matmuls, and an 8 MB/step GPU leak, under python -m prism and
#           under torch.profiler (CUDA),
#           samples/cuda_train under prism-run (NVTX ranges)
#   report  prism-top dump/analyze of each profile and trace;
#           tests/gpu/gpu_report.py: kernel counts of PRISM's profiles
#           against torch.profiler's trace over the same steps, timings
# Output in $OUT (default gpu-out/): summary.txt and summary.json (every
# run: name, exit status, seconds; the phases; the verdict), report.txt,
# report.json, logs.tar.gz, profiles.tar.gz (kept for fixtures),
# torch_trace.json.gz.  Exit status: 0 every run exited 0, 1 one did not,
# 77 no GPU here (one line says so; the summary too).
set -u
cd "$(dirname "$0")/../.." || exit 1
G=tests/gpu
T0=$(date +%s)
BUDGET=${BUDGET:-420}
HARD=$((BUDGET + 60))
OUT=${OUT:-gpu-out}
W=${WORK:-/tmp/prism-gpu-check}
DEBS=${DEBS:-gpu-run/debs}
DEPS=${DEPS_DIR:-/tmp/prism-deps}
STEPS=${STEPS:-200}
# the five ways train with AMP (bf16 autocast), as issue 33 asks; the matrix
# keeps float32 (its figures compare across sessions); TORCH_ARGS=" " for none
TORCH_ARGS=${TORCH_ARGS:---amp}
# fixtures: on request (PHASES=...fixtures...): tests/fixtures/gpu/ has them,
# and the whole set no longer fits the budget with the matrix's rows
PHASES=${PHASES:-facts deps build checks matrix torch report}
NPROC=$(nproc 2>/dev/null || echo 8)
B=${B:-build}
if [ -z "${PY:-}" ]; then                 # the python3 that has torch
    for c in "$(command -v python3)" /opt/torch/.venv/bin/python3 /usr/bin/python3; do
        [ -x "$c" ] && "$c" -c 'import torch' >/dev/null 2>&1 && { PY=$c; break; }
    done
    PY=${PY:-python3}
fi
rm -rf "$W"
mkdir -p "$OUT" "$W/logs" "$W/prof" "$W/dump" "$W/res" "$W/ana" || exit 1
OUT=$(cd "$OUT" && pwd)
SUM=$OUT/summary.txt
RUNS=$W/logs/_runs.txt
: >"$SUM"
: >"$RUNS"
: >"$W/phases"

. "$G/lib.sh"

say "== PRISM GPU check $(date -u +%FT%TZ), budget ${BUDGET}s, phases: $PHASES"
trap 'pack' EXIT

# ---- facts, and is there a GPU at all ----------------------------------------
if want facts; then
    phase facts
    facts >"$W/logs/facts.log" 2>&1
    grep -E '^GPU 0|PRETTY|^Linux|nvcc:|: MISSING' "$W/logs/facts.log" | head -8 | sed 's/^/  /' |
        tee -a "$SUM"
    run_t 60 probe "$PY" "$G/probe.py"
    tail -n 1 "$W/logs/probe.log" | cut -c1-400 | tee -a "$SUM"
fi
if [ "${PRISM_GPU_CHECK_NO_GPU:-0}" = 1 ] || ! command -v nvidia-smi >/dev/null 2>&1 ||
   ! timeout 20 nvidia-smi -L >/dev/null 2>&1; then
    say "no NVIDIA GPU here (nvidia-smi -L failed): nothing checked"
    NO_GPU=1
    exit 77
fi

# ---- deps: the carried packages --------------------------------------------------
MK="PYTHON=$PY PY_LIBPY="              # no libpython link check (a venv may lack it)
if want deps && [ -d "$DEBS" ]; then
    phase deps
    run_t 120 deps sh "$G/deps.sh" unpack "$DEBS" "$DEPS"
    tail -n 1 "$W/logs/deps.log" | cut -c1-300 | sed 's/^/  /' | tee -a "$SUM"
fi
[ -d "$DEPS/lib" ] && MK="$MK DEPS_DIR=$DEPS"
# the carried make when the machine has none
command -v make >/dev/null 2>&1 || [ ! -x "$DEPS/root/usr/bin/make" ] ||
    PATH="$DEPS/root/usr/bin:$PATH"

# ---- build -------------------------------------------------------------------------
if want build; then
    phase build "make -j$NPROC $MK all"
    run_t 300 build make -j"$NPROC" $MK all
    say "  warnings: $(grep -c 'warning:' "$W/logs/build.log"); errors: $(grep -c 'error:' "$W/logs/build.log")"
    grep -E 'warning:|error:' "$W/logs/build.log" | head -8 | sed 's/^/    /' | tee -a "$SUM"
    grep -q PRISM_HAVE_CUPTI_HEADERS "$W/logs/build.log" ||
        say "  WARNING: no -DPRISM_HAVE_CUPTI_HEADERS in the build: a CPU-only backend"
    NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
    run_t 120 build_plain "$NVCC" -O2 -std=c++17 -DCUDA_TRAIN_PLAIN -Iinclude \
        -o "$B/bin/cuda_train_plain" samples/cuda_train.cu
    # the bare CUPTI client: CUPTI's own cost per launch, for matrix.sh
    CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
    run_t 60 build_bare ${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -shared -fPIC -I"$CUDA_INC" \
        -o "$B/lib/libcupti_bare.so" tests/gpu/cupti_bare.c -ldl
    for f in "$B/lib/libprism.so" "$B/lib/libprism-inject.so" "$B/bin/prism-run" \
             "$B/bin/prism-top" "$B/bin/cuda_train" "$B/bin/cuda_train_plain" \
             "$B/python/prism/_prism.abi3.so" "$B/lib/libcupti_bare.so"; do
        [ -e "$f" ] && say "  ok      $f" || say "  MISSING $f"
    done
fi

# ---- checks: samples/cuda_train ---------------------------------------------------
if want checks; then
    phase checks
    run_t 150 checks env B="$B" KEEP="$W/prof/checks" STEPS="${GC_STEPS:-100}" \
        SIZE="${GC_SIZE:-1024}" RUNS="${GC_RUNS:-3}" LAUNCHES="${GC_LAUNCHES:-20000}" \
        RUN_S=40 sh "$G/checks.sh"
    grep -E '^(PASS|FAIL|loop time|host time|gpu.status|all GPU|some GPU|no NVIDIA)' \
        "$W/logs/checks.log" | sed 's/^/  /' | tee -a "$SUM"
    for f in "$W"/prof/checks/*.cbor; do
        [ -f "$f" ] && mv "$f" "$W/prof/cuda_$(basename "$f")"
    done
fi

# ---- matrix: where the overhead comes from -------------------------------------------
if want matrix; then
    phase matrix
    run_t 320 matrix env B="$B" PY="$PY" REPS="${MX_REPS:-2}" STEPS="${MX_STEPS:-120}" \
        OUTF="$W/logs/matrix.txt" sh "$G/matrix.sh"
    cat "$W/logs/matrix.txt" 2>/dev/null | tee -a "$SUM"
fi

# ---- fixtures: small real profiles and a trace for make test ---------------------------
if want fixtures; then
    phase fixtures
    mkdir -p "$W/fx"
    FX="--steps 30 --warm 5 --amp --item-every 1 --leak-mb 8 --heavy-mm ${FX_MM:-6}"
    # shellcheck disable=SC2086
    torch_run fx_pym 60 env PYTHONPATH="$B/python" "$PY" -m prism -o "$W/fx/torch_amp_pym.cbor" \
        "$G/torch_train.py" $FX
    # shellcheck disable=SC2086
    torch_run fx_torchprof 60 "$PY" "$G/torch_train.py" $FX \
        --torch-profiler "$W/fx/torch_amp_trace.json.gz"
    run_t 30 fx_cuda "$B/bin/prism-run" -o "$W/fx/cuda_train_nvtx.cbor" -- "$B/bin/cuda_train" \
        --steps 10 --size 256 --nvtx
    for f in "$W"/fx/*; do
        [ -f "$f" ] && say "  $(basename "$f") $(stat -c %s "$f") bytes"
    done
fi

# ---- torch: one training script, five ways ----------------------------------------
if want torch; then
    phase torch "torch_train.py --steps $STEPS $TORCH_ARGS"
    TR=$G/torch_train.py
    PP="PYTHONPATH=$B/python"
    export PYTHONUNBUFFERED=1
    torch_run torch_plain 75 "$PY" "$TR" --steps "$STEPS" $TORCH_ARGS
    torch_run torch_prismrun 75 "$B/bin/prism-run" -o "$W/prof/torch_prismrun.cbor" -- \
        "$PY" "$TR" --steps "$STEPS" $TORCH_ARGS
    torch_run torch_pym 75 env "$PP" "$PY" -m prism -o "$W/prof/torch_pym.cbor" "$TR" \
        --steps "$STEPS" $TORCH_ARGS
    torch_run torch_prismtorch 75 env "$PP" "$PY" "$TR" --steps "$STEPS" $TORCH_ARGS \
        --prism-torch "$W/prof/torch_prismtorch.cbor"
    torch_run torch_torchprof 100 "$PY" "$TR" --steps "$STEPS" $TORCH_ARGS \
        --torch-profiler "$W/prof/torch_trace.json.gz"
    torch_run torch_plain2 75 "$PY" "$TR" --steps "$STEPS" $TORCH_ARGS
    # the operator window (issue 35) on the GPU: operators under modules with
    # their CUDA time, the FLOPs and the MFU against the device's table peak
    torch_run torch_ops 75 env "$PP" "$PY" -m prism -o "$W/prof/torch_ops.cbor" --op-steps 5 \
        --op-warmup 10 "$TR" --steps "$STEPS" $TORCH_ARGS
    for n in torch_prismrun torch_pym torch_prismtorch torch_ops; do
        [ -f "$W/prof/$n.cbor" ] && say "  $n: $(status_of "$W/prof/$n.cbor" | cut -c1-160)"
    done
    if [ -f "$W/prof/torch_ops.cbor" ]; then
        "$B/bin/prism-top" analyze "$W/prof/torch_ops.cbor" 2>&1 |
            sed -n '/^Operator window/,/^$/p' | head -30 | while IFS= read -r l; do say "  $l"; done
    fi
fi

# ---- report ---------------------------------------------------------------------------
if want report; then
    phase report
    report
fi
