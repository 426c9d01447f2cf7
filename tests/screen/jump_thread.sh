# Screen test: a jump to a path the Tree's thread never ran.  With the
# Tree showing a data-loader thread (t), Enter on a finding of the training
# thread (Bottlenecks) lands on the merged tree, with the finding's region
# selected and a message saying why, and Esc goes back; a path the thread
# shown did run keeps that thread.
. tests/screen/lib.sh
P=$(profile t --workers 2 --slow-data-ms 20)
start 120 34 "$TOP $P"
wait_for "1 Summary"
keys 2; wait_for "\| Tree \|"
# to a loader thread: its tree has no step regions
n=0
while ! screen | grep -Eq "thread .*load"; do
    type_keys t; n=$((n + 1)); [ "$n" -lt 8 ] || fail "no loader thread in the Tree's thread views"
    sleep 0.2
done
wait_for "thread .*load"
expect_not "^ +▾? *forward "
keys 7; wait_for "\| Bottlenecks \|"
# the first finding of the training thread's steps: its Region line
wait_for "^ Region +[a-z_]+"
region=$(screen | sed -nE 's/^ Region +([a-z_./]+).*/\1/p' | head -1)
leaf=${region##*/}
[ -n "$leaf" ] || fail "no region on the finding"
keys Enter
wait_for "\| Tree \|"
wait_for "all threads merged: the thread shown never ran that path"
wait_for "Path +$region"
keys q; wait_for "__EXIT__ 0"
echo ok
