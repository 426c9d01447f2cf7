# Screen test: the explorer's frame - tabs, pane switching, help generated
# from the key tables, quitting restores the terminal.
. tests/screen/lib.sh
P=$(profile t)
start 100 30 "TERM=xterm-256color $TOP $P"
wait_for "1 Summary +2 Tree"
expect "8 Timeline +\?:help q:quit"
expect "Steps +20 \(20 sampled\)"
expect "Top operations"
expect "\| Summary \|"
keys 2; wait_for "\| Tree \|"
keys 3; wait_for "\| Flame"
keys Tab; wait_for "\| Ops"
keys BTab; wait_for "\| Flame"
keys '?'; wait_for "Keys everywhere"
expect "search names"
expect "3 Flame \(this pane\)"
keys Escape; wait_for "\| Flame"
keys '?'; wait_for "Keys everywhere"
keys q; wait_for "\| Flame"                 # q in Help closes Help, no quit
keys q
wait_for "__EXIT__ 0"
wait_for "^ -?echo$"; expect "^ echo$"   # the tty is back to echo on
expect_not "Top operations"  # alternate screen left
echo ok
