# Screen test: a foreign or missing file gives one line with the file and
# the byte offset, exit 2, and leaves the terminal untouched.
. tests/screen/lib.sh
printf 'hello, not a profile' > "$TMPD/x.cbor"
start 100 30 "TERM=xterm $TOP $TMPD/x.cbor"
wait_for "__EXIT__ 2"
expect "prism-top: .*x.cbor: not a PRISM profile.* at byte 0"
wait_for "^ -?echo$"; expect "^ echo$"

start 100 30 "TERM=xterm $TOP --no-follow $TMPD/missing.cbor"
wait_for "__EXIT__ 2"
expect "prism-top: .*missing.cbor: No such file or directory"
echo ok
