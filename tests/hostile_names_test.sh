#!/bin/sh
# hostile_names_test.sh - one escaping rule on every output (issue 32 item
# 7): a torch.profiler trace whose region, operation, thread and process
# names hold ESC [2J, U+009B (the one-byte CSI), DEL, BEL, U+202E, U+2067,
# U+2069, U+2028 and U+2029 (tests/corpus/export/hostile_names.json), and
# the same trace converted to a PRISM profile by the project's writer, run
# through each output of prism-top:
#   analyze (text, --format json, --format html), analyze --summary,
#   compare (text, --format json, --format html), compare --gate (text,
#   markdown, --format json), export --format
#   chrome-trace|speedscope|json|csv|folded,
#   and the job report (text, --format json, --format html) of a directory
#   of two ranks,
#   one of them a file whose name is hostile too, and of their summaries.
# No output may hold a raw C0 control but \n and \t, DEL, a C1 control, a
# bidi control or a line/paragraph separator, or invalid UTF-8 (python3
# reads the bytes); every JSON output (and the HTML page's three JSON
# documents) parses and gives the names back whole; the text outputs show them escaped (\x1b, \u202e), the markdown
# one with its punctuation backslash-escaped too (\\x1b\[2J).
# Run by `make test` as $(B)/tests/hostile_names_test; by hand:
# B=build sh tests/hostile_names_test.sh.
set -u
B=${B:-build}
TOP=$B/bin/prism-top
T=$(mktemp -d "${TMPDIR:-/tmp}/prism-hostile.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
. tests/case_lib.sh
TRACE=tests/corpus/export/hostile_names.json

# check FILE json|text NAMES: FILE's bytes hold nothing raw; json: it parses
# and each of NAMES (a Python expression, a list) is in one of its strings
# whole; text: the escaped forms are there.
check() {
    python3 - "$@" <<'EOF'
import json, re, sys
path, kind, names = sys.argv[1], sys.argv[2], eval(sys.argv[3])
b = open(path, "rb").read()
if not b:
    sys.exit("%s: empty" % path)
try:
    text = b.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("%s: invalid UTF-8 at byte %d" % (path, e.start))
bad = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
m = bad.search(text)
if m:
    sys.exit("%s: raw U+%04X at character %d: %r" % (path, ord(m.group()), m.start(),
                                                    text[max(0, m.start() - 30):m.start() + 10]))
if kind in ("json", "html"):
    if kind == "html":              # the page's JSON documents, each parsed
        docs = re.findall(r'<script type="application/json" id="prism-\w+">(.*?)</script>',
                          text, re.S)
        if len(docs) < 2:
            sys.exit("%s: %d JSON documents" % (path, len(docs)))
        doc = [json.loads(d) for d in docs]
    else:
        doc = json.loads(text)
    strs = []
    def walk(x):
        if isinstance(x, str):
            strs.append(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                strs.append(k)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)
    lost = [n for n in names if not any(n in s for s in strs)]
    if lost:
        sys.exit("%s: names not read back: %r" % (path, lost))
else:
    for want in ("\\x1b[2J", "\\u009b", "\\x7f", "\\u202e", "\\u2067", "\\u2069",
                 "\\u2028", "\\u2029"):
        if kind == "markdown":      # punctuation backslash-escaped: text, not markup
            want = re.sub(r"([\\\[])", r"\\\1", want)
        if kind in ("text", "markdown") and want not in text:
            sys.exit("%s: no %s" % (path, want))
EOF
}

REGIONS='["clear\x1b[2Jscreen", "c1\x9b31mcsi", "del\x7fete", "rlo\u202eevil",
          "rli\u2067iso\u2069pdi", "ls\u2028line", "ps\u2029para", "bell\x07 tab\t nl\n"]'
OPS='["aten::" + n for n in '"$REGIONS"']'
ALL="$REGIONS + $OPS"

