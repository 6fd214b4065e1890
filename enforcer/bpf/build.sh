#!/bin/sh
# Builds the BPF-LSM data plane into enforcer/bpf/out/: vmlinux.h from the running kernel's BTF,
# the CO-RE object (clang -target bpf), its libbpf skeleton (bpftool gen skeleton) and the loader
# (gcc + libbpf). Idempotent: does nothing when out/ is newer than every source.
# Needs: clang, llvm, bpftool, libbpf-dev, libelf-dev, zlib1g-dev, gcc (.ci/packages/bpf.txt).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
mkdir -p "$out"
loader="$out/rtctl-bpf-loader"
sources="$here/rtctl-lsm.bpf.c $here/rtctl-maps.h $here/loader/rtctl-bpf-loader.c $here/loader/json-out.h $0"
if [ -x "$loader" ]; then
  stale=0
  for f in $sources; do [ "$f" -nt "$loader" ] && stale=1; done
  [ $stale -eq 0 ] && exit 0
fi
btf=${RTCTL_BTF:-/sys/kernel/btf/vmlinux}
[ -s "$out/vmlinux.h" ] || bpftool btf dump file "$btf" format c > "$out/vmlinux.h.tmp"
[ -s "$out/vmlinux.h" ] || mv "$out/vmlinux.h.tmp" "$out/vmlinux.h"
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Wno-unused-function \
  -I"$out" -I"$here" -c "$here/rtctl-lsm.bpf.c" -o "$out/rtctl-lsm.bpf.o.tmp"
mv "$out/rtctl-lsm.bpf.o.tmp" "$out/rtctl-lsm.bpf.o"
bpftool gen skeleton "$out/rtctl-lsm.bpf.o" name rtctl_lsm > "$out/rtctl-lsm.skel.h.tmp"
mv "$out/rtctl-lsm.skel.h.tmp" "$out/rtctl-lsm.skel.h"
gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -I"$out" -I"$here" -I"$here/loader" \
  "$here/loader/rtctl-bpf-loader.c" -o "$loader.tmp" -lbpf -lelf -lz
mv "$loader.tmp" "$loader"
