#!/bin/sh
# Build ecnlab's BPF TCP congestion controls and their loader into OUT (default
# target/bpf): vmlinux.h from the running kernel's BTF (never committed: the layouts are
# this kernel's), each *.bpf.c with clang -target bpf, ecnlab-cc-loader against libbpf.
# Needs clang, bpftool and libbpf-dev; says which is missing and exits 3 without them.
set -eu
here=$(cd "${0%/*}" && pwd)
out=${1:-"$here/../../../target/bpf"}
missing=""
command -v clang >/dev/null 2>&1 || missing="$missing clang"
command -v bpftool >/dev/null 2>&1 || missing="$missing bpftool"
[ -f /usr/include/bpf/libbpf.h ] || [ -f /usr/local/include/bpf/libbpf.h ] || missing="$missing libbpf-dev"
if [ -n "$missing" ]; then
  echo "ecnlab BPF congestion controls need:$missing (apt-get install clang libbpf-dev bpftool)" >&2
  exit 3
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
  echo "ecnlab BPF congestion controls need the kernel's BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)" >&2
  exit 3
fi
mkdir -p "$out"
bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$out/vmlinux.h.tmp"
mv "$out/vmlinux.h.tmp" "$out/vmlinux.h"
for src in "$here"/*.bpf.c; do
  obj="$out/$(basename "$src" .c).o"
  clang -g -O2 -Wall -target bpf -D__TARGET_ARCH_x86 -I"$out" -I"$here" -c "$src" -o "$obj.tmp"
  mv "$obj.tmp" "$obj"
done
clang -O2 -Wall "$here/ecnlab-cc-loader.c" -lbpf -o "$out/ecnlab-cc-loader.tmp"
mv "$out/ecnlab-cc-loader.tmp" "$out/ecnlab-cc-loader"
