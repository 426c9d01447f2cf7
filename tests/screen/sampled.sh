# Screen test: `~` rows (time estimated from stack samples, no call timed)
# in the Tree of a user's profile (tests/fixtures/stacks/teacher_start.cbor).
# A `~` row's calls and mean columns are "-", not its sample count and the
# time one sample stands for; its samples are in the details.  The region
# above keeps its measured self time, as the Ops pane says it (Student.forward
# self 2.00 ms in both; the Tree said 0 ns), its details saying how much of
# it the `~` rows estimate.  A selected `~` row's status path is its real
# path, not "-".
. tests/screen/lib.sh
P=tests/fixtures/stacks/teacher_start.cbor
start 160 40 "NO_COLOR=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm $TOP $P"
wait_for "1 Summary"
type_keys 2; wait_for "calls +% +cpu% +mean"
type_keys e; wait_for "~ _engine_run_backward"
# the `~` rows: total and self, then "-" for calls (after %) and mean
expect "· ~ _engine_run_backward \(autograd/graph\.py:979\) +4\.90 ms +4\.90 ms +- +1\.0 +- +- "
expect "· ~ Linear\.forward \(modules/linear\.py:134\) +2\.00 ms +2\.00 ms +- "
# the region's measured self time, as in the Ops pane
expect "▾ Student\.forward +2\.34 ms +2\.00 ms +30 "
expect_not "Student\.forward +2\.34 ms +0 ns"
type_keys 4; wait_for "^ Student\.forward .* 2\.34 ms +2\.00 ms +30 "
# a `~` row selected: its samples in the details, its path in the status bar
type_keys 2 / _ e n g i n e _ r u n Enter
wait_for "Path +backward/~ _engine_run_backward \(autograd/graph\.py:979\)"
wait_for "Time +total 4\.90 ms +self 4\.90 ms \(100%\) +samples 1 "
expect "Call +an estimate from 1 stack sample \(4\.90 ms each\): no call timed"
expect "\| Tree \| backward/~ _engine_run_backward \(autograd/graph\.py:979\)"
# the region: its measured self time, the `~` rows an estimate of it
type_keys / S t u d e n t . f o r w Enter
wait_for "Path +Student\.forward *$"
expect "Time +total 2\.34 ms +self 2\.00 ms \(86%\) +~ rows: 2\.00 ms of it \(an estimate\) +calls 30"
type_keys q; wait_for "__EXIT__ 0"
echo ok
