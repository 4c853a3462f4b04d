#!/bin/sh
# Builds the reader's two fuzz targets (JSONL and the compact decoder) with
# clang, libFuzzer, ASan and UBSan into build-fuzz/ and runs each for SECONDS
# (default 60) from its seed corpus.
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
ninja -C build-fuzz tests/fuzz-trace tests/fuzz-compact
# run TARGET CORPUS: the target for SECONDS from a copy of CORPUS.
run() {
  work=$(mktemp -d)
  cp "$2"/* "$work/"
  rc=0
  "build-fuzz/tests/$1" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
    -print_final_stats=1 -artifact_prefix=build-fuzz/ "$work" >"$work.log" 2>&1 || rc=$?
  tail -n 12 "$work.log"
  rm -rf "$work" "$work.log"
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $1 failed (exit $rc); the crashing input is in build-fuzz/"
    exit "$rc"
  fi
  echo "fuzz: $1 ran ${seconds}s without a crash"
}
# The JSONL reader, then the compact decoder (a binary input of its own).
run fuzz-trace tests/fuzz/corpus
run fuzz-compact tests/fuzz/corpus-compact
