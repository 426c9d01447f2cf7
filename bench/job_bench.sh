#!/bin/sh
# job_bench.sh - figures for issue 17 (distributed jobs), never a test:
#  - open time and peak RSS of `prism-top analyze DIR` over 8, 64 and 256
#    rank profiles (samples/multirank, $STEPS steps each, 100 by default:
#    real profiles with a barrier per step; 256 ranks take a few seconds to
#    make on 2 cores)
#  - merge time and peak RSS for 1024 rank summaries (`analyze --summary`
#    of 8 profiles, copied under 1024 names: ranks repeat, so the ids come
#    from file order; fine for timing)
# Each figure is the median of 3 runs; peak RSS is the child's (wait4).
#
#   B=build [STEPS=100] sh bench/job_bench.sh [DIR]   (DIR: $B/job_bench)
set -u
B=${B:-build}
D=${1:-$B/job_bench}
STEPS=${STEPS:-100}
TOP=$B/bin/prism-top
MR=$B/bin/multirank
[ -x "$TOP" ] && [ -x "$MR" ] || { echo "job_bench: build $TOP and $MR first"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "job_bench: needs python3 (to time a child)"; exit 1; }
rm -rf "$D" && mkdir -p "$D"

# measure NAME CMD...: median wall time and peak RSS of 3 runs of CMD
measure() {
    python3 - "$@" <<'EOF'
import os, statistics, subprocess, sys, time
name, cmd = sys.argv[1], sys.argv[2:]
walls, rss = [], []
for _ in range(3):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    walls.append(time.monotonic() - t0)
    rss.append(ru.ru_maxrss)          # KiB on Linux
    err = p.stderr.read().decode(errors="replace").strip()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        print("%-36s FAILED (%s)" % (name, err.splitlines()[0] if err else status))
        sys.exit(1)
print("%-36s %9.3f s %9.1f MiB   (median of 3; runs %s s)" % (
    name, statistics.median(walls), statistics.median(rss) / 1024.0,
    ", ".join("%.3f" % w for w in walls)))
EOF
}

echo "job_bench: $(nproc 2>/dev/null || echo ?) CPUs; prism-top analyze uses one thread per CPU"
measure "baseline: prism-top --version" "$TOP" --version || exit 1
for n in 8 64 256; do
    t0=$(date +%s.%N)
    "$MR" --ranks "$n" --steps "$STEPS" --output-dir "$D/r$n" >/dev/null ||
        { echo "job_bench: multirank --ranks $n failed"; exit 1; }
    t1=$(date +%s.%N)
    size=$(du -sk "$D/r$n" | cut -f1)
    printf 'made %4d rank profiles (%s steps, %s KiB) in %s s\n' "$n" "$STEPS" "$size" \
        "$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")"
    measure "open $n rank profiles" "$TOP" analyze "$D/r$n" -o /dev/null || exit 1
done
measure "open 64 rank profiles, 1 thread" "$TOP" analyze "$D/r64" --threads 1 -o /dev/null ||
    exit 1

mkdir -p "$D/sum8" "$D/sum1024"
for r in 0 1 2 3 4 5 6 7; do
    "$TOP" analyze --summary -o "$D/sum8/r$r.sum" "$D/r8/rank$r.cbor" ||
        { echo "job_bench: --summary failed"; exit 1; }
done
i=0
while [ "$i" -lt 1024 ]; do
    cp "$D/sum8/r$((i % 8)).sum" "$D/sum1024/$(printf 's%04d.sum' "$i")"
    i=$((i + 1))
done
echo "summary size: $(wc -c <"$D/sum8/r0.sum") bytes ($STEPS steps)"
measure "merge 1024 summaries" "$TOP" analyze "$D/sum1024" -o /dev/null || exit 1
measure "merge 1024 summaries (JSON, --steps)" "$TOP" analyze "$D/sum1024" --format json \
    --steps -o /dev/null || exit 1
rm -rf "$D"
