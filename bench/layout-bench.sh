#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What the compact encoding's block layout costs zstd (issue 26: would
# per-field streams make the writer's compression cheaper?). bench/alloc-bench
# at OPS and 10*OPS operations a thread, 2 threads, 1 frame deep, recorded by
# the probe without stacks and with stacks at the default depth; each trace's
# record blocks rewritten by bench/layout-split.py in two layouts of the same
# bytes: interleaved (the encoding's items in order, as the probe writes
# them) and columns (the MEMORY items' op bytes, timestamps, address refs,
# sizes and extension areas each as one stream, then the other items); each
# layout compressed block by block by bench/zstd-blocks at each LEVEL, the
# probe's way: bytes per event before and after, compression CPU per event
# (the best of RUNS). zstd alone, away from the writer's other work: inside
# the probe the same compression costs about twice as much (its tables share
# the cache with the live table's). One trace at a time, deleted and synced
# before the next.
#
#   bench/layout-bench.sh [BUILD_DIR] [OPS] [RUNS]   (defaults: build 1000000 3)
#
# Environment: LEVELS (zstd levels, default "1 -3"), TRACE_DIR (default
# TMPDIR or /tmp). Needs python3 (layout-split.py reads through the test
# suite's reference decoder). Exit status: 0 once the figures are printed.

bench_name="layout-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_args ops OPS 1000000 "$@"
levels=${LEVELS:-"1 -3"}
bench_paths
zblocks=$build/bench/zstd-blocks
bench_built "$build_arg" "$bench" "$probe" "$zblocks"
bench_tools python3
bench_start "$trace_dir"
bench_conditions "$trace_dir" "$build"
echo "workload     alloc-bench 2 OPS 1 (2 threads, 1 frame deep); zstd levels $levels; compression CPU best of $runs"
echo
echo "== bytes and zstd CPU per event, by layout"
printf '%9s %-7s %-12s %6s %8s %9s %8s\n' ops/thr stacks layout level "raw B" "zstd B" "ns/event"
for n in "$ops" $((ops * 10)); do
	for stacks in off on; do
		t=$tmp/t.cgt
		if [ "$stacks" = off ]; then
			CGPROBE_STACK_DEPTH=0 CGPROBE_OUTPUT=$t LD_PRELOAD=$probe "$bench" 2 "$n" 1 >/dev/null
		else
			CGPROBE_OUTPUT=$t LD_PRELOAD=$probe "$bench" 2 "$n" 1 >/dev/null
		fi
		python3 "$src_dir/bench/layout-split.py" "$t" "$tmp/inter" "$tmp/cols" 2>"$tmp/streams" ||
			die "layout-split failed on the $stacks-stacks trace: $(cat "$tmp/streams")"
		rm -f -- "$t"
		for layout in inter cols; do
			for level in $levels; do
				# shellcheck disable=SC2046 # three numbers, split on purpose
				set -- $("$zblocks" "$tmp/$layout" "$level" "$runs")
				printf '%9s %-7s %-12s %6s %8s %9s %8s\n' "$n" "$stacks" \
					"$([ $layout = inter ] && echo interleaved || echo columns)" "$level" "$1" "$2" "$3"
			done
		done
		echo "          streams: $(cat "$tmp/streams")"
		rm -f -- "$tmp/inter" "$tmp/cols"
		sync
	done
done
echo
bench_load
