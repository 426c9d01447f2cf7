# Screen test: tiny terminals and resizes never crash; below 40x12 a
# "terminal too small" message; back to normal when it grows again.
. tests/screen/lib.sh
P=$(profile t)
start 100 30 "TERM=xterm $TOP $P"
wait_for "1 Summary"
for size in "39 12" "40 11" "20 5" "1 1" "2 2" "10 3"; do
    resize $size
    wait_for "terminal too small|^t"   # 1x1 shows a single character
done
resize 40 12; wait_for "1 Summary"
for p in 2 3 4 5 6 7 1; do keys $p; done
resize 300 100; wait_for "1 Summary"
for p in 2 3 4 5 6 7 1; do keys $p; done
resize 80 24; wait_for "1 Summary"
keys q; wait_for "__EXIT__ 0"
echo ok
