# case_lib.sh - cmocka's lines for shell tests (sourced): run_case NAME
# FUNCTION [ARGS] runs one case, note says why something was not checked,
# finish prints the closing lines tests/run.sh counts and exits.
passed=0 failed=0 bad=""
run_case() {
    name=$1; shift
    echo "[ RUN      ] $name"
    if out=$("$@" 2>&1); then
        [ -n "$out" ] && printf '%s\n' "$out"
        echo "[       OK ] $name"
        passed=$((passed + 1))
    else
        printf '%s\n' "$out"
        echo "[  ERROR   ] --- $name"
        echo "[  FAILED  ] $name"
        failed=$((failed + 1)); bad="$bad $name"
    fi
}
note() { echo "[  SKIPPED ] $*"; }
have() { command -v "$1" >/dev/null 2>&1; }
finish() {
    echo "[  PASSED  ] $passed test(s)."
    [ "$failed" -eq 0 ] && exit 0
    echo "[  FAILED  ] $failed test(s), listed below:"
    for n in $bad; do echo "[  FAILED  ] $n"; done
    exit 1
}
