#!/bin/sh
# offline_test.sh - tests/gpu/run_gpu_checks.sh's logic without a GPU: run by
# `make test` as $(B)/tests/gpu_offline_test, from the repository root.
#   * syntax: sh -n of every script, the Python helpers parse;
#   * the bare CUPTI client (cupti_bare.c) compiles with -Werror;
#   * the prepared-deps build: a DEPS_DIR folder simulated from the packages
#     installed here (tests/gpu/deps.sh simulate) builds libprism.so and
#     prism-run with its headers first and its rt/ as the rpath, and
#     scripts/deps.sh with PRISM_DEPS_DIR never calls apt-get;
#   * the same with the system's copies of those packages (headers, static
#     and shared libraries, Python's headers) hidden (tests/gpu/hide.sh,
#     unshare -m as root or unshare -rm): only the folder can have built
#     it, and its rt/ runs it; skipped with one line where no overlay can
#     be mounted;
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

# the bare CUPTI client (matrix.sh's baseline) builds warning-free and is an
# injection library; where the CUPTI headers are missing, skipped
bare_client() {
    inc=${CUDA_HOME:-/usr/local/cuda}/include
    [ -f "$inc/cupti.h" ] || { echo "no $inc/cupti.h: skipped"; return 0; }
    ${CC:-cc} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -shared -fPIC -I"$inc" \
        -o "$T/libcupti_bare.so" "$G/cupti_bare.c" -ldl || return 1
    nm -D --defined-only "$T/libcupti_bare.so" | grep -q ' T InitializeInjection$' ||
        { echo "no InitializeInjection exported"; return 1; }
}
run_case cupti_bare_client_builds bare_client

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
# The same build with the system's copies of the carried packages out of
# sight, as on the lent GPU machines, which have none of them (tests/gpu/hide.sh:
# a private mount namespace, each folder holding them covered by an
# overlay that whites them out): every file of the -dev packages and of
# Python's headers package (headers, static libraries, the .so links, .pc
# files), and the run-time libraries no tool here needs (libcbor, libyajl,
# libxxhash, libcmocka; zlib's and ncurses' stay: the compiler and the
# shell load them, and the GPU machines have them).  There deps.sh flatten
# finds those libraries missing (the loader's cache still names them) and
# links them into rt/; libprism.so, prism-run, prism-top, the Python
# module and a cmocka test build from the folder alone, and run with rt/ as
# their rpath.  As root `unshare -m`, else `unshare -rm`; where neither can
# mount an overlay, one line says so and the case is skipped.
hide_list() {
    py=$(dpkg-query -W -f='${Package} ${Status}\n' 'libpython3.*-dev' 2>/dev/null |
         awk '/ installed$/ {print $1; exit}')
    for pkg in libcbor-dev libyajl-dev libxxhash-dev zlib1g-dev libncurses-dev libcmocka-dev $py; do
        dpkg -L "$pkg" 2>/dev/null | grep -E '^(/usr)?/(include|lib)/' | while read -r f; do
            if [ -L "$f" ] || [ -f "$f" ]; then echo "$f"; fi
        done
    done
    ldconfig -p 2>/dev/null | awk '/=>/ && $1 ~ /^lib(cbor|yajl|xxhash|cmocka)\.so\./ {print $NF}' |
        while read -r l; do echo "$l"; readlink -f "$l"; done
}
UNSHARE="unshare -rm"
[ "$(id -u)" = 0 ] && UNSHARE="unshare -m"
# Can this machine hide a file so?  Nothing printed when it can, else why not.
hide_unusable() {
    have unshare || { echo "no unshare"; return; }
    mkdir -p "$T/probe/d" "$T/probe/w" && touch "$T/probe/d/x" && echo "$T/probe/d/x" >"$T/probe/list"
    out=$($UNSHARE sh "$G/hide.sh" "$T/probe/list" "$T/probe/w" -- \
          sh -c "[ ! -e '$T/probe/d/x' ] || echo 'the file stayed visible'" 2>&1)
    [ $? = 0 ] && [ -z "$out" ] || echo "$UNSHARE, an overlay with a whiteout: $(printf '%s\n' "$out" | tail -n 1)"
}
hidden_build() {
    D=$T/deps
    [ -d "$D/lib" ] || sh "$G/deps.sh" simulate "$D" >"$T/sim2.log" 2>&1 || return 1
    hide_list >"$T/hide.list"
    grep -q '/cbor\.h$' "$T/hide.list" && grep -q '/Python\.h$' "$T/hide.list" &&
        grep -q 'libcbor\.so\.' "$T/hide.list" || { echo "hide list:"; cat "$T/hide.list"; return 1; }
    mkdir -p "$T/hw"
    # the interpreter the Makefile builds the module for (PYTHON there)
    pyb=python3
    [ -x /usr/bin/python3 ] && pyb=/usr/bin/python3
    PYB=$pyb HL=$T/hide.list DD=$D TT=$T $UNSHARE sh "$G/hide.sh" "$T/hide.list" "$T/hw" -- sh -c '
        multi=$(cc -print-multiarch)
        for f in /usr/include/cbor.h /usr/include/yajl/yajl_parse.h /usr/include/cmocka.h \
                 /usr/include/ncurses.h /usr/include/zlib.h /usr/lib/$multi/libcbor.so; do
            [ ! -e "$f" ] || { echo "$f still visible"; exit 4; }
        done
        while read -r f; do [ ! -e "$f" ] || { echo "$f still visible"; exit 4; }; done <"$HL"
        "$PYB" -c "import sysconfig, os, sys; \
            sys.exit(os.path.exists(sysconfig.get_path(\"include\") + \"/Python.h\"))" ||
            { echo "Python.h still visible"; exit 4; }
        sh tests/gpu/deps.sh flatten "$DD" >"$TT/flatten.log" 2>&1 || exit 5
        ls "$DD"/rt/libcbor.so.* >/dev/null 2>&1 ||
            { echo "rt/ lacks libcbor: $(ls "$DD/rt")"; exit 5; }
        make -s -j2 BUILD="$TT/h" DEPS_DIR="$DD" "$TT/h/lib/libprism.so" "$TT/h/bin/prism-run" \
            "$TT/h/bin/prism-top" python "$TT/h/tests/base_test" >"$TT/hidden.log" 2>&1 ||
            { tail -n 20 "$TT/hidden.log"; exit 1; }
        [ -f "$TT/h/python/prism/_prism.abi3.so" ] ||
            { echo "no Python module"; tail -n 5 "$TT/hidden.log"; exit 6; }
        "$TT/h/bin/prism-top" --version >/dev/null || exit 7
        "$TT/h/tests/base_test" >"$TT/base_test.log" 2>&1 || { tail -n 5 "$TT/base_test.log"; exit 8; }
        PYTHONPATH="$TT/h/python" "$PYB" -c "import prism._prism" || exit 9
        case $(ldd "$TT/h/bin/prism-top") in *"$DD/rt/libcbor.so"*) ;;
            *) echo "prism-top: libcbor not from rt/"; ldd "$TT/h/bin/prism-top"; exit 10 ;; esac
    '
}

if have dpkg-query && have dpkg && dpkg-query -W libcbor-dev libyajl-dev >/dev/null 2>&1; then
    run_case deps_dir_build deps_build
    run_case deps_dir_skips_apt apt_skipped
    why=$(hide_unusable)
    if [ -z "$why" ]; then
        run_case deps_dir_build_system_copies_hidden hidden_build
    else
        note "deps_dir_build_system_copies_hidden: cannot hide files here: $why"
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
