#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Export memory: peak RSS and wall time of `cgtrace export` in stream order
# (the streaming reader, bounded by the longest line and the spans) beside
# canonical order (the whole document) on one generated heap trace.
#
#   bench/export-bench.sh [BUILD_DIR] [RECORDS]      (defaults: build 1000000)
#
# Also checks, as a benchmark may, that the stream export of the probe-style
# trace gen-trace writes is byte-identical to it. Exit status: 0 once the
# figures are printed (this is a benchmark, not a test); non-zero when
# something could not be run or the stream export differs.

set -eu

die() {
	echo "export-bench: $*" >&2
	exit 1
}

src_dir=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
build_arg=${1:-build}
records=${2:-1000000}
case "$records" in
'' | *[!0-9]*) die "RECORDS must be a positive integer, got '$records'" ;;
esac
case "$build_arg" in
/*) build_dir=$build_arg ;;
*) if [ -d "$build_arg" ]; then build_dir=$(CDPATH='' cd -- "$build_arg" && pwd); else build_dir=$src_dir/$build_arg; fi ;;
esac
cgtrace=$build_dir/cgtrace/cgtrace
gen_trace=$build_dir/bench/gen-trace
for bin in "$cgtrace" "$gen_trace"; do
	[ -x "$bin" ] || die "missing $bin (build first: meson setup $build_arg && ninja -C $build_arg)"
done
[ -x /usr/bin/time ] || die "missing /usr/bin/time (GNU time)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/export-bench.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf -- "$tmp"' EXIT
trap 'exit 130' INT

trace=$tmp/trace.jsonl
"$gen_trace" "$trace" "$records" || die "gen-trace failed"
bytes=$(wc -c <"$trace")

# One run per order: peak RSS in KiB and wall seconds from GNU time.
measure() {
	/usr/bin/time -f '%M %e' -o "$tmp/time.$1" "$cgtrace" export --order "$1" \
		-o "$tmp/out.$1" "$trace" || die "export --order $1 failed"
}
measure stream
measure canonical
cmp -s "$trace" "$tmp/out.stream" || die "stream export differs from the trace"

printf "trace    %s records, %s bytes\n" "$records" "$bytes"
for order in stream canonical; do
	read -r rss secs <"$tmp/time.$order"
	printf "%-9s peak RSS %6d KiB  (%5.1f MiB)  %s s\n" "$order" "$rss" \
		"$(awk "BEGIN {print $rss / 1024}")" "$secs"
done
echo "stream export is byte-identical to the trace"
