# Screen test: no figure is cut on any pane (issue 34: "a row drops words
# before it drops digits").  Every pane of one profile (the reference
# profile; the real GPU run's profile, for the GPU and Memory panes) and of
# two compared, at 40x12, 80x24, 120x40 and 200x50, typed key by key:
# whole.py fails on a number cut short, a unit cut off or an elided figure
# at the right edge of a pane or of either compare side.
. tests/screen/lib.sh
A="$TMPD/base.cbor" N="$TMPD/new.cbor"
"$B/bin/refprofile" -o "$A" --threads 2 --steps 20 >/dev/null || fail "refprofile"
"$B/bin/refprofile" -o "$N" --threads 2 --steps 20 --stall-ns 5000000 >/dev/null || fail "refprofile"
G=tests/fixtures/gpu/cuda_train_nvtx.cbor

for files in "$A" "$G" "$A $N"; do
    for size in 40x12 80x24 120x40 200x50; do
        cols=${size%x*} rows=${size#*x}
        start "$cols" "$rows" "LANG=C.UTF-8 TERM=xterm-256color $TOP $files"
        wait_for "\| Summary( \||$)"
        k=1
        for pane in Summary Tree Flame Ops Memory GPU Bottlenecks Timeline; do
            type_keys $k
            wait_for "\| $pane( \||$)"
            mode=$([ $pane = Flame ] && echo flame)
            screen | python3 tests/screen/whole.py "$cols" -1 $mode > "$TMPD/whole.txt" ||
                fail "$files at $size, $pane: $(cat "$TMPD/whole.txt")"
            k=$((k + 1))
        done
        type_keys q
        wait_for "__EXIT__ 0"
    done
done
echo ok
