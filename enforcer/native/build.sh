#!/bin/sh
# Builds the fanotify data plane's native helper and the BPF-LSM trial probe into <out> (default
# dist/native; `npm run build:native` calls it). Incremental: rebuilds only when a source (here or the
# rule table layout header in compiler/rule-table/) is newer than the binaries. Prints the helper's path.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
layout=$(cd "$here/../../compiler/rule-table" && pwd)
out=${1:-$here/../../dist/native}
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin="$out/rtctl-fanotify"
probe="$out/rtctl-probe-bpf-lsm"
if [ -x "$bin" ] && [ -x "$probe" ] &&
  [ -z "$(find "$here" "$layout" -maxdepth 1 \( -name '*.c' -o -name '*.h' -o -name build.sh \) -newer "$bin")" ] &&
  [ -z "$(find "$here" -maxdepth 1 \( -name '*.c' -o -name '*.h' -o -name build.sh \) -newer "$probe")" ]; then
  echo "$bin"
  exit 0
fi
flags="-O2 -g -Wall -Wextra -Werror -std=gnu11 -pthread -I$layout"
# shellcheck disable=SC2086
${CC:-cc} $flags -o "$bin.tmp" "$here/fanotify-helper.c" "$here/rule-table.c" "$here/proc-identity.c"
# shellcheck disable=SC2086
${CC:-cc} $flags -o "$probe.tmp" "$here/probe-bpf-lsm.c"
mv "$bin.tmp" "$bin"
mv "$probe.tmp" "$probe"
echo "$bin"
