#!/bin/sh
# Builds the fanotify data plane's native helper from source into enforcer/native/out/ (gitignored).
# Idempotent: rebuilds only when a source is newer than the binary. Tests and `rtctl enforcer run` call it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
bin="$out/rtctl-fanotify"
probe="$out/rtctl-probe-bpf-lsm"
mkdir -p "$out"
if [ -x "$bin" ] && [ -x "$probe" ] &&
  [ -z "$(find "$here" "$here/../../compiler/rule-table" -maxdepth 1 \( -name '*.c' -o -name '*.h' -o -name build.sh \) -newer "$bin")" ]; then
  echo "$bin"
  exit 0
fi
flags="-O2 -g -Wall -Wextra -Werror -std=gnu11 -I$here/../../compiler/rule-table"
# shellcheck disable=SC2086
${CC:-cc} $flags -o "$bin.tmp" "$here/fanotify-helper.c" "$here/rule-table.c"
# shellcheck disable=SC2086
${CC:-cc} $flags -o "$probe.tmp" "$here/probe-bpf-lsm.c"
mv "$bin.tmp" "$bin"
mv "$probe.tmp" "$probe"
echo "$bin"
