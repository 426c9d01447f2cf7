#!/bin/sh
# gpu_fixtures_test.sh - PRISM's profiles and a torch.profiler CUDA trace made
# on a real GPU (an NVIDIA H200, CUDA 13, torch 2.11+cu130; the third run of
# tests/gpu/run_gpu_checks.sh, its "fixtures" phase and checks.sh's leak run),
# read back by this build.  tests/fixtures/gpu/:
#   cuda_train_nvtx.cbor   samples/cuda_train --steps 20 --size 1024 --nvtx
#                          under prism-run (checks.sh's first run, with its
#                          launch bench); the sample printed "kernels=1340
#                          memcpy=64 memset=20"; its NVTX ranges are "layer"
#   cuda_leak.cbor         samples/cuda_train --steps 40 --size 256
#                          --leak-mb 32 under prism-run: 32 MB cudaMalloc'ed
#                          a step, never freed
#   torch_amp_pym.cbor     python -m prism tests/gpu/torch_train.py --steps 30
#                          --warm 5 --amp --item-every 1 --leak-mb 8
#                          --heavy-mm 6: a loss.item() every step waiting for
#                          GPU work (torch_train.py:240), 8 MB/step kept
#   torch_amp_trace.json.gz the same script and arguments under torch.profiler
#                          (CPU + CUDA), from the first marker kernel to after
#                          the last
#   cuda_train_sys.cbor    2026-11-28: samples/cuda_train --steps 20 --size
#                          1024 --nvtx --launch-bench 1000 under prism-run,
#                          format 1.3: NVML utilisation and energy
# Checks: gpu.status, counts equal to what the sample launched, NVTX ranges
# as regions, the planted sync found with its file:line, both leaks found,
# and, between the two marker kernels (torch.cuda._sleep: spin_kernel),
# PRISM's kernels equal torch.profiler's name by name.
# Run by `make test` as $(B)/tests/gpu_fixtures_test; by hand:
# B=build sh tests/gpu_fixtures_test.sh.
set -u
B=${B:-build}
F=tests/fixtures/gpu
TOP=$B/bin/prism-top
PY=${PYTHON:-python3}
T=$(mktemp -d "${TMPDIR:-/tmp}/prism-gpufx.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
for v in $(env | sed -n 's/^\(PRISM_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
. tests/case_lib.sh

# kinds FILE: "type count" of the GPU records in prism-top dump's output
kinds() { "$TOP" dump "$1" | awk '$1 == "gpu" { n[$3]++ } END { for (k in n) print k, n[k] }'; }
count() { kinds "$1" | awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'; }

cuda_counts() {
    f=$F/cuda_train_nvtx.cbor
    "$TOP" dump "$f" >"$T/d" || return 1
    grep -q '^info    gpu.status = "ok: CUPTI 130001' "$T/d" || { grep gpu.status "$T/d"; return 1; }
    grep -q '^footer' "$T/d" || { echo "no footer"; return 1; }
    for kv in kernel:1340 memcpy:64 memset:20; do
        got=$(count "$f" "${kv%%:*}")
        [ "$got" = "${kv#*:}" ] || { echo "${kv%%:*}: $got recorded, ${kv#*:} launched"; return 1; }
    done
}
run_case cuda_train_every_kernel_copy_memset cuda_counts

nvtx_regions() {
    "$TOP" export "$F/cuda_train_nvtx.cbor" --format json -o "$T/tree.json" >/dev/null || return 1
    grep -q '"layer"' "$T/tree.json" || { echo "no NVTX region 'layer' in the tree"; return 1; }
}
run_case cuda_train_nvtx_ranges_are_regions nvtx_regions

finding() {     # finding FILE TYPE [TEXT]: analyze's JSON has a TYPE finding (with TEXT)
    "$TOP" analyze "$1" --format json -o "$T/a.json" >/dev/null 2>&1 || { echo "analyze $1 failed"; return 1; }
    awk -v t="\"$2\"" -v w="${3:-}" '
        /"type":/ { cur = index($0, t) > 0 }
        cur && (w == "" || index($0, w) > 0) { found = 1 }
        END { exit !found }' "$T/a.json" || { echo "$1: no $2 finding${3:+ naming $3}"; return 1; }
}
run_case torch_item_sync_found_with_file_line finding "$F/torch_amp_pym.cbor" cpu_gpu_sync \
    "torch_train.py:240"
run_case torch_gpu_leak_found finding "$F/torch_amp_pym.cbor" memory_leak "GPU"
run_case cuda_malloc_leak_found finding "$F/cuda_leak.cbor" memory_leak "CUDA allocations"

no_leak() {     # the caching allocator's first-step segments are no leak
    ! finding "$1" memory_leak >/dev/null || { echo "$1: a memory_leak finding"; return 1; }
}
run_case cuda_train_no_leak no_leak "$F/cuda_train_nvtx.cbor"

# between the marker kernels, "count name" lines, sorted
between() {
    "$TOP" dump "$1" | sed -n 's/^gpu  *t=\([0-9.]*\) kernel dur [0-9]* ns device [0-9]* stream [0-9]* corr [0-9]* \(.*\) grid [^ ]* block .*/\1 \2/p' |
        sort -n -k1,1 | awk '
            /spin_kernel/ { m++; next }
            m == 1 { sub(/^[^ ]* /, ""); n[$0]++ }
            END { for (k in n) print n[k], k }' | sort
}
same_kernels() {
    between "$F/torch_amp_pym.cbor" >"$T/p"
    between "$F/torch_amp_trace.json.gz" >"$T/t"
    np=$(awk '{ s += $1 } END { print s + 0 }' "$T/p")
    [ "$np" -gt 1000 ] || { echo "only $np kernels between the markers"; return 1; }
    cmp -s "$T/p" "$T/t" || { echo "PRISM vs torch.profiler:"; diff "$T/p" "$T/t" | head -20; return 1; }
    echo "$np kernels, $(wc -l <"$T/p") names: equal"
}
run_case prism_and_torch_profiler_kernels_equal_by_name same_kernels

# the backward of CUDA tensors runs on torch's autograd thread: the training
# thread's wait there is that thread's work, not an idle wait (no lock
# advice, no "if the wait were zero" worth); the first GPU runs said both
handed_off() {
    finding "$F/torch_amp_pym.cbor" off_cpu_wait "Backward on torch's autograd thread" ||
        return 1
    "$TOP" analyze "$F/torch_amp_pym.cbor" -o "$T/a.txt" >/dev/null 2>&1 || return 1
    awk '/Backward on torch.s autograd thread/ { on = 1; next } on && /^  \[/ { on = 0 }
         on' "$T/a.txt" >"$T/h"
    grep -q "runs on 'pt_autograd_0'" "$T/h" || { cat "$T/h"; return 1; }
    ! grep -q -e 'Worth:' -e 'perf lock' "$T/h" || { echo "wait advice:"; cat "$T/h"; return 1; }
}
run_case torch_backward_handed_to_autograd_thread handed_off

# format 1.3 system readings from the H200 (2026-11-28, checks.sh's counts
# run): NVML's utilisation and energy; the energy rode only the readings
# that query NVML, from after CUDA's start, and the run's energy was
# "not readable" until the analysis took it from the first reading that has it
sys_energy() {
    "$TOP" analyze "$F/cuda_train_sys.cbor" --format json -o "$T/s.json" >/dev/null || return 1
    "$PY" - "$T/s.json" <<'PYEOF' || return 1
import json, sys
s = json.load(open(sys.argv[1]))["system"]
assert s["readings"] == 7, s
assert s["gpu_util_pct"] is not None, s
assert s["gpu_energy_mj"] and s["gpu_energy_mj"] > 1000, s
assert s["step_energy_j"] and s["step_energy_j"] > 0, s
print("GPU energy %d mJ, %.3f J a step, util %.1f %%"
      % (s["gpu_energy_mj"], s["step_energy_j"], s["gpu_util_pct"]))
PYEOF
}
run_case nvml_energy_from_sparse_readings sys_energy

status_ok() {
    "$TOP" dump "$F/torch_amp_pym.cbor" | grep -q '^info    gpu.status = "ok: CUPTI' ||
        { echo "gpu.status not ok"; return 1; }
}
run_case torch_gpu_status_ok status_ok
finish