# out NAME ARGS...: prism-top ARGS -o $T/NAME, exit 0 and nothing on stderr
out() {
    o=$1; shift
    "$TOP" "$@" -o "$T/$o" 2>"$T/err" || { echo "prism-top $*: exit $?: $(cat "$T/err")"; return 1; }
    [ ! -s "$T/err" ] || { echo "prism-top $*: stderr: $(cat "$T/err")"; return 1; }
}

# every output of one input (a trace or a profile)
outputs() {
    f=$1 x=$2
    out "$x.analyze.json" analyze "$f" --format json && check "$T/$x.analyze.json" json "$REGIONS" &&
    out "$x.analyze.txt" analyze "$f" && check "$T/$x.analyze.txt" text "[]" &&
    out "$x.analyze.html" analyze "$f" --format html &&
    check "$T/$x.analyze.html" html "$REGIONS" &&
    out "$x.summary.json" analyze --summary "$f" && check "$T/$x.summary.json" json "$REGIONS" &&
    out "$x.compare.json" compare "$f" "$f" --format json &&
    check "$T/$x.compare.json" json "$ALL" &&
    out "$x.compare.txt" compare "$f" "$f" && check "$T/$x.compare.txt" text "[]" &&
    out "$x.compare.html" compare "$f" "$f" --format html &&
    check "$T/$x.compare.html" html "$ALL" &&
    out "$x.gate.json" compare --gate "$f" "$f" --format json --top 0 &&
    check "$T/$x.gate.json" json "$REGIONS" &&
    out "$x.gate.txt" compare --gate "$f" "$f" --top 0 && check "$T/$x.gate.txt" text "[]" &&
    out "$x.gate.md" compare --gate "$f" "$f" --format markdown --top 0 &&
    check "$T/$x.gate.md" markdown "[]" &&
    out "$x.chrome.json" export "$f" --format chrome-trace &&
    check "$T/$x.chrome.json" json "$ALL + ['main\u2067\x9b']" &&
    out "$x.speedscope.json" export "$f" --format speedscope &&
    check "$T/$x.speedscope.json" json "$ALL + ['main\u2067\x9b']" &&
    out "$x.tree.json" export "$f" --format json && check "$T/$x.tree.json" json "$ALL" &&
    out "$x.csv" export "$f" --format csv && check "$T/$x.csv" text "[]" &&
    out "$x.folded" export "$f" --format folded && check "$T/$x.folded" folded "[]"
}

case_trace() { outputs "$TRACE" trace; }
case_profile() {
    "$TOP" convert "$TRACE" -o "$T/hostile.prism" || return 1
    outputs "$T/hostile.prism" profile
}

# a job: two ranks, the second in a file whose name holds U+202E and
# U+2067; then the same job from their summaries
case_job() {
    mkdir -p "$T/job" "$T/sums" || return 1
    cp "$TRACE" "$T/job/rank0.json" &&
    sed 's/"rank":0/"rank":1/' "$TRACE" >"$T/job/rank1-$(printf '\342\200\256\342\201\247').json" ||
        return 1
    THREAD="['main\u2067\x9b', 'rank1-\u202e\u2067.json']"
    out job.json analyze "$T/job" --format json --steps && check "$T/job.json" json "$THREAD" &&
    out job.txt analyze "$T/job" && check "$T/job.txt" text-some "[]" &&
    out job.html analyze "$T/job" --format html && check "$T/job.html" html "$THREAD" &&
    for r in "$T"/job/*.json; do
        out "sums/$(basename "$r" .json).sum" analyze --summary "$r" || return 1
    done &&
    out job-sums.json analyze "$T/sums" --format json && check "$T/job-sums.json" json "$THREAD"
}

have python3 || { note "python3 is needed to read the outputs"; finish; }
[ -x "$TOP" ] || { echo "no $TOP"; exit 1; }
run_case trace_outputs case_trace
run_case profile_outputs case_profile
run_case job_outputs case_job
finish
