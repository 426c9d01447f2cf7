# Screen test: the Flame graph.  On the reference profile (two threads):
# Esc when not zoomed is the frame's "back", Enter / Esc zoom in and out;
# `t` shows thread by thread with the thread's name in the header; the
# mouse (SGR reports through tmux) selects a frame with a click, zooms
# with a double-click and goes to the parent with the wheel; without
# colour and UTF-8 frames keep their '|' separators.  On a profile 60
# levels deep (the Python binding's writer): the levels fill the height,
# a "+N deeper" marker, and the window follows the selection down.
. tests/screen/lib.sh
REF="$TMPD/ref.cbor"
"$B/bin/refprofile" -o "$REF" >/dev/null || fail "refprofile"
# click ROW COL [DOUBLE]: a left click (1-based screen cell)
click() {
    tm send-keys -t "$S" -l "$(printf '\033[<0;%d;%dM\033[<0;%d;%dm' "$2" "$1" "$2" "$1")"
}
bottom() { screen | tail -2 | head -1; }

start 100 30 "TERM=xterm-256color $TOP $REF"
wait_for "1 Summary"
keys 3; wait_for "^ all  \["
# not zoomed: Esc / Backspace are the frame's back (nothing to go back to)
keys Escape; wait_for "nothing to go back to"
keys Enter; wait_for "^ all > step  \["
keys BSpace; wait_for "^ all  \["

# per thread: t cycles main, loader.1, all threads
keys t; wait_for "^ \[thread main\] all  \["
expect "flame of thread main"
expect_not "decode_batch"               # the loader's frames are on the other thread
keys t; wait_for "^ \[thread loader\.1\] all  \["
expect "decode_batch"
keys t; wait_for "flame of all threads"
expect "^ all  \["

# mouse: click "backward" (row 4 of the screen: tabs, breadcrumb, step, its children)
line=$(screen | sed -n 4p)
pre=${line%%backward*}
[ "$pre" != "$line" ] || fail "no backward frame on row 4"
click 4 $(( ${#pre} + 2 ))
wait_for "^ backward  "
# the wheel up: the parent frame
tm send-keys -t "$S" -l "$(printf '\033[<64;%d;4M' $(( ${#pre} + 2 )))"
wait_for "^ step  "
# a double-click zooms into the frame clicked
tm send-keys -t "$S" -l "$(printf '\033[<0;%d;4M\033[<0;%d;4m\033[<0;%d;4M\033[<0;%d;4m' \
    $(( ${#pre} + 2 )) $(( ${#pre} + 2 )) $(( ${#pre} + 2 )) $(( ${#pre} + 2 )))"
wait_for "^ all > step > backward  \["
keys q; wait_for "__EXIT__ 0"

# no colour, no UTF-8: frames told apart by '|'
start 100 20 "NO_COLOR=1 LANG=C LC_ALL=C TERM=xterm $TOP $REF"
wait_for "1 Summary"
keys 3; wait_for "^ all  \["
expect "\|backward +\|data_loading +\|forward"
keys q; wait_for "__EXIT__ 0"

# a tree deeper than the pane
# (the binding must load: not in a sanitizer build, whose runtime python lacks)
if PYTHONPATH="$B/python" python3 -c "import prism" 2>/dev/null; then
    DEEP="$TMPD/deep.cbor"
    PYTHONPATH="$B/python" python3 - "$DEEP" <<'PY' || fail "deep profile"
import sys, prism
prism.init(output=sys.argv[1], stack_hz=0)
def nest(d):
    if d < 60:
        with prism.region("level.%d" % d):
            nest(d + 1)
    else:   # the time in the regions: the steps' few us outside them stay too thin to draw
        sum(range(300000))
for _ in range(3):
    with prism.step():
        nest(0)
prism.shutdown()
PY
    start 100 30 "TERM=xterm $TOP $DEEP"
    wait_for "1 Summary"
    keys 3; wait_for "^ all  \["
    # 26 rows for frames: 25 levels and the marker.  A frame row starts
    # where its frame does: one column in when the time outside the regions
    # (a busy machine's preemptions between them) rounds to a column.
    wait_for "^ ?[ >]level\.24"          # (the whole frame drawn: poll)
    wait_for "^ \+35 deeper"
    n=$(screen | grep -Ec "^ ?[ >]level\.[0-9]+ *$")
    [ "$n" = 25 ] || fail "deep: $n levels shown, want 25"
    expect "^ ?>level\.0"
    i=0
    while [ $i -lt 39 ]; do keys j; i=$((i + 1)); done
    wait_for "^ ?[ >]level\.39  "            # the selection, 40 levels down, on the bottom line
    expect "^ ↑ [0-9]+ levels above|^ \^ [0-9]+ levels above"
    expect "^ ?>lev"
    expect "^ \+[0-9]+ deeper"
    keys q; wait_for "__EXIT__ 0"
else
    echo "flame.sh: the Python binding in $B does not load: the deep-tree part did not run"
fi
echo ok
