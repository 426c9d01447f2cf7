# Screen test: memory bounded by what the file justifies (issue 32, item
# 3): a 7.9 MB torch.profiler trace of 80 000 threads with one region each
# and one GPU kernel (the analysis kept 24 KB a thread, and a 1 MiB ring a
# thread once there was GPU data: 7.4 GB), and its 4.7 MB PRISM profile:
# analyze, both exports, compare and the explorer each stay under 500 MB
# of resident memory (the peak of the child, from getrusage).
# Under ASan (SANITIZE=1: PRISM_TEST_SANITIZE) shadow memory and redzones
# inflate every allocation: the commands still run, against 3x the bound.
. tests/screen/lib.sh
LIMIT=500
[ "${PRISM_TEST_SANITIZE:-}" = 1 ] && LIMIT=1500
T="$TMPD/threads.json" P="$TMPD/threads.cbor"
python3 - "$T" <<'PY'
import json, sys
ev = [{"name": "r", "ph": "X", "cat": "user_annotation", "ts": 100 + t, "dur": 5, "pid": 1,
       "tid": t + 10} for t in range(80000)]
ev.append({"name": "kern", "ph": "X", "cat": "kernel", "ts": 200, "dur": 5, "pid": 0, "tid": 7,
           "args": {"device": 0, "stream": 7, "correlation": 1}})
ev.append({"name": "cudaLaunchKernel", "ph": "X", "cat": "cuda_runtime", "ts": 150, "dur": 5,
           "pid": 1, "tid": 10, "args": {"correlation": 1}})
json.dump({"schemaVersion": 1, "traceEvents": ev}, open(sys.argv[1], "w"))
PY
"$TOP" convert "$T" -o "$P" || fail "convert"
# peak RSS of one command, in MB, its output thrown away
peak() {
    python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$@"
}
for cmd in "analyze $T" "analyze $P" "analyze $P --format json" \
           "export --format chrome-trace $P -o /dev/null" "export --format folded $P -o /dev/null" \
           "compare $P $T"; do
    mb=$(peak "$TOP" $cmd) || fail "$cmd failed"
    [ "$mb" -lt "$LIMIT" ] || fail "$cmd: $mb MB"
done
# the explorer: its peak once the Tree of 80 000 threads showed
cat > "$TMPD/peak.py" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:])
print("PEAK", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, "MB")
PY
start 120 40 "python3 $TMPD/peak.py $TOP $P"
wait_for "\| Summary"
type_keys 2
wait_for "\| Tree"
type_keys q
wait_for "__EXIT__ 0"
mb=$(screen | sed -n 's/^PEAK \([0-9]*\) MB$/\1/p')
[ -n "$mb" ] && [ "$mb" -lt "$LIMIT" ] || fail "explorer: ${mb:-?} MB"
echo ok
