#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Reader benchmark: how fast cgtrace reads a large heap trace and how much
# memory it needs, next to heaptrack_print reading a heaptrack capture of the
# same number of allocation events, at each size given.
#
#   bench/reader-bench.sh [BUILD_DIR] [RECORDS...]   (defaults: build 2000000 20000000)
#
# summary and memory stream the memory records, so their peak RSS should not
# grow with RECORDS: compare the sizes' rows. A 20 M-record JSONL trace takes
# about 4 GB in TMPDIR while it is measured; each trace is removed before the
# next size is made.
# BUILD_DIR is taken relative to the current directory when it exists there,
# otherwise relative to the source tree. Each reader command runs 3 times and
# the best wall time is kept; peak RSS comes from /usr/bin/time (%M). Wall
# time is read from a nanosecond clock around /usr/bin/time when GNU date
# offers one (it then includes the spawn of time itself), else from time's %e.
#
# Exit status: 0 once the figures are printed, whatever they are (this is a
# benchmark, not a test); non-zero when something could not be run.

set -eu

usage() {
	echo "usage: $0 [BUILD_DIR] [RECORDS]" >&2
	exit 2
}

die() {
	echo "reader-bench: $*" >&2
	exit 1
}

case "${1:-}" in -h | --help) usage ;; esac

src_dir=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
build_arg=${1:-build}
[ $# -ge 1 ] && shift
sizes=${*:-2000000 20000000}
runs=3

for records in $sizes; do
	case "$records" in
	'' | *[!0-9]*) die "RECORDS must be a positive integer, got '$records'" ;;
	esac
	[ "$records" -ge 2 ] || die "RECORDS must be at least 2"
done

