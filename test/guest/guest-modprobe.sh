#!/bin/sh
# Loads guest kernel modules with their dependencies (the host's root has no /lib/modules for the
# guest kernel, and the share is read-only): guest-modprobe.sh NAME...
# Reads modules.dep from the unpacked kernel package named by $RTCTL_GUEST_MODULES.
set -eu
dir="${RTCTL_GUEST_MODULES:?RTCTL_GUEST_MODULES not set}/$(uname -r)"
load() {
  file=$(awk -F: -v n="$1" '{ f=$1; sub(/.*\//, "", f); sub(/\.ko.*$/, "", f); gsub("-", "_", f); m=n; gsub("-", "_", m); if (f == m) { print $1; exit } }' "$dir/modules.dep")
  [ -n "$file" ] || { echo "guest-modprobe: no module $1" >&2; return 1; }
  for dep in $(awk -F: -v f="$file" '$1 == f { print $2 }' "$dir/modules.dep"); do
    name=$(basename "$dep"); name=${name%%.ko*}
    load "$name"
  done
  name=$(basename "$file"); name=${name%%.ko*}
  grep -q "^$(echo "$name" | tr - _) " /proc/modules || insmod "$dir/$file" 2>/dev/null || busybox insmod "$dir/$file"
}
for m in "$@"; do load "$m"; done
