#!/bin/sh
# Runs every test: the Check suites (core, reader, preload, wrapper), golden
# CLI tests and fuzz-corpus replay in build/; the core and reader tests again
# under ASan+UBSan and the preload and CUDA tests under UBSan; real programs with and
# without the probe; then a short libFuzzer run when clang's fuzzer runtime
# is there. Run after scripts/setup.sh.
set -eu
cd "$(dirname "$0")/.."

[ -f build/build.ninja ] || meson setup build --buildtype=debugoptimized
ninja -C build
meson test -C build --print-errorlogs

# ASan cannot run behind a preloaded malloc wrapper, so it covers the core
# and reader suites; the preload suites run under UBSan in build/.
# Sanitized programs start and run two to three times slower, so their
# tests get twice the time limits of the plain build.
if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false
fi
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --suite core --suite cli --timeout-multiplier 2 --print-errorlogs

# ASan's own malloc cannot sit behind the probe's; UBSan can.
if [ ! -f build-ubsan/build.ninja ]; then
  meson setup build-ubsan --buildtype=debugoptimized -Db_sanitize=undefined -Db_lundef=false
fi
ninja -C build-ubsan
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-ubsan --suite preload --suite cuda --timeout-multiplier 2 --print-errorlogs

scripts/compat-check.sh build

if [ -n "${CGPROBE_FUZZ_SECONDS-60}" ] && [ "${CGPROBE_FUZZ_SECONDS-60}" != 0 ]; then
  scripts/fuzz.sh "${CGPROBE_FUZZ_SECONDS-60}"
fi
