#!/bin/sh
# Make sure the Debian packages PRISM builds and tests with are installed.
# As root: installs what is missing with apt-get.  Otherwise: one line naming
# the missing packages and exit 1.  Usage: scripts/deps.sh [PACKAGE...]
set -u
pkgs="${*:-libcbor-dev libxxhash-dev libncurses-dev libcmocka-dev tmux python3-dev libyajl-dev zlib1g-dev}"

have() {
    if command -v dpkg-query >/dev/null 2>&1; then
        dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
        return
    fi
    # Not a Debian system: trust the compiler to find what it needs.
    return 0
}

missing=""
for p in $pkgs; do have "$p" || missing="$missing $p"; done
[ -z "$missing" ] && exit 0

# PRISM_DEPS_DIR (make DEPS_DIR=...): the packages come from a prepared
# folder of unpacked .debs (tests/gpu/deps.sh), never from apt-get: those it
# holds are present; one line names the others (the compiler has the last word).
if [ -n "${PRISM_DEPS_DIR:-}" ]; then
    rest=""
    for p in $missing; do
        [ -d "$PRISM_DEPS_DIR/root/usr/share/doc/$p" ] ||
            grep -qxF "$p" "$PRISM_DEPS_DIR/provided" 2>/dev/null || rest="$rest $p"
    done
    [ -z "$rest" ] || echo "prism: not installed and not in $PRISM_DEPS_DIR:$rest (no apt-get with DEPS_DIR)" >&2
    exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "prism: installing missing packages:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    # wait for another apt/dpkg (a parallel make, unattended upgrades)
    lock='-o DPkg::Lock::Timeout=600'
    if ! apt-get $lock install -y -qq $missing >/dev/null 2>&1; then
        apt-get $lock update -qq >/dev/null 2>&1
        apt-get $lock install -y -qq $missing >/dev/null || {
            echo "prism: apt-get could not install:$missing" >&2; exit 1; }
    fi
    exit 0
fi
echo "prism: missing Debian packages:$missing (run 'make' as root, or: sudo apt-get install$missing)" >&2
exit 1
