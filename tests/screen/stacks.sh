# Screen test: the Python stack samples in the explorer.  A real profile of
# tests/python/stacks_train.py (tests/fixtures/stacks/): the time no region
# holds, `(outside regions)`, has the sampled call paths under it in the
# Tree ("~ " marks a sampled frame), also in the training thread's own tree
# (`t`), the Flame draws them, the Bottlenecks
# pane names them in the unattributed_time finding.  The Summary pane has
# the sampler's line (Stacks) and who used the CPUs (CPU).
. tests/screen/lib.sh
P=tests/fixtures/stacks/stacks_train.cbor
start 130 40 "$TOP $P"
wait_for "1 Summary"
wait_for "Stacks +[0-9]+ samples"
wait_for "CPU +.*this process [0-9.]+ +training thread [0-9.]+"
keys 2; wait_for "\| Tree \|"
expect "^ . \(outside regions\)"
type_keys e j
wait_for "~ <module> \(stacks_train.py:70\)"
wait_for "~ wait_for_peer \(stacks_train.py:29\)"
wait_for "~ summarise \(stacks_train.py:36\)"
wait_for "~ \[clock_nanosleep\]"
# a sampled row's details: an estimate, no call timed, no per-step figures
type_keys j j
wait_for "Path +\(outside regions\)/.*main \(stacks_train.py:56\)"
wait_for "Call +an estimate from [0-9]+ stack samples? .*no call timed"
wait_for "Step +no per-step figures for a sampled path"
expect_not "Call +min 0 ns"
# one thread's tree (t) has that thread's sampled paths too
keys t; wait_for "thread MainThread \(stream 1\), 1 of [0-9]"
wait_for "~ wait_for_peer \(stacks_train.py:29\)"
wait_for "share [0-9.]+% of the thread"
keys t; wait_for "all threads merged"
keys 3; wait_for "\| Flame \|"
wait_for "~ "
keys 7; wait_for "\| Bottlenecks \|"
wait_for "Time outside every region"
keys q; wait_for "__EXIT__ 0"
"$TOP" analyze "$P" | grep -q "Stack samples: [0-9]" || fail "analyze: no Stack samples line"
"$TOP" analyze "$P" | grep -q "sampled there (.*wait_for_peer (stacks_train.py:29) -> \[clock_nanosleep\]" ||
    fail "analyze: unattributed_time does not name wait_for_peer"
echo ok
