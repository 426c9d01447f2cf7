#!/bin/sh
# link_test.sh - building and linking programs the ways README.md gives:
#   * the README's example program ("Instrumenting a program", extracted from
#     README.md, made whole by tests/link_readme.c) built as C and as C++
#     (g++; clang and clang++ when installed), with -Wall -Wextra -Werror,
#     linked with build/lib/libprism.a: it runs and writes the profile the
#     example describes (300 steps, each region 300 times, 300 counters);
#   * the same with -DPRISM_DISABLE: no warning, no library at all, no file;
#   * make install into a temporary prefix builds nothing else (no sample,
#     test or bench: checked on a fresh build directory with make -n), and
#     installs the headers, libraries, symlinks and prism.pc;
#   * the example linked against the installed shared library through
#     pkg-config, as C and C++: runs with no LD_LIBRARY_PATH (the rpath of
#     prism.pc's Libs) and writes its profile;
#   * libprism.so through dlopen (tests/link_dlopen.c): prism_push_id,
#     prism_pop, prism_counter_i... resolve and record; ctypes the same when
#     python3 is installed (not in a sanitizer build: ASan must be loaded first);
#   * the objects of the samples are still there after the build (Make no
#     longer deletes them as intermediates).
# Run by `make test` as $(B)/tests/link_test with B and LINK_* set by the
# Makefile; by hand: B=build sh tests/link_test.sh.  From the repository
# root.  Prints cmocka's lines, so tests/run.sh counts its cases.
set -u
B=${B:-build}
CC=${LINK_CC:-cc}
CXX=${LINK_CXX:-c++}
SAN=${LINK_SAN:-}
MAKEVARS=${LINK_MAKEVARS:-}
LIBS="-lcbor -lxxhash -ldl -lm -pthread"
W="-Wall -Wextra -Werror"
TOP=$B/bin/prism-top

