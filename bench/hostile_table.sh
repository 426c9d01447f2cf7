#!/bin/sh
# hostile_table.sh - the hostile files of issue 16 through `prism-top
# analyze`, one table row each: file, size, wall time, peak RSS, exit status
# and the first line of stderr.  The profiles come from the generators of
# tests/format_hostile_test.c and tests/analysis_hostile_test.c (as kept by
# tests/hostile_files_test.c at full size), the torch.profiler traces are
# made here (deep nesting, absurd numbers, 500k distinct names, a 16 MiB
# name, controls in names, raw invalid UTF-8, 200k unclosed B events, a gzip
# of 256 MiB of blanks).  Figures, not a test: nothing fails on time.
#
#   B=build sh bench/hostile_table.sh [DIR]      (DIR: $B/hostile)
set -u
B=${B:-build}
D=${1:-$B/hostile}
TOP=$B/bin/prism-top
[ -x "$TOP" ] && [ -x "$B/tests/hostile_files_test" ] ||
    { echo "hostile_table: build $TOP and $B/tests/hostile_files_test first"; exit 1; }
command -v /usr/bin/time >/dev/null 2>&1 || { echo "hostile_table: needs /usr/bin/time"; exit 1; }
rm -rf "$D" && mkdir -p "$D"
PRISM_HOSTILE_DIR="$D" "$B/tests/hostile_files_test" >/dev/null 2>&1 ||
    { echo "hostile_table: hostile_files_test failed"; exit 1; }
python3 - "$D" <<'PY'
import gzip, json, sys, zlib
d = sys.argv[1]
def put(name, data):
    with open(f"{d}/{name}", "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
def ev(name, ts, dur, tid=1, ph="X"):
    return {"ph": ph, "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid}
put("torch-deep-arrays.json", "[" * 1000000)
put("torch-deep-objects.json", '{"traceEvents":' + '{"a":' * 200000)
put("torch-huge-numbers.json",
    '{"traceEvents":[{"ph":"X","name":"a","ts":1e400,"dur":-1e400,"pid":1,"tid":1},'
    '{"ph":"X","name":"b","ts":18446744073709551616,"dur":18446744073709551615,"pid":1,"tid":1},'
    '{"ph":"X","name":"c","ts":-9223372036854775809,"dur":NaN,"pid":1,"tid":1}]}')
put("torch-500k-names.json", json.dumps({"traceEvents": [ev(f"op{i}", i * 2, 1) for i in range(500000)]}))
put("torch-16MiB-name.json", json.dumps({"traceEvents": [ev("n" * (16 << 20), 0, 10)]}))
put("torch-controls.json", json.dumps({"traceEvents": [
    ev("clear\x1b[2J", 0, 10), ev("title\x1b]0;owned\x07", 20, 10), ev("bidi\u202ecba", 40, 10),
    ev("fmt%n%s", 60, 10), ev("c1\u009b31m", 80, 10)]}))
put("torch-invalid-utf8.json",
    b'{"traceEvents":[{"ph":"X","name":"bad\xff\xfe\xc0\x80","ts":0,"dur":5,"pid":1,"tid":1}]}')
put("torch-200k-unclosed.json", json.dumps({"traceEvents": [
    {"ph": "B", "name": "open", "ts": i, "pid": 1, "tid": 1} for i in range(200000)]}))
z = zlib.compressobj(9, zlib.DEFLATED, 31)
with open(f"{d}/torch-gzip-256MiB-blanks.json.gz", "wb") as f:
    f.write(z.compress(b'{"traceEvents":['))
    blanks = b" " * (1 << 20)
    for _ in range(256):
        f.write(z.compress(blanks))
    f.write(z.compress(b"]}"))
    f.write(z.flush())
PY
printf '%-34s %10s %8s %9s %4s  %s\n' file bytes time_s rss_MB exit "first line of stderr"
for f in "$D"/*; do
    [ -f "$f" ] || continue
    /usr/bin/time -f '%e %M' -o "$D/.time" "$TOP" analyze "$f" >/dev/null 2>"$D/.err"
    rc=$?
    set -- $(tail -n 1 "$D/.time")
    msg=$(head -n 1 "$D/.err" | cut -c1-70)
    printf '%-34s %10s %8s %9s %4s  %s\n' "$(basename "$f")" "$(wc -c <"$f")" "$1" \
        "$(($2 / 1024))" "$rc" "${msg:--}"
done
rm -f "$D/.time" "$D/.err"
