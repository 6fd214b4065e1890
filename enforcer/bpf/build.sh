#!/bin/sh
# Builds the BPF-LSM data plane into <out> (default dist/native/bpf; `npm run build:native` calls it):
# vmlinux.h from the build machine's kernel BTF (or $RTCTL_BTF), the CO-RE object (clang -target bpf),
# its libbpf skeleton (bpftool gen skeleton) and the loader (gcc + libbpf). Incremental: does nothing
# when the loader is newer than every source. The rule table layout comes from compiler/rule-table/.
# Also builds, into <out>/test-only/, a no-op file_open program and a tiny attacher (test-only/; never
# loaded by the plane) for the benchmark's hook-dispatch floor.
# Needs: clang, llvm, bpftool, libbpf-dev, libelf-dev, zlib1g-dev, gcc (.ci/packages/bpf.txt).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
layout=$(cd "$here/../../compiler/rule-table" && pwd)
out=${1:-$here/../../dist/native/bpf}
mkdir -p "$out"
out=$(cd "$out" && pwd)
loader="$out/rtctl-bpf-loader"
sources="$here/rtctl-lsm.bpf.c $here/rtctl-maps.h $here/rtctl-addr-maps.h $here/loader/rtctl-bpf-loader.c $here/loader/json-out.h $layout/rule-table-layout.h $0 $here/test-only/rtctl-noop-lsm.bpf.c $here/test-only/rtctl-noop-attach.c"
if [ -x "$loader" ]; then
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
clang -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Wno-unused-function \
  -I"$out" -I"$here" -I"$layout" -c "$here/rtctl-lsm.bpf.c" -o "$out/rtctl-lsm.bpf.o.tmp"
mv "$out/rtctl-lsm.bpf.o.tmp" "$out/rtctl-lsm.bpf.o"
bpftool gen skeleton "$out/rtctl-lsm.bpf.o" name rtctl_lsm > "$out/rtctl-lsm.skel.h.tmp"
mv "$out/rtctl-lsm.skel.h.tmp" "$out/rtctl-lsm.skel.h"
gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -I"$out" -I"$here" -I"$here/loader" -I"$layout" \
  "$here/loader/rtctl-bpf-loader.c" -o "$loader.tmp" -lbpf -lelf -lz
mkdir -p "$out/test-only"
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -I"$out" \
  -c "$here/test-only/rtctl-noop-lsm.bpf.c" -o "$out/test-only/rtctl-noop-lsm.bpf.o"
gcc -O2 -g -Wall -Wextra "$here/test-only/rtctl-noop-attach.c" -o "$out/test-only/rtctl-noop-attach" -lbpf -lelf -lz
mv "$loader.tmp" "$loader"
echo "$loader"
