# Screen test: the frame's keys at a person's pace.  The search and filter
# prompts wait for keys (a pause is not a cancel, q types a q), Esc cancels;
# Esc/Backspace go back after a jump; a filter that hides the selection
# moves it to the first row shown (Details never empty); Help closes with
# q/Esc; the tab bar keeps "?:help q:quit" from 40 to 300 columns; any
# size from 20x6 up never crashes; the mouse (SGR reports sent through
# tmux) switches tabs and scrolls, and mouse reporting is off again after
# quitting.
. tests/screen/lib.sh
P=$(profile t)
status() { screen | tail -1; }
expect_status() { status | grep -Eq -- "$1" || fail "status line: expected /$1/"; }
wait_status() {
    n=200
    while [ "$n" -gt 0 ]; do
        status | grep -Eq -- "$1" && return 0
        n=$((n - 1)); sleep 0.05
    done
    fail "status line: timed out waiting for /$1/"
}
running() { screen | grep -q "__EXIT__" && fail "prism-top exited"; return 0; }
# the first reverse-video row of the body (NO_COLOR: the selection)
# the first reverse-video row of the body (tmux writes ESC[7m or ESC[0;7m)
selected() { tm capture-pane -e -p -t "$S" | sed '1d;$d' | grep -m1 -E "$(printf '\033')\[([0-9]+;)*7m" | sed 's/\x1b\[[0-9;]*m//g'; }

start 80 24 "NO_COLOR=1 TERM=xterm-256color $TOP $P"
wait_for "\?:help q:quit"
keys 2; wait_status "\| Tree \|"

# search, typed key by key: the pattern shows as typed, Enter selects a match
type_keys / m a t
wait_status "^/mat$"
keys Enter
wait_status "\| Tree \| .*matmul"
running
# "/equ": the q is typed into the pattern, it does not quit
type_keys / e q u
wait_status "^/equ$"
running
keys Enter
wait_status "no match for 'equ'"
running
# a slower typist, Backspace and ^U edit, Esc cancels
PRISM_TYPE_PAUSE=0.5
type_keys / x y BSpace
wait_status "^/x$"
type_keys C-u m a
wait_status "^/ma$"
keys Escape
wait_status "\| Tree \|"
type_keys / m a t Enter
unset PRISM_TYPE_PAUSE
wait_status "\| Tree \| .*matmul"
running

# filter: \ and F4 open the prompt; the status line shows the pattern
type_keys '\' m a t
wait_status "^filter: mat$"
keys Enter
wait_status "filter: mat"
keys 1; wait_status "\| Summary \| filter: mat"
keys F4; wait_status "^filter: mat$"
type_keys C-u Enter
wait_status "filter cleared"
keys 2; wait_status "\| Tree \|"
expect_status "^ [^|]*\| COMPLETE \| Tree \| "
status | grep -q "filter: " && fail "the filter still shows after clearing it"
# Help: merged entries, sections, q and Esc close it (back to the pane)
keys '?'; wait_for "Keys everywhere"
expect "2 Tree \(this pane\)"
expect "^ +1-8 "
expect "Esc/Bksp"
expect_not "Compare mode"
expect_not "^   Down "                         # merged into j/Down
keys q; wait_status "\| Tree \|"
running
keys F1; wait_for "Keys everywhere"
keys Escape; wait_status "\| Tree \|"
running

# back: Bottlenecks -> Enter (Tree) -> Esc: Bottlenecks, same finding
keys Escape; wait_status "nothing to go back to"
keys 7; wait_status "\| Bottlenecks \|"
keys j
wait_for "Region"
sel=$(selected)
[ -n "$sel" ] || fail "no finding selected"
keys Enter; wait_status "\| (Tree|Timeline) \|"   # a slow step's finding opens the Timeline
keys Escape; wait_status "\| Bottlenecks \|"
[ "$(selected)" = "$sel" ] || fail "back: another finding is selected ($(selected) / $sel)"
keys Enter; wait_status "\| (Tree|Timeline) \|"   # a slow step's finding opens the Timeline
keys BSpace; wait_status "\| Bottlenecks \|"
[ "$(selected)" = "$sel" ] || fail "back (Backspace): another finding is selected"
keys Escape; wait_status "nothing to go back to"

