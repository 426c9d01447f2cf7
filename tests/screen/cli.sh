# Command-line test (no screen needed, run with the screen tests): what
# prism-top says when the command line or a file is wrong, exports into a
# pipe that closes early, and the man pages render without warnings.
#  - three files: the job report off a terminal, each missing file named, exit 2
#  - a missing file: "prism-top: FILE: No such file or directory" (the
#    system's words, no byte offset) from every command and from the
#    explorer's report path (not a terminal), exit 2
#  - a damaged file keeps "FILE: what is wrong at byte N"
#  - `export ... | head -c 10`: no message, and the pipe's status is that of
#    a program the reader left (0 or 141), even with SIGPIPE ignored
#  - docs/prism-top.1 and docs/prism-run.1 render with groff/man for a UTF-8
#    terminal and no warning (skipped, with a line, without groff)
. tests/screen/lib.sh
# one_line CMD... : run, keep rc in $rc and stderr in $TMPD/err; stdout gone
run_err() { "$@" >/dev/null 2>"$TMPD/err"; rc=$?; }
want_err() {
    got=$(cat "$TMPD/err")
    [ "$got" = "$1" ] || { echo "FAIL: stderr '$got', want '$1'"; exit 1; }
    [ "$rc" = "$2" ] || { echo "FAIL: exit $rc, want $2 ($got)"; exit 1; }
}

# three files are the ranks of a job: off a terminal, the job report, which
# names each file it could not read (exit 2: none could be read)
run_err "$TOP" runs/A.cbor runs/B.cbor runs/C.cbor
for f in A B C; do
    grep -qx "prism-top: runs/$f.cbor: No such file or directory" "$TMPD/err" ||
        { echo "FAIL: 3 files: $(cat "$TMPD/err")"; exit 1; }
done
[ "$rc" = 2 ] || { echo "FAIL: 3 files: exit $rc, want 2"; exit 1; }

m="$TMPD/missing.cbor"
for cmd in "analyze" "dump" "export --format csv" "export --format folded" \
           "export --format chrome-trace" "export --format speedscope" "convert -o $TMPD/o.cbor"; do
    # shellcheck disable=SC2086
    run_err "$TOP" ${cmd%% *} "$m" $(echo "$cmd" | cut -s -d' ' -f2-)
    want_err "prism-top: $m: No such file or directory" 2
done
f=$(profile good)
run_err "$TOP" compare "$f" "$m"
want_err "prism-top: $m: No such file or directory" 2
run_err "$TOP" "$m" </dev/null                 # the explorer off a terminal: a report
want_err "prism-top: $m: No such file or directory" 2

printf 'hello, not a profile' > "$TMPD/x.cbor"
run_err "$TOP" analyze "$TMPD/x.cbor"
grep -Eq "^prism-top: $TMPD/x.cbor: not a PRISM profile.* at byte 0$" "$TMPD/err" ||
    { echo "FAIL: damaged file: $(cat "$TMPD/err")"; exit 1; }

# a reader that leaves early: quiet, status 0 or 141 (SIGPIPE)
big=$(profile big --steps 200)
for fmt in chrome-trace speedscope folded csv json; do
    for ign in "" "trap '' PIPE;"; do
        st=$(sh -c "$ign"' "$1" export "$2" --format "$3" 2>"$4"; echo $? >"$4.rc"' \
             sh "$TOP" "$big" "$fmt" "$TMPD/perr" | head -c 10 | wc -c)
        [ "$st" = 10 ] || { echo "FAIL: $fmt: head read $st bytes"; exit 1; }
        [ -s "$TMPD/perr" ] && { echo "FAIL: $fmt $ign: stderr: $(cat "$TMPD/perr")"; exit 1; }
        prc=$(cat "$TMPD/perr.rc")
        case "$prc" in 0|141) ;; *) echo "FAIL: $fmt $ign: exit $prc"; exit 1 ;; esac
    done
done

# the man pages
if command -v groff >/dev/null 2>&1; then
    for page in docs/prism-top.1 docs/prism-run.1; do
        # as man formats for a UTF-8 terminal and for an ASCII one
        for dev in utf8 ascii; do
            w=$(groff -man -T$dev -ww -z "$page" 2>&1)
            [ -z "$w" ] || { echo "FAIL: $page (-T$dev): $w"; exit 1; }
        done
        if command -v man >/dev/null 2>&1; then
            w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
            [ -z "$w" ] || { echo "FAIL: man $page: $w"; exit 1; }
            LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q "EXIT STATUS" ||
                { echo "FAIL: $page renders no EXIT STATUS section"; exit 1; }
        fi
    done
else
    echo "cli.sh: no groff installed: man pages not rendered"
fi
echo ok
