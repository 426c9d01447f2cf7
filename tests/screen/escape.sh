# Screen test: hostile names (an ESC[2J, an OSC title change, bidi and C1
# controls, a printf directive) in a torch.profiler trace opened by the real
# prism-top: the explorer shows them as visible escapes, the screen is not
# cleared, the terminal's title is not changed; the text report likewise.
. tests/screen/lib.sh
T="$TMPD/hostile.json"
cat > "$T" <<'JSON'
{"schemaVersion": 1, "traceEvents": [
{"name": "thread_name", "ph": "M", "ts": 0, "pid": 1, "tid": 1, "args": {"name": "thr\u001b]0;PWNED\u0007x"}},
{"name": "ProfilerStep#1", "ph": "X", "cat": "user_annotation", "ts": 100, "dur": 1000, "pid": 1, "tid": 1},
{"name": "cls\u001b[2Jname", "ph": "X", "cat": "user_annotation", "ts": 110, "dur": 500, "pid": 1, "tid": 1},
{"name": "title\u001b]0;PWNED\u0007end", "ph": "X", "cat": "cpu_op", "ts": 120, "dur": 100, "pid": 1, "tid": 1},
{"name": "rlo\u202eevil", "ph": "X", "cat": "cpu_op", "ts": 300, "dur": 100, "pid": 1, "tid": 1},
{"name": "csi\u009b31mred", "ph": "X", "cat": "cpu_op", "ts": 650, "dur": 100, "pid": 1, "tid": 1},
{"name": "fmt %n%s", "ph": "X", "cat": "cpu_op", "ts": 800, "dur": 100, "pid": 1, "tid": 1}
]}
JSON
title() { tm display-message -p -t "$S" '#{pane_title}'; }
start 120 30 "LANG=C.UTF-8 TERM=xterm $TOP --no-follow $T"
wait_for "1 Summary"
keys 2; wait_for "\| Tree \|"
keys E
wait_for 'cls\\x1b\[2Jname'
wait_for 'title\\x1b\]0;PWNED\\x07end'
expect 'rlo\\u202eevil'
expect 'csi\\u009b31mred'
expect 'fmt %n%s'
expect "1 Summary"              # the screen was not cleared
title | grep -q PWNED && fail "the title was changed: $(title)"
keys 4; wait_for "\| Ops \|"
expect 'cls\\x1b\[2Jname'
keys q; wait_for "__EXIT__ 0"
title | grep -q PWNED && fail "the title was changed: $(title)"

# the text report and the exports through the terminal
start 200 120 "$TOP analyze $T; $TOP dump $T | tail -n 40; $TOP export $T --format csv -o -"
wait_for "__EXIT__ 0"
expect "Region: cls\\\\x1b\[2Jname"
expect "training thread 'thr\\\\x1b\]0;PWNED\\\\x07x'"
expect 'enter rlo\\u202eevil'
title | grep -q PWNED && fail "the title was changed: $(title)"
echo ok
