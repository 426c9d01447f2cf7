# Screen test: the Summary and the Flame graph at 20x6, 40x12, 80x24,
# 120x40, 200x50 and 300x100 on the reference profile (six findings):
# nothing crashes, no figure is cut at the right edge (a body line that
# reaches the edge ends in a digit or a decimal point), durations keep
# their space before the unit ("12.3 ms", never "12.3ms"), and at 80x24
# the Summary shows at least three findings and whole event counts.  Then
# compare mode: the change column prints durations in the same style.
. tests/screen/lib.sh
REF="$TMPD/ref.cbor"
"$B/bin/refprofile" -o "$REF" >/dev/null || fail "refprofile"
"$B/bin/refprofile" --seed 2 --steps 30 -o "$TMPD/ref2.cbor" >/dev/null || fail "refprofile 2"

# cut_at_edge COLS: body lines (tab bar and status line left out) whose
# last column holds part of a figure
cut_at_edge() {
    screen | sed '1d;$d' | python3 -c '
import sys
w = int(sys.argv[1])
for line in sys.stdin:
    line = line.rstrip("\n")
    if len(line) >= w and (line[w - 1].isdigit() or line[w - 1] == "."):
        print(line)' "$1"
}
check_figures() {
    bad=$(cut_at_edge "$1")
    [ -z "$bad" ] || fail "$2 at $1 cols: a figure cut at the edge: $bad"
    expect_not "[0-9](ns|us|µs|ms|s)\b.*[0-9](ns|us|µs|ms)\b|[0-9](ns|us|µs|ms) "
}

for size in "20 6" "40 12" "80 24" "120 40" "200 50" "300 100"; do
    set -- $size
    for lang in C.UTF-8 C; do
        start "$1" "$2" "LANG=$lang LC_ALL=$lang TERM=xterm-256color $TOP $REF"
        if [ "$1" -lt 40 ] || [ "$2" -lt 12 ]; then
            wait_for "terminal too small"
            keys 3; keys 1; keys q; wait_for "__EXIT__ 0"
            continue
        fi
        wait_for " Findings  [0-9]+ HIGH"
        check_figures "$1" "Summary ($lang)"
        if [ "$1" = 80 ]; then
            n=$(screen | grep -Ec "^   (HIGH|MEDIUM|LOW) ")
            [ "$n" -ge 3 ] || fail "80x24: $n findings shown, want at least 3"
            expect "^ Time .* [0-9.]+( k| M)? events"
            expect "^ Steps .* max [0-9.]+ (ns|us|µs|ms|s)( |$)"
        fi
        keys 3; wait_for "^ all +\["
        check_figures "$1" "Flame ($lang)"
        expect "^ step  "               # the selected frame on the bottom line
        keys q; wait_for "__EXIT__ 0"
    done
done

# compare mode: the change column in one style with the figures beside it
start 160 40 "TERM=xterm $TOP $REF $TMPD/ref2.cbor"
wait_for "Compare +base +new +change"
expect "Step total .* [+-][0-9.]+ (ns|us|µs|ms|s) [+-][0-9.]+%"
check_figures 160 "Compare summary"
keys q; wait_for "__EXIT__ 0"
echo ok
