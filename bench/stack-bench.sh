#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What call stacks cost the probe, beside heaptrack (issue 11's targets).
# bench/alloc-bench (random malloc/realloc/free of mixed sizes) runs at OPS
# and 10*OPS operations per thread, with 1 and 2 threads, allocating 1 and
# 16 frames deep; each configuration natively, under the probe's default
# recording with stacks off (CGPROBE_STACK_DEPTH=0), with stacks at the
# default depth (32), and under heaptrack. Best of RUNS by wall time; user
# and system CPU are the best run's (bench/rusage-run). Every trace is sized
# and removed right after its run, and the page cache synced before the
# next (dropped too when root may), then a 1000-operation run of the same
# tool puts its binaries back in the cache.
#
# Reported: the wall time each tool adds to native, stacks' over
# heaptrack's (target <= 0.5); the trace's bytes with stacks over without
# (target <= 2); the cost of a frame, from the CPU time stacks add at depth
# 16 over depth 1 (15 more frames an allocation); and bench/unwind-bench's
# cost of a capture by each way of taking one the probe weighed.
#
#   bench/stack-bench.sh [BUILD_DIR] [OPS] [RUNS]      (defaults: build 1000000 3)
#
# Environment: SIZES (operations per thread, default "OPS 10*OPS"), THREADS
# ("1 2"), DEPTHS ("1 16"), TRACE_DIR (where the traces go, default TMPDIR
# or /tmp), DROP_CACHES=0 (sync only). Every CGPROBE_* variable of the
# caller's environment is ignored. Exit status: 0 once the figures are
# printed, whatever they are; non-zero when something could not be run.

bench_name="stack-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_matrix 1000000 "$@"

bench_paths
unwind=$build/bench/unwind-bench
bench_built "$build_arg" "$bench" "$unwind" "$probe" "$cgtrace" "$rusage_run"
bench_tools heaptrack
bench_start "$trace_dir"

# run_once MODE: one run of alloc-bench ($wl_threads, $wl_ops, $wl_depth);
# sets r_wall, r_user, r_sys, r_bytes (the trace, 0 natively), r_allocs.
run_once() {
	rm -rf -- "$tmp/run"
	mkdir "$tmp/run"
	set -- "$bench" "$wl_threads" "$wl_ops" "$wl_depth"
	case $run_mode in
	native | heaptrack) bench_under "$run_mode run" "$tmp/run" "$run_mode" "" "$@" ;;
	nostacks) bench_under "$run_mode run" "$tmp/run" probe CGPROBE_STACK_DEPTH=0 "$@" ;;
	stacks) bench_under "$run_mode run" "$tmp/run" probe "" "$@" ;;
	esac
	# shellcheck disable=SC2046 # four numbers, split on purpose
	set -- $(cat "$tmp/time")
	r_wall=$1 r_user=$2 r_sys=$3
	r_bytes=0 r_allocs=0
	for f in "$tmp/run"/*; do
		[ -f "$f" ] || continue
		r_bytes=$((r_bytes + $(wc -c <"$f" | tr -d ' ')))
		if [ "$run_mode" = stacks ]; then
			r_allocs=$("$cgtrace" summary --json "$f" 2>/dev/null |
				sed -n 's/.*"alloc_count":\([0-9]*\).*/\1/p')
		fi
	done
	rm -rf -- "$tmp/run"
}

rows=$tmp/rows
: >"$rows"
fmt_row='%9s %3s %5s  %-9s %8s %8s %8s %11s %10s\n'

# measure MODE: best of $runs, a row in $rows and on stdout.
measure() {
	run_mode=$1
	best=
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		bench_warm
		run_once
		if [ -z "$best" ] || awk -v a="$r_wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$r_wall b_user=$r_user b_sys=$r_sys b_bytes=$r_bytes
		fi
		[ "$r_allocs" -gt 0 ] 2>/dev/null && allocs=$r_allocs
	done
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl_ops" "$wl_threads" "$wl_depth" "$run_mode" \
		"$best" "$b_user" "$b_sys" "$b_bytes" "${allocs:-0}" >>"$rows"
	# shellcheck disable=SC2059 # the format is one string, kept once
	printf "$fmt_row" "$wl_ops" "$wl_threads" "$wl_depth" "$run_mode" "$best" "$b_user" "$b_sys" \
		"$(awk -v b="$b_bytes" 'BEGIN { printf "%.2f", b / 1e6 }')" "${allocs:-?}"
}

bench_conditions "$tmp" "$build"
echo
echo "== runs: best of $runs by wall time; every CGPROBE_* unset; nostacks = CGPROBE_STACK_DEPTH=0," \
	"stacks = the probe's default (compact, CGPROBE_STACK_DEPTH 32)"
