# Screen test: the Timeline in compare mode (prism-top BASE NEW) on two
# reference profiles of the project's writer from the same seed, the new
# one with a planted 5 ms stall per step and two more steps: both step
# charts with their figures (base, new, the p50's change), one step
# shared by both sides (h/l move both; the steps only the new run has
# say so on the base side), the lanes of both runs (the new one with its
# synchronize span), one above the other at 120x40 and at 80x24, and
# nothing drawn past tiny sizes.  Keys are typed one by one (type_keys);
# everything waits on the screen.
. tests/screen/lib.sh
A="$TMPD/base.cbor" N="$TMPD/new.cbor"
"$B/bin/refprofile" -o "$A" --steps 20 >/dev/null || fail "refprofile"
"$B/bin/refprofile" -o "$N" --steps 22 --stall-ns 5000000 >/dev/null || fail "refprofile"
# the lines matching, and waiting until both halves show one
count() { screen | grep -Ec -- "$1"; }
wait_two() {
    n=200
    while [ "$(count "$1")" -lt 2 ]; do
        n=$((n - 1))
        [ "$n" -gt 0 ] || fail "not on both sides: /$1/"
        sleep 0.05
    done
}

# 120x40: one run above the other (the Timeline stacks at every width)
start 120 40 "TERM=xterm LANG=C.UTF-8 $TOP $A $N"
wait_for "1 Summary"
type_keys 8
wait_for "base: +mean [0-9.]+ [mµ]?s +p50 [0-9.]+ [mµ]?s"
lb=$(screen | grep -n "^. BASE base\.cbor" | cut -d: -f1)
ln=$(screen | grep -n "^. NEW  new\.cbor" | cut -d: -f1)
[ -n "$lb" ] && [ -n "$ln" ] && [ "$lb" -lt "$ln" ] || fail "BASE not above NEW ($lb, $ln)"
expect_not "open one profile"
# the new run is slower: its p50 against the base's
expect "new: +mean [0-9.]+ ms +p50 [0-9.]+ ms +p50 \+[0-9.]+% vs base"
# one step on both sides: the last step both runs have
wait_two "^ Step 19 +[0-9.]+ [mµ]?s +at "
type_keys h
wait_two "^ Step 18 "
type_keys h h
wait_two "^ Step 16 "
type_keys l
wait_two "^ Step 17 "
# the slower run's step figure: the new side's step longer by the stall (5 ms and more)
screen | grep -E "^ Step 17 " | sed -E 's/^ Step 17 +([0-9.]+) ms .*/\1/' | tr '\n' ' ' |
    awk '{ exit !(NF == 2 && $2 - $1 >= 5) }' || fail "the new run's step 17 is not 5 ms slower"
# the lanes of both runs, the same step: the base's regions, the new one's stall
type_keys v
wait_two "^main +step"
wait_for "data_lo.*backward"
wait_for "synchronize"
[ "$(count "v0 ns ")" -eq 2 ] || fail "one cursor, at the step's start on both"
type_keys ']'
wait_for "Enter: Tree"
type_keys Escape
wait_for "h/l: step of both runs"
# steps only the new run has: the base side says so, the new side shows it
type_keys G
wait_for "Step 21: not in this run \(steps 0 to 19\)"
expect "^ Step 21 +[0-9.]+ ms .*\(22 of 22\)"
expect "No lanes: this run has no such step"
type_keys h
wait_for "Step 20: not in this run"
expect "^ Step 20 +[0-9.]+ ms"
type_keys h
wait_two "^ Step 19 "
expect_not "not in this run"
# w: keys to the base side, h there moves both; l past its last step
# goes to the new run's next (the base side has none after 19)
type_keys w
wait_for "▶ BASE base\.cbor"
type_keys h
wait_two "^ Step 18 "
type_keys l l l
wait_two "^ Step 19 "

# 80x24: stacked, each run its chart, figures and lanes in its half
start 80 24 "TERM=xterm LANG=C.UTF-8 $TOP $A $N"
wait_for "1 Sum"
type_keys 8
# the full width: the shared step's change against the base's too
wait_for "new: +mean [0-9.]+ ms +p50 [0-9.]+ ms +p50 \+[0-9.]+% vs base +this step \+[0-9.]+ ms"
expect "^  BASE base\.cbor"
expect "NEW  new\.cbor"
expect "^ base: +mean [0-9.]+ [mµ]?s +p50 "
[ "$(count '^ Step 19 +[0-9.]+ [mµ]?s ')" -eq 2 ] || fail "80x24: step 19 not on both sides"
type_keys h
wait_for "^ Step 18 "
[ "$(count '^ Step 18 +[0-9.]+ [mµ]?s ')" -eq 2 ] || fail "80x24: h did not move both sides"
type_keys v
wait_for "^main +step"
[ "$(count '^main +step')" -eq 2 ] || fail "80x24: lanes not on both sides"
wait_for "synchronize"
expect "data_lo"
# tiny sizes: no crash, and the explorer still answers
type_keys Escape
wait_for "h/l: step of both runs"
for sz in "40 12" "20 5" "1 1" "120 13" "59 9" "80 24"; do
    resize ${sz% *} ${sz#* }
    type_keys 8
done
wait_for "^ Step 18 "
type_keys h
wait_for "^ Step 17 "
[ "$(count '^ Step 17 +[0-9.]+ [mµ]?s ')" -eq 2 ] || fail "after resizing: h did not move both sides"
type_keys q
wait_for "__EXIT__ 0"
echo ok
