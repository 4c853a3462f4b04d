#!/bin/sh
# Installs what cgprobe needs from Debian (idempotent), builds it into build/,
# and runs the bundled demo under the tools. Run from anywhere, as root or
# with sudo available.
set -eu
cd "$(dirname "$0")/.."

# Build: meson, ninja, a C compiler, cJSON, zstd, libunwind, Check.
# Tests and tools: zstd (CLI), clang + libFuzzer runtime for the fuzz target,
# heaptrack for the benchmarks, time for peak-RSS figures.
packages="meson ninja-build pkg-config gcc libc6-dev libcjson-dev libzstd-dev libunwind-dev
check zstd clang libclang-rt-14-dev heaptrack time python3"

missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing="$missing $p"
done
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing$missing"
  $sudo apt-get update -q
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi

if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=debugoptimized
fi
ninja -C build

# The demo: a synthetic heap trace written through the session API, read back.
demo=build/demo
mkdir -p "$demo"
rm -f "$demo/demo.jsonl"
build/bench/gen-trace "$demo/demo.jsonl" 200000
build/cgtrace/cgtrace summary "$demo/demo.jsonl"
build/cgtrace/cgtrace memory --top 5 "$demo/demo.jsonl"
