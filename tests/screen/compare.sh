# Screen test: compare mode (prism-top BASE NEW) of two reference profiles
# written by the project's writer from the same seed (so every duration is
# the same: nothing here depends on timing), the new one with a planted
# regression (a 5 ms "synchronize" leaf per step):
# the summary table shows the step total significantly slower, no whole-run
# shift, the largest changes with their change of share; R selects
# the new region first, the delta column marks it new (in red), the base
# side shows it missing; D hides unchanged rows and keeps their changed
# relatives; a narrow terminal stacks BASE above NEW; x swaps the sides (the
# region is then gone); Ops shows and sorts by the change of share; the Ops,
# Bottlenecks and Flame panes draw their
# compare views (zooming both sides alike); without colour the flame frames carry +/-; quitting
# restores the terminal.  The Tree pairs its rows: the same region on the
# same screen row on both sides ("(absent)" where one lacks it), in the
# base's order or by change (o); the side given keys is marked and `w`
# moves the mark; no figure is cut at 120x40 and 80x24 (whole.py).
. tests/screen/lib.sh
A="$TMPD/base.cbor" N="$TMPD/new.cbor"
"$B/bin/refprofile" -o "$A" --threads 1 --steps 20 >/dev/null || fail "refprofile"
"$B/bin/refprofile" -o "$N" --threads 1 --steps 20 --stall-ns 5000000 >/dev/null || fail "refprofile"

start 160 30 "TERM=xterm-256color $TOP $A $N"
wait_for "BASE base.cbor .*NEW  new.cbor"            # side by side: one row
expect "Compare +base +new +change"                  # the new side's table
expect "Step total .* \+[0-9.]+ ?m?s \+[0-9.]+% +p=[^ ]+ \*"   # slower, significant
expect "Findings .*[1-9][0-9]* new"
expect_not "Regions .*,$"                            # a list cut short ends on no comma
expect "Tab/1-8: panes"                              # eight panes
expect "Whole run +no common shift \(x1\.00\)"          # one region moved, not the machine
expect "step/synchronize +new \+[0-9.]+ ?ms +share \+[0-9.]+pp"   # largest changes: share too
keys R
wait_for "largest regression: (step/)?synchronize"
expect "\| NEW region \|"                            # the status line's tag
expect "\| Tree \|"                                  # R shows the Tree
expect "[.·] synchronize +[0-9.]+ ms +new \+[0-9.]+ ?ms"
expect "Diff  not in this profile \(new in the other\)"   # the base side lacks it
expect "Diff  new \+[0-9.]+ ?ms  not in the base profile"
tm capture-pane -e -p -t "$S" | grep -aEq "31mnew \+[0-9.]+ ?ms" || fail "the new region is not red"
expect "[.·] loss "                                  # unchanged (far under 1 % of the total)
expect "[.·] optimizer_step "

# one row per region on both sides: synchronize on the base's row shows absent
screen | grep -Eq "^ +synchronize +\(absent\) .* [.·] synchronize +[0-9.]+ ms" ||
    fail "synchronize not on one row on both sides"
for r in backward data_loading forward optimizer_step loss; do
    screen | grep -Eq "^ +[.·▸▾] $r .* [.·▸▾] $r +[0-9.]+ [mµ]?s" || fail "$r not paired"
done
expect "▶ NEW  new\.cbor  ◀ keys"                    # keys go to the new side
expect "^  BASE base\.cbor +.▶ NEW"
keys w
wait_for "^▶ BASE base\.cbor  ◀ keys"                # the mark moves with w
expect_not "▶ NEW"
keys w
wait_for "^  BASE base\.cbor +.▶ NEW"
keys o                                               # by change: synchronize first
wait_for "rows by size of change"
[ "$(screen | grep -o "by change · by total" | wc -l)" -eq 2 ] || fail "both headers say by change"
screen | grep -A1 -E "^ ▾ step " | tail -1 | grep -Eq "synchronize .*synchronize" ||
    fail "synchronize not first under step"
keys o
wait_for "rows in the base's order"

keys D                                               # changed only
wait_for "NEW  new.cbor  \[changed only\]"
expect_not "[.·] loss "
expect_not "[.·] optimizer_step "
expect "[.·] synchronize .* new \+"                  # kept
keys D
wait_for "showing all regions"
expect "[.·] loss "

