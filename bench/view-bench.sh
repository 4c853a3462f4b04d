#!/bin/sh
# SPDX-License-Identifier: MIT
# The views of a real recording at two sizes, 10x apart: what each costs
# (wall, peak RSS) and how big its output is, beside heaptrack_print
# writing its massif file from heaptrack's recording of the same run.
#
#   bench/view-bench.sh [BUILD_DIR] [OPS] [RUNS]
#
# bench/alloc-bench (THREADS threads, default 2, DEPTH frames deep, default
# 16) runs OPS/10 and OPS operations a thread (default 10000000: about 2 and
# 21 million memory records), once under the probe (the default compact
# trace with call stacks) and once under heaptrack. On each trace: cgtrace
# summary (one streamed read, for scale), export --format perfetto,
# export --format massif, plot, report; on heaptrack's, heaptrack_print
# -M (massif only). Each figure is the best of RUNS (default 3), the page
# cache warm (one untimed run first, sync before each); one trace at a
# time, deleted (and synced) before the next recording. TRACE_DIR (default
# $TMPDIR or /tmp) holds the traces. The HTML report's load time in a
# browser is bench/report-bench.sh's.
bench_name="view-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_workload 10000000 "$@"

# record TOOL OPS: the workload recorded by TOOL (probe or heaptrack) into $tmp/rec; sets trace.
record() {
	rm -rf -- "$tmp/rec" "$tmp/out"
	mkdir "$tmp/rec" "$tmp/out"
	bench_settle
	case $1 in
	probe) (cd "$tmp/rec" && env CGPROBE_STACK_DEPTH="$depth" LD_PRELOAD="$probe" \
		"$bench" "$threads" "$2" "$depth") >/dev/null 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; die "recording under the probe failed"; } ;;
	heaptrack) (cd "$tmp/rec" && heaptrack -o "$tmp/rec/ht" "$bench" "$threads" "$2" "$depth") \
		>"$tmp/err" 2>&1 || { cat "$tmp/err" >&2; die "recording under heaptrack failed"; } ;;
	esac
	trace=$(ls "$tmp/rec"/* | head -n 1)
}

rows=$tmp/rows
: >"$rows"

# view SIZE NAME OUTPUT CMD...: the best of $runs, with the output's size, one row.
view() {
	v_size=$1 v_name=$2 v_out=$3
	shift 3
	# What a run writes, removed before each run (the exports never overwrite).
	[ "$v_out" != - ] || v_out=$tmp/out/none
	sync
	rm -f -- "$v_out"
	"$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; die "$v_name failed: $*"; }
	out_bytes=0
	[ ! -f "$v_out" ] || out_bytes=$(wc -c <"$v_out" | tr -d ' ')
	bench_best "$runs" "$rusage_run" "$tmp/time" sh -c 'rm -f -- "$0"; exec "$@"' "$v_out" "$@"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$v_size" "$v_name" "$best_wall" "$best_rss" "$out_bytes" \
		"$events" >>"$rows"
	awk -v s="$v_size" -v r="$v_name" -v w="$best_wall" -v k="$best_rss" -v b="$out_bytes" -v n="$events" 'BEGIN {
		printf "  %9s ops/thread  %-26s wall %8.3f s  peak RSS %7.1f MiB  output %9.3f MB  %6.2f M records/s\n",
			s, r, w, k / 1024, b / 1e6, n / w / 1e6
	}'
	rm -f -- "$v_out"
}

bench_conditions "$tmp" "$build"
echo "reads        warm page cache: one untimed run first, sync before each; best of $runs"
echo
echo "== alloc-bench $threads threads, $depth frames deep"
for size in $((ops / 10)) "$ops"; do
	record probe "$size"
	events=$(memory_records "$cgtrace" "$trace") || die "cgtrace summary --json failed on $trace"
	bytes=$(wc -c <"$trace" | tr -d ' ')
	awk -v s="$size" -v b="$bytes" -v n="$events" 'BEGIN {
		printf "  %9s ops/thread  probe trace: %d memory records, %.1f MB\n", s, n, b / 1e6 }'
	o=$tmp/out
	view "$size" "cgtrace summary" - "$cgtrace" summary "$trace"
	view "$size" "cgtrace export perfetto" "$o/p.json" "$cgtrace" export --format perfetto -o "$o/p.json" "$trace"
	view "$size" "cgtrace export massif" "$o/m.out" "$cgtrace" export --format massif -o "$o/m.out" "$trace"
	view "$size" "cgtrace plot" "$o/p.svg" "$cgtrace" plot -o "$o/p.svg" "$trace"
	view "$size" "cgtrace report" "$o/r.html" "$cgtrace" report -o "$o/r.html" "$trace"
	rm -rf -- "$tmp/rec"
	record heaptrack "$size"
	view "$size" "heaptrack_print -M (massif)" "$o/h.massif" \
		heaptrack_print -f "$trace" -p 0 -a 0 -T 0 -l 0 -M "$o/h.massif"
	rm -rf -- "$tmp/rec"
done

echo
echo "== side by side: $events memory records at $ops ops/thread (the probe trace's count)"
awk -F '\t' -v small=$((ops / 10)) -v big="$ops" '
{ w[$1, $2] = $3; k[$1, $2] = $4; b[$1, $2] = $5
  if (!($2 in seen)) { seen[$2] = 1; order[++m] = $2 } }
END {
	printf "%-27s | %8s %8s %9s | %8s %8s %9s | %6s %6s %6s\n", "view", "wall s", "RSS MiB",
		"out MB", "wall s", "RSS MiB", "out MB", "wall x", "RSS x", "out x"
	printf "%-27s | %-27s | %-27s |\n", "", "at " small " ops/thread", "at " big " ops/thread (10x)"
	for (i = 1; i <= m; i++) {
		r = order[i]
		os = b[small, r] ? b[small, r] : 1; ob = b[big, r]
		printf "%-27s | %8.3f %8.1f %9.3f | %8.3f %8.1f %9.3f | %6.1f %6.1f %6.1f\n", r,
			w[small, r], k[small, r] / 1024, b[small, r] / 1e6, w[big, r], k[big, r] / 1024,
			b[big, r] / 1e6, w[big, r] / w[small, r], k[big, r] / k[small, r],
			b[small, r] ? ob / os : 0
	}
	mc = w[big, "cgtrace export massif"]; mh = w[big, "heaptrack_print -M (massif)"]
	if (mc && mh)
		printf "\nmassif at %s ops/thread: cgtrace %.3f s, heaptrack_print %.3f s: %.2fx\n", big, mc, mh, mc / mh
}' "$rows"
echo
bench_load
