# Screen test: a big profile opens at once and loads while the explorer
# runs: the status line shows the progress (percent, bytes, events in
# human units, rates), panes switch meanwhile (the Summary's File row
# says the file is being read, not that it lacks a footer), then the full
# figures show;
# q while it loads quits at once with the terminal restored.  The read is
# held to 10 MB/s (PRISM_READ_MBPS) so that loading lasts a few seconds
# whatever the machine; the file is ~40 MB from the project's writer.
# A read error past the first screen ends it like an error at open.
. tests/screen/lib.sh
BIG="$TMPD/big.cbor"
"$B/bin/refprofile" -o "$BIG" --steps 40000 --layers 12 >/dev/null || fail "refprofile failed"
start 150 30 "PRISM_READ_MBPS=10 TERM=xterm $TOP $BIG"
wait_for "LOADING [0-9]+% [0-9.]+ [KM]B of [0-9.]+ MB, [0-9.]+( k| M)? events, [0-9.]+ [KM]B/s"
screen | tail -1 | grep -Eq "[0-9]{5,}" && fail "a raw count on the status line"
keys 2; wait_for "\| Tree \|"
expect "LOADING"                       # panes switch while it loads
expect "▾ step|[v-] step"
keys 1; wait_for "\| Summary \|"
expect_not "no footer"                 # a file being read is no damaged one
wait_for "File +(being read: LOADING|complete)"
wait_for "COMPLETE" 400
expect_not "LOADING"
expect "Steps +40000 \(20000 sampled\)"
keys q; wait_for "__EXIT__ 0"

# q while loading: out at once (well before the ~4 s the read takes)
start 150 30 "PRISM_READ_MBPS=10 TERM=xterm $TOP $BIG"
wait_for "LOADING [0-9]+%"
keys q; wait_for "__EXIT__ 0" 20
wait_for "^ -?echo$"; expect "^ echo$"   # the tty is back to echo on
# Ctrl-C while loading: the same (the shell around it survives it)
start 150 30 "trap : INT; PRISM_READ_MBPS=10 TERM=xterm $TOP $BIG"
wait_for "LOADING [0-9]+%"
keys C-c; wait_for "__EXIT__ 0" 20
wait_for "^ -?echo$"; expect "^ echo$"
# an error further on (a torch.profiler trace cut by junk) ends the
# explorer with the error and exit 2, the terminal restored, as at open
head -c 30000 tests/fixtures/kineto/basic.json > "$TMPD/bad.json"
printf '@@@ not json' >> "$TMPD/bad.json"
start 150 30 "PRISM_READ_MBPS=0.05 TERM=xterm $TOP $TMPD/bad.json"
wait_for "LOADING [0-9]+%"
wait_for "__EXIT__ 2"
expect "prism-top: .*bad.json: not valid JSON.* at byte 30000"
wait_for "^ -?echo$"; expect "^ echo$"
echo ok
