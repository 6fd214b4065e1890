#!/bin/sh
# Builds the system call audit plane into <out> (default dist/native/syscalls; `npm run build:native` calls it):
# the BPF object (clang -target bpf, against the vmlinux.h the network build dumps, or its own) and the loader
# (gcc + libbpf). Incremental. Needs: clang, bpftool, libbpf-dev, libelf-dev, zlib1g-dev, gcc.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../dist/native/syscalls}
mkdir -p "$out"
out=$(cd "$out" && pwd)
loader="$out/rtctl-sys-loader"
object="$out/rtctl-sys.bpf.o"
sources="$here/rtctl-sys.bpf.c $here/rtctl-sys-maps.h $here/../bpf-common/rtctl-walk.h $here/rtctl-sys-loader.c $0"
if [ -x "$loader" ] && [ -s "$object" ]; then
  stale=0
  for f in $sources; do [ "$f" -nt "$loader" ] && stale=1; done
  if [ $stale -eq 0 ]; then
    echo "$loader"
    exit 0
  fi
fi
btf=${RTCTL_BTF:-/sys/kernel/btf/vmlinux}
[ -s "$out/vmlinux.h" ] || bpftool btf dump file "$btf" format c > "$out/vmlinux.h.tmp"
[ -s "$out/vmlinux.h" ] || mv "$out/vmlinux.h.tmp" "$out/vmlinux.h"
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Wno-unused-function \
  -I"$out" -I"$here" -c "$here/rtctl-sys.bpf.c" -o "$object.tmp"
mv "$object.tmp" "$object"
gcc -O2 -g -Wall -Wextra -I"$here" "$here/rtctl-sys-loader.c" -o "$loader.tmp" -lbpf -lelf -lz
mv "$loader.tmp" "$loader"
echo "$loader"
