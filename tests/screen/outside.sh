# Screen test: the training thread's time outside regions and the slow
# steps (issue 25), on a profile of tests/steps_workload (30 steps of
# "forward" 8 ms, 4 ms that no region holds, "backward" 8 ms; steps 9, 19
# and 29 sleep 100 ms more outside the regions): `(outside regions)` in
# the Summary's operations, the Tree and the Flame; the Summary's "Steps
# cover:" line; Enter on the slow_steps finding opens the Timeline at the
# first slow step, s / S go to the next / previous one (the steps the
# finding lists, read from analyze's JSON); the training thread's lane
# shows the gap as an `(outside regions)` span, the cursor finds it with
# ], Enter shows the node in the Tree; then without colour, ASCII.  Keys
# are typed one by one (type_keys).
. tests/screen/lib.sh
W="$B/tests/steps_workload"
[ -x "$W" ] || fail "$W missing (make $W)"
P="$TMPD/outside.cbor"
PRISM_CPU_INTERVAL_MS=0 "$W" "$P" 30 >/dev/null 2>&1 || fail "steps_workload"
# the slow steps the finding lists: the planted ones among them
ev=$("$TOP" analyze --format json "$P" | python3 -c '
import json, sys
for b in json.load(sys.stdin)["bottlenecks"]:
    if b["type"] == "slow_steps":
        print(b["evidence"])')
slow=$(printf '%s\n' "$ev" | grep -oE "\(?steps [0-9, ]+" | head -1 | grep -oE "[0-9]+" | tr '\n' ' ')
for k in 9 19 29; do
    case " $slow" in *" $k "*) ;; *) fail "slow_steps lists '$slow', not step $k: $ev" ;; esac
done
set -- $slow
first=$1
# s from step 0 goes to the first slow step after it (step 0 itself may be
# slow on a busy machine: a warm-up)
set -- $(printf '%s\n' $slow | awk '$1 > 0')
after0=$1 after1=$2

start 120 32 "TERM=xterm-256color LANG=C.UTF-8 $TOP $P"
wait_for "1 Summary"
wait_for "Steps cover: [0-9.]+% of the wall( span|)( |$)"
expect "^ \(outside regions\) +.* [0-9.]+%"
type_keys 2; wait_for "\(outside regions\) +[0-9.]+ ms"
wait_for "\| Tree \| \(outside regions\)"    # the heaviest row, selected
type_keys j; wait_for "\| Tree \| (backward|forward)"
type_keys 3; wait_for "^ all  \["
expect "\(outside regions\)"
# Bottlenecks: the slow_steps finding, Enter: the Timeline at its first step
type_keys 7; wait_for "slow_steps +HIGH"
n=0
until screen | grep -Eq "^ Evidence +median step"; do
    n=$((n + 1)); [ "$n" -le 6 ] || fail "no slow_steps finding to select"
    type_keys j
done
type_keys Enter; wait_for "^ Step $first .*OUTLIER"
expect "\| Timeline \|"
# the lane: the 104 ms gap of the slow step is (outside regions)
expect "^main +.*\(outside regions\)"
# s / S: the next and the previous slow step, from the first step
type_keys g; wait_for "^ Step 0 "
type_keys s; wait_for "^ Step $after0 "
type_keys s; wait_for "^ Step $after1 "
type_keys S; wait_for "^ Step $after0 "
# the cursor on the gap: its line says so; Enter: the node in the Tree
type_keys v; wait_for "\+0 ns|idle|forward"
type_keys ']'; wait_for "^ \(outside regions\) +[0-9.]+ ms +at \+[0-9.]+ ms +\(no region holds it\) +Enter: Tree"
type_keys Enter; wait_for "\| Tree \| \(outside regions\)"
type_keys q; wait_for "__EXIT__ 0"

# no colour, ASCII: the span's name and its dotted extent still mark it
start 100 30 "TERM=xterm LANG=C NO_COLOR=1 $TOP $P"
wait_for "1 Sum"
type_keys 8; wait_for "^ Step 29 "
expect "^main +.*\(outside regions\)\.\.\."
type_keys 2; wait_for "\(outside regions\)"
type_keys q; wait_for "__EXIT__ 0"
