#!/bin/sh
# make demo: run the sample training loop (it writes a profile through
# libcollect), then open the profile in prism-top.  Without a terminal
# prism-top prints the analyze report instead.
# usage: scripts/demo.sh BUILD_DIR OUT
set -eu
B=$1 OUT=$2
echo "== samples/trainloop: a simulated training loop with 2 loader threads and a"
echo "   planted 2 ms synchronisation stall per step -> $OUT"
"$B/bin/trainloop" --output "$OUT" --workers 2 --sync-stall-ms 2
if [ -t 0 ] && [ -t 1 ]; then
    echo "== prism-top $OUT   (q quits, ? shows the keys)"
    exec "$B/bin/prism-top" "$OUT"
fi
echo "== prism-top $OUT   (not a terminal: the report)"
exec "$B/bin/prism-top" "$OUT"
