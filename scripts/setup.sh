#!/bin/sh
# Installs what cgprobe needs from Debian (idempotent), builds it into build/,
# and runs the bundled demo under the tools. Run from anywhere, as root or
# with sudo available.
set -eu
cd "$(dirname "$0")/.."

# Build: meson, ninja, a C compiler, cJSON, zstd, libunwind, libdw (offline symbols), Check.
# Tests and tools: zstd (CLI), clang + libFuzzer runtime for the fuzz target,
# heaptrack for the benchmarks, time for peak-RSS figures, python3 and its
# zstandard module for the independent decoder of the compact encoding,
# python3-torch (CPU) for the tests of the Python module (tests/test-python.sh),
# chromium (headless) for the browser test of the HTML report, valgrind
# for ms_print, which reads the massif export, Open MPI (mpirun, mpicc) for
# the test of a job launched by mpirun (tests/test-job-mpi.py), and
# python3-dask with python3-distributed for the tested recipe that reads a
# job on a Dask cluster (docs/jobs.md), and python3-pytest for the pytest
# plugin's test (tests/test-pytest-plugin.sh).
packages="meson ninja-build pkg-config gcc libc6-dev libcjson-dev libzstd-dev libunwind-dev libdw-dev
check zstd clang libclang-rt-14-dev heaptrack time python3 python3-zstandard python3-torch
chromium valgrind openmpi-bin libopenmpi-dev python3-dask python3-distributed python3-pytest"

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

# The demo: a small MLP trained in plain C, profiled by the probe, then read.
demo=build/demo-traces
mkdir -p "$demo"
rm -f "$demo"/mlp.*.jsonl "$demo"/mlp.*.cgt
rm -f "$demo"/mlp.*.html "$demo"/mlp.svg
# --report: the HTML report beside the trace, for a browser.
scripts/cgprobe --report -o "$demo/mlp.%p.cgt" build/demo/cgprobe-demo-mlp --steps 20
for trace in "$demo"/mlp.*.cgt; do break; done
build/cgtrace/cgtrace summary "$trace"
build/cgtrace/cgtrace memory --top 5 "$trace"
build/cgtrace/cgtrace plot "$trace" -o "$demo/mlp.svg"
echo "setup: the demo's picture: $demo/mlp.svg, its report: $trace.html"
