#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What Python frames cost (docs/python-frames.md), beside the other way of
# keeping them: bench/py-work.py's call-heavy workload (recursive fib: calls,
# almost no allocation) and its allocation-heavy one (lists of small
# objects), each natively, under the floor of a per-call profile function
# (an empty C one, bench/py-profile-floor.c: no shadow stack can cost less),
# and under the probe with Python frames (the default) and without
# (CGPROBE_PYTHON=off). Median of RUNS, interleaved run by run; each trace
# removed and the page cache synced (dropped when root may) before the
# next run. The probe reads frames at allocations only, so the target is
# the probe within 1.2x of native on the call-heavy workload.
#
#   bench/py-bench.sh [BUILD_DIR] [SCALE] [RUNS]      (defaults: build 1 3)
#
# SCALE multiplies the work: fib(28 + 2.4 log2 SCALE) is about SCALE times
# fib(28); the allocations are 100000 * SCALE lists. SIZES ("SCALE
# 10*SCALE") lists the scales run. PYTHON (default /usr/bin/python3).
# Exit status: 0 once the figures are printed; 77 without the interpreter.

bench_name="py-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"
bench_help "$0" "${1:-}"

bench_args scale SCALE 1 "$@"
sizes=${SIZES:-"$scale $((scale * 10))"}
# shellcheck disable=SC2086 # a list of numbers, split on purpose
bench_counts $sizes
python=${PYTHON:-/usr/bin/python3}
[ -x "$python" ] || { echo "$bench_name: no $python" >&2; exit 77; }
bench_paths
floor=$build/bench/py-profile-floor.so
work=$src_dir/bench/py-work.py
bench_built "$build_arg" "$probe" "$floor" "$rusage_run"
bench_start "$trace_dir"
bench_conditions "$trace_dir" "$build"
echo "python       $("$python" -c 'import sys; print(sys.version.split()[0])') ($python)"
echo "workloads    $work calls N (fib(N)), allocs N (N lists of 64 small objects); median of $runs runs, interleaved"

median() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# timed OUT CMD...: CMD's wall seconds appended to OUT.
timed() {
	t_out=$1
	shift
	bench_settle
	"$rusage_run" "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || {
		tail -5 "$tmp/err" >&2
		die "failed: $*"
	}
	read -r t_w _ <"$tmp/time"
	echo "$t_w" >>"$t_out"
	rm -f "$tmp"/t.cgt
}

for s in $sizes; do
	fib_n=$(awk -v s="$s" 'BEGIN { printf "%d", 28 + 2.4 * log(s) / log(2) + 0.5 }')
	allocs_n=$((100000 * s))
	echo
	echo "== scale $s: fib($fib_n), $allocs_n lists"
	printf '%-8s %-10s %10s %10s %10s\n' "workload" "run" "wall s" "x native" "x floor"
	for w in calls allocs; do
		n=$fib_n
		[ "$w" = calls ] || n=$allocs_n
		for tool in native floor probe probe_off; do : >"$tmp/$tool.runs"; done
		i=0
		while [ "$i" -lt "$runs" ]; do
			i=$((i + 1))
			timed "$tmp/native.runs" "$python" "$work" "$w" "$n"
			timed "$tmp/floor.runs" "$python" "$work" "$w" "$n" --floor "$floor"
			timed "$tmp/probe.runs" env LD_PRELOAD="$probe" CGPROBE_OUTPUT="$tmp/t.cgt" \
				"$python" "$work" "$w" "$n"
			timed "$tmp/probe_off.runs" env LD_PRELOAD="$probe" CGPROBE_OUTPUT="$tmp/t.cgt" \
				CGPROBE_PYTHON=off "$python" "$work" "$w" "$n"
		done
		nat=$(median "$tmp/native.runs") flo=$(median "$tmp/floor.runs")
		for tool in native floor probe probe_off; do
			m=$(median "$tmp/$tool.runs")
			printf '%-8s %-10s %10s %10s %10s\n' "$w" "$tool" "$m" \
				"$(awk -v a="$m" -v b="$nat" 'BEGIN { printf "%.2f", a / b }')" \
				"$(awk -v a="$m" -v b="$flo" 'BEGIN { printf "%.2f", a / b }')"
		done
	done
	echo "target: the probe (Python frames, no per-call cost) within 1.2x native on calls"
done
echo
bench_load
