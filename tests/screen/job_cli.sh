# Command-line test of the job report (issue 17), run with the screen tests:
# samples/multirank runs N ranks as processes meeting at a barrier every
# step, one of them slower in a planted region; `prism-top analyze` on the
# rank files must name that rank and that region.
#  - 2, 8 and 32 ranks: the planted rank is the one straggler, its cause
#    the planted region, the others wait in the collective (JSON and text)
#  - every rank equal (--slow-rank -1): no straggler
#  - a missing and a damaged rank file: one line each on stderr, the rest
#    analysed, exit 0; nothing readable: exit 2
#  - analyze --summary per rank, then analyze of the summaries: the same
#    report (JSON and text) as analyze of the profiles; a directory works
#  - more than 64 ranks: the table shows the slowest and fastest only
#  - names from files are escaped; one file keeps the profile report
. tests/screen/lib.sh
MR="$B/bin/multirank"
die() { echo "FAIL: $*"; exit 1; }
[ -x "$MR" ] || die "no $MR"
command -v python3 >/dev/null 2>&1 || die "python3 is needed to read the JSON"

# run_job DIR ARGS...: the sample's ranks into DIR
run_job() {
    d=$1; shift
    mkdir -p "$d"
    "$MR" --output-dir "$d" "$@" >/dev/null 2>"$TMPD/mr.err" ||
        die "multirank $*: $(cat "$TMPD/mr.err")"
}
# json_check FILE PYTHON-EXPRESSION: j is the parsed report; fails the test
# with the expression when it is not true
json_check() {
    python3 - "$1" "$2" <<'EOF' || die "JSON check failed: $2 (in $1)"
import json, sys
j = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2], {"j": j})
if not ok:
    print("report:", json.dumps({k: j[k] for k in ("ranks_count", "stragglers") if k in j})[:2000])
sys.exit(0 if ok else 1)
EOF
}

# ---- the planted rank and region, 2, 8 and 32 ranks ----
# (not data_load: the region right after the barrier shares CPU samples,
# 5 ms apart, with the blocked wait before it and may read as waiting;
# 32 ranks: 10 ms, as 32 woken processes fight for 2 cores every step)
for spec in "2 1 backward 5" "8 3 forward 5" "32 17 backward 10"; do
    set -- $spec
    n=$1 slow=$2 region=$3 ms=$4
    d="$TMPD/job$n"
    run_job "$d" --ranks "$n" --slow-rank "$slow" --slow-region "$region" --slow-ms "$ms" \
        --steps 20
    "$TOP" analyze "$d" --format json -o "$TMPD/j$n.json" 2>"$TMPD/err" ||
        die "$n ranks: analyze failed: $(cat "$TMPD/err")"
    json_check "$TMPD/j$n.json" "j['schema'] == 'prism.job/1' and j['ranks_count'] == $n"
    # the planted rank is the straggler (the largest excess comes first);
    # with 32 processes on a 2-core machine another rank preempted in most
    # of its steps may be named after it, so there only the first counts
    if [ "$n" -le 8 ]; then
        json_check "$TMPD/j$n.json" "[s['rank'] for s in j['stragglers']] == [$slow]"
    else
        json_check "$TMPD/j$n.json" "[s['rank'] for s in j['stragglers']][:1] == [$slow]"
    fi
    json_check "$TMPD/j$n.json" "j['stragglers'][0]['cause']['name'] == '$region'"
    json_check "$TMPD/j$n.json" "j['stragglers'][0]['slowed'] >= 15"
    json_check "$TMPD/j$n.json" "(j['stragglers'][0]['wait_region'] or {}).get('name') == 'allreduce'"
    json_check "$TMPD/j$n.json" "$slow in [r['rank'] for r in j['ranks'] if r['straggler']]"
    "$TOP" analyze "$d" >"$TMPD/t$n.txt" 2>"$TMPD/err" || die "$n ranks: text report failed"
    grep -q "^Job: $n ranks, 20 aligned steps" "$TMPD/t$n.txt" || die "$n ranks: no Job line"
    line="^  rank $slow is a straggler: its work per step is \+[0-9.]+ .?s \((\+[0-9]+ %|[0-9]+x)\)"
    line="$line over the median of the others in [0-9]+ of 20 steps \(steps [0-9]"
    grep -Eq "$line" "$TMPD/t$n.txt" ||
        die "$n ranks: no straggler line: $(grep -A3 Stragglers "$TMPD/t$n.txt")"
    grep -Eq "^    the difference: (.*/)?$region \+[0-9.]+ .?s per step \(rank $slow: " \
        "$TMPD/t$n.txt" ||
        die "$n ranks: the difference does not name $region"
    grep -Eq "^    the other ranks wait for it: (.*/)?allreduce, .* waiting for the slowest rank" \
        "$TMPD/t$n.txt" || die "$n ranks: the wait is not named"
    [ -s "$TMPD/err" ] && die "$n ranks: stderr: $(cat "$TMPD/err")"
done

# ---- every rank equal ----
run_job "$TMPD/even" --ranks 8 --slow-rank -1 --steps 20
"$TOP" analyze "$TMPD/even" --format json -o "$TMPD/even.json" || die "even: analyze failed"
json_check "$TMPD/even.json" "j['ranks_count'] == 8 and j['stragglers'] == []"
"$TOP" analyze "$TMPD/even" | grep -q "^  No straggler: ranks within" ||
    die "even: no 'No straggler'"

