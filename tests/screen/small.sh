# Screen test: tiny terminals and resizes never crash; below 40x12 a
# "terminal too small" message, whole at every size (words drop, figures
# stay whole); back to normal when it grows again.
. tests/screen/lib.sh
P=$(profile t)
start 100 30 "TERM=xterm $TOP $P"
wait_for "1 Summary"
# each size with a line it must show whole: the figures are never cut
# (20x5 read "need 40x12, have 20x"); words drop first, 1x1 shows "!"
while read -r c r want; do
    resize "$c" "$r"
    wait_for "$want"
done <<'SIZES'
39 12 ^need 40x12, have 39x12 *$
40 11 ^need 40x12, have 40x11 *$
20 5 ^have 20x5 *$
1 1 ^! *$
2 2 ^! *$
10 3 ^have 10x3 *$
100 1 ^terminal too small: need 40x12, have 100x1 *$
SIZES
resize 20 5; wait_for "^have 20x5 *$"
expect "^terminal too small *$"; expect "^need 40x12 *$"; expect "^q: quit *$"
resize 40 12; wait_for "1 Summary"
for p in 2 3 4 5 6 7 1; do keys $p; done
resize 300 100; wait_for "1 Summary"
for p in 2 3 4 5 6 7 1; do keys $p; done
resize 80 24; wait_for "1 Summary"
keys q; wait_for "__EXIT__ 0"
echo ok
