#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Reading a real recording (issue 10's reading targets): bench/alloc-bench at
# OPS operations per thread x THREADS threads, DEPTH frames deep (about 20 M
# events at the defaults), recorded once by the probe's default (the compact
# encoding), once by the probe with CGPROBE_FORMAT=jsonl and once by
# heaptrack; then `cgtrace summary` and `cgtrace memory` on each probe trace
# and `heaptrack_print` on heaptrack's, best of RUNS by wall time, with peak
# RSS and records per second (records: alloc_count + free_count of `cgtrace
# summary --json` on the compact trace, the same events heaptrack saw). The
# same again at OPS/10 shows how time and memory grow with the trace.
#
# One trace exists at a time: each is removed once its readers are
# measured. Every run (recording or reading) starts after `sync`; before a
# recording the page cache is dropped too when root may (DROP_CACHES=0: not),
# so a recording does not pay for the previous trace's pages. The readers
# read the trace warm from the page cache when it fits (the first, untimed
# read puts it there); COLD=1 drops the cache before every read instead.
#
#   bench/compact-read-bench.sh [BUILD_DIR] [OPS] [RUNS]   (defaults: build 10000000 3)
#
# Environment: THREADS (2), DEPTH (16), TRACE_DIR (default TMPDIR or /tmp),
# DROP_CACHES=0, COLD=1. Every CGPROBE_* variable of the caller's environment
# is ignored. Exit status: 0 once the figures are printed, whatever they are
# (a benchmark, not a test); non-zero when something could not be run.

bench_name="compact-read-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_workload 10000000 "$@"
read_cache="warm (sync before each read; the trace is read once, untimed, first)"
if [ "${COLD:-0}" = 1 ]; then
	case "$bench_drop" in
	dropped*) read_cache="cold (caches dropped before each read)" ;;
	*) die "COLD=1 needs caches that can be dropped: they are $bench_drop" ;;
	esac
fi

# record TOOL OPS: the workload recorded by TOOL (compact, jsonl, heaptrack)
# into $tmp/rec; sets trace and rec_wall.
record() {
	rm -rf -- "$tmp/rec"
	mkdir "$tmp/rec"
	bench_settle
	case $1 in
	compact) bench_under "recording with $1" "$tmp/rec" probe "" "$bench" "$threads" "$2" "$depth" ;;
	jsonl) bench_under "recording with $1" "$tmp/rec" probe CGPROBE_FORMAT=jsonl \
		"$bench" "$threads" "$2" "$depth" ;;
	heaptrack) bench_under "recording with $1" "$tmp/rec" heaptrack "" "$bench" "$threads" "$2" "$depth" ;;
	esac
	rec_wall=$(cut -d ' ' -f 1 "$tmp/time")
	bench_one_file "$tmp/rec" "recording with $1"
	trace=$b_file
}

rows=$tmp/rows
: >"$rows"

# measure SIZE TRACE_KIND READER CMD...: best of $runs, one row in $rows.
measure() {
	m_size=$1 m_kind=$2 m_reader=$3
	shift 3
	# The first read is untimed: it warms the cache and checks the command.
	sync
	"$@" >/dev/null 2>"$tmp/err" || {
		cat "$tmp/err" >&2
		die "$m_reader failed on the $m_kind trace: $*"
	}
	bench_before=sync
	[ "${COLD:-0}" != 1 ] || bench_before=bench_settle
	bench_best "$runs" "$rusage_run" "$tmp/time" "$@"
	best=$best_wall
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m_size" "$m_kind" "$m_reader" "$best" "$best_rss" \
		"$events" "$bytes" >>"$rows"
	awk -v s="$m_size" -v t="$m_kind" -v r="$m_reader" -v w="$best" -v k="$best_rss" -v n="$events" 'BEGIN {
		printf "  %9s ops/thread  %-16s on %-9s  wall %8.3f s  peak RSS %8.1f MiB  %6.2f M records/s\n",
			s, r, t, w, k / 1024, n / w / 1e6
	}'
}

bench_conditions "$tmp" "$build"
echo "reads        $read_cache"
need_mib=$((ops * threads * 220 / 1048576))
free_mib=$(df -P -k "$tmp" | awk 'NR == 2 { printf "%d", $4 / 1024 }')
[ "$free_mib" -gt "$need_mib" ] ||
	echo "WARNING: the JSONL trace needs about $need_mib MiB, $free_mib MiB free in $trace_dir"
