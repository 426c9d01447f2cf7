#!/bin/sh
# run.sh - the terminal matrix (issue 16): the real prism-top in a detached
# tmux of each size, under each TERM, locale and NO_COLOR setting: start,
# wait until curses holds the terminal (the pane's tty leaves canonical
# mode), switch through the panes with keys 1..8, quit with q; then its exit
# status must be 0 and the terminal restored (stty shows echo and icanon).
# TERM=dumb: no terminal UI, the report is printed instead (checked on the
# screen's history).  Then a resize storm (300 resizes from 1x1 to 300x100
# while it runs, then keys and q) and a hangup (the tmux server killed while
# prism-top runs with SIGHUP ignored: it must exit, not spin: no prism-top
# left, its CPU time small).
#
#   B=build-san sh tests/matrix/run.sh quick|full|storm|hangup
# quick (tests/screen/matrix.sh, in `make test`): 3 sizes x 2 TERMs x 2
# locales, NO_COLOR alternating, storm, hangup.  full (`make check-full`):
# 7 sizes x 5 TERMs x 2 locales x NO_COLOR on/off, storm, hangup.
# Synchronisation is on the tty's mode, the screen and files, every wait
# bounded; no timing assertion (the CPU bound is a spin guard).
MODE=${1:-quick}
. tests/screen/lib.sh
tm set -g history-limit 200000 >/dev/null 2>&1
PROF=$(profile matrix)
CASES=0

# poll CMD... until it succeeds (bounded: 400 x 50 ms)
poll() {
    n=400
    while [ "$n" -gt 0 ]; do
        "$@" && return 0
        n=$((n - 1))
        sleep 0.05
    done
    return 1
}
pane_tty() { tm display-message -p -t "$S" '#{pane_tty}'; }
raw_mode() { stty -F "$TTY" -a 2>/dev/null | grep -q -- '-icanon'; }
exists() { [ -s "$1" ]; }
started() { raw_mode || exists "$rcf"; }   # curses holds the tty, or it ended

# run_case COLS ROWS TERM LANG NOCOLOR(0|1)
run_case() {
    cols=$1 rows=$2 term=$3 lang=$4 nc=$5
    what="${cols}x${rows} TERM=$term LANG=$lang NO_COLOR=$nc"
    CASES=$((CASES + 1))
    [ "$NS" -gt 0 ] && tm kill-session -t "$S" 2>/dev/null
    NS=$((NS + 1)); S="s$NS"
    rcf="$TMPD/rc.$NS" sttyf="$TMPD/stty.$NS"
    ncenv=""; [ "$nc" = 1 ] && ncenv="NO_COLOR=1"
    tm new-session -d -s "$S" -x "$cols" -y "$rows" \
        "env -u LC_ALL -u NO_COLOR TERM=$term LANG=$lang $ncenv $TOP $PROF; echo \$? >$rcf.w; stty -a >$sttyf; mv $rcf.w $rcf; exec sleep 600"
    TTY=$(pane_tty)
    if [ "$term" = dumb ]; then
        poll exists "$rcf" || fail "$what: prism-top did not end"
        rc=$(cat "$rcf")
        [ "$rc" = 0 ] || fail "$what: exit status $rc"
        tm capture-pane -p -J -S - -t "$S" | tr -d '\n' | grep -q 'Training Profile Report' ||
            fail "$what: no report printed"
        return 0
    fi
    poll started || fail "$what: curses never took the terminal"
    [ -s "$rcf" ] && fail "$what: prism-top ended before its UI (status $(cat "$rcf"))"
    type_keys 1 2 3 4 5 6 7 8 q
    poll exists "$rcf" || fail "$what: prism-top did not quit on q"
    rc=$(cat "$rcf")
    [ "$rc" = 0 ] || fail "$what: exit status $rc"
    grep -q ' echo ' "$sttyf" && grep -q ' icanon ' "$sttyf" ||
        fail "$what: terminal not restored: $(cat "$sttyf")"
}

