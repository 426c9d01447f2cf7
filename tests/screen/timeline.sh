# Screen test: the Timeline pane on the reference profile (the project's
# writer; two threads and a GPU stream): the step chart and its selection
# (keys and a mouse click), the lanes of the selected step (threads and the
# GPU stream, nested rows, labelled spans), the cursor, [ ] hops, zoom
# (which keeps the span under the cursor) and fit, Enter to the Tree and
# back, then ASCII without colour at 80x24, 200x50 and tiny sizes.  Keys
# are typed one by one (type_keys).
. tests/screen/lib.sh
REF="$TMPD/ref.cbor"
"$B/bin/refprofile" -o "$REF" >/dev/null || fail "refprofile"
status() { screen | tail -1; }

start 100 30 "TERM=xterm LANG=C.UTF-8 $TOP $REF"
wait_for "1 Summary"
type_keys 8; wait_for "^ Step 19 .*\(20 of 20\)"
# the lanes of the last step: both threads and the GPU stream, nested rows
expect "^main +step"
expect "^ +data_loading .*forward .*backward"
expect "^loader\.1 .*decode_ba"
expect "^GPU0 s7 "
expect "│0 ns .*│1\.00 ms"
# the chart: h/l, g/G (Home/End) select a step; the lanes follow
type_keys h; wait_for "^ Step 18 .*\(19 of 20\)"
type_keys g; wait_for "^ Step 0 .*\(1 of 20\)"
expect "^main +step"
type_keys G; wait_for "\(20 of 20\)"
# a click on the third bar selects step 2 (SGR mouse report, 1-based)
tm send-keys -t "$S" -l "$(printf '\033[<0;10;4M\033[<0;10;4m')"
wait_for "^ Step 2 .*\(3 of 20\)"
type_keys G; wait_for "\(20 of 20\)"
# lanes: the cursor row on main's second row, the span under the cursor
type_keys v j; wait_for "^ >"
wait_for "^ data_loading .* at \+[0-9]+ ns"
type_keys ']'; wait_for "^ forward .* at \+[0-9.]+ ms +Enter: Tree"
expect_not "[0-9]v|v[0-9.]"                # the cursor splits no axis label
# Enter shows its call path in the Tree; Esc comes back
type_keys Enter; wait_for "\| Tree \| step/forward"
type_keys Escape; wait_for "\| Timeline \|"
wait_for "^ forward .* at \+"
# a click on the backward span puts the cursor on it
row=$(screen | grep -n "^ .*data_loading .*forward .*backward" | head -1 | cut -d: -f1)
line=$(screen | sed -n "${row}p")
pre=${line%%backward*}
x=$(( ${#pre} + 2 ))
tm send-keys -t "$S" -l "$(printf '\033[<0;%d;%dM\033[<0;%d;%dm' "$x" "$row" "$x" "$row")"
wait_for "^ backward .* at \+"
# zoom in three times from the start of the step: 1 ms is off the axis;
# 0 fits the step again
type_keys g + + +; wait_gone "│1\.00 ms"
expect "(µs|us)"
type_keys 0; wait_for "│1\.00 ms"
# Esc returns the focus to the chart, where h selects a step again
type_keys Escape; wait_for "h/l: step"
type_keys h; wait_for "\(19 of 20\)"
# big: more rows, the same lanes; small: still answering
resize 200 50; wait_for "^main +step"
expect "^GPU0 s7 "
resize 40 12; wait_for "\?:help"
resize 100 30; wait_for "^main"
type_keys q; wait_for "__EXIT__ 0"

# ] then zooming in and out keeps the span under the cursor (at 150
# columns forward's first cell starts inside data_loading: zooming in
# around that time once selected data_loading)
axis() { screen | grep -m1 -E "│[0-9.]+ (ns|µs|us|ms)"; }
zoom() {
    before=$(axis); type_keys "$1"
    n=200; while [ "$(axis)" = "$before" ] && [ "$n" -gt 0 ]; do n=$((n - 1)); sleep 0.05; done
    [ "$n" -gt 0 ] || fail "zoom $1: the axis did not change"
}
start 150 30 "TERM=xterm LANG=C.UTF-8 $TOP $REF"
wait_for "1 Summary"
type_keys 8; wait_for "^ Step 19 .*\(20 of 20\)"
type_keys v j; wait_for "^ data_loading .* at \+[0-9]+ ns"
type_keys ']'; wait_for "^ forward .* at \+[0-9.]+ ms"
for k in + + + + - - - -; do
    zoom "$k"; expect "^ forward .* at \+"
done
type_keys q; wait_for "__EXIT__ 0"

# ASCII, no colour, 80x24: bars of '#', '~' for cut labels, '|' ticks
start 80 24 "TERM=xterm LANG=C NO_COLOR=1 $TOP $REF"
wait_for "1 Sum"
type_keys 8; wait_for "^ Step 19 "
expect "^ (## |\.\. )+"
expect "^main +step"
expect "~"
expect "\|0 ns +\|"
type_keys v j l l l; wait_for "^ [a-z_]+ .* at \+"
type_keys q; wait_for "__EXIT__ 0"

# a torch.profiler trace with hostile names: lanes and spans show them as
# visible escapes; the screen is not cleared, the title not changed
T="$TMPD/hostile.json"
cat > "$T" <<'JSON'
{"schemaVersion": 1, "traceEvents": [
{"name": "thread_name", "ph": "M", "ts": 0, "pid": 1, "tid": 1, "args": {"name": "thr\u001b]0;PWNED\u0007x"}},
{"name": "ProfilerStep#1", "ph": "X", "cat": "user_annotation", "ts": 100, "dur": 1000, "pid": 1, "tid": 1},
{"name": "cls\u001b[2Jname", "ph": "X", "cat": "user_annotation", "ts": 110, "dur": 800, "pid": 1, "tid": 1},
{"name": "rlo\u202eevil", "ph": "X", "cat": "cpu_op", "ts": 120, "dur": 600, "pid": 1, "tid": 1}
]}
JSON
start 120 30 "LANG=C.UTF-8 TERM=xterm $TOP --no-follow $T"
wait_for "1 Summary"
type_keys 8; wait_for "^ Step "
wait_for '^thr\\x1b\]0;PWNED'
expect 'cls\\x1b\[2Jname'
expect 'rlo\\u202eevil'
expect "1 Summary"
tm display-message -p -t "$S" '#{pane_title}' | grep -q PWNED && fail "the title was changed"
type_keys q; wait_for "__EXIT__ 0"
echo ok
