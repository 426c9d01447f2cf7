# Screen test: wait vs work.  A training loop whose input sleeps (the
# "read" region inside data_loading), recorded with CPU samples: the Tree
# has a cpu% column and its details split the region's time into on CPU,
# run queue and blocked; the Flame's status line gives the on-CPU share;
# the Bottlenecks pane calls the sleep an input stall of the step and says
# what removing it is worth.
. tests/screen/lib.sh
P=$(profile t --slow-data-ms 80)   # the heaviest subtree even under ASan
start 110 34 "$TOP $P"
wait_for "1 Summary"
keys 2; wait_for "\| Tree \|"
expect "total +self +calls +% +cpu%"
# the sleeping input is the heaviest subtree: down twice to its leaf
expect "^ ▾ data_loading"
keys j; wait_for "Path +data_loading/load_batch"
keys e; sleep 0.15; keys j           # expand all below, then down: typed key by key
wait_for "Path +data_loading/load_batch/read"
wait_for "on CPU [0-9]+%  run queue [0-9]+%  blocked [0-9]+%"
keys 3; wait_for "\| Flame \|"
wait_for "read .*on CPU [0-9]+%"
keys 7; wait_for "\| Bottlenecks \|"
expect "data_loading +(HIGH|MEDIUM|LOW) +Input stall: '[a-z_]+' waits [0-9.]+% of step time"
# select the input stall's finding: the first one, unless a busy machine
# starved the compute enough to rank it first (matmul waiting for a CPU)
k=$(screen | awk '/type +severity +description/ { f = 1; next }
                  f && /^ +[a-z_]+ +(HIGH|MEDIUM|LOW) / { if ($1 == "data_loading") { print n + 0; exit } n++ }')
[ -n "$k" ] || fail "no data_loading row in the Bottlenecks table"
while [ "$k" -gt 0 ]; do keys j; sleep 0.15; k=$((k - 1)); done
wait_for "^ Region +data_loading/"
wait_for "Worth +the step [0-9.]+ ms -> [0-9.]+ ms if the wait were zero \(x[0-9.]+ steps/s\)"
keys q; wait_for "__EXIT__ 0"
# at 64x24 the table's description drops words, never digits, and the
# region's key hint shows whole or not at all
start 64 24 "$TOP $P"
wait_for "1 Summary"
keys 7; wait_for "\| Bottlenecks \|"
wait_for "data_loading +(HIGH|MEDIUM|LOW) +"
expect_not "data_loading +(HIGH|MEDIUM|LOW) .*[0-9.]$"     # no figure cut at the edge
expect_not "\(Enter: Tree +f?:? ?F?l?a?m?$"
keys q; wait_for "__EXIT__ 0"
# the report says what its shares are of
"$TOP" analyze "$P" | grep -q "shares are of step time: 20 sampled steps" ||
    fail "analyze: no denominator line"
"$TOP" analyze "$P" | grep -q "wait vs work measured from CPU samples" ||
    fail "analyze: CPU samples not used"
echo ok