T=$(mktemp -d "${TMPDIR:-/tmp}/prism-link.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
# The make below is no sub-make of `make test`; no session may start from
# this environment; the installed library is found through its rpath alone.
unset MAKEFLAGS MFLAGS MAKELEVEL LD_LIBRARY_PATH
for v in $(env | sed -n 's/^\(PRISM_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done

. tests/case_lib.sh

awk '/^## Instrumenting a program/ { s = 1; next }
     s && /^## / { exit }
     s && /^```c$/ { b = 1; next }
     b && /^```$/ { exit }
     b { print }' README.md >"$T/readme_example.inc"

# check_profile DIR: DIR holds one complete profile with the example's events.
check_profile() {
    set -- "$1"/train-*.cbor
    [ $# -eq 1 ] && [ -f "$1" ] || { echo "expected one train-*.cbor, got: $*"; return 1; }
    d=$("$TOP" dump "$1") || { echo "prism-top dump $1 failed"; return 1; }
    for want in "300 ^step " "300 enter data_loading$" "300 enter forward$" \
                "300 enter backward$" "900 depth 0 exit$" "300 ^counter .* loss = "; do
        n=${want%% *} re=${want#* }
        got=$(printf '%s\n' "$d" | grep -c -- "$re")
        [ "$got" = "$n" ] || { echo "profile: $got lines match '$re', expected $n"; return 1; }
    done
    printf '%s\n' "$d" | grep -q "complete (footer present)" || { echo "profile: no footer"; return 1; }
}

# build_run NAME COMPILER FLAGS...: build the example (enabled) and run it.
build_run() {
    name=$1 comp=$2; shift 2
    mkdir -p "$T/$name" || return 1
    # shellcheck disable=SC2086
    $comp "$@" $W $SAN -Iinclude -I"$T" -o "$T/$name/prog" tests/link_readme.c -x none \
        "$B/lib/libprism.a" $LIBS || return 1
    (cd "$T/$name" && ./prog) || { echo "$name: exit status $?"; return 1; }
    check_profile "$T/$name"
}

# build_off NAME COMPILER FLAGS...: -DPRISM_DISABLE, no library, no file.
build_off() {
    name=$1 comp=$2; shift 2
    mkdir -p "$T/$name" || return 1
    # shellcheck disable=SC2086
    $comp "$@" $W -DPRISM_DISABLE -Iinclude -I"$T" -o "$T/$name/prog" tests/link_readme.c || return 1
    (cd "$T/$name" && ./prog) || { echo "$name: exit status $?"; return 1; }
    [ -z "$(ls -A "$T/$name" | grep -v '^prog$')" ] || { echo "$name wrote files"; return 1; }
    if nm -u "$T/$name/prog" | grep -q prism; then echo "$name references PRISM"; return 1; fi
}

run_case readme_c_static build_run c_static "$CC" -std=c11
run_case readme_cxx11_static build_run cxx11_static "$CXX" -std=c++11 -x c++
run_case readme_cxx20_noexcept_static build_run cxx20_static "$CXX" -std=c++20 -fno-exceptions -x c++
run_case readme_c_disabled build_off c_off "$CC" -std=c11
run_case readme_cxx_disabled build_off cxx_off "$CXX" -std=c++11 -x c++
if have clang && have clang++; then
    if [ -z "$SAN" ]; then      # clang's sanitizer runtime is not GCC's
        run_case readme_clang_static build_run clang_static clang -std=c11
        run_case readme_clangxx_static build_run clangxx_static clang++ -std=c++17 -x c++
    else
        note "clang builds against the sanitizer build's libprism.a (another ASan runtime)"
    fi
    run_case readme_clang_disabled build_off clang_off clang -std=c11
    run_case readme_clangxx_disabled build_off clangxx_off clang++ -std=c++17 -fno-exceptions -x c++
else
    note "clang/clang++ not installed: the README's example was built with $CC and $CXX only"
fi

# make install builds only what it installs: on a fresh build directory,
# make -n lists no sample, test or bench.
install_plan() {
    # shellcheck disable=SC2086
    plan=$(make -n install $MAKEVARS BUILD="$T/fresh" PREFIX="$T/plan" DESTDIR=) || return 1
    if printf '%s\n' "$plan" | grep -E '(^| )(samples|tests|bench)/[^ ]*\.(c|cpp|cu)( |$)|/obj/(samples|tests|bench)/'; then
        echo "make install would build the lines above"; return 1
    fi
    printf '%s\n' "$plan" | grep -q 'libprism\.so' || { echo "make -n install: no libprism.so"; return 1; }
}
run_case install_builds_only_what_it_installs install_plan

P=$T/prefix
install_tree() {
    # shellcheck disable=SC2086
    make -s install $MAKEVARS PREFIX="$P" DESTDIR= >"$T/install.log" 2>&1 ||
        { cat "$T/install.log"; return 1; }
    for f in include/prism/collect.h lib/libprism.a lib/libprism.so lib/libprism.so.0 \
             lib/pkgconfig/prism.pc bin/prism-top; do
        [ -e "$P/$f" ] || { echo "not installed: $f"; return 1; }
    done
    [ -L "$P/lib/libprism.so.0" ] && [ -f "$(readlink -f "$P/lib/libprism.so.0")" ] ||
        { echo "libprism.so.0 is not a link to the library"; return 1; }
}
run_case install_prefix install_tree

# pkg_run NAME COMPILER FLAGS...: the example against the installed library.
pkg_run() {
    name=$1 comp=$2; shift 2
    mkdir -p "$T/$name" || return 1
    flags=$(pkg-config --with-path "$P/lib/pkgconfig" --cflags --libs prism) || return 1
    case $flags in *-rpath*) ;; *) echo "pkg-config --libs gives no rpath: $flags"; return 1;; esac
    # shellcheck disable=SC2086
    $comp "$@" $W $SAN -I"$T" -o "$T/$name/prog" tests/link_readme.c -x none $flags || return 1
    ldd "$T/$name/prog" | grep -q "$P/lib/libprism.so.0" ||
        { ldd "$T/$name/prog"; echo "not linked against $P/lib/libprism.so.0"; return 1; }
    (cd "$T/$name" && ./prog) || { echo "$name: exit status $?"; return 1; }
    check_profile "$T/$name"
}
if [ -f "$P/lib/pkgconfig/prism.pc" ]; then
    run_case readme_c_installed_shared pkg_run c_shared "$CC" -std=c11
    run_case readme_cxx_installed_shared pkg_run cxx_shared "$CXX" -std=c++17 -x c++
else
    run_case readme_installed_shared false
fi

# dlopen: the inline calls as real symbols of the installed libprism.so.0.
dl_run() {
    # shellcheck disable=SC2086
    $CC -std=c11 $W $SAN -Iinclude -o "$T/dl" tests/link_dlopen.c -ldl || return 1
    "$T/dl" "$P/lib/libprism.so.0" "$T/dl.cbor" || return 1
    d=$("$TOP" dump "$T/dl.cbor") || return 1
    for want in "3 enter dl_region$" "3 enter dl_zone$" "6 exit$" "3 ^mark .* dl_region$" \
                "3 dl_counter = 0.5$" "1 dl_counter = 42$"; do
        n=${want%% *} re=${want#* }
        got=$(printf '%s\n' "$d" | grep -c -- "$re")
        [ "$got" = "$n" ] || { echo "dlopen profile: $got lines match '$re', expected $n"; return 1; }
    done
}
run_case dlopen_exported_inline_calls dl_run

ctypes_run() {
    PRISM_OUTPUT="$T/py.cbor" PRISM_CPU_INTERVAL_MS=0 PRISM_COLLECT_MEMORY=0 python3 - \
        "$P/lib/libprism.so.0" <<'EOF' || return 1
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])          # PRISM_OUTPUT: the session starts as it loads
lib.prism_name.restype = ctypes.c_uint32
lib.prism_name.argtypes = [ctypes.c_char_p]
lib.prism_push_id.argtypes = [ctypes.c_uint32]
lib.prism_counter_i.argtypes = [ctypes.c_uint32, ctypes.c_int64]
region, counter = lib.prism_name(b"py_region"), lib.prism_name(b"py_counter")
assert region and counter, "not recording"
lib.prism_step_begin()
lib.prism_push_id(region)
lib.prism_counter_i(counter, -5)
lib.prism_pop()
lib.prism_step_end()
lib.prism_shutdown()
EOF
    d=$("$TOP" dump "$T/py.cbor") || return 1
    printf '%s\n' "$d" | grep -q "enter py_region$" &&
        printf '%s\n' "$d" | grep -q "py_counter = -5$" || { echo "ctypes profile incomplete"; return 1; }
}
if [ -n "$SAN" ]; then
    note "ctypes: python3 cannot load a sanitizer build's libprism.so"
elif have python3; then
    run_case ctypes_exported_inline_calls ctypes_run
else
    note "python3 not installed: no ctypes case"
fi

# The samples' objects survive the build (no "rm build/obj/..." lines).
objects_kept() {
    for s in samples/*.c samples/lib/*.c; do
        o=$B/obj/${s%.c}.o
        [ -f "$o" ] || { echo "$o was deleted"; return 1; }
    done
}
if [ -x "$B/bin/trainloop" ]; then
    run_case sample_objects_kept objects_kept
else
    note "samples not built: no check of their objects"
fi

finish
