# Screen test: a foreign or missing file gives one line with the file and
# the byte offset, exit 2, and leaves the terminal untouched.  A FIFO with
# no writer is an empty file, at once, for the explorer, analyze, export
# and a job (it blocked open(2) for good; issue 32).
. tests/screen/lib.sh
printf 'hello, not a profile' > "$TMPD/x.cbor"
start 200 30 "TERM=xterm $TOP $TMPD/x.cbor"      # wide: the one line unwrapped
wait_for "__EXIT__ 2"
expect "prism-top: .*x.cbor: not a PRISM profile .* nor a JSON trace .* at byte 0"
wait_for "^ -?echo$"; expect "^ echo$"

start 100 30 "TERM=xterm $TOP --no-follow $TMPD/missing.cbor"
wait_for "__EXIT__ 2"
expect "prism-top: .*missing.cbor: No such file or directory"

mkfifo "$TMPD/nobody.fifo"
start 100 30 "TERM=xterm $TOP $TMPD/nobody.fifo"
wait_for "__EXIT__ 2"
expect "prism-top: .*nobody.fifo: (not a regular file|empty file at byte 0)"
wait_for "^ -?echo$"; expect "^ echo$"
for cmd in "analyze" "export --format csv -o $TMPD/x.csv" "analyze --format json"; do
    start 100 30 "$TOP $cmd $TMPD/nobody.fifo"
    wait_for "__EXIT__ 2"
    expect "nobody.fifo: (not a regular file|empty file at byte 0)"
done
mkdir "$TMPD/job" && mkfifo "$TMPD/job/rank0.cbor"
start 100 30 "$TOP analyze $TMPD/job"
wait_for "__EXIT__ [0-9]"
echo ok
