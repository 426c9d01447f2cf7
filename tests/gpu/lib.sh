# lib.sh - run_gpu_checks.sh's helpers (sourced; its variables: T0 BUDGET
# HARD OUT W SUM RUNS PHASES B PY G).  Every command goes through run_t:
# under timeout(1), its output in $W/logs/NAME.log, one line "NAME rc=N
# wall_s=S" in $RUNS and on the summary.

say() { printf '%s\n' "$*" | tee -a "$SUM"; }
elapsed() { echo $(($(date +%s) - T0)); }
left() { echo $((BUDGET - $(date +%s) + T0)); }
# SECS, or less so that the report ends by HARD (at least 5)
clamp() {
    r=$((HARD - $(date +%s) + T0))
    if [ "$r" -lt "$1" ]; then [ "$r" -lt 5 ] && r=5; echo "$r"; else echo "$1"; fi
}
want() { case " $PHASES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
phase() { say "== $1${2:+ ($2)}"; echo "$1 $(elapsed)" >>"$W/phases"; }

# run_t SECS NAME CMD...: CMD under a timeout never past the budget
run_t() {
    secs=$1 name=$2
    shift 2
    LAST_WALL=null
    rem=$(left)
    if [ "$rem" -lt 20 ]; then
        say "  [$name] SKIPPED: budget spent"
        echo "$name rc=skip wall_s=0" >>"$RUNS"
        return 125
    fi
    [ "$secs" -gt "$rem" ] && secs=$rem
    t1=$(date +%s.%N)
    timeout -k 5 "$secs" "$@" >"$W/logs/$name.log" 2>&1
    rc=$?
    t2=$(date +%s.%N)
    LAST_WALL=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }')
    echo "$name rc=$rc wall_s=$LAST_WALL" >>"$RUNS"
    case $rc in
    124 | 137) say "  [$name] rc=$rc ${LAST_WALL}s TIMEOUT after ${secs}s" ;;
    *) say "  [$name] rc=$rc ${LAST_WALL}s" ;;
    esac
    return $rc
}

# torch_run NAME SECS CMD...: run_t, the script's RESULT line in res/NAME.json
torch_run() {
    name=$1 secs=$2
    shift 2
    run_t "$secs" "$name" "$@"
    trc=$?
    line=$(grep '^RESULT ' "$W/logs/$name.log" | tail -n 1 | cut -c8-)
    printf '{"name": "%s", "rc": "%s", "wall_s": %s, "result": %s}\n' "$name" "$trc" \
        "$LAST_WALL" "${line:-null}" >"$W/res/$name.json"
    grep -E '^prism:|Error|error:|Traceback|Segmentation|Aborted|core dumped' "$W/logs/$name.log" |
        head -n 4 | cut -c1-200 | sed 's/^/    /' | tee -a "$SUM"
    return $trc
}

status_of() {
    "$B/bin/prism-top" dump "$1" 2>/dev/null | sed -n 's/^info    gpu.status = "\(.*\)"$/\1/p' |
        tail -n 1
}

facts() {
    uname -a; head -n 3 /etc/os-release; ldd --version 2>&1 | head -n 1
    nvidia-smi -L
    nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
    echo "nproc $(nproc)"
    for c in make gcc cc nvcc dpkg ar objdump "$PY" timeout; do
        printf '%s: %s\n' "$c" "$(command -v "$c" || echo MISSING)"
    done
    nvcc --version 2>&1 | tail -n 2; gcc --version 2>&1 | head -n 1
    echo "CUDA_HOME=${CUDA_HOME:-} CUDA_PATH=${CUDA_PATH:-}"
    ldconfig -p | grep -E 'libcupti|libcuda\.so|libnvidia-ml|libcbor|libyajl|libxxhash|libncursesw|libz\.so|libcmocka'
    echo "-- libcupti on disk"
    timeout 20 find /usr/local /opt /usr/lib /usr/lib64 -xdev -name 'libcupti.so*' 2>/dev/null | head -n 20
}

# JSON string of $1 (quotes, backslashes, control characters)
jstr() {
    printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/ /g' |
        awk 'BEGIN { printf "\"" } NR > 1 { printf "\\n" } { printf "%s", $0 } END { printf "\"" }'
}

