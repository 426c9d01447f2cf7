# lib.sh - helpers for screen tests: run the real prism-top in a detached
# tmux of a fixed size, send keys, read the screen.  Sourced by the tests.
# Synchronisation is on screen content (poll capture-pane until a pattern
# shows), never on fixed sleeps; every wait is bounded.
set -u
B=${B:-build}
case $B in                      # BUILD=/elsewhere gives an absolute B
    /*) TOP="$B/bin/prism-top" ;;
    *) TOP="$PWD/$B/bin/prism-top" ;;
esac
SOCK="prism-screen-$$"
TMPD=$(mktemp -d)
tm() { tmux -L "$SOCK" "$@"; }
cleanup() { tm kill-server 2>/dev/null; rm -rf "$TMPD"; }
trap cleanup EXIT
# keep the server alive between sessions
tm start-server \; set -g exit-empty off 2>/dev/null || tm start-server

fail() { echo "FAIL: $*"; echo "--- screen:"; screen 2>/dev/null; exit 1; }

# start COLS ROWS COMMAND: a shell runs COMMAND, then prints a marker and waits
NS=0
S=s0
start() {
    cols=$1 rows=$2; shift 2
    [ "$NS" -gt 0 ] && tm kill-session -t "$S" 2>/dev/null
    NS=$((NS + 1)); S="s$NS"
    tm new-session -d -s "$S" -x "$cols" -y "$rows" "sh -c '$*; echo __EXIT__ \$?; stty -a | grep -o \" -*echo \" | head -1; exec sleep 600'"
}
screen() { tm capture-pane -p -t "$S"; }
keys() { tm send-keys -t "$S" "$@"; }
# type KEY...: one key at a time with a person's pause between them
# (PRISM_TYPE_PAUSE seconds, 0.15 by default): the program must not take a
# slow typist's pause for anything.  The pause is typing, not
# synchronisation: wait_for still decides when something has happened.
type_keys() {
    for k in "$@"; do
        tm send-keys -t "$S" "$k"
        sleep "${PRISM_TYPE_PAUSE:-0.15}"
    done
}
# wait_for PATTERN [TRIES]: poll the screen until grep -E PATTERN matches
wait_for() {
    n=${2:-200}
    while [ "$n" -gt 0 ]; do
        tm has-session -t "$S" 2>/dev/null || { echo "FAIL: tmux session gone"; exit 1; }
        screen | grep -Eq -- "$1" && return 0
        n=$((n - 1))
        sleep 0.05
    done
    fail "timed out waiting for /$1/"
}
# wait_gone PATTERN: poll until it no longer shows
wait_gone() {
    n=200
    while [ "$n" -gt 0 ]; do
        screen | grep -Eq -- "$1" || return 0
        n=$((n - 1))
        sleep 0.05
    done
    fail "timed out waiting for /$1/ to go"
}
expect() { screen | grep -Eq -- "$1" || fail "expected /$1/"; }
expect_not() { screen | grep -Eq -- "$1" && fail "did not expect /$1/"; return 0; }
resize() { tm resize-window -t "$S" -x "$1" -y "$2"; }
# mask volatile parts (times, sizes, dates, pids) for screen comparisons
masked() { screen | sed -E 's/[0-9]+(\.[0-9]+)? ?(ns|us|µs|ms|s|B|KB|MB|GB)\b/T/g; s/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}/DATE/g; s/pid [0-9]+/pid N/g; s/[0-9]+(\.[0-9]+)?%/P%/g'; }

# A profile from the sample training loop (made once per test script).
profile() {
    f="$TMPD/${1:-t}.cbor"; shift 2>/dev/null || true
    "$B/bin/trainloop" --output "$f" --steps 20 --epochs 1 "$@" >/dev/null 2>&1 || fail "trainloop failed"
    echo "$f"
}
