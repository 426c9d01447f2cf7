# Screen test: a torch.profiler trace (Kineto layout, the committed fixture
# tests/fixtures/kineto/basic.json, gzipped as users keep them) opened by the
# real prism-top: the Tree of the trace against an expected screen (volatile
# parts masked), drill-down into the step, the GPU pane with the trace's
# kernels, the Bottlenecks pane; a trace truncated mid-way opens too and says
# it is incomplete (cut short, at which byte); a trace that is not JSON, and
# a .json file that is no JSON, give the one-line error.
# PRISM_UPDATE_GOLDEN=1 rewrites the expected screen.
. tests/screen/lib.sh
FIX=tests/fixtures/kineto/basic.json
T="$TMPD/basic.pt.trace.json.gz"
gzip -c "$FIX" > "$T" || fail "gzip"
EXP=tests/screen/expected/trace_tree_100x30.txt
start 100 30 "TERM=xterm $TOP $T"
wait_for "1 Summary"
wait_for "Steps +4 "
# a trace has no footer: the File row says it was imported, read to its end
expect "File +complete \(imported torch\.profiler trace\)"
keys 2; wait_for "\| Tree \|"
wait_for "forward"
# the status line apart (it says how the file was read): the rest is the tree
if [ "${PRISM_UPDATE_GOLDEN:-}" = 1 ]; then
    masked | sed '$d' > "$EXP"
elif [ ! -f "$EXP" ]; then
    fail "no $EXP: make it with PRISM_UPDATE_GOLDEN=1 sh $0 and check it by eye"
else
    masked | sed '$d' | diff -u "$EXP" - || fail "the Tree differs from $EXP"
fi
expect "^ basic\.pt\.trace\.json\.gz (\| COMPLETE )?\| Tree \| backward \|"
# the record_function regions and the ops under them
expect "[▸▾.·] (data_loading|forward|backward|optimizer_step) "
keys / a t e n : : a d d m m Enter
keys n; wait_for "\| Tree \| .*aten::addmm \|"
# GPU pane: the trace's kernels and copies
keys 6; wait_for "ampere_sgemm_128x64_tn"
expect "ampere_sgemm_64x64_nn"
expect "HtoD"
keys 7; wait_for "\| Bottlenecks \|"
keys q; wait_for "__EXIT__ 0"
wait_for "^ -?echo$"; expect "^ echo$"

# cut off mid-way: opens with what it holds, marked incomplete
head -c 20000 "$FIX" > "$TMPD/cut.json"
start 100 30 "TERM=xterm $TOP --no-follow $TMPD/cut.json"
wait_for "1 Summary"
wait_for "INCOMPLETE|incomplete|truncated"
wait_for "File +cut short: the JSON ends at byte 20000"
keys q; wait_for "__EXIT__ 0"

# not JSON: one line with the file and the byte offset
printf '{"traceEvents": [ this is not json' > "$TMPD/bad.json"
start 200 10 "TERM=xterm $TOP $TMPD/bad.json"
wait_for "__EXIT__ 2"
expect "prism-top: .*bad.json: .* at byte [0-9]+"
wait_for "^ -?echo$"; expect "^ echo$"

# a .json that is no JSON at all: the error speaks of JSON, not CBOR
printf 'not json at all\n' > "$TMPD/text.json"
start 200 10 "TERM=xterm $TOP $TMPD/text.json"
wait_for "__EXIT__ 2"
expect "prism-top: .*text.json: not JSON: a JSON trace starts with '\{' or '\[', this file with 'n' at byte 0"
wait_for "^ -?echo$"; expect "^ echo$"
echo ok
