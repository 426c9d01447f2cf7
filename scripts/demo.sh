#!/bin/sh
# make demo: run the sample training loop (or, without it, the reference
# profile writer), then show the profile with prism-top.
# usage: scripts/demo.sh BUILD_DIR OUT
set -eu
B=$1 OUT=$2
if [ -x "$B/bin/trainloop" ]; then
    echo "== running samples/trainloop (a simulated training loop) -> $OUT"
    PRISM_OUTPUT="$OUT" "$B/bin/trainloop"
else
    echo "== writing a reference profile -> $OUT"
    "$B/bin/refprofile" -o "$OUT"
fi
echo "== prism-top dump --chunks $OUT"
"$B/bin/prism-top" dump --chunks "$OUT" | head -n 25
echo "..."
echo "== prism-top dump $OUT (first and last records)"
"$B/bin/prism-top" dump "$OUT" > "$OUT.txt"
head -n 40 "$OUT.txt"
echo "..."
tail -n 8 "$OUT.txt"
echo "(full listing: $OUT.txt)"
