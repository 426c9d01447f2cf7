# Screen test: the job view (issue 17) on 8 rank files of samples/multirank
# with rank 3 planted slow in "forward":
#  - off a terminal: prism-top DIR, A B C and --job FILE print the job report
#  - the Ranks heatmap against an expected screen (cells, figures and host
#    masked: timings vary): tab bar, legend, one row per rank, the straggler
#    row marked '!', the detail line; w switches to step time
#  - Stragglers names rank 3 and forward; Table sorts (s) and marks it
#  - Enter opens rank 3's profile in the explorer on the Timeline (its file
#    name and the Timeline on screen) and q comes back; t opens the Tree;
#    c compares with the median rank, m marks a base for c
#  - a mouse click selects a cell; Help against an expected screen
#  - LANG=C NO_COLOR at 80x24: ASCII shades only; tiny sizes (1x1, 20x5)
#    do not crash; q exits 0 with the terminal restored; SIGINT too
#  - the loading line, and q while a file hangs the loader (a FIFO)
#  - a file that cannot be read: listed under the Table, its hostile name
#    escaped; the terminal going away ends the program
#  - a job of summaries whose profiles are not here: Enter and c say so
# PRISM_UPDATE_GOLDEN=1 rewrites the expected screens.
. tests/screen/lib.sh
D="$TMPD/job"
mkdir -p "$D"
# without CPU samples the collective is told by its name, so what the view
# shows does not hang on how busy the machine is (the measured wait, off CPU,
# is job_cli.sh's)
PRISM_CPU_INTERVAL_MS=0 "$B/bin/multirank" --ranks 8 --steps 20 --slow-rank 3 --slow-region forward --slow-ms 5 \
    --output-dir "$D" >/dev/null 2>&1 || fail "multirank"
EXP_RANKS=tests/screen/expected/job_ranks_120x40.txt
EXP_HELP=tests/screen/expected/job_help_120x40.txt
golden() {   # golden FILE: the masked screen (stdin) against FILE
    if [ "${PRISM_UPDATE_GOLDEN:-}" = 1 ]; then
        cat > "$1"
    else
        diff -u "$1" - || fail "the screen differs from $1"
    fi
}
# the heatmap's cells and the host vary from run to run and machine to machine
mask_map() {
    masked | sed -E 's/^([> ][! ][* ] +[0-9]+ )[^T]*T$/\1CELLS T/; s/^rank ([0-9]+) \([^)]*\)/rank \1 (HOST)/; s/[0-9.]+x median/Nx median/'
}

# ---- off a terminal: the job report ----
out=$("$TOP" "$D" </dev/null) || fail "prism-top DIR off a terminal: exit $?"
echo "$out" | grep -q "PRISM Job Report" || fail "no job report for a directory: $out"
echo "$out" | grep -q "rank 3 is a straggler" || fail "the report misses rank 3: $out"
out=$("$TOP" "$D/rank0.cbor" "$D/rank1.cbor" "$D/rank3.cbor" | head -3) || true
echo "$out" | grep -q "PRISM Job Report" || fail "no job report for three files"
out=$("$TOP" --job "$D/rank3.cbor" | head -3) || true
echo "$out" | grep -q "PRISM Job Report" || fail "--job FILE: no job report"
out=$("$TOP" "$D/rank3.cbor" | head -3) || true
echo "$out" | grep -q "PRISM Training Profile Report" || fail "one file: not the profile report"

