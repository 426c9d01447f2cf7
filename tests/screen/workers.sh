# Screen test: DataLoader worker processes (issue 29) on a profile of
# tests/workers_workload (2 steps, each starting 2 worker processes of 3
# batches, and a file of another run in the workers folder): the
# Summary's Workers line and its note; the Tree's t on a worker's thread
# (its header and message mark it, its regions alone); the Timeline's
# lanes of the last step, the process's own first, then its two workers;
# then 80x24 in ASCII without colour.  Keys are typed one by one
# (type_keys).
. tests/screen/lib.sh
W="$B/tests/workers_workload"
[ -x "$W" ] || fail "$W missing (make $W)"
P="$TMPD/w.prism"
"$W" "$P" 2 2 >/dev/null 2>&1 || fail "workers_workload"
line_of() { screen | grep -nE -- "$1" | head -1 | cut -d: -f1; }

start 100 30 "TERM=xterm LANG=C.UTF-8 $TOP $P"
wait_for "1 Summary"
wait_for "^ Workers +2 DataLoader workers \(4 processes\): threads 'worker N: \.\.\.'"
expect "^ +1 file of another run left"
# the Tree: t goes thread by thread, the training process's first, then
# the workers' threads, marked
type_keys 2; wait_for "^ all threads "
type_keys t; wait_for "^ thread main "
type_keys t; wait_for "^ thread worker 0: DataLoader \(worker\) "
expect "thread worker 0: DataLoader \(worker, pid [0-9]+\), 2 of 5"
expect "DataLoader batch"
expect "ToyDataset\.__getitem__"
expect_not "wait for batches|forward"
# the Timeline of the last step: main's lane, then the two workers' lanes
type_keys 8; wait_for "^ Step 1 .*\(2 of 2\)"
wait_for "^main +wait for batches"
# (a lane's label, not its spans' text: how wide a batch is drawn depends
# on how long the machine took to start the workers)
expect "^worker 0: DataLo"
expect "^worker 1: DataLo"
expect_not "Stray|stray"
m=$(line_of "^main "); w0=$(line_of "^worker 0: "); w1=$(line_of "^worker 1: ")
[ "$m" -lt "$w0" ] && [ "$w0" -lt "$w1" ] || fail "lanes out of order: main $m, workers $w0 $w1"
# the first step has its own two workers too
type_keys h; wait_for "^ Step 0 .*\(1 of 2\)"
wait_for "^worker 1: "
expect "^worker 0: "
type_keys q; wait_for "__EXIT__ 0"

# 80x24, ASCII, no colour: the same line, the same lanes
start 80 24 "TERM=xterm LANG=C LC_ALL=C NO_COLOR=1 $TOP $P"
wait_for "1 Summary"
wait_for "^ Workers +2 DataLoader workers \(4 processes\):"
type_keys 8; wait_for "\(2 of 2\)"
wait_for "^worker 0: "
expect "^worker 1: "
type_keys q; wait_for "__EXIT__ 0"
