#!/bin/sh
# offline_test.sh - tests/gpu/run_gpu_checks.sh's logic without a GPU: run by
# `make test` as $(B)/tests/gpu_offline_test, from the repository root.
#   * syntax: sh -n of every script, the Python helpers parse;
#   * the prepared-deps build: a DEPS_DIR folder simulated from the packages
#     installed here (tests/gpu/deps.sh simulate) builds libprism.so and
#     prism-run with its headers first and its rt/ as the rpath, and
#     scripts/deps.sh with PRISM_DEPS_DIR never calls apt-get;
#   * the same with the system's copies of those headers and libraries
#     hidden (unshare -m; as root): only the folder can have built it;
#   * run_t: a command past its timeout is stopped and recorded (rc 124), a
#     failing one too; summary.json lists them and the verdict names them;
#   * no GPU: run_gpu_checks.sh stops at once with one line and exit 77,
#     its summary.json says so (gpu false).
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/prism-gpuoff.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
for v in $(env | sed -n 's/^\(PRISM_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset MAKEFLAGS MFLAGS MAKELEVEL SANITIZE BUILD   # this make is no sub-make of make test
. tests/case_lib.sh
G=tests/gpu
PY=${PYTHON:-python3}

syntax() {
    for s in "$G"/*.sh scripts/deps.sh; do sh -n "$s" || { echo "sh -n $s"; return 1; }; done
    for p in "$G"/*.py; do
        "$PY" -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$p" || return 1
    done
}
run_case scripts_parse syntax

deps_build() {
    D=$T/deps
    sh "$G/deps.sh" simulate "$D" >"$T/sim.log" 2>&1 || { cat "$T/sim.log"; return 1; }
    for f in root/usr/include/cbor.h root/usr/include/yajl lib/libcbor.so lib/libyajl.so provided; do
        [ -e "$D/$f" ] || { echo "simulate: no $D/$f"; return 1; }
    done
    # the folder's headers come before the system's
    got=$(printf '#include <cbor.h>\n' | cc -isystem "$D/root/usr/include" -E - 2>&1 |
          grep -m 1 'cbor.h"')
    case $got in *"$D/root/usr/include/cbor.h"*) ;; *) echo "cbor.h from: $got"; return 1 ;; esac
    make -s -j2 BUILD="$T/b" DEPS_DIR="$D" "$T/b/lib/libprism.so" "$T/b/bin/prism-run" \
        >"$T/make.log" 2>&1 || { tail -n 20 "$T/make.log"; return 1; }
    readelf -d "$T/b/lib/libprism.so" | grep -q "path: \[$D/rt\]" ||
        { echo "libprism.so: no rpath $D/rt"; readelf -d "$T/b/lib/libprism.so" | grep -i path; return 1; }
    make -n BUILD="$T/b" DEPS_DIR="$D" "$T/b/obj/base/errinfo.o" -W base/errinfo.c 2>/dev/null |
        grep -q -- "-isystem $D/root/usr/include" || { echo "no -isystem $D/root/usr/include"; return 1; }
}
apt_skipped() {
    mkdir -p "$T/fakebin"
    printf '#!/bin/sh\necho called >%s/apt-called\nexit 1\n' "$T" >"$T/fakebin/apt-get"
    printf '#!/bin/sh\nexit 1\n' >"$T/fakebin/dpkg-query"       # nothing installed
    chmod +x "$T/fakebin/apt-get" "$T/fakebin/dpkg-query"
    msg=$(PATH="$T/fakebin:$PATH" PRISM_DEPS_DIR="$T/deps" sh scripts/deps.sh libcbor-dev \
          python3-dev prism-no-such-package 2>&1) || { echo "deps.sh failed: $msg"; return 1; }
    [ ! -e "$T/apt-called" ] || { echo "apt-get was called"; return 1; }
    case $msg in *"prism-no-such-package"*) ;; *) echo "not named: $msg"; return 1 ;; esac
    case $msg in *libcbor-dev* | *python3-dev*) echo "provided, yet named: $msg"; return 1 ;; esac
}
# the same build with the system's copies of the packed headers and
# static libraries hidden (the .so links stay: -L DEPS/lib comes first) (a private mount namespace: empty folders
# and /dev/null bound over them), as on the lent GPU machines, which have
# none of them (there the build passed too: the H200 runs of 2026-11-27)
hidden_build() {
    D=$T/deps
    [ -d "$D/lib" ] || sh "$G/deps.sh" simulate "$D" >"$T/sim2.log" 2>&1 || return 1
    hide=""
    for pkg in libcbor-dev libyajl-dev libxxhash-dev zlib1g-dev libncurses-dev libcmocka-dev; do
        hide="$hide $(dpkg -L "$pkg" 2>/dev/null | grep -E '^/usr/(include/|lib/.*\.a$)' |
                      tr '\n' ' ')"
    done
    HIDE=$hide DD=$D TT=$T unshare -m sh -c '
        mount --make-rprivate / 2>/dev/null
        mkdir -p "$TT/empty"
        for p in $HIDE; do          # (a link is left: a mount would cover its target)
            if [ -L "$p" ]; then :
            elif [ -d "$p" ]; then mount --bind "$TT/empty" "$p" || exit 3
            elif [ -f "$p" ]; then mount --bind /dev/null "$p" || exit 3; fi
        done
        [ ! -s /usr/include/cbor.h ] || { echo "cbor.h still visible"; exit 4; }
        make -s -j2 BUILD="$TT/h" DEPS_DIR="$DD" "$TT/h/lib/libprism.so" "$TT/h/bin/prism-run" \
            "$TT/h/bin/prism-top" >"$TT/hidden.log" 2>&1 || { tail -n 20 "$TT/hidden.log"; exit 1; }
        "$TT/h/bin/prism-top" --version >/dev/null || exit 5
    '
}

if have dpkg-query && have dpkg && dpkg-query -W libcbor-dev libyajl-dev >/dev/null 2>&1; then
    run_case deps_dir_build deps_build
    run_case deps_dir_skips_apt apt_skipped
    if [ "$(id -u)" = 0 ] && have unshare && unshare -m true 2>/dev/null; then
        run_case deps_dir_build_system_headers_hidden hidden_build
    else
        note "deps_dir_build_system_headers_hidden: needs root and unshare -m"
    fi
else
    note "deps_dir_build: no Debian packages to simulate the folder from"
fi

# run_t and the summary, through lib.sh alone
runs_recorded() {
    (
        T0=$(date +%s) BUDGET=600 HARD=660 OUT=$T/o1 W=$T/w1 PHASES="" B=build G=$G
        mkdir -p "$OUT" "$W/logs" "$W/res" "$W/prof"
        SUM=$OUT/summary.txt RUNS=$W/logs/_runs.txt
        : >"$RUNS"; : >"$W/phases"
        . "$G/lib.sh"
        trap 'pack' EXIT
        phase one
        run_t 30 fine true
        run_t 1 stuck sh -c 'while :; do :; done'
        run_t 30 broken false
    ) >"$T/o1.log" 2>&1
    rc=$?
    [ "$rc" = 1 ] || { echo "exit $rc, want 1"; cat "$T/o1.log"; return 1; }
    grep -q '^stuck rc=124 ' "$T/w1/logs/_runs.txt" || { cat "$T/w1/logs/_runs.txt"; return 1; }
    grep -q 'TIMEOUT after 1s' "$T/o1/summary.txt" || return 1
    "$PY" - "$T/o1/summary.json" <<'EOF' || return 1
import json, sys
s = json.load(open(sys.argv[1]))
rc = {r["name"]: r["rc"] for r in s["runs"]}
assert rc == {"fine": 0, "stuck": 124, "broken": 1}, rc
assert s["verdict"] == "runs not exiting 0: stuck broken ", s["verdict"]
assert s["gpu"] is True and s["phases"][0]["phase"] == "one"
EOF
}
run_case runs_timed_out_and_recorded runs_recorded

no_gpu() {
    PRISM_GPU_CHECK_NO_GPU=1 OUT="$T/o2" WORK="$T/w2" PHASES=facts PY=true \
        timeout 120 sh "$G/run_gpu_checks.sh" >"$T/o2.log" 2>&1
    rc=$?
    [ "$rc" = 77 ] || { echo "exit $rc, want 77"; cat "$T/o2.log"; return 1; }
    [ "$(grep -c 'no NVIDIA GPU here' "$T/o2.log")" = 1 ] || { cat "$T/o2.log"; return 1; }
    "$PY" - "$T/o2/summary.json" <<'EOF' || return 1
import json, sys
s = json.load(open(sys.argv[1]))
assert s["gpu"] is False and s["verdict"] == "no GPU: nothing checked", s
assert [r["name"] for r in s["runs"]] == ["probe"], s["runs"]
EOF
    [ -f "$T/o2/logs.tar.gz" ] && grep -q 'no NVIDIA GPU here' "$T/o2/summary.txt"
}
run_case no_gpu_one_line_and_summary no_gpu

finish
