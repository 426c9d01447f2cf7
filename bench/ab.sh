#!/bin/sh
# ab.sh - two builds of PRISM side by side: the hot path (collect_bench's
# push/pop pair and step) and the analysis (analysis_bench's read+aggregate
# and exports), the two builds' runs interleaved ROUNDS times (the order
# alternating), each figure the median of its rounds, and the ratio of the
# new build to the base measured in the same run.  Figures only: never
# fails on time.
#   usage: sh bench/ab.sh BASE_BUILD_DIR NEW_BUILD_DIR [ROUNDS]
# make bench-ab AB_BASE=REV builds REV's benches in a worktree and runs this.
set -u
BASE=$1 NEW=$2 ROUNDS=${3:-7}
T=$(mktemp -d "${TMPDIR:-/tmp}/prism-ab.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
for b in "$BASE" "$NEW"; do
    for x in collect_bench analysis_bench; do
        [ -x "$b/bench/$x" ] || { echo "ab.sh: $b/bench/$x is not built"; exit 1; }
    done
done

# run BUILD TAG: one round of both benches, figures appended to $T/TAG
run() {
    "$1/bench/collect_bench" 3 200000 hot >"$T/c.out" 2>&1
    sed -n 's/.*collect: push\/pop pair (enabled) *\([0-9.]*\) ns.*/hot: push\/pop pair (ns, lower is better) \1/p;
            s/.*collect: step begin+end *\([0-9.]*\) ns.*/hot: step begin+end (ns, lower is better) \1/p;
            s/.*collect: prism_counter_i *\([0-9.]*\) ns.*/hot: prism_counter_i (ns, lower is better) \1/p' \
        "$T/c.out" >>"$T/$2"
    "$1/bench/analysis_bench" 1 3 >"$T/a.out" 2>&1
    sed -n 's/.*analysis: read+aggregate *\([0-9.]*\) M events\/s.*/analysis: read+aggregate (M events\/s) \1/p;
            s/.*analysis: \.\.\. transitions kept *\([0-9.]*\) M events\/s.*/analysis: transitions kept (M events\/s) \1/p;
            s/.*export: \([a-z-]*\) *\([0-9.]*\) M events\/s.*/export: \1 (M events\/s) \2/p' \
        "$T/a.out" >>"$T/$2"
}
: >"$T/base"; : >"$T/new"
i=0
while [ $i -lt "$ROUNDS" ]; do
    if [ $((i % 2)) -eq 0 ]; then run "$BASE" base; run "$NEW" new
    else run "$NEW" new; run "$BASE" base; fi
    i=$((i + 1))
done

# median of the values of one metric in a file
med() { grep -F "$1 " "$2" | awk '{print $NF}' | sort -g |
        awk '{v[NR] = $1} END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                                else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "ab: $ROUNDS interleaved rounds; base $BASE, new $NEW; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
printf '  %-48s %10s %10s %8s\n' metric base new new/base
sed 's/ [0-9.]*$//' "$T/base" | awk '!seen[$0]++' | while IFS= read -r m; do
    b=$(med "$m" "$T/base") n=$(med "$m" "$T/new")
    r=$(awk -v b="$b" -v n="$n" 'BEGIN { if (b > 0) printf "%.3fx", n / b; else print "-" }')
    printf '  %-48s %10s %10s %8s\n' "$m" "$b" "$n" "$r"
done
