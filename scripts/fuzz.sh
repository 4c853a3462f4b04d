#!/bin/sh
# Builds the reader fuzz target with clang, libFuzzer, ASan and UBSan into
# build-fuzz/ and runs it for SECONDS (default 60) from the seed corpus.
# Exits 0 without fuzzing (and says why) when clang's fuzzer runtime is missing.
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-60}

if ! command -v clang >/dev/null 2>&1 ||
  ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n){return 0;}' |
    clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
  echo "fuzz: skipped, clang with libFuzzer is not installed"
  exit 0
fi
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang meson setup build-fuzz --buildtype=debugoptimized -Dfuzzer=enabled \
    -Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link
fi
ninja -C build-fuzz tests/fuzz-trace
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp tests/fuzz/corpus/* "$work/"
rc=0
build-fuzz/tests/fuzz-trace -max_total_time="$seconds" -max_len=8192 -timeout=10 \
  -print_final_stats=1 -artifact_prefix=build-fuzz/ "$work" >"$work.log" 2>&1 || rc=$?
tail -n 12 "$work.log"
rm -f "$work.log"
if [ "$rc" -ne 0 ]; then
  echo "fuzz: the target failed (exit $rc); the crashing input is in build-fuzz/"
  exit "$rc"
fi
echo "fuzz: ${seconds}s without a crash"
