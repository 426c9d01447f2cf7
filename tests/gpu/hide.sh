#!/bin/sh
# hide.sh - run a command with chosen files out of sight, as on the lent GPU
# machines, which have none of the packages PRISM carries (offline_test.sh).
#
#   unshare -m  sh tests/gpu/hide.sh LIST WORK -- COMMAND...   (as root)
#   unshare -rm sh tests/gpu/hide.sh LIST WORK -- COMMAND...   (as a user)
#
# LIST: a file of absolute paths (files or links), one a line; WORK: an
# empty folder.  In the private mount namespace unshare made, the folders
# holding listed paths are covered by overlays of themselves whose upper
# layers (on a tmpfs mounted at WORK) white those names out: they vanish,
# their neighbours stay, and so does what a hidden link points to under
# another name (a bind mount over a link would cover its target).  Paths
# are taken by their folder's real path (/lib/x86_64-linux-gnu is
# /usr/lib/...).  One overlay per outermost folder, the names in folders
# inside it whited out in the same upper layer (an overlay over a folder
# of another overlay over one of a third is more stacking than Linux
# allows).  Exit 3: a mount failed.
set -u
[ $# -ge 4 ] && [ "$3" = "--" ] || { echo "usage: hide.sh LIST WORK -- COMMAND..." >&2; exit 2; }
list=$1 work=$2
shift 3
mount --make-rprivate / 2>/dev/null
mount -t tmpfs tmpfs "$work" || exit 3
while read -r p; do
    [ -n "$p" ] || continue
    d=$(readlink -f "$(dirname "$p")") && echo "$d/$(basename "$p")"
done <"$list" | sort -u >"$work/paths"
# the outermost folders: none inside another (sorted: a parent first)
roots=""
for d in $(sed 's|/[^/]*$||' "$work/paths" | sort -u); do
    inside=false
    for r in $roots; do
        case $d/ in "$r"/*) inside=true ;; esac
    done
    $inside || roots="$roots $d"
done
n=0
for r in $roots; do
    n=$((n + 1))
    mkdir -p "$work/$n/u" "$work/$n/w" || exit 3
    awk -v r="$r/" 'index($0, r) == 1' "$work/paths" | while read -r p; do
        rel=${p#"$r"/}
        mkdir -p "$work/$n/u/$(dirname "$rel")" && mknod "$work/$n/u/$rel" c 0 0 || exit 3
    done || exit 3
    mount -t overlay overlay -o "lowerdir=$r,upperdir=$work/$n/u,workdir=$work/$n/w" "$r" ||
        exit 3
done
exec "$@"
