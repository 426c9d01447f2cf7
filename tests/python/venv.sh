#!/bin/sh
# venv.sh DIR PYTHON PKG... - the Python tests' own virtual environment:
# DIR created with PYTHON (`PYTHON -m venv`), PKGs installed into it with
# its pip (torch==2.13.0 and numpy: pip takes the wheels on this machine's
# disk when they are there).  Done when DIR/.prism-venv-ok exists; on
# failure one line says what is missing (the details in DIR.log) and the
# status is 1.  Run by `make test` (the rule of $(B)/venv/.prism-venv-ok).
set -u
dir=$1 py=$2
shift 2
log=$dir.log
if ! command -v "$py" >/dev/null 2>&1; then
    echo "venv: no '$py' on PATH: the Python tests' torch 2.x interpreter (set VENV_PYTHON=...)"
    exit 1
fi
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
: >"$log"
echo "venv: $dir with $(command -v "$py") ($("$py" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)), pip install $* (log: $log)"
if ! "$py" -m venv "$dir" >>"$log" 2>&1; then
    echo "venv: '$py -m venv' failed: the venv module or ensurepip is missing for $py (Debian: python3-venv); see $log"
    exit 1
fi
if ! "$dir/bin/python" -m pip install --disable-pip-version-check -q "$@" >>"$log" 2>&1; then
    echo "venv: 'pip install $*' failed in $dir (no wheel on disk and no index reachable?); see $log"
    exit 1
fi
if ! "$dir/bin/python" -c 'import torch, numpy' >>"$log" 2>&1; then
    echo "venv: torch or numpy does not import in $dir after pip install; see $log"
    exit 1
fi
touch "$dir/.prism-venv-ok"
