#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What a fork costs under the probe, beside native and heaptrack (issue 19).
# bench/fork-lat forks FORKS and 10*FORKS times while THREADS threads
# allocate flat out; each child does free(malloc(100)) and _exit(0), and the
# parent reaps it before the next fork. Timed: fork()'s return in the
# parent, p50, p99 and max over the forks of a run; natively, under the
# probe's defaults (compact, stacks at depth 32) and under heaptrack. RUNS
# runs each (default 3), one at a time, the run's traces deleted and the
# page cache synced before the next; the median run (by p99) is printed,
# and the worst max of all runs. Then the wall time of short programs that
# fork: `sh -c 'true|true|true'` and a Python multiprocessing.Pool(2) with
# fork, REPEAT times each (default 20): median and max.
#
# Targets: the probe's p99 at most native p99 + 5 ms, and no fork over
# 100 ms, at both sizes.
#
#   bench/fork-bench.sh [BUILD_DIR] [FORKS] [RUNS]     (defaults: build 1000 3)
#
# Environment: THREADS (2), REPEAT (20), TRACE_DIR (where the traces go,
# default TMPDIR or /tmp), DROP_CACHES=0 (sync only). Every CGPROBE_*
# variable of the caller's environment is ignored. Exit status: 0 once the
# figures are printed, whatever they are; non-zero when something could not
# be run.

# shellcheck disable=SC2154 # forks is set by bench_args
bench_name="fork-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_args forks FORKS 1000 "$@"
threads=${THREADS:-2}
repeat=${REPEAT:-20}
bench_counts "$threads" "$repeat"
[ "$repeat" -ge 1 ] || die "REPEAT must be at least 1"

lat=$build/bench/fork-lat
probe=$build/preload/libcgprobe.so
bench_built "$build_arg" "$lat" "$probe"
have_heaptrack=
command -v heaptrack >/dev/null 2>&1 && have_heaptrack=1
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
bench_start "$trace_dir"
bench_conditions "$tmp" "$build"
echo "workload     bench/fork-lat: $threads threads each replacing one of 64 blocks (32-543 B)"
echo "             flat out; children free(malloc(100)), _exit(0); reaped one by one"
echo "timing       CLOCK_MONOTONIC around fork() in the parent; median run of $runs by p99,"
echo "             max over all runs"

# with MODE CMD...: CMD under MODE (native, probe, heaptrack), traces in $tmp/run.
with() {
	mode=$1
	shift
	case $mode in
	native) "$@" ;;
	probe) env CGPROBE_OUTPUT="$tmp/run/t.%p.cgt" LD_PRELOAD="$probe" "$@" ;;
	heaptrack) heaptrack -o "$tmp/run/ht" "$@" ;;
	esac
}

# settle: the run's traces go, their pages are written back (and dropped as root).
settle() {
	rm -rf -- "$tmp/run"
	bench_settle
	mkdir "$tmp/run"
}

# latency MODE N: fork-lat's figures of RUNS runs, one line each, in $tmp/lat.
latency() {
	: >"$tmp/lat"
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		settle
		with "$1" "$lat" "$2" "$threads" >"$tmp/out" 2>"$tmp/err" || {
			cat "$tmp/err" >&2
			die "$1: fork-lat $2 failed"
		}
		grep '^forks ' "$tmp/out" >>"$tmp/lat" || die "$1: no figures"
		traces=$(find "$tmp/run" -type f | wc -l)
		echo "traces $traces" >>"$tmp/lat.n"
	done
	# Median run by p99; the worst max of all.
	sort -n -k8,8 "$tmp/lat" | awk -v n="$runs" '
		{ p50[NR] = $6; p99[NR] = $8; if ($10 > mx) mx = $10 }
		END { m = int((n + 1) / 2); printf "%.3f %.3f %.3f\n", p50[m] / 1e3, p99[m] / 1e3, mx / 1e3 }'
}

modes="native probe"
[ -z "$have_heaptrack" ] || modes="$modes heaptrack"

echo
echo "== fork latency (ms)"
printf '%-10s %-8s %10s %10s %10s %10s\n' forks tool p50 p99 max traces
for n in "$forks" $((forks * 10)); do
	native_p99=
	for mode in $modes; do
		rm -f "$tmp/lat.n"
		latency "$mode" "$n" >"$tmp/fig"
		read -r p50 p99 mx <"$tmp/fig"
		files=$(tail -n 1 "$tmp/lat.n" | cut -d ' ' -f 2)
		printf '%-10s %-8s %10s %10s %10s %10s\n' "$n" "$mode" "$p50" "$p99" "$mx" "$files"
		case $mode in
		native) native_p99=$p99 ;;
		probe)
			verdict=$(awk -v p="$p99" -v m="$mx" -v n="$native_p99" 'BEGIN {
				print (p <= n + 5 && m <= 100) ? "PASS" : "FAIL" }')
			echo "           probe: p99 $p99 <= native $native_p99 + 5 ms, max $mx <= 100 ms: $verdict"
			;;
		esac
	done
done

# wall MODE CMD...: REPEAT runs of CMD; "median max" in ms.
wall() {
	mode=$1
	shift
	: >"$tmp/walls"
	i=0
	while [ "$i" -lt "$repeat" ]; do
		i=$((i + 1))
		settle
		t0=$(now_ns)
		with "$mode" "$@" >/dev/null 2>"$tmp/err" || {
			cat "$tmp/err" >&2
			die "$mode: $* failed"
		}
		t1=$(now_ns)
		echo $((t1 - t0)) >>"$tmp/walls"
	done
	sort -n "$tmp/walls" | awk -v n="$repeat" '
		{ v[NR] = $1 } END { printf "%.1f %.1f\n", v[int((n + 1) / 2)] / 1e6, v[n] / 1e6 }'
}

cat >"$tmp/pool.py" <<'EOF'
import multiprocessing
def work(i):
    return len(bytearray(1 << 16))
if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pool.map(work, range(8))
EOF

echo
echo "== short programs that fork, $repeat runs each (wall ms)"
printf '%-28s %-8s %10s %10s\n' program tool median max
for mode in $modes; do
	wall "$mode" sh -c 'true|true|true' >"$tmp/fig"
	read -r med mx <"$tmp/fig"
	printf '%-28s %-8s %10s %10s\n' "sh -c 'true|true|true'" "$mode" "$med" "$mx"
done
if [ -n "$py" ]; then
	for mode in $modes; do
		wall "$mode" "$py" "$tmp/pool.py" >"$tmp/fig"
		read -r med mx <"$tmp/fig"
		printf '%-28s %-8s %10s %10s\n' "$(basename "$py") Pool(2), fork" "$mode" "$med" "$mx"
	done
fi
echo
bench_load
