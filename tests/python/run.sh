#!/bin/sh
# run.sh - the Python tests: every tests/python/test_*.py, each file in its
# own interpreter (one PRISM session per process), through runner.py
# (unittest), with the package built in $B/python first on PYTHONPATH.
# Prints the cmocka lines tests/run.sh counts: "[  PASSED  ] N test(s)."
# and, when any failed, "[  FAILED  ] N test(s), listed below:" and the
# list.  Skipped tests count as passed (runner.py prints why).
#
# Environment: B (the build directory: $B/bin/prism-top, $B/bin/prism-run,
# $B/python/prism), PYTHON (default /usr/bin/python3, else python3),
# PRISM_PY_PASS (a name for this pass: `make test` runs "main" with
# $B/venv/bin/python, torch 2.13, and "compat" with Debian's /usr/bin/python3,
# torch 1.13; the closing line names the pass, interpreter and torch),
# PRISM_TEST_SANITIZE=1 in a SANITIZE build: the extension is built with
# ASan and UBSan, so the interpreter runs with libasan preloaded (leak
# detection off: CPython keeps its objects at exit); the tests see the
# variable (the PyTorch tests skip themselves then).
# Run by `make test` as $(B)/tests/python_test and python_compat_test; by hand, from the
# repository root: B=build sh tests/python/run.sh.
set -u
B=${B:-build}
if [ -z "${PYTHON:-}" ]; then
    if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
export B PYTHON
pass_name=${PRISM_PY_PASS:-python}     # (before the PRISM_* variables go)
if [ ! -f "$B/python/prism/_prism.abi3.so" ]; then
    echo "python: $B/python/prism/_prism.abi3.so not built (no Python.h for $PYTHON): skipped"
    echo "[  PASSED  ] 0 test(s)."
    exit 0
fi
PYTHONPATH="$(cd "$B/python" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH PYTHONDONTWRITEBYTECODE=1
# No session may start from the caller's environment.
for v in $(env | sed -n 's/^\(PRISM_[A-Z0-9_]*\)=.*/\1/p'); do
    [ "$v" = PRISM_TEST_SANITIZE ] || unset "$v"
done
if [ "${PRISM_TEST_SANITIZE:-0}" = 1 ]; then
    asan=$(${LINK_CC:-cc} -print-file-name=libasan.so)
    if [ ! -f "$asan" ]; then
        echo "python: no libasan.so to preload for the sanitized extension: skipped"
        echo "[  PASSED  ] 0 test(s)."
        exit 0
    fi
    LD_PRELOAD="$asan${LD_PRELOAD:+:$LD_PRELOAD}"
    ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export LD_PRELOAD ASAN_OPTIONS PRISM_TEST_SANITIZE
else
    unset PRISM_TEST_SANITIZE
fi
if [ ! -x "$PYTHON" ] && ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "python: no interpreter $PYTHON"
    echo "[  FAILED  ] 1 test(s), listed below:"
    echo "[  FAILED  ] interpreter $PYTHON"
    exit 1
fi
# what this pass runs on: Python's version, torch's (without the preload:
# torch never runs under ASan here)
pyver=$("$PYTHON" -c 'import sys; print(sys.version.split()[0])')
tver=$(env -u LD_PRELOAD "$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)
label="$pass_name pass: $PYTHON, Python $pyver, torch $tver"
echo "python: $label, PYTHONPATH=$PYTHONPATH${LD_PRELOAD:+, LD_PRELOAD=$LD_PRELOAD}"
# the extension (abi3, built against the build's Python headers) must load here
if ! "$PYTHON" -c 'import prism._prism' >/dev/null 2>&1; then
    echo "python: $B/python/prism/_prism.abi3.so does not load in $PYTHON:"
    "$PYTHON" -c 'import prism._prism' 2>&1 | tail -n 1
    echo "[  FAILED  ] 1 test(s), listed below:"
    echo "[  FAILED  ] import prism._prism ($label)"
    exit 1
fi
dir=$(dirname "$0")
[ -f "$dir/runner.py" ] || dir=tests/python
passed=0 failed=0 list=""
for f in tests/python/test_*.py; do
    [ -f "$f" ] || continue
    out=$("$PYTHON" "$dir/runner.py" "$f" 2>&1)
    rc=$?
    printf '%s\n' "$out" | grep -v '^RESULT \|^FAILED-TEST '
    res=$(printf '%s\n' "$out" | sed -n 's/^RESULT \([0-9]*\) \([0-9]*\) .*/\1 \2/p' | tail -n 1)
    if [ -z "$res" ]; then                  # the interpreter died
        echo "[  FAILED  ] $(basename "$f"): exit status $rc before the end"
        failed=$((failed + 1)); list="$list
[  FAILED  ] $(basename "$f")"
        continue
    fi
    passed=$((passed + ${res% *})); failed=$((failed + ${res#* }))
    for t in $(printf '%s\n' "$out" | sed -n 's/^FAILED-TEST //p'); do
        list="$list
[  FAILED  ] $t"
    done
done
echo "[  PASSED  ] $passed test(s). ($label)"
if [ "$failed" -ne 0 ]; then
    echo "[  FAILED  ] $failed test(s) ($label), listed below:$list"
    exit 1
fi
exit 0
