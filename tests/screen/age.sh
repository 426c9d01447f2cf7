# Screen test: while a live profile is followed, the status line's age
# (time since data last arrived) keeps counting with no new data, and goes
# on counting while following is paused (it once froze at "PAUSED 0.0s").
. tests/screen/lib.sh
LIVE="$TMPD/live.cbor"
"$B/bin/refprofile" -o "$LIVE" --steps 50 --no-footer >/dev/null || fail "refprofile failed"
start 150 30 "TERM=xterm $TOP $LIVE"
wait_for "LIVE [0-9.]+s ago"
wait_for "LIVE [2-9]\.[0-9]s ago"      # counts on without new data
keys p; wait_for "PAUSED [0-9.]+s ago"
wait_for "PAUSED ([4-9]\.[0-9]|[1-9][0-9])s ago" 200
keys p; wait_for "LIVE [0-9.]+s ago"
keys q; wait_for "__EXIT__ 0"
echo ok
