# Screen test: live tail.  A writer appends a profile in pieces (cutting
# chunks in the middle) while prism-top follows it: the view advances, a
# torn chunk never shows an error, after the footer the view equals a fresh
# offline open, and truncation or replacement of the file reloads it.
. tests/screen/lib.sh
SRC=$(profile src)                   # a complete profile to replay
LIVE="$TMPD/live.cbor"
start 120 30 "TERM=xterm $TOP $LIVE"
wait_for "WAITING for the file"
size=$(wc -c < "$SRC")
piece=$((size / 7 + 13))             # odd-sized pieces: cuts fall inside chunks
head -c "$piece" "$SRC" > "$LIVE"
wait_for "LIVE .* ev"
expect_not "error|damaged|DAMAGED"
off=$piece
while [ "$off" -lt "$size" ]; do     # the writer: one piece at a time
    tail -c +"$((off + 1))" "$SRC" | head -c "$piece" >> "$LIVE"
    off=$((off + piece))
    screen | grep -Eq "error|DAMAGED" && fail "an error showed for a partly written chunk"
done
wait_for "COMPLETE"
expect "Steps +20 \(20 sampled\)"
keys 2; wait_for "\| Tree \|"
keys g; wait_for "all threads .* 1/"   # same selection on both sides: the top row
live_screen=$(screen)
# the same file opened offline shows the same screen
start 120 30 "TERM=xterm $TOP $LIVE"
wait_for "COMPLETE"
keys 2; wait_for "\| Tree \|"
keys g; wait_for "all threads .* 1/"
[ "$(screen)" = "$live_screen" ] || { echo "live:"; echo "$live_screen"; fail "live view differs from an offline open"; }
# truncation: the file starts again with another profile
start 120 30 "TERM=xterm $TOP --follow $LIVE"
wait_for "Steps +20"
OTHER=$(profile other --steps 7)
: > "$LIVE"
cat "$OTHER" >> "$LIVE"
wait_for "Steps +7 \(7 sampled\)"
# replacement: a new file renamed over it (new inode)
cp "$SRC" "$TMPD/new.cbor" && mv "$TMPD/new.cbor" "$LIVE"
wait_for "Steps +20 \(20 sampled\)"
keys q; wait_for "__EXIT__ 0"
echo ok
