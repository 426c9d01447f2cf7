# Screen test: regions nested deeper than the analysis's 256 levels are
# counted, never silently cut (issue 32, item 6).  A torch.profiler trace
# of 901 nested regions: analyze says 645 below level 256 (text and JSON),
# the Chrome trace and folded exports stop at the same depth and the
# Chrome trace's metadata counts them, and the explorer's Summary shows
# the count.
. tests/screen/lib.sh
T="$TMPD/deep.json"
python3 - "$T" <<'PY'
import json, sys
ev = [{"name": "thread_name", "ph": "M", "ts": 0, "pid": 1, "tid": 1, "args": {"name": "main"}},
      {"name": "ProfilerStep#1", "ph": "X", "cat": "user_annotation", "ts": 100, "dur": 5000,
       "pid": 1, "tid": 1}]
for i in range(901):
    ev.append({"name": "level%d" % i, "ph": "X", "cat": "user_annotation", "ts": 110 + i,
               "dur": 4000 - 2 * i, "pid": 1, "tid": 1})
json.dump({"schemaVersion": 1, "traceEvents": ev}, open(sys.argv[1], "w"))
PY
"$TOP" analyze "$T" | grep -q "^  Nested too deep: 645 regions below level 256" ||
    fail "analyze: no count of the regions nested too deep"
"$TOP" analyze "$T" --format json | python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]
assert (s["too_deep"], s["max_depth"]) == (645, 256), s' || fail "analyze JSON: too_deep"
"$TOP" export --format chrome-trace "$T" -o "$TMPD/d.json" || fail "chrome-trace export"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
x = [e for e in d["traceEvents"] if e.get("ph") == "X" and e["name"].startswith("level")]
assert len(x) == 256 and d["otherData"]["export"]["too_deep"] == 645, len(x)' "$TMPD/d.json" ||
    fail "chrome-trace: not cut at 256 with its count"
"$TOP" export --format folded "$T" -o "$TMPD/d.folded" || fail "folded export"
awk '{ n = split($1, a, ";"); if (n > m) m = n } END { exit m != 256 }' "$TMPD/d.folded" ||
    fail "folded: not 256 levels"
start 100 30 "TERM=xterm LANG=C.UTF-8 $TOP $T"
wait_for "\| Summary"
wait_for "645 regions nested below level 256: in their ancestor's time"
type_keys q
wait_for "__EXIT__ 0"
echo ok
