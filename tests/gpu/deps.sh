#!/bin/sh
# deps.sh - the Debian packages PRISM builds with, for a machine without a
# Debian mirror (the lent GPU machines): collected here, unpacked there into
# the folder `make DEPS_DIR=...` builds from (Makefile, docs/GPU.md).
#
#   sh tests/gpu/deps.sh collect DIR       here (apt-get, a mirror): DIR/debs/*.deb
#   sh tests/gpu/deps.sh unpack DEBS DEPS  there: DEBS/*.deb -> DEPS (below)
#   sh tests/gpu/deps.sh simulate DEPS     here, tests: DEPS from the installed
#                                          packages' files (dpkg -L), no download
#   sh tests/gpu/deps.sh flatten DEPS      lib/ and rt/ again, for what this
#                                          machine has now (offline_test.sh)
#
# The folder DEPS:
#   root/      the packages' files (dpkg -x, or ar + tar without dpkg)
#   lib/       their libraries in one folder (absolute links made relative): -L
#   rt/        the sonames this machine lacks (ldconfig -p), linked: the rpath
#   provided   the package names it holds, one a line (scripts/deps.sh)
# RT_ALL=1 puts every soname in rt/ (the offline test).
set -u
DEV="libcbor-dev libxxhash-dev libyajl-dev libncurses-dev zlib1g-dev libcmocka-dev"

die() { echo "deps.sh: $*" >&2; exit 1; }

# the run-time libraries the -dev packages depend on, the headers of
# Debian's default Python (the module is abi3: any 3.10+ headers build it),
# make in case the machine has none
collect() {
    d=$1/debs
    mkdir -p "$d" || exit 1
    rt=$(apt-cache depends --no-recommends --no-suggests --no-enhances $DEV 2>/dev/null |
         awk '/Depends:/ {print $2}' |
         grep -E '^(lib(cbor|xxhash|yajl|ncurses|ncursesw|tinfo|cmocka)[0-9.]*|zlib1g)$' | sort -u | tr '\n' ' ')
    pydev=$(apt-cache depends libpython3-dev 2>/dev/null |
            awk '/Depends: libpython3\.[0-9]+-dev/ {print $2; exit}')
    pkgs="$DEV $rt ${pydev:-libpython3.11-dev} make"
    echo "deps.sh: apt-get download $pkgs"
    rm -f "$d"/*.deb
    if ! (cd "$d" && apt-get download $pkgs >/dev/null 2>&1); then
        apt-get update -qq >/dev/null 2>&1 || true
        (cd "$d" && apt-get download $pkgs >/dev/null) || die "apt-get download failed"
    fi
    # plain names for the transfer (1%3a1.2.13 -> 1_1.2.13)
    for f in "$d"/*.deb; do
        n=$(basename "$f" | sed 's/%3a/_/g; s/[^A-Za-z0-9._-]/_/g')
        [ "$n" = "$(basename "$f")" ] || mv -f "$f" "$d/$n"
    done
    echo "deps.sh: $(ls "$d"/*.deb | wc -l) packages, $(du -sk "$d" | cut -f1) KiB in $d"
}

# lib/ and rt/ from root/
flatten() {
    D=$1
    rm -rf "$D/lib" "$D/rt"
    mkdir -p "$D/lib" "$D/rt"
    for l in "$D/root/lib/"*-linux-gnu "$D/root/usr/lib/"*-linux-gnu; do
        [ -d "$l" ] && cp -a "$l/." "$D/lib/"
    done
    for l in "$D"/lib/*; do
        if [ -L "$l" ]; then
            t=$(readlink "$l")
            case $t in /*) ln -sf "$(basename "$t")" "$l" ;; esac
        fi
    done
    # a soname the loader's cache lists is had only where its file is
    # there and not empty (a stale cache, a file hidden or removed)
    have=$(ldconfig -p 2>/dev/null | awk '/=>/ {print $1, $NF}' | while read -r so f; do
               [ -s "$f" ] && echo "$so"; done)
    for f in "$D"/lib/lib*.so.*; do
        [ -f "$f" ] && [ ! -L "$f" ] || continue
        so=$(objdump -p "$f" 2>/dev/null | awk '/SONAME/ {print $2}')
        [ -n "$so" ] || continue
        if [ "${RT_ALL:-0}" = 1 ] || ! printf '%s\n' "$have" | grep -qxF "$so"; then
            ln -sf "$f" "$D/rt/$so"
        fi
    done
    # libpython3.X-dev carries what python3-dev would
    ls "$D/root/usr/share/doc" 2>/dev/null >"$D/provided"
    grep -q '^libpython3\.[0-9]*-dev$' "$D/provided" && echo python3-dev >>"$D/provided"
    return 0
}

unpack() {
    [ -d "$1" ] || die "no folder $1"
    D=$2
    rm -rf "$D"
    mkdir -p "$D/root" "$D/x" || exit 1
    n=0
    for f in "$1"/*.deb; do
        [ -f "$f" ] || continue
        if command -v dpkg >/dev/null 2>&1 && dpkg -x "$f" "$D/root" 2>/dev/null; then
            n=$((n + 1)); continue
        fi
        (cd "$D/x" && rm -f data.tar.* && ar x "$f" && tar -xf data.tar.* -C "$D/root") &&
            n=$((n + 1)) || echo "deps.sh: cannot unpack $f" >&2
    done
    rm -rf "$D/x"
    flatten "$D"
    echo "deps.sh: $n packages unpacked in $D; run-time libraries taken from them: $(ls "$D/rt" | tr '\n' ' ')"
}

# The same folder from what is installed here (no network): each package's
# headers, libraries and doc folder, copied.
simulate() {
    D=$1
    rm -rf "$D"
    mkdir -p "$D/root" || exit 1
    py=$(dpkg-query -W -f='${Package}\n' 'libpython3.*-dev' 2>/dev/null | head -n 1)
    for p in $DEV $py; do
        dpkg-query -W "$p" >/dev/null 2>&1 || die "$p is not installed here"
        dpkg -L "$p" | grep -E '^(/usr)?/(include|lib)/|^/usr/share/doc/[^/]*$' | while read -r f; do
            if [ -d "$f" ] && [ ! -L "$f" ]; then
                mkdir -p "$D/root$f"
            elif [ -e "$f" ] || [ -L "$f" ]; then
                mkdir -p "$D/root$(dirname "$f")" && cp -a "$f" "$D/root$f"
                # a -dev link's targets are in the run-time package: them too
                l=$f
                while [ -L "$l" ]; do
                    t=$(readlink "$l")
                    case $t in /*) l=$t ;; *) l=$(dirname "$l")/$t ;; esac
                    [ -e "$D/root$l" ] && break
                    mkdir -p "$D/root$(dirname "$l")" && cp -a "$l" "$D/root$l"
                done
            fi
        done
    done
    flatten "$D"
}

case ${1:-} in
collect) [ $# -eq 2 ] || die "usage: deps.sh collect DIR"; collect "$2" ;;
unpack) [ $# -eq 3 ] || die "usage: deps.sh unpack DEBS DEPS"; unpack "$2" "$3" ;;
simulate) [ $# -eq 2 ] || die "usage: deps.sh simulate DEPS"; simulate "$2" ;;
flatten) [ $# -eq 2 ] && [ -d "$2/root" ] || die "usage: deps.sh flatten DEPS"; flatten "$2" ;;
*) die "usage: deps.sh collect DIR | unpack DEBS DEPS | simulate DEPS | flatten DEPS" ;;
esac
