# Screen test: a 1 GB linear climb (host RSS +2 MB per step over 500 steps,
# a reference profile from the project's writer) is a LEAK at 80x24 on the
# Memory pane, for host and GPU memory, and on the Summary pane; "no leak"
# shows nowhere.  Once called "no leak" in green (slope under 10 MB/step).
. tests/screen/lib.sh
P="$TMPD/climb.cbor"
"$B/bin/refprofile" -o "$P" --steps 500 --rss-kb 2048 >/dev/null || fail "refprofile"
start 80 24 "TERM=xterm $TOP $P"
wait_for "1 Summary"
wait_for "Host RSS .* \+2\.00 MB/step LEAK"
expect "GPU mem .* \+8\.00 MB/step LEAK"
keys 5; wait_for "Trend LEAK  \+2\.00.* MB/step  \+998\.0 MB \(\+[0-9.]+%\) over 499 steps"
expect "steady, significant rise; r2 1\.00; 1\.50 GB in 10 steps \(epoch end\)"
expect_not "no leak"
keys g; wait_for "Trend LEAK  \+8\.00"
expect_not "no leak"
keys 7; wait_for "memory_leak +HIGH"
keys q; wait_for "__EXIT__ 0"
# no leak: the Summary's row says so (its sparkline scales to its own
# range, so a flat run's line looks like a climb)
P=$(profile flat)
start 110 34 "$TOP $P"
wait_for "1 Summary"
wait_for "Host RSS .* MB/step (no leak|slight rise|no fit)"
keys q; wait_for "__EXIT__ 0"
echo ok