# 300 resizes over every size while prism-top runs, then it still answers.
storm() {
    CASES=$((CASES + 1))
    NS=$((NS + 1)); S="s$NS"
    rcf="$TMPD/rc.$NS" sttyf="$TMPD/stty.$NS"
    tm new-session -d -s "$S" -x 80 -y 24 \
        "env -u LC_ALL TERM=xterm-256color LANG=C.UTF-8 $TOP $PROF; echo \$? >$rcf.w; stty -a >$sttyf; mv $rcf.w $rcf; exec sleep 600"
    TTY=$(pane_tty)
    poll started || fail "storm: curses never took the terminal"
    [ -s "$rcf" ] && fail "storm: prism-top ended before its UI (status $(cat "$rcf"))"
    i=0
    for k in $(seq 1 300); do
        set -- 1x1 2x2 20x6 40x12 80x24 200x50 300x100 7x3 133x41 11x90
        i=$(( (k * 7) % 10 + 1 ))
        eval "sz=\${$i}"
        tm resize-window -t "$S" -x "${sz%x*}" -y "${sz#*x}" || fail "storm: resize $sz"
    done
    tm resize-window -t "$S" -x 80 -y 24
    [ -s "$rcf" ] && fail "storm: prism-top ended during the storm (status $(cat "$rcf"))"
    type_keys 2 1
    wait_for 'Tree'
    type_keys q
    poll exists "$rcf" || fail "storm: prism-top did not quit on q"
    [ "$(cat "$rcf")" = 0 ] || fail "storm: exit status $(cat "$rcf")"
    grep -q ' echo ' "$sttyf" || fail "storm: terminal not restored"
}

# CPU time (clock ticks) of pid, or nothing once it is gone.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }

# The tmux server killed under a running prism-top that ignores SIGHUP.
hangup() {
    CASES=$((CASES + 1))
    hs="prism-hup-$$"
    pidf="$TMPD/hup.pid"
    tmux -L "$hs" new-session -d -x 80 -y 24 \
        "echo \$\$ >$pidf; trap '' HUP; exec env -u LC_ALL TERM=xterm-256color LANG=C.UTF-8 $TOP $PROF"
    poll exists "$pidf" || { tmux -L "$hs" kill-server; fail "hangup: no pid"; }
    pid=$(cat "$pidf")
    TTY=$(tmux -L "$hs" display-message -p '#{pane_tty}')
    poll raw_mode || { tmux -L "$hs" kill-server; fail "hangup: curses never took the terminal"; }
    tmux -L "$hs" kill-server
    last=0
    gone() {
        t=$(ticks "$pid")
        [ -z "$t" ] && return 0
        last=$t
        return 1
    }
    if ! poll gone; then
        kill -9 "$pid" 2>/dev/null
        fail "hangup: prism-top still running after the hangup ($last ticks of CPU)"
    fi
    ps -p "$pid" >/dev/null 2>&1 && fail "hangup: prism-top $pid remains"
    hz=$(getconf CLK_TCK)
    [ "$last" -le $((2 * hz)) ] || fail "hangup: $last ticks of CPU (spinning?)"
}

case "$MODE" in
quick)
    PRISM_TYPE_PAUSE=${PRISM_TYPE_PAUSE:-0.05}
    nc=0
    for size in 1x1 20x6 80x24; do
        for term in xterm-256color vt100; do
            for lang in C.UTF-8 C; do
                run_case "${size%x*}" "${size#*x}" "$term" "$lang" "$nc"
                nc=$((1 - nc))
            done
        done
    done
    run_case 40 12 dumb C 0
    ;;
full)
    PRISM_TYPE_PAUSE=${PRISM_TYPE_PAUSE:-0.05}
    for size in 1x1 2x2 20x6 40x12 80x24 200x50 300x100; do
        for term in xterm-256color screen vt100 linux dumb; do
            for lang in C.UTF-8 C; do
                for nc in 0 1; do
                    run_case "${size%x*}" "${size#*x}" "$term" "$lang" "$nc"
                done
            done
        done
    done
    ;;
storm|hangup)
    ;;
*)
    echo "usage: run.sh quick|full|storm|hangup"; exit 2 ;;
esac
[ "$MODE" = hangup ] || storm
[ "$MODE" = storm ] || hangup
echo "matrix ($MODE): $CASES cases passed"
