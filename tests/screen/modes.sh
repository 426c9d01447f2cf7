# Screen test: NO_COLOR, an ASCII (C) locale, TERM=dumb and a pipe print
# the analyze report instead, and the terminal going away ends prism-top.
. tests/screen/lib.sh
P=$(profile t --leak-mb 4)
start 100 30 "NO_COLOR=1 LANG=C LC_ALL=C TERM=xterm $TOP $P"
wait_for "1 Summary"
expect "Host RSS +[-_.~=+*#]+"       # ASCII sparkline
expect_not "$(printf '\342\226')"    # no block characters
keys q; wait_for "__EXIT__ 0"

# not a terminal: the report
out=$("$TOP" "$P" </dev/null | head -5)
echo "$out" | grep -q "PRISM" || fail "no report when stdout is a pipe: $out"
TERM=dumb "$TOP" "$P" </dev/null >/dev/null 2>&1 || fail "TERM=dumb failed"
# SIGHUP (terminal hung up): exits promptly
start 100 30 "TERM=xterm $TOP $P"
wait_for "1 Summary"
pid=$(pgrep -n -f "bin/prism-top $P") || fail "prism-top not running"
kill -HUP "$pid"
wait_for "__EXIT__"
echo ok