# ---- the Ranks heatmap, 120x40, UTF-8 ----
start 120 40 "TERM=xterm LANG=C.UTF-8 $TOP $D"
wait_for "1 Ranks +2 Stragglers +3 Table"
wait_for "^rank 3 \(.*\) +step [0-9]+: step "     # the straggler is selected first
expect "^>! +3 █"
expect "█ >=1.5x ▓ >=1.25x ▒ >=1.1x ░ >=0.75x of the median cell"
expect "^Work per step, rank x step \(w: step time\) +8 ranks, 20 steps"
expect "JOB 8 ranks \| Ranks \| job step .* straggler.*\?:help q:quit"
mask_map | golden "$EXP_RANKS"
# rows: j/k move the selection, g/G the ends; steps: h/l, H/L
type_keys j; wait_for "^rank 4 "
expect "^>   +4 "
type_keys G; wait_for "^rank 7 "
type_keys g; wait_for "^rank 0 "
type_keys k; wait_for "^rank 0 "                    # stays at the top
type_keys j j j l l; wait_for "^rank 3 \(.*\) +step 2: "
type_keys L; wait_for "^rank 3 \(.*\) +step 7: "
type_keys H h; wait_for "^rank 3 \(.*\) +step 1: "
# w: step time (under the collective every rank's step is the slowest's)
type_keys w; wait_for "^Step time per step, rank x step \(w: work\)"
expect "showing step time"
type_keys w; wait_for "^Work per step"
# a click on rank 5's cell of step 4 (SGR report, 1-based; cells 3 wide)
row=$(screen | grep -En "^.... +5 " | head -1 | cut -d: -f1)
[ -n "$row" ] || fail "no row for rank 5"
tm send-keys -t "$S" -l "$(printf '\033[<0;%d;%dM\033[<0;%d;%dm' 22 "$row" 22 "$row")"
wait_for "^rank 5 \(.*\) +step 4: "

# ---- Stragglers and Table ----
type_keys 2; wait_for "rank 3 is a straggler"
expect "the difference: forward "
expect "waiting for the slowest rank"
type_keys 3; wait_for "rank v host +steps"
expect "^ ! +3 .*rank3\.cbor"
type_keys s; wait_for "step med v"
expect "sorted by step median"
type_keys s s s; wait_for "excess v"
expect "^.! +3 .*rank3\.cbor"
screen | grep -A1 "excess v" | tail -1 | grep -Eq "^.! +3 " || fail "excess: rank 3 is not first"
# Enter on a Table row: that rank (5, clicked above) at its first step
type_keys Enter; wait_for "rank5\.cbor \| COMPLETE \| Timeline"
wait_for "^ Step 0 "
type_keys q; wait_for "rank +host +steps"

# ---- Enter: rank 3's Timeline at the selected step; q returns ----
type_keys 1 g j j j H l l l l l; wait_for "^rank 3 \(.*\) +step 5: "
type_keys Enter
wait_for "rank3\.cbor \| COMPLETE \| Timeline"
wait_for "^ Step 5 "
expect "8 Timeline"
type_keys q; wait_for "1 Ranks +2 Stragglers"
wait_for "^rank 3 \(.*\) +step 5: "
# t: the Tree of the same rank
type_keys t; wait_for "rank3\.cbor \| COMPLETE \| Tree"
type_keys q; wait_for "1 Ranks +2 Stragglers"
# c: against the median rank (compare mode: BASE and NEW), then back
type_keys c; wait_for "BASE +rank[0-9]+\.cbor"
expect "NEW +rank3\.cbor"
type_keys q; wait_for "compared rank [0-9]+ \(base: the median rank\) with rank 3"
# m marks rank 3 as the base; c on rank 4 compares 3 with 4
type_keys m; wait_for "rank 3 marked"
expect "^>!\* +3 "
type_keys j c; wait_for "BASE +rank3\.cbor"
expect "NEW +rank4\.cbor"
type_keys q; wait_for "compared rank 3 \(base, marked\) with rank 4"

# ---- Help ----
type_keys '?'; wait_for "^Job view keys"
masked | golden "$EXP_HELP"
type_keys Escape; wait_for "^Work per step"
type_keys q; wait_for "__EXIT__ 0"
wait_for "^ -?echo$"; expect "^ echo$"