# mouse: a click on tab 4, the wheel in Help, a click on "?:help"
line=$(screen | head -1)
pre=${line%% 4 *}
x=$(( ${#pre} + 2 ))
tm send-keys -t "$S" -l "$(printf '\033[<0;%d;1M\033[<0;%d;1m' "$x" "$x")"
wait_status "\| Ops \|"
keys '?'; wait_for "lines 1-"
tm send-keys -t "$S" -l "$(printf '\033[<65;10;10M')"
wait_for "lines 4-"
keys q; wait_status "\| Ops \|"
line=$(screen | head -1)
pre=${line%%\?:help*}
x=$(( ${#pre} + 2 ))
tm send-keys -t "$S" -l "$(printf '\033[<0;%d;1M\033[<0;%d;1m' "$x" "$x")"
wait_for "Keys everywhere"
keys q; wait_status "\| Ops \|"

# the tab bar and status line at 80x24, 40x12, 300x100
keys 2; wait_status "\| Tree \| .*matmul"
screen | head -1 | grep -q " 1 Sum  2 Tree  3 Flame  4 Ops  5 Mem .*\?:help q:quit" || fail "80x24 tabs"
resize 40 12
wait_for "^ 1 2 Tree  3 4 5 6 7 8 \?:help q:quit"
wait_status "\| Tree \| .*~.*matmul"          # the path loses its middle, not the leaf
resize 300 100
wait_for "^ 1 Summary  2 Tree  3 Flame  4 Ops .* 8 Timeline  \?:help q:quit"
expect_status "\| Tree \| backward/.*/matmul( \||$)"

# any size: the program keeps answering
for size in "20 6" "30 8" "39 11" "40 12" "41 13" "60 20" "79 23" "80 24" "100 30" "120 40" \
            "160 50" "200 60" "300 100" "40 100" "300 12"; do
    resize $size
    set -- $size
    if [ "$1" -lt 40 ] || [ "$2" -lt 12 ]; then
        wait_for "terminal too small"
    else
        wait_for "\?:help q:quit"
        keys '?'; wait_for "Keys everywhere"
        keys q; wait_gone "Keys everywhere"
    fi
    running
done
resize 80 24; wait_for "\?:help q:quit"
keys q
wait_for "__EXIT__ 0"
wait_for "^ -?echo$"; expect "^ echo$"
flags=$(tm display -p -t "$S" '#{mouse_any_flag}#{mouse_standard_flag}#{mouse_button_flag}#{mouse_sgr_flag}')
[ "$flags" = "0000" ] || fail "mouse reporting left on after exit ($flags)"

# compare mode (stacked at 80x24): a click on the BASE side gives it the
# focus (its title is drawn bold), the wheel there scrolls that side
bold_title() { tm capture-pane -e -p -t "$S" | grep "$1" | grep -q "$(printf '\033')\[1[;m]"; }
P2=$(profile u)
start 80 24 "NO_COLOR=1 TERM=xterm-256color $TOP $P $P2"
wait_for "\?:help q:quit"
keys 2; wait_status "\| Tree \|"
bold_title " NEW " || fail "compare: NEW does not start with the focus"
bold_title " BASE " && fail "compare: BASE has the focus already"
tm send-keys -t "$S" -l "$(printf '\033[<0;10;5M\033[<0;10;5m')"
n=100; while ! bold_title " BASE " && [ "$n" -gt 0 ]; do n=$((n - 1)); sleep 0.05; done
bold_title " BASE " || fail "compare: a click on BASE did not give it the focus"
bold_title " NEW " && fail "compare: both sides have the focus"
keys q; wait_for "__EXIT__ 0"

# a signal while a prompt is open ends the program and restores the
# terminal; so does the terminal going away (no spinning left behind)
top_pid() { pgrep -P "$(tm display -p -t "$S" '#{pane_pid}')" -f prism-top | head -1; }
start 80 24 "LANG=C TERM=xterm $TOP $P"
wait_for "\?:help q:quit"
keys '?'; wait_for "Keys everywhere"          # ASCII only without UTF-8
screen | LC_ALL=C grep -q "$(printf '[\200-\377]')" && fail "non-ASCII under LANG=C"
keys q; type_keys / m
wait_status "^/m$"
kill -INT "$(top_pid)"
wait_for "__EXIT__ 0"
wait_for "^ -?echo$"; expect "^ echo$"
start 80 24 "NO_COLOR=1 TERM=xterm-256color $TOP $P"
wait_for "\?:help q:quit"
wait_status "\| Summary \|"
keys 2; wait_status "\| Tree \|"
# a filter that hides the selection and every row above it: the first row
# shown becomes the selection; Details and the status line name it
type_keys / m a t m u l
wait_status "^/matmul$"
keys Enter
wait_status "\| Tree \| .*matmul"
type_keys '\' m e a s
wait_status "^filter: meas$"
keys Enter
wait_for "Path +measurement"
expect_status "filter: meas"
status | grep -q matmul && fail "the status line names the hidden row"
keys F4; type_keys C-u Enter
wait_status "filter cleared"
kill -INT "$(top_pid)"
wait_for "__EXIT__ 0"
start 80 24 "TERM=xterm-256color $TOP $P"
wait_for "\?:help q:quit"
type_keys '\' l a
wait_status "^filter: la$"
pid=$(top_pid)
[ -n "$pid" ] || fail "no prism-top process"
tm kill-session -t "$S"
n=200
while kill -0 "$pid" 2>/dev/null && [ "$n" -gt 0 ]; do n=$((n - 1)); sleep 0.05; done
kill -0 "$pid" 2>/dev/null && { kill "$pid"; echo "FAIL: prism-top kept running without its terminal"; exit 1; }
echo ok
