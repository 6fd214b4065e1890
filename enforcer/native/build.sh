#!/bin/sh
# Builds the fanotify data plane's native helper from source into enforcer/native/out/ (gitignored).
# Idempotent: rebuilds only when a source is newer than the binary. Tests and `rtctl enforcer run` call it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
bin="$out/rtctl-fanotify"
mkdir -p "$out"
if [ -x "$bin" ] && [ -z "$(find "$here" -maxdepth 1 \( -name '*.c' -o -name '*.h' -o -name build.sh \) -newer "$bin")" ]; then
  echo "$bin"
  exit 0
fi
${CC:-cc} -O2 -g -Wall -Wextra -Werror -std=gnu11 -o "$bin.tmp" "$here/fanotify-helper.c" "$here/rule-table.c"
mv "$bin.tmp" "$bin"
echo "$bin"