echo
echo "== alloc-bench $threads threads, $depth frames deep; readers best of $runs by wall time"
notes=
for size in $((ops / 10)) "$ops"; do
	for tool in compact jsonl heaptrack; do
		record "$tool" "$size"
		bytes=$(wc -c <"$trace" | tr -d ' ')
		enc=$(encoding "$trace")
		if [ "$tool" = compact ]; then
			events=$(memory_records "$cgtrace" "$trace") || die "cgtrace summary --json failed on $trace"
			[ "$enc" = compact ] || notes="${notes}NOTE: the default recording at $size ops/thread wrote $enc, not compact
"
		fi
		awk -v s="$size" -v t="$tool" -v e="$enc" -v b="$bytes" -v n="$events" -v w="$rec_wall" 'BEGIN {
			printf "  %9s ops/thread  recorded by %-9s in %7.3f s: %s, %.1f MB, %.2f B/event\n",
				s, t, w, e, b / 1e6, b / n
		}'
		case $tool in
		heaptrack)
			measure "$size" "$tool" heaptrack_print heaptrack_print -f "$trace"
			;;
		*)
			measure "$size" "$tool" "cgtrace summary" "$cgtrace" summary "$trace"
			measure "$size" "$tool" "cgtrace memory" "$cgtrace" memory "$trace"
			;;
		esac
		rm -rf -- "$tmp/rec"
	done
done

echo
echo "== side by side: records = $events memory records at $ops ops/thread (the compact trace's count;" \
	"heaptrack's recording is of the same run)"
awk -F '\t' -v small=$((ops / 10)) -v big="$ops" '
{ w[$1, $2, $3] = $4; k[$1, $2, $3] = $5; n[$1] = $6
  if (!(($2, $3) in seen)) { seen[$2, $3] = 1; order[++m] = $2 SUBSEP $3 } }
END {
	printf "%-16s %-9s | %9s %8s %8s | %9s %8s %8s | %6s %6s\n", "reader", "trace",
		"wall s", "RSS MiB", "Mrec/s", "wall s", "RSS MiB", "Mrec/s", "wall x", "RSS x"
	printf "%-16s %-9s | %-27s | %-27s |\n", "", "", "at " small " ops/thread", "at " big " ops/thread (10x)"
	for (i = 1; i <= m; i++) {
		split(order[i], f, SUBSEP)
		ws = w[small, f[1], f[2]]; wb = w[big, f[1], f[2]]; ks = k[small, f[1], f[2]]; kb = k[big, f[1], f[2]]
		printf "%-16s %-9s | %9.3f %8.1f %8.2f | %9.3f %8.1f %8.2f | %6.1f %6.1f\n", f[2], f[1],
			ws, ks / 1024, n[small] / ws / 1e6, wb, kb / 1024, n[big] / wb / 1e6, wb / ws, kb / ks
	}
}' "$rows"

echo
echo "== targets (at each size)"
awk -F '\t' '
{ w[$1, $2, $3] = $4; k[$1, $2, $3] = $5; n[$1] = $6; if (!($1 in s)) { s[$1] = 1; sz[++m] = $1 } }
function v(ok) { return ok ? "PASS" : "FAIL" }
END {
	for (i = 1; i <= m; i++) {
		z = sz[i]; hw = w[z, "heaptrack", "heaptrack_print"]; hk = k[z, "heaptrack", "heaptrack_print"]
		for (c = 1; c <= 2; c++) {
			r = c == 1 ? "cgtrace summary" : "cgtrace memory"
			cw = w[z, "compact", r]; ck = k[z, "compact", r]
			printf "%9s ops/thread  %-15s compact: wall %.3f s = %.2f x heaptrack_print (%.3f s; target <= 0.5) %s;" \
				" RSS %.1f MiB vs %.1f MiB (target <=) %s\n", z, r, cw, cw / hw, hw, v(cw <= 0.5 * hw),
				ck / 1024, hk / 1024, v(ck <= hk)
		}
		for (c = 1; c <= 2; c++) {
			r = c == 1 ? "cgtrace summary" : "cgtrace memory"
			jw = w[z, "jsonl", r]; jk = k[z, "jsonl", r]
			printf "%9s ops/thread  %-15s jsonl:   %.2f M records/s (target >= 2.5) %s; RSS %.1f MiB (target < 100) %s\n",
				z, r, n[z] / jw / 1e6, v(n[z] / jw >= 2.5e6), jk / 1024, v(jk < 100 * 1024)
		}
	}
}' "$rows"
echo
printf '%s' "$notes"
bench_load
exit 0