# ---- ASCII without colour, 80x24; tiny sizes ----
start 80 24 "TERM=xterm LANG=C NO_COLOR=1 $TOP --job $D"
wait_for "1 Ranks"
expect "^>! +3 #"
expect "^# >=1\.5x \* >=1\.25x : >=1\.1x \. >=0\.75x"
screen | LC_ALL=C grep -q "$(printf '[\200-\377]')" && fail "non-ASCII under LANG=C"
type_keys 2; wait_for "rank 3 is a straggler"
screen | LC_ALL=C grep -q "$(printf '[\200-\377]')" && fail "non-ASCII under LANG=C (Stragglers)"
resize 20 5; wait_for "too small"
resize 1 1; type_keys j; resize 40 12; wait_for "\?:help"
resize 80 24; wait_for "rank 3 is a straggler"
type_keys q; wait_for "__EXIT__ 0"
wait_for "^ -?echo$"; expect "^ echo$"

# SIGINT (Ctrl-C; sent to the process: tmux's C-c would stop the shell
# around it too) leaves at once with the terminal restored
top_pid() { pgrep -P "$(tm display -p -t "$S" '#{pane_pid}')" -f prism-top | head -1; }
start 80 24 "TERM=xterm LANG=C.UTF-8 $TOP $D/rank0.cbor $D/rank1.cbor $D/rank2.cbor $D/rank3.cbor"
wait_for "1 Ranks"
expect "4 ranks, 20 steps"
kill -INT "$(top_pid)"; wait_for "__EXIT__ 0"
wait_for "^ -?echo$"; expect "^ echo$"

# q while loading: a FIFO whose writer holds it open and writes nothing
# keeps a loader thread in read(); the progress line shows, q leaves at
# once all the same (a FIFO with no writer at all is an empty file at once:
# badfile.sh)
mkfifo "$TMPD/stuck"
sleep 600 > "$TMPD/stuck" &
HOLD=$!
start 100 30 "TERM=xterm LANG=C.UTF-8 $TOP --job $D/rank0.cbor $TMPD/stuck"
wait_for "^LOADING 1/2 ranks, .* of "
expect "q: cancel"
type_keys q; wait_for "__EXIT__ 0"
wait_for "^ -?echo$"; expect "^ echo$"
kill "$HOLD" 2>/dev/null

# a file that cannot be read, its name hostile: listed under the Table,
# escaped; the others open
BAD="$TMPD/$(printf 'bad\033[2JPWNED\007.cbor')"    # no ';': it goes through sh -c
printf 'not a profile' > "$BAD"
start 120 30 "TERM=xterm LANG=C.UTF-8 $TOP $D/rank0.cbor $D/rank3.cbor $D/rank5.cbor $BAD"
wait_for "1 Ranks"
expect "JOB 3 ranks \| Ranks .* 1 failed"
type_keys 3; wait_for "1 file could not be read:"
expect 'bad\\x1b\[2JPWNED\\x07\.cbor: not a PRISM profile'
expect "^ 1 Ranks"                                  # the screen was not cleared
# the terminal going away ends the program (no spinning left behind)
pid=$(top_pid)
[ -n "$pid" ] || fail "no prism-top process"
tm kill-session -t "$S"
n=200
while kill -0 "$pid" 2>/dev/null && [ "$n" -gt 0 ]; do n=$((n - 1)); sleep 0.05; done
kill -0 "$pid" 2>/dev/null && { kill "$pid"; fail "prism-top kept running without its terminal"; }
NS=0

# a job of summaries whose profiles are elsewhere: Enter says so
mkdir -p "$TMPD/far" "$TMPD/sums"
for r in 0 3 5; do
    cp "$D/rank$r.cbor" "$TMPD/far/"
    "$TOP" analyze --summary -o "$TMPD/sums/rank$r.sum" "$TMPD/far/rank$r.cbor" || fail "summary $r"
done
rm -r "$TMPD/far"
start 120 30 "TERM=xterm LANG=C.UTF-8 $TOP $TMPD/sums"
wait_for "JOB 3 ranks"
type_keys Enter; wait_for "rank 3: its profile is not on this machine"
type_keys c; wait_for "its profile is not on this machine"
type_keys q; wait_for "__EXIT__ 0"
echo ok
