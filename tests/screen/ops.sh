# Screen test: the Ops pane typed key by key (type_keys: a person's pauses)
# on the sample training loop's profile: the callers view of matmul (its
# header, the paths, Enter to the Tree and Esc back to it, c to close),
# the reverse sort, the filter (\) with its "N of M ops" header, a jump
# from the Bottlenecks pane and back, the mouse (click, double click,
# wheel), and the wide layout (mean per call, heaviest path) without
# colour and UTF-8.
. tests/screen/lib.sh
P=$(profile ops)
start 80 24 "TERM=xterm $TOP $P"
wait_for "1 Summary"
type_keys 4; wait_for "total +self +calls +tot%"
type_keys g; wait_for "heaviest .*/matmul"
type_keys c; wait_for "callers of matmul: [0-9]+ paths"
expect "call path +total +calls +share"
expect "^ backward/layer\.[0-9]\.grad/matmul +[0-9.]+ [mu]?s +[0-9]+ +[0-9.]+$"
expect "^ forward/layer\.[0-9]/matmul "
# Enter: that path in the Tree; Esc comes back to the callers view
type_keys j Enter; wait_for "\| Tree \| .*matmul \|"
type_keys Escape; wait_for "callers of matmul"
type_keys c; wait_for "total +self +calls +tot%"
expect_not "callers of"
# Esc with nothing to close is the frame's back: nothing to go back to
type_keys Escape; wait_for "nothing to go back to"
expect "total +self +calls"
# r: smallest first, and back
type_keys r; wait_for "by total (\(asc\)|↑)"
type_keys r; wait_for "by total (\(desc\)|↓)"
# the filter: matching operations only, counted in the header
type_keys '\' l a y e r Enter; wait_for "filter: layer, [0-9]+ of [0-9]+ ops"
expect_not "^ matmul "
expect "^ layer\.[0-9]"
type_keys '\' C-u Enter; wait_gone "filter: layer"
wait_for "^ matmul "
# Bottlenecks: Enter shows the blamed region in the Tree, Esc comes back
type_keys 7; wait_for "Bottlenecks +[0-9]+ found"
type_keys Enter; wait_for "\| Tree \|"
type_keys Escape; wait_for "Bottlenecks +[0-9]+ found"
# the mouse (SGR reports, as xterm sends them): a click selects a row, a
# double click is Enter, the wheel moves the selection
# click BUTTON ROW [N]: N clicks in one write (a double click is not left
# to the timing of two tmux commands)
click() {
    seq=$(printf '\033[<%d;10;%dM\033[<%d;10;%dm' "$1" "$2" "$1" "$2")
    [ "${3:-1}" = 2 ] && seq="$seq$seq"
    tm send-keys -t "$S" -l "$seq"
}
type_keys 4; wait_for "total +self +calls"
row=$(screen | grep -n "^ layer\.2\.grad " | cut -d: -f1)
[ -n "$row" ] || fail "no layer.2.grad row"
click 0 "$row"; wait_for "\| Ops \| backward/layer\.2\.grad \|"
click 0 "$row" 2; wait_for "\| Tree \| backward/layer\.2\.grad \|"
type_keys Escape; wait_for "\| Ops \| backward/layer\.2\.grad \|"
tm send-keys -t "$S" -l "$(printf '\033[<65;10;5M')"; wait_gone "\| Ops \| backward/layer\.2\.grad \|"
type_keys q; wait_for "__EXIT__ 0"
# wide, no colour, no UTF-8: more columns, ASCII figures
start 200 50 "LANG=C LC_ALL=C NO_COLOR=1 TERM=xterm $TOP $P"
wait_for "1 Summary"
type_keys 4; wait_for "total +self +calls +tot% +mean +heaviest path"
expect "^ matmul +#+ +[0-9.]+ m?s .* backward/layer\.[0-9]\.grad/matmul"
expect_not "µs"
type_keys q; wait_for "__EXIT__ 0"
echo ok
