# Screen test: the operator window's operators (issue 35) are marked in the
# explorer as the window's steps' only.  A profile of tests/steps_workload
# with "ops": 6 steps, steps 2 and 3 flagged as window steps (as
# prism.torch flags them) with an operator region "aten::mm [64x32, 32x64]
# f32" inside "forward".  The Tree marks the
# operator with a ring (UTF-8) or "o" (ASCII) and its details say
# "recorded in the operator window (2 steps)" (its steps are none of the
# step figures); the Summary's Steps line says
# the window's steps are left out of the step times.  Keys typed one by one.
. tests/screen/lib.sh
W="$B/tests/steps_workload"
[ -x "$W" ] || fail "$W missing (make $W)"
P="$TMPD/opwindow.cbor"
PRISM_CPU_INTERVAL_MS=0 "$W" "$P" 6 ops >/dev/null 2>&1 || fail "steps_workload"
"$TOP" analyze "$P" | grep -q "Steps: 6 (6 sampled; 2 in the operator window, left out of the step times)" ||
    fail "analyze: no operator window on the Steps line"

start 110 32 "TERM=xterm-256color LANG=C.UTF-8 $TOP $P"
wait_for "1 Summary"
type_keys 2; wait_for "\| Tree \|"
type_keys / a t e n Enter
type_keys n; wait_for "\| Tree \| forward/aten::mm"
expect "∘ aten::mm \[64x32, 32x64\] f32"
wait_for "recorded in the operator window \(2 steps\), left out of the step figures"
type_keys q; wait_for "__EXIT__ 0"

start 100 30 "TERM=xterm LANG=C NO_COLOR=1 $TOP $P"
wait_for "1 Sum"
type_keys 2; wait_for "\| Tree \|"
type_keys / a t e n Enter
type_keys n; wait_for "\| Tree \| forward/aten::mm"
expect "o aten::mm \[64x32, 32x64\] f32"
type_keys q; wait_for "__EXIT__ 0"
echo ok
