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

# names with characters that take no column (zero width space, a joiner, a
# combining accent, a BOM) are escaped like the others, so the Ops table's
# figures stay in their columns (issue 32, item 10)
Z="$TMPD/zero.json"
cat > "$Z" <<'JSON'
{"schemaVersion": 1, "traceEvents": [
{"name": "ProfilerStep#1", "ph": "X", "cat": "user_annotation", "ts": 100, "dur": 1000, "pid": 1, "tid": 1},
{"name": "zw\u200b\u200b\u200bspace", "ph": "X", "cat": "cpu_op", "ts": 110, "dur": 300, "pid": 1, "tid": 1},
{"name": "join\u200d\u2060er", "ph": "X", "cat": "cpu_op", "ts": 420, "dur": 200, "pid": 1, "tid": 1},
{"name": "acce\u0301\u0301nt", "ph": "X", "cat": "cpu_op", "ts": 630, "dur": 150, "pid": 1, "tid": 1},
{"name": "bom\ufeffname", "ph": "X", "cat": "cpu_op", "ts": 790, "dur": 100, "pid": 1, "tid": 1}
]}
JSON
start 100 30 "LANG=C.UTF-8 TERM=xterm $TOP $Z"
wait_for "1 Summary"
type_keys 4
wait_for "by total"
wait_for 'zw\\u200b'
screen | python3 -c '
import re, sys
ends = set()
for l in sys.stdin.read().split("\n"):
    if re.search(r"(zw|join|acce|bom).* [0-9.]+ (µs|us|ms) ", l):
        m = re.search(r"[0-9.]+ (µs|us|ms) ", l)
        ends.add(m.end())
sys.exit(0 if len(ends) == 1 else 1)' || fail "Ops: the figures of names with zero-width characters are not in one column"
type_keys q
wait_for "__EXIT__ 0"
echo ok
