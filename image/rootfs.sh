#!/bin/sh
# Builds the image's Debian root file system with mmdebstrap (minbase + image/packages.txt) as a tar, cached
# by the hash of its inputs: prints the path of the cached tar. A fixed SOURCE_DATE_EPOCH makes mmdebstrap's
# output reproducible for the same package versions (and the cache survives commits).
# Usage: image/rootfs.sh <cache-dir>
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=$1
suite=bookworm
mirror=http://deb.debian.org/debian
# 2025-01-01T00:00:00Z: the root file system's timestamps do not follow the commit, so its cache does.
SOURCE_DATE_EPOCH=1735689600
export SOURCE_DATE_EPOCH
packages=$(sed 's/#.*//' "$here/packages.txt" | tr -s ' \n' ' ' | sed 's/^ *//; s/ *$//' | tr ' ' ',')
key=$(printf '%s\n' "$suite" "$mirror" "$packages" "$SOURCE_DATE_EPOCH" "$(mmdebstrap --version)" "$(cat "$0")" |
  sha256sum | cut -c1-16)
out="$cache/rootfs-$key.tar"
mkdir -p "$cache"
if [ ! -s "$out" ]; then
  mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
    --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/* "$1"/var/log/*' \
    --customize-hook='chroot "$1" dpkg-query -W -f="\${Package} \${Version}\n" > "$1"/usr/share/rtctl-packages.txt' \
    "$suite" "$out.tmp" "$mirror" >&2
  mv "$out.tmp" "$out"
fi
echo "$out"