# summary.json: the runs, the phases, the verdict
summary_json() {
    verdict=$1
    {
        printf '{\n  "verdict": %s,\n  "gpu": %s,\n  "elapsed_s": %s,\n  "budget_s": %s,\n' \
            "$(jstr "$verdict")" "$([ "${NO_GPU:-0}" = 1 ] && echo false || echo true)" \
            "$(elapsed)" "$BUDGET"
        printf '  "phases": ['
        sep=""
        while read -r p at; do
            printf '%s{"phase": %s, "start_s": %s}' "$sep" "$(jstr "$p")" "$at"
            sep=", "
        done <"$W/phases"
        printf '],\n  "runs": ['
        sep=""
        while read -r n r s; do
            r=${r#rc=} s=${s#wall_s=}
            case $r in *[!0-9]*) r=$(jstr "$r") ;; esac
            printf '%s\n    {"name": %s, "rc": %s, "wall_s": %s}' "$sep" "$(jstr "$n")" "$r" "${s:-null}"
            sep=","
        done <"$RUNS"
        printf '\n  ]\n}\n'
    } >"$OUT/summary.json"
}

# EXIT: the verdict, summary.json, logs and profiles into $OUT (each file
# under 15 MB, 64 MB in all: what comes back from the lent machine)
pack() {
    rc=$?
    trap - EXIT
    if [ "${NO_GPU:-0}" = 1 ]; then
        verdict="no GPU: nothing checked"
        rc=77
    else
        bad=$(awk '$2 != "rc=0" {print $1}' "$RUNS" | tr '\n' ' ')
        if [ -n "$bad" ]; then verdict="runs not exiting 0: $bad"; rc=1; else verdict="every run exited 0"; rc=0; fi
    fi
    say "== $verdict ($(elapsed)s)"
    summary_json "$verdict"
    tar -czf "$OUT/logs.tar.gz" -C "$W" logs res ana phases 2>/dev/null
    [ -d "$W/fx" ] && tar -czf "$OUT/fixtures.tar.gz" -C "$W" fx 2>/dev/null
    for f in "$W"/prof/*.json.gz; do
        [ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 15500000 ] && cp -f "$f" "$OUT/"
    done
    # the profiles and their DataLoader workers' files (<profile>.workers/)
    list=$(cd "$W" && find prof \( -name '*.cbor' -o -path '*.workers/*.prism' \) -size -15M |
           sort)
    if [ -n "$list" ]; then
        (cd "$W" && tar -czf "$OUT/profiles.tar.gz" $list)
        [ "$(stat -c %s "$OUT/profiles.tar.gz")" -lt 15500000 ] || {
            say "  profiles.tar.gz over 15 MB: the torch profiles only"
            (cd "$W" && tar -czf "$OUT/profiles.tar.gz" prof/torch_*.cbor 2>/dev/null); }
    fi
    exit $rc
}

# prism-top dump/analyze/export of every profile and trace, in parallel
# under deadlines, then gpu_report.py
report() {
    for f in "$W"/prof/*.cbor; do
        [ -f "$f" ] || continue
        n=$(basename "$f" .cbor)
        (timeout "$(clamp 40)" "$B/bin/prism-top" dump "$f" >"$W/dump/$n.txt" 2>"$W/logs/dump_$n.err") &
        case $n in torch_* | cuda_train | cuda_plain) ;; *) continue ;; esac
        (timeout "$(clamp 40)" "$B/bin/prism-top" analyze "$f" >"$W/ana/$n.txt" 2>&1
         timeout "$(clamp 40)" "$B/bin/prism-top" analyze "$f" --format json -o "$W/ana/$n.json" >/dev/null 2>&1
         timeout "$(clamp 40)" "$B/bin/prism-top" export "$f" --format json -o "$W/ana/$n.tree.json" >/dev/null 2>&1) &
    done
    for f in "$W"/fx/*.cbor; do
        [ -f "$f" ] || continue
        n=$(basename "$f" .cbor)
        (timeout "$(clamp 40)" "$B/bin/prism-top" analyze "$f" >"$W/ana/fx_$n.txt" 2>&1) &
    done
    for f in "$W"/prof/*.json.gz "$W"/fx/*.json.gz; do
        [ -f "$f" ] || continue
        n=$(basename "$f" .json.gz)
        (timeout "$(clamp 50)" "$B/bin/prism-top" analyze "$f" --format json -o "$W/ana/$n.json" >/dev/null 2>&1) &
    done
    wait
    timeout "$(clamp 60)" "$PY" "$G/gpu_report.py" "$W" --json "$OUT/report.json" >"$OUT/report.txt" \
        2>"$W/logs/report.err" || say "  gpu_report.py failed: $(tail -n 2 "$W/logs/report.err")"
    cat "$OUT/report.txt" >>"$SUM" 2>/dev/null
    cat "$OUT/report.txt" 2>/dev/null
}