case "$build_arg" in
/*) build_dir=$build_arg ;;
*)
	if [ -d "$build_arg" ]; then
		build_dir=$(CDPATH='' cd -- "$build_arg" && pwd)
	else
		build_dir=$src_dir/$build_arg
	fi
	;;
esac

cgtrace=$build_dir/cgtrace/cgtrace
gen_trace=$build_dir/bench/gen-trace
alloc_pairs=$build_dir/bench/alloc-pairs
for bin in "$cgtrace" "$gen_trace" "$alloc_pairs"; do
	[ -x "$bin" ] || die "missing $bin (build first: meson setup $build_arg && ninja -C $build_arg)"
done
for tool in /usr/bin/time zstd heaptrack heaptrack_print awk; do
	case "$tool" in
	/*) [ -x "$tool" ] || die "missing $tool (GNU time)" ;;
	*) command -v "$tool" >/dev/null 2>&1 || die "missing $tool in PATH" ;;
	esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/reader-bench.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf -- "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Nanosecond clock if GNU date has one, else empty.
now_ns() {
	t=$(date +%s%N 2>/dev/null) || t=
	case "$t" in
	'' | *[!0-9]*) echo "" ;;
	*) echo "$t" ;;
	esac
}
have_ns=no
[ -n "$(now_ns)" ] && have_ns=yes

# measure LABEL CMD...: runs CMD $runs times (stdout to /dev/null) under
# /usr/bin/time and sets best_wall (s) and best_rss (KiB, of the best run).
measure() {
	label=$1
	shift
	best_wall=
	best_rss=
	i=1
	while [ "$i" -le "$runs" ]; do
		t0=
		[ "$have_ns" = yes ] && t0=$(now_ns)
		if ! /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err"; then
			cat "$tmp/err" >&2
			die "$label failed: $*"
		fi
		t1=
		[ "$have_ns" = yes ] && t1=$(now_ns)
		# The last line is time's; earlier ones may be the command's notes.
		line=$(tail -n 1 "$tmp/time")
		e=${line% *}
		m=${line#* }
		if [ -n "$t0" ] && [ -n "$t1" ]; then
			w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
		else
			w=$e
		fi
		if [ -z "$best_wall" ] || awk -v a="$w" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
			best_wall=$w
			best_rss=$m
		fi
		i=$((i + 1))
	done
	printf '  %-28s best wall %8.3f s  peak RSS %7.1f MiB\n' "$label" "$best_wall" \
		"$(awk -v k="$best_rss" 'BEGIN { printf "%.1f", k / 1024 }')" >&2
}

rows=$tmp/rows

# row LABEL WALL RSS_KIB COUNT BYTES: one table row
row() {
	awk -v l="$1" -v w="$2" -v k="$3" -v n="$4" -v b="$5" 'BEGIN {
		if (w <= 0) w = 0.0001
		printf "%s\t%.3f\t%.0f\t%.1f\t%.1f\t%.1f\n", l, w, n / w, b / 1e6 / w, k / 1024, k * 1024 / n
	}' >>"$rows"
}

file_bytes() {
	wc -c <"$1" | tr -d ' '
}

summary_line=$tmp/targets
: >"$summary_line"

# bench_size RECORDS: one trace of RECORDS records, measured and removed.
bench_size() {
	records=$1
	: >"$rows"
	echo "reader-bench: $records records, build $build_dir, best of $runs, temp $tmp" >&2

	# --- the trace -------------------------------------------------------------
	trace=$tmp/trace.jsonl
	t0=$(now_ns)
	"$gen_trace" "$trace" "$records" || die "gen-trace failed"
	t1=$(now_ns)
	[ -s "$trace" ] || die "gen-trace wrote no trace"
	trace_bytes=$(file_bytes "$trace")

	# The number of memory records as the reader counts them.
	"$cgtrace" summary --json "$trace" >"$tmp/summary.json" || die "cgtrace summary --json failed on the generated trace"
	mem_records=$(awk '{
		a = $0; f = $0
		sub(/.*"alloc_count":/, "", a); sub(/[^0-9].*/, "", a)
		sub(/.*"free_count":/, "", f); sub(/[^0-9].*/, "", f)
		print a + f
	}' "$tmp/summary.json")
	case "$mem_records" in
	'' | 0 | *[!0-9]*) die "cannot read the record count from cgtrace summary --json" ;;
	esac

	if [ -n "$t0" ] && [ -n "$t1" ]; then
		gen_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
		gen_rate=$(awk -v s="$gen_s" -v n="$mem_records" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
	else
		gen_s=n/a
		gen_rate=n/a
	fi

	zst=$tmp/trace.jsonl.zst
	t0=$(now_ns)
	zstd -q -1 "$trace" -o "$zst" || die "zstd failed"
	t1=$(now_ns)
	zst_bytes=$(file_bytes "$zst")
	zst_s=n/a
	[ -n "$t0" ] && [ -n "$t1" ] && zst_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')

	# --- cgtrace -----------------------------------------------------------------
	measure "cgtrace summary" "$cgtrace" summary "$trace"
	row "cgtrace summary" "$best_wall" "$best_rss" "$mem_records" "$trace_bytes"
	plain_summary_rate=$(awk -v n="$mem_records" -v w="$best_wall" 'BEGIN { printf "%.0f", n / (w > 0 ? w : 0.0001) }')
	plain_summary_rss=$best_rss

	measure "cgtrace memory" "$cgtrace" memory "$trace"
	row "cgtrace memory" "$best_wall" "$best_rss" "$mem_records" "$trace_bytes"
	plain_memory_rate=$(awk -v n="$mem_records" -v w="$best_wall" 'BEGIN { printf "%.0f", n / (w > 0 ? w : 0.0001) }')
	plain_memory_rss=$best_rss

	measure "cgtrace summary (.zst)" "$cgtrace" summary "$zst"
	row "cgtrace summary (.zst)" "$best_wall" "$best_rss" "$mem_records" "$zst_bytes"

	measure "cgtrace memory (.zst)" "$cgtrace" memory "$zst"
	row "cgtrace memory (.zst)" "$best_wall" "$best_rss" "$mem_records" "$zst_bytes"

	# --- heaptrack peer ----------------------------------------------------------
	pairs=$((records / 2))
	events=$((pairs * 2))
	(cd "$tmp" && heaptrack -o "$tmp/ht" "$alloc_pairs" "$pairs") >"$tmp/heaptrack.log" 2>&1 || {
		cat "$tmp/heaptrack.log" >&2
		die "heaptrack failed"
}
ht_file=
for f in "$tmp/ht.zst" "$tmp/ht.gz" "$tmp"/ht.*; do
	if [ -f "$f" ]; then
		ht_file=$f
		break
	fi
done
[ -n "$ht_file" ] || {
	cat "$tmp/heaptrack.log" >&2
	die "heaptrack produced no data file under $tmp"
}
ht_bytes=$(file_bytes "$ht_file")

measure "heaptrack_print" heaptrack_print -f "$ht_file"
row "heaptrack_print" "$best_wall" "$best_rss" "$events" "$ht_bytes"

# --- report --------------------------------------------------------------
echo
awk -v r="$mem_records" -v tb="$trace_bytes" -v zb="$zst_bytes" -v hb="$ht_bytes" \
	-v gs="$gen_s" -v gr="$gen_rate" -v zs="$zst_s" -v ev="$events" -v hf="${ht_file##*/}" 'BEGIN {
	printf "trace    %d memory records, %.1f MB plain, %.1f MB .zst (zstd -1, %s s)\n", r, tb / 1e6, zb / 1e6, zs
	printf "writer   gen-trace %s s, %s records/s\n", gs, gr
	printf "peer     heaptrack data file %s, %.1f MB, %d events (allocs + frees)\n", hf, hb / 1e6, ev
}'
echo
awk -F '\t' 'BEGIN {
	printf "%-24s %9s %12s %9s %13s %16s\n", "", "wall s", "records/s", "MB/s", "peak RSS MiB", "RSS bytes/record"
}
{
	printf "%-24s %9.3f %12s %9.1f %13.1f %16.1f\n", $1, $2, commas($3), $4, $5, $6
}
function commas(n,   s, out) {
	s = sprintf("%d", n)
	out = ""
	while (length(s) > 3) {
		out = "," substr(s, length(s) - 2) out
		s = substr(s, 1, length(s) - 3)
	}
	return s out
}' "$rows"
echo "(MB/s is the bytes of the file as read: the .zst file for the .zst rows," \
	"heaptrack's compressed data file for heaptrack_print; heaptrack records = events)"
echo

min_rate=$plain_summary_rate
[ "$plain_memory_rate" -lt "$min_rate" ] && min_rate=$plain_memory_rate
max_rss=$(awk -v a="$plain_summary_rss" -v b="$plain_memory_rss" 'BEGIN { m = a; if (b + 0 > a + 0) m = b; printf "%.1f", m / 1024 }')
printf 'targets  %s records: %s >= 2,500,000 records/s (plain JSONL, slower of summary/memory: %s)   %s < 100 MiB peak RSS (worst: %s MiB)\n' \
	"$records" "$(verdict "$min_rate" 2500000 ge)" "$min_rate" "$(verdict "$max_rss" 100 lt)" "$max_rss" | tee -a "$summary_line"
echo
rm -f -- "$trace" "$zst" "$tmp"/ht*
}

verdict() {
	if awk -v a="$1" -v b="$2" -v op="$3" 'BEGIN { exit !(op == "ge" ? a >= b : a < b) }'; then
		echo PASS
	else
		echo FAIL
	fi
}

for n in $sizes; do
	bench_size "$n"
done
echo "summary of the sizes (peak RSS should not grow with the records):"
cat "$summary_line"
exit 0