keys 4                                               # Ops: a delta column by name
wait_for "\| Ops \|"
expect "vs base"
expect "synchronize .* new \+[0-9.]+ ?ms"
expect "vs base d\.share"                            # and the change of share
keys s s s                                           # total > self > calls > share change
wait_for "sorted by share change"
expect "by share change +total"
expect "synchronize .* new \+[0-9.]+ ?ms +\+[0-9.]+pp"
keys s
wait_for "sorted by total"
keys 7                                               # Bottlenecks: NEW tags
wait_for "\| Bottlenecks \|"
expect "NEW +(cpu_gpu_sync|hot_operation) "

resize 100 30                                        # narrow: stacked
keys 2
wait_for "\| Tree \|"
wait_for "^. NEW  new.cbor"
screen | grep -q "BASE.*NEW" && fail "narrow but not stacked"
lb=$(screen | grep -n "^. BASE base.cbor" | cut -d: -f1)
ln=$(screen | grep -n "^. NEW  new.cbor" | cut -d: -f1)
[ -n "$lb" ] && [ -n "$ln" ] && [ "$lb" -lt "$ln" ] || fail "BASE not above NEW ($lb, $ln)"

keys x                                               # swap: the region is gone now
wait_for "swapped: base is now"
wait_for "^. BASE new.cbor"
expect "^. NEW  base.cbor"
expect "  synchronize +\(absent\) +gone -[0-9.]+ ?ms"    # the change: on the new side only
keys 7
wait_for "\| Bottlenecks \|"
expect "GONE +(cpu_gpu_sync|hot_operation) "
keys x
wait_for "^. BASE base.cbor"

keys w                                               # keys to the base side
keys 3                                               # Flame: differential
wait_for "\| Flame"
wait_for "synchronize  new \+[0-9.]+ ?ms"             # the selected frame's delta
expect "synchronize: not in this profile \(new in the other\)"
[ "$(screen | grep -c "^ all  \[")" -eq 2 ] || fail "not two flame graphs"
keys 2 g                                             # the first root, then zoom into it
wait_for "\| Tree \| step \|"
keys 3 Enter                                         # both sides zoom alike
wait_for "all > step  \["
[ "$(screen | grep -o "all > step  \[" | wc -l)" -eq 2 ] || fail "the sides zoomed apart"
keys q
wait_for "__EXIT__ 0"
wait_for "^ -?echo$"; expect "^ echo$"              # the tty is back to echo on
expect_not "BASE base.cbor"                          # alternate screen left

# without colour: the direction as a sign on the frames, ASCII only
start 160 30 "NO_COLOR=1 LANG=C LC_ALL=C TERM=xterm $TOP $A $N"
wait_for "BASE base.cbor"
keys 3 R
wait_for "largest regression: (step/)?synchronize"
expect "[>|]\+synchronize"
expect_not "$(printf '\342')"
keys 2
wait_for "\| Tree \|"
expect ". synchronize .* new \+"
expect "[|]> NEW  new\.cbor  < keys"                  # ASCII marks
keys q
wait_for "__EXIT__ 0"

# no figure cut, side by side and stacked, all rows open
for size in "120 40 59" "80 24 0"; do
    set -- $size
    start "$1" "$2" "TERM=xterm-256color $TOP $A $N"
    wait_for "BASE base.cbor"
    keys 2 e R
    wait_for "largest regression: (step/)?synchronize"
    [ "$3" = 0 ] || expect "Diff  new \+[0-9.]+ ?ms  not in the base profile; new [0-9.]+ ms"
    screen | python3 tests/screen/whole.py "$1" "$3" || fail "a figure cut at $1x$2"
    keys g
    wait_for "Tree \| step( \||$)"
    [ "$3" = 0 ] || expect "Diff  \+[0-9.]+ ?ms \+[0-9]+%  p=[0-9.e-]+ significant"
    screen | python3 tests/screen/whole.py "$1" "$3" || fail "a figure cut at $1x$2 on step"
    keys q
    wait_for "__EXIT__ 0"
done
echo ok
