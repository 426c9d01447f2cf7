# Screen test: the text reports fit their tables to the terminal they are
# printed on, and never cut a name (issue 34).  A torch.profiler trace
# whose twelve layers' names differ only in the middle index, analysed on a
# terminal 60 columns wide: each operation whole on a line of its own, its
# figures on the next; 200 wide: one line a row; COLUMNS before the
# terminal's width; through a pipe, 100 columns unless COLUMNS says.
. tests/screen/lib.sh
T="$TMPD/layers.json"
{
    echo '{"schemaVersion": 1, "traceEvents": ['
    echo '{"name": "thread_name", "ph": "M", "ts": 0, "pid": 1, "tid": 1, "args": {"name": "main"}},'
    ts=100
    for s in 1 2 3; do
        echo "{\"name\": \"ProfilerStep#$s\", \"ph\": \"X\", \"cat\": \"user_annotation\", \"ts\": $ts, \"dur\": 2000, \"pid\": 1, \"tid\": 1},"
        t=$((ts + 10))
        for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
            d=$((100 + 10 * i))
            echo "{\"name\": \"encoder.layers.$i.self_attn.out_proj (backward)\", \"ph\": \"X\", \"cat\": \"user_annotation\", \"ts\": $t, \"dur\": $d, \"pid\": 1, \"tid\": 1},"
            t=$((t + d + 5))
        done
        ts=$((ts + 2100))
    done
    echo '{"name": "end", "ph": "i", "ts": 7000, "pid": 1, "tid": 1, "s": "t"}'
    echo ']}'
} > "$T"
# the screen and what scrolled off it, wrapped lines joined: what was
# printed, line by line
joined() { tm capture-pane -p -J -S - -t "$S"; }

# 60 columns: the names (47 columns) go past the operation column (32 wide,
# no room to grow): a line each, the figures under "total" on the next
start 60 60 "unset COLUMNS; $TOP analyze $T"
wait_for "__EXIT__ 0"
joined > "$TMPD/60.txt"
for op in "1 11" "5 7" "10 3"; do                  # operation 9 is (outside regions)
    n=${op% *} i=${op#* }
    r=$(printf '  %3d  encoder.layers.%d.self_attn.out_proj (backward)' "$n" "$i")
    grep -qxF -- "$r" "$TMPD/60.txt" ||
        fail "60 columns: operation $n (layer $i) not whole on a line of its own"
    grep -A1 -xF -- "$r" "$TMPD/60.txt" | tail -n 1 |
        grep -Eq '^ {39,}[0-9.]+ (us|µs|ms) +3 ' || fail "60 columns: no figures under operation $n"
done
# 200 columns: one line a row
start 200 40 "unset COLUMNS; $TOP analyze $T"
wait_for "__EXIT__ 0"
joined | grep -Eq '^ +1  encoder\.layers\.11\.self_attn\.out_proj \(backward\) +[0-9.]+ (us|µs|ms) +3 ' ||
    fail "200 columns: operation 1 not on one line"
# COLUMNS first: 200 on the 60-column terminal
start 60 60 "COLUMNS=200 $TOP analyze $T"
wait_for "__EXIT__ 0"
joined | grep -Eq '^ +1  encoder\.layers\.11\.self_attn\.out_proj \(backward\) +[0-9.]+ (us|µs|ms) +3 ' ||
    fail "COLUMNS=200 on a 60-column terminal: operation 1 not on one line"

# a pipe: 100 columns (room for 49), unless COLUMNS says
env -u COLUMNS "$TOP" analyze "$T" |
    grep -Eq '^    1  encoder\.layers\.11\.self_attn\.out_proj \(backward\) +[0-9.]+ us +3 ' ||
    fail "pipe: operation 1 not on one line"
COLUMNS=90 "$TOP" analyze "$T" | grep -qx '    1  encoder.layers.11.self_attn.out_proj (backward)' ||
    fail "COLUMNS=90 through a pipe: operation 1 not on a line of its own"
echo ok
