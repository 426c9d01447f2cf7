#!/bin/sh
# boundaries_test.sh - what the libraries show the programs that link them,
# and the arrows between folders (docs/ARCHITECTURE.md):
#   * libprism.so exports prism_* names alone (nm -D), libprism-inject.so
#     InitializeInjection alone, the Python extension PyInit__prism and
#     prism__cupti_attach_now (libprism-inject.so hands CUPTI over to it);
#   * libprism.a and libprism-analysis.a keep every other name local;
#   * every function a public header marks PRISM_API is defined by one of
#     the libraries (a forgotten definition or a hidden one fails here);
#   * a program with functions of its own named like PRISM's internals
#     (clock_ns, arena_alloc, vec_reserve, ...) links against the static
#     libraries and against libprism.so, runs and records;
#   * tui/ includes nothing from reports/ or cli/.
# Run by `make test` as $(B)/tests/boundaries_test (B, LINK_CC, LINK_SAN
# set by the Makefile); by hand: B=build sh tests/boundaries_test.sh.
set -u
B=${B:-build}
CC=${LINK_CC:-cc}
SAN=${LINK_SAN:-}
T=$(mktemp -d "${TMPDIR:-/tmp}/prism-bound.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
unset LD_LIBRARY_PATH
for v in $(env | sed -n 's/^\(PRISM_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
. tests/case_lib.sh

# exports_only LIB PATTERN: LIB's dynamic symbols all match PATTERN.
exports_only() {
    [ -f "$1" ] || { echo "$1: not built"; return 1; }
    n=$(nm -D --defined-only "$1" | awk '{print $3}' | grep -c .)
    [ "$n" -gt 0 ] || { echo "$1 exports nothing"; return 1; }
    other=$(nm -D --defined-only "$1" | awk '{print $3}' | grep -Ev "$2")
    [ -z "$other" ] || { echo "$1 exports more than $2:"; printf '%s\n' "$other" | head -20; return 1; }
}
run_case libprism_so_exports_prism_only exports_only "$B/lib/libprism.so" '^prism_'
run_case inject_exports_initialize_injection_only exports_only "$B/lib/libprism-inject.so" \
    '^InitializeInjection(Nvtx2)?$'
if [ -f "$B/python/prism/_prism.abi3.so" ]; then
    # and the hook libprism-inject.so calls to hand CUPTI over (issue 27, 4)
    run_case python_module_exports_pyinit_only exports_only "$B/python/prism/_prism.abi3.so" \
        '^(PyInit__prism|prism__cupti_attach_now|InitializeInjectionNvtx2)$'
else
    note "the Python extension is not built"
fi

static_local() {
    for a in "$B/lib/libprism.a" "$B/lib/libprism-analysis.a"; do
        # (a sanitizer build adds its own: __odr_asan.NAME, __asan_*)
        other=$(nm "$a" | awk '$2 ~ /^[TDBRCVWGS]$/ {print $3}' | grep -v '^prism_' |
                grep -v '^__odr_asan\.\|^__asan_\|^__ubsan_\|^__sancov')
        [ -z "$other" ] || { echo "$a: global names without prism_:"; printf '%s\n' "$other" | head -20; return 1; }
    done
}
run_case static_libraries_keep_internals_local static_local

# The functions the public headers mark PRISM_API (name before the first
# parenthesis of the declaration).
api_names() {
    grep -h '^PRISM_API' include/prism/*.h | grep -v '^PRISM_API extern' |
        sed -n 's/^PRISM_API[^(]*[ *]\([a-z_][a-z_0-9]*\)(.*/\1/p' | sort -u
}
api_defined() {
    { nm -D --defined-only "$B/lib/libprism.so"; nm "$B/lib/libprism-analysis.a"; } |
        awk '$2 ~ /^[TDBRCVWGS]$/ {print $3}' | sort -u >"$T/defined"
    api_names >"$T/api"
    [ "$(grep -c . "$T/api")" -gt 100 ] || { echo "few PRISM_API names found"; return 1; }
    missing=$(comm -23 "$T/api" "$T/defined")
    [ -z "$missing" ] || { echo "declared PRISM_API, defined by no library:"; echo "$missing"; return 1; }
}
run_case public_api_defined api_defined

cat >"$T/user.c" <<'EOC'
/* A program whose own functions carry PRISM's internal names. */
#include <stdio.h>
#include "prism/analysis.h"
#include "prism/collect.h"
int clock_ns(void);
int arena_alloc(void);
int idmap_get(void);
int cpu_new(void);
int queue_push(void);
int vec_reserve(void);
int sort_stable(void);
int clock_ns(void) { return 1; }
int arena_alloc(void) { return 2; }
int idmap_get(void) { return 3; }
int cpu_new(void) { return 4; }
int queue_push(void) { return 5; }
int vec_reserve(void) { return 6; }
int sort_stable(void) { return 7; }
int main(void)
{
    if (clock_ns() + arena_alloc() + idmap_get() + cpu_new() + queue_push() +
        vec_reserve() + sort_stable() != 28)
        return 2;
    prism_config c;
    prism_config_default(&c);
    c.output = "user.cbor";
    if (prism_init(&c) != 0)
        return 3;
    prism_push("user");
    prism_pop();
    prism_shutdown();
#ifdef WITH_ANALYSIS
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file("user.cbor", NULL, &st, msg, sizeof msg, &off);
    if (!a || prism_analysis_events(a) == 0)
        return 4;
    prism_analysis_free(a);
#endif
    puts("ok");
    return 0;
}
EOC
user_static() {
    mkdir -p "$T/s" && cd "$T/s" || return 1
    # shellcheck disable=SC2086
    $CC -std=c11 $SAN -DWITH_ANALYSIS -I"$OLDPWD/include" -o prog "$T/user.c" \
        "$OLDPWD/$B/lib/libprism-analysis.a" "$OLDPWD/$B/lib/libprism.a" \
        -lyajl -lz -lcbor -lxxhash -ldl -lm -pthread || return 1
    [ "$(./prog)" = ok ] || { echo "static program failed"; return 1; }
}
user_shared() {
    mkdir -p "$T/d" && cd "$T/d" || return 1
    # shellcheck disable=SC2086
    $CC -std=c11 $SAN -I"$OLDPWD/include" -o prog "$T/user.c" \
        -L"$OLDPWD/$B/lib" -Wl,-rpath,"$OLDPWD/$B/lib" -lprism || return 1
    [ "$(./prog)" = ok ] || { echo "shared program failed"; return 1; }
}
run_case user_names_beside_static_libraries user_static
run_case user_names_beside_libprism_so user_shared

# arrows: tui/ includes nothing of reports/ or cli/ (their headers by name)
tui_arrows() {
    names=$(ls reports/*.h cli/*.h 2>/dev/null | sed 's|.*/||' | sort -u)
    for h in $names; do
        if [ -f "tui/$h" ]; then continue; fi
        hits=$(grep -n "#include \"\(\.\./[a-z]*/\)\?$h\"" tui/*.c tui/*.h)
        [ -z "$hits" ] || { echo "tui/ includes $h:"; echo "$hits"; return 1; }
    done
}
run_case tui_includes_neither_reports_nor_cli tui_arrows
finish