# ---- a missing and a damaged rank file ----
d="$TMPD/job8"
head -c 24 "$d/rank5.cbor" >"$TMPD/damaged.cbor"
files=""
for r in 0 1 2 3 4 6 7; do files="$files $d/rank$r.cbor"; done
# shellcheck disable=SC2086
"$TOP" analyze $files "$TMPD/missing.cbor" "$TMPD/damaged.cbor" --format json \
    -o "$TMPD/bad.json" 2>"$TMPD/err"
rc=$?
[ "$rc" = 0 ] || die "missing/damaged: exit $rc, want 0"
[ "$(wc -l <"$TMPD/err")" = 2 ] || die "missing/damaged: stderr: $(cat "$TMPD/err")"
grep -Eqx "prism-top: $TMPD/missing.cbor: No such file or directory" "$TMPD/err" ||
    die "missing file not reported: $(cat "$TMPD/err")"
grep -Eq "^prism-top: $TMPD/damaged.cbor: .+ at byte [0-9]+$" "$TMPD/err" ||
    die "damaged file not reported: $(cat "$TMPD/err")"
json_check "$TMPD/bad.json" "j['ranks_count'] == 7 and len(j['failures']) == 2"
json_check "$TMPD/bad.json" "[s['rank'] for s in j['stragglers']] == [3]"
# shellcheck disable=SC2086
"$TOP" analyze $files "$TMPD/missing.cbor" "$TMPD/damaged.cbor" 2>/dev/null |
    grep -Eq "^  Failed: rank file $TMPD/damaged.cbor: .+ at byte [0-9]+$" ||
    die "the text report does not list the damaged file"
"$TOP" analyze "$TMPD/missing.cbor" "$TMPD/damaged.cbor" >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || die "nothing readable: exit $rc, want 2"
# a name a terminal would act on is escaped on stderr
esc=$(printf 'x\033]0;y')
"$TOP" analyze "$d/rank0.cbor" "$TMPD/$esc.cbor" >/dev/null 2>"$TMPD/err"
grep -qF 'x\x1b]0;y.cbor' "$TMPD/err" || die "name not escaped: $(cat -v "$TMPD/err")"

# ---- summaries merged equal the profiles analysed ----
s="$TMPD/sums"
mkdir -p "$s"
for r in 0 1 2 3 4 5 6 7; do
    "$TOP" analyze --summary -o "$s/r$r.sum" "$d/rank$r.cbor" || die "--summary rank $r failed"
done
"$TOP" analyze "$d"/rank*.cbor --format json --steps >"$TMPD/direct.json" || die "direct json"
"$TOP" analyze "$s" --format json --steps >"$TMPD/merged.json" || die "merged json"
cmp -s "$TMPD/direct.json" "$TMPD/merged.json" ||
    die "summaries give another JSON report: $(diff "$TMPD/direct.json" "$TMPD/merged.json" |
        head -20)"
"$TOP" analyze "$d"/rank*.cbor >"$TMPD/direct.txt" || die "direct txt"
"$TOP" analyze "$s"/r*.sum >"$TMPD/merged.txt" || die "merged txt"
cmp -s "$TMPD/direct.txt" "$TMPD/merged.txt" ||
    die "summaries give another text report: $(diff "$TMPD/direct.txt" "$TMPD/merged.txt" |
        head -20)"
json_check "$TMPD/direct.json" \
    "len(j['steps']['index']) == 20 and len(j['steps']['work_ns']) == 8"
# a directory is its files
"$TOP" analyze "$d" --format json --steps | cmp -s - "$TMPD/direct.json" ||
    die "a directory gives another report than its files"
"$TOP" analyze --summary "$d/rank0.cbor" "$d/rank1.cbor" >/dev/null 2>&1
[ $? = 1 ] || die "--summary with two files is no usage error"

# ---- more than 64 ranks: the slowest and the fastest ----
big="$TMPD/big"
mkdir -p "$big"
for c in 0 1 2 3 4 5 6 7 8; do
    for r in 0 1 2 3 4 5 6 7; do cp "$s/r$r.sum" "$big/c$c-r$r.sum"; done
done
"$TOP" analyze "$big" >"$TMPD/big.txt" || die "72 summaries: analyze failed"
grep -q "^Job: 72 ranks" "$TMPD/big.txt" || die "72 summaries: $(head -8 "$TMPD/big.txt")"
grep -q "^  \.\.\. 48 more$" "$TMPD/big.txt" || die "72 ranks: the table is not cut"
grep -q "^  Ranks numbered by file order" "$TMPD/big.txt" ||
    die "72 ranks: ids not said to be by order"

# ---- one file keeps the profile report ----
"$TOP" analyze "$d/rank0.cbor" | grep -q "^PRISM Training Profile Report" ||
    die "one file: not the profile report"

# ---- prism-top rank*.cbor: two ranks of one job are a job, two runs of
# one rank a comparison (off a terminal: their reports); one summary too ----
"$TOP" "$d/rank0.cbor" "$d/rank1.cbor" | grep -q "^PRISM Job Report" ||
    die "two ranks: not the job"
"$TOP" "$d/rank0.cbor" "$d/rank0.cbor" | grep -q "^PRISM Profile Comparison" ||
    die "two runs of one rank: not the comparison"
"$TOP" "$s/r3.sum" | grep -q "^Job: 1 ranks\{0,1\}" ||
    die "a summary alone: not a job: $("$TOP" "$s/r3.sum" 2>&1 | head -5)"
exit 0