# shellcheck disable=SC2059
printf "$fmt_row" ops/thr thr depth tool "wall s" "user s" "sys s" "trace MB" allocs
for wl_ops in $sizes; do
	for wl_depth in $depths; do
		for wl_threads in $threads_list; do
			allocs=
			for mode in native nostacks stacks heaptrack; do
				measure "$mode"
			done
		done
	done
done

echo
echo "== wall time added to native; target: stacks add <= 0.5 x what heaptrack adds"
awk -F '\t' '
{ k = $1 SUBSEP $2 SUBSEP $3; w[k, $4] = $5; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
END {
	printf "%9s %3s %5s %9s %10s %9s %11s %11s\n", "ops/thr", "thr", "depth", "native s",
		"+nostacks", "+stacks", "+heaptrack", "stacks/ht"
	for (i = 1; i <= n; i++) {
		k = order[i]; split(k, f, SUBSEP); nat = w[k, "native"]
		a = w[k, "nostacks"] - nat; s = w[k, "stacks"] - nat; h = w[k, "heaptrack"] - nat
		r = h > 0 ? s / h : 1e9
		printf "%9s %3s %5s %9.3f %10.3f %9.3f %11.3f %11.3f  %s\n", f[1], f[2], f[3], nat, a, s, h, r,
			r <= 0.5 ? "PASS" : "FAIL"
	}
}' "$rows"

echo
echo "== trace bytes, stacks over nostacks; target <= 2"
awk -F '\t' '
{ k = $1 SUBSEP $2 SUBSEP $3; b[k, $4] = $8; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
END {
	printf "%9s %3s %5s %12s %12s %7s\n", "ops/thr", "thr", "depth", "nostacks B", "stacks B", "ratio"
	for (i = 1; i <= n; i++) {
		k = order[i]; split(k, f, SUBSEP); a = b[k, "nostacks"]; s = b[k, "stacks"]
		r = a > 0 ? s / a : 1e9
		printf "%9s %3s %5s %12d %12d %7.2f  %s\n", f[1], f[2], f[3], a, s, r, r <= 2 ? "PASS" : "FAIL"
	}
}' "$rows"

echo
echo "== cost of a frame: CPU (user+sys) stacks add, depth 16 over depth 1, per allocation and frame"
awk -F '\t' -v lo="$(echo "$depths" | awk '{ print $1 }')" -v hi="$(echo "$depths" | awk '{ print $NF }')" '
{ c[$1, $2, $3, $4] = $6 + $7; if ($4 == "stacks") a[$1, $2, $3] = $9; if (!(($1, $2) in seen)) { seen[$1, $2] = 1; order[++n] = $1 SUBSEP $2 } }
END {
	printf "%9s %3s %14s %14s %12s\n", "ops/thr", "thr", "ns/alloc d" lo, "ns/alloc d" hi, "ns/frame"
	for (i = 1; i <= n; i++) {
		split(order[i], f, SUBSEP); o = f[1]; t = f[2]
		if (a[o, t, lo] <= 0 || a[o, t, hi] <= 0 || hi == lo) { printf "%9s %3s  (no allocation count)\n", o, t; continue }
		x = (c[o, t, lo, "stacks"] - c[o, t, lo, "nostacks"]) * 1e9 / a[o, t, lo]
		y = (c[o, t, hi, "stacks"] - c[o, t, hi, "nostacks"]) * 1e9 / a[o, t, hi]
		printf "%9s %3s %14.1f %14.1f %12.2f\n", o, t, x, y, (y - x) / (hi - lo)
	}
}' "$rows"

echo
echo "== bench/unwind-bench: one capture by each way weighed (200000 captures, ns), from 1 and 16 calls deep"
printf '%-17s %8s %8s %10s %10s %9s\n' mode "frames1" "frames16" "ns d1" "ns d16" "ns/frame"
for m in backtrace backtrace-none backtrace-thread probe cfi step fp; do
	it=200000
	[ "$m" = step ] && it=2000
	# shellcheck disable=SC2046
	set -- $("$unwind" "$m" 1 "$it") $("$unwind" "$m" 16 "$it")
	awk -v m="$m" -v f1="$3" -v t1="$4" -v f2="$7" -v t2="$8" 'BEGIN {
		printf "%-17s %8d %8d %10.1f %10.1f %9.2f\n", m, f1, f2, t1, t2, (f2 > f1 ? (t2 - t1) / (f2 - f1) : 0) }'
done
echo "(backtrace-none is libunwind as the probe calls it, probe adds its hash and cache check;"
echo " cfi is the probe's own unwinder, libunwind's stand-in wherever it takes every frame; fp is wrong"
echo " through code without frame pointers and shown for scale only)"
echo
bench_load
exit 0
