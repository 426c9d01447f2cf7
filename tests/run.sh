#!/bin/sh
# Run test binaries (cmocka) and screen tests; print one closing line
# "N passed, N failed" counting test cases.  Exit 1 if anything failed.
set -u
passed=0 failed=0 bad=""
for t in "$@"; do
    out=$("$t" 2>&1)
    rc=$?
    printf '%s\n' "$out" | grep -E '^\[  (PASSED|FAILED) \]|^\[  ERROR   \]' >/dev/null || true
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    p=${p:-0}; f=${f:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
        bad="$bad $(basename "$t")"
        printf '%s\n' "$out"
    else
        # a note after the count ("... test(s). (what ran them)") is shown
        note=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] [0-9]* test(s)\. \((.*)\)$/ \1/p' | tail -n 1)
        printf '%-28s %4d passed%s\n' "$(basename "$t")" "$p" "$note"
    fi
done
for s in tests/screen/*.sh; do
    [ "$(basename "$s")" = lib.sh ] && continue
    [ -f "$s" ] || continue
    if out=$(sh "$s" 2>&1); then
        passed=$((passed + 1)); printf '%-28s    1 passed\n' "$(basename "$s")"
    else
        failed=$((failed + 1)); bad="$bad $(basename "$s")"; printf '%s\n' "$out"
    fi
done
[ -n "$bad" ] && echo "failing:$bad"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
