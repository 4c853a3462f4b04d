#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The probe's cost while recording, beside heaptrack's (issue 10's recording
# targets). bench/alloc-bench (random malloc/calloc/realloc/free of mixed
# sizes) runs at OPS and 10*OPS operations per thread, with 1 and 2 threads,
# allocating 1 and 16 frames deep; each configuration natively, under the
# probe's default recording (the compact encoding), under the probe with
# CGPROBE_FORMAT=jsonl, and under heaptrack. Best of RUNS by wall time; user
# and system CPU and peak RSS are the best run's (bench/rusage-run; heaptrack's
# include heaptrack_interpret, its child). Every trace is sized, counted and
# removed right after its run; between runs the page cache is synced (and
# dropped when root may), then a 1000-operation run of the same tool puts its
# binaries back in the cache, so no run pays for another's dirty pages or
# for reading the tools from disk.
#
# Then one more compact run of each configuration with CGPROBE_STATS=1
# (outside the timing) gives the writer's CPU breakdown, the zstd level (meta
# tag cgprobe_zstd_level) and the event count; the largest configuration's
# trace is re-encoded by `cgtrace export --format compact --stats` for the
# bytes each field takes. Last, bench/live-bench (LIVE_N small blocks live
# at once, freed in random order), the case that stresses a table of live
# allocations: no target, shown for its cost.
#
#   bench/probe-bench.sh [BUILD_DIR] [OPS] [RUNS]      (defaults: build 1000000 3)
#
# Environment: SIZES (operations per thread, default "OPS 10*OPS"), THREADS
# ("1 2"), DEPTHS ("1 16"), LIVE_N (2000000; 0 skips), STACK_DEPTH (the
# probe's CGPROBE_STACK_DEPTH, default 0: the encoding alone), TRACE_DIR (where the
# traces go, default TMPDIR or /tmp: a disk, not tmpfs, for figures that
# mean anything), DROP_CACHES=0 (sync only). Every CGPROBE_* variable of the
# caller's environment is ignored. Exit status: 0 once the figures are
# printed, whatever they are (a benchmark, not a test); non-zero when
# something could not be run.

bench_name="probe-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_matrix 1000000 "$@"
live_n=${LIVE_N:-2000000}
bench_counts "$live_n"

bench_paths
live_bench=$build/bench/live-bench
bench_built "$build_arg" "$bench" "$live_bench" "$probe" "$cgtrace" "$rusage_run"
bench_tools heaptrack
bench_start "$trace_dir"
# The encoding's cost, as issue 10 set its targets: stacks off unless STACK_DEPTH
# says otherwise (bench/stack-bench.sh measures what stacks add).
stack_depth=${STACK_DEPTH:-0}
case "$stack_depth" in '' | *[!0-9]*) die "STACK_DEPTH is not a non-negative integer: '$stack_depth'" ;; esac
export CGPROBE_STACK_DEPTH="$stack_depth"

# The largest configuration: the last of each list. Its compact trace gives
# the per-field bytes.
for last_size in $sizes; do :; done
for last_threads in $threads_list; do :; done
for last_depth in $depths; do :; done

# --- one run ---------------------------------------------------------------
# Globals in: wl (alloc or live), wl_threads, wl_ops, wl_depth. run_once MODE
# [STATS] leaves the run's trace (if any) in $tmp/run and sets r_wall, r_user,
# r_sys, r_rss (KiB), r_dirty (MiB of dirty pages when it started), r_trace.
run_once() {
	rm -rf -- "$tmp/run"
	mkdir "$tmp/run"
	if [ "$wl" = live ]; then
		set -- "$live_bench" "$wl_ops"
	else
		set -- "$bench" "$wl_threads" "$wl_ops" "$wl_depth"
	fi
	r_dirty=$(meminfo Dirty)
	case $run_mode in
	native | heaptrack) bench_under "$run_mode run" "$tmp/run" "$run_mode" "" "$@" ;;
	compact) bench_under "$run_mode run" "$tmp/run" probe "${run_stats:+CGPROBE_STATS=1}" "$@" ;;
	jsonl) bench_under "$run_mode run" "$tmp/run" probe CGPROBE_FORMAT=jsonl "$@" ;;
	esac
	# shellcheck disable=SC2046 # four numbers, split on purpose
	set -- $(cat "$tmp/time")
	r_wall=$1 r_user=$2 r_sys=$3 r_rss=$4
	r_trace=
	[ "$run_mode" = native ] && return 0
	bench_one_file "$tmp/run" "$run_mode run"
	r_trace=$b_file
}

# --- one configuration of one tool ---------------------------------------------
rows=$tmp/rows
: >"$rows"
fmt_row='%-6s %9s %3s %5s  %-9s %8s %8s %8s %9s %8s %10s %11s %8s %-8s %6s\n'
table_head() {
	# shellcheck disable=SC2059 # the format is one string, kept once
	printf "$fmt_row" work ops/thr thr depth tool "wall s" "user s" "sys s" "cpu ns/op" "RSS MiB" \
		"trace MB" events "B/event" encoding "dirty0"
}

# measure MODE: best of $runs, a row in $rows and on stdout.
measure() {
	run_mode=$1
	run_stats=
	best=
	bytes=0 events=0 enc=-
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		bench_warm
		run_once
		if [ -n "$r_trace" ]; then
			bytes=$(wc -c <"$r_trace" | tr -d ' ')
			if [ "$i" = 1 ]; then
				enc=$(encoding "$r_trace")
				if [ "$run_mode" = jsonl ]; then
					events=$(memory_records "$cgtrace" "$r_trace") || events=0
				fi
				[ "$run_mode" = compact ] && [ -z "$default_name" ] && default_name=${r_trace##*/}
			fi
		fi
		rm -rf -- "$tmp/run"
		if [ -z "$best" ] || awk -v a="$r_wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$r_wall b_user=$r_user b_sys=$r_sys b_rss=$r_rss b_dirty=$r_dirty b_bytes=$bytes
		fi
	done
	if [ "$run_mode" = compact ]; then
		stats_run
		events=$s_events
	fi
	[ "$run_mode" = heaptrack ] && events=$compact_events
	[ "$run_mode" = compact ] && compact_events=$events
	[ "$wl" = live ] && nops=$((2 * wl_ops)) || nops=$((wl_threads * wl_ops))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$wl_ops" "$wl_threads" \
		"$wl_depth" "$run_mode" "$best" "$b_user" "$b_sys" "$b_rss" "$b_bytes" "${events:-0}" "$enc" \
		"$b_dirty" "$nops" >>"$rows"
	tail -n 1 "$rows" | awk -F '\t' -v fmt="$fmt_row" '{
		cpu = ($7 + $8) * 1e9 / $14
		mb = $5 == "native" ? "-" : sprintf("%.1f", $10 / 1e6)
		ev = $11 > 0 ? $11 : "-"
		bpe = ($5 != "native" && $11 > 0) ? sprintf("%.2f", $10 / $11) : "-"
		printf fmt, $1, $2, $3, $4, $5, sprintf("%.3f", $6), sprintf("%.3f", $7), sprintf("%.3f", $8),
			sprintf("%.0f", cpu), sprintf("%.1f", $9 / 1024),
			mb, ev, bpe, $12, $13
	}'
}

# stats_run: one compact run with CGPROBE_STATS=1, not timed: the writer's
# breakdown, the event count, the meta tags and (largest configuration) the
# per-field bytes.
stats_run() {
	bench_warm
	run_stats=1
	run_once
	run_stats=
	key="$wl $wl_ops/thread x $wl_threads thread(s), depth $wl_depth"
	s_events=$(memory_records "$cgtrace" "$r_trace") || s_events=0
	s_bytes=$(wc -c <"$r_trace" | tr -d ' ')
	{
		echo "$key: $s_events events, $s_bytes bytes ($(encoding "$r_trace")," \
			"cgprobe_format $(meta_tag "$cgtrace" "$r_trace" cgprobe_format)," \
			"cgprobe_zstd_level $(meta_tag "$cgtrace" "$r_trace" cgprobe_zstd_level))"
		if [ -s "$tmp/err" ]; then
			sed 's/^/    /' "$tmp/err"
		else
			echo "    (no CGPROBE_STATS line on stderr)"
		fi
	} >>"$tmp/stats"
	level=$(meta_tag "$cgtrace" "$r_trace" cgprobe_zstd_level)
	# The line "cgprobe: stats: PATH: ENC, N events, ...; writer CPU T ms:
	# encode E, compress C, write W ms; X ns/event", read by its words.
	grep 'cgprobe: stats:' "$tmp/err" | tail -n 1 | awk -v k="$wl	$wl_ops	$wl_threads	$wl_depth" \
		-v lv="$level" -v cpu="$(awk -v u="$r_user" -v s="$r_sys" 'BEGIN { print (u + s) * 1e3 }')" "$stats_awk"'
	{
		i = index($0, "; writer CPU"); head = substr($0, 1, i); tail = substr($0, i)
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k, before(head, " events,"), after(tail, "writer CPU "),
			after(tail, "encode "), after(tail, "compress "), after(tail, ", write "), cpu, lv
	}' >>"$tmp/statrows"
	if [ "$wl" = alloc ] && [ "$wl_ops" = "$last_size" ] && [ "$wl_threads" = "$last_threads" ] &&
		[ "$wl_depth" = "$last_depth" ]; then
		{
			echo "$key, $s_events events; the probe wrote $s_bytes bytes ($(encoding "$r_trace"));"
			echo "cgtrace export --format compact --stats of that trace:"
			if "$cgtrace" export --format compact --stats -o "$tmp/reencoded" "$r_trace" \
				>"$tmp/fields.out" 2>&1; then
				sed 's/^/    /' "$tmp/fields.out"
				echo "    re-encoded: $(wc -c <"$tmp/reencoded" | tr -d ' ') bytes"
			else
				echo "    not available: $(head -n 1 "$tmp/fields.out")"
			fi
		} >"$tmp/fields"
		rm -f -- "$tmp/reencoded"
	fi
	rm -rf -- "$tmp/run"
}

# --- the runs ------------------------------------------------------------------
bench_conditions "$tmp" "$build"
echo "stacks       CGPROBE_STACK_DEPTH=$stack_depth for every probe run (STACK_DEPTH; 0: off)"
need=0
for s in $sizes; do [ "$s" -gt "$need" ] && need=$s; done
# JSONL takes about 200 bytes an event, 1.1 events an operation.
need_mib=$((need * last_threads * 220 / 1048576))
free_mib=$(df -P -k "$tmp" | awk 'NR == 2 { printf "%d", $4 / 1024 }')
[ "$free_mib" -gt "$need_mib" ] ||
	echo "WARNING: the largest JSONL trace needs about $need_mib MiB, $free_mib MiB free in $trace_dir"
echo
echo "== runs: best of $runs by wall time; every CGPROBE_* unset; compact = the probe's default" \
	"(no CGPROBE_FORMAT, default file name), jsonl = CGPROBE_FORMAT=jsonl"
echo "(cpu ns/op: user+sys of the best run / operations; B/event: bytes on disk / memory records" \
	"(alloc_count + free_count of cgtrace summary --json), heaptrack's over the probe's count;" \
	"dirty0: MiB of dirty pages as the best run started)"
table_head
wl=alloc
compact_events=0
default_name=
for wl_ops in $sizes; do
	for wl_depth in $depths; do
		for wl_threads in $threads_list; do
			for mode in native compact jsonl heaptrack; do
				measure "$mode"
			done
		done
	done
done
if [ "$live_n" -gt 0 ]; then
	wl=live wl_ops=$live_n wl_threads=1 wl_depth=-
	for mode in native compact jsonl heaptrack; do
		measure "$mode"
	done
fi

# --- the report ------------------------------------------------------------------
echo
echo "== wall time added to native (best of $runs); target: probe default adds <= 0.20 x what heaptrack adds"
awk -F '\t' '
{ k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4; w[k, $5] = $6; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
END {
	printf "%-6s %9s %3s %5s %8s %10s %10s %12s %10s %10s\n", "work", "ops/thr", "thr", "depth",
		"native s", "+compact", "+jsonl", "+heaptrack", "compact/ht", "jsonl/ht"
	for (i = 1; i <= n; i++) {
		k = order[i]; split(k, f, SUBSEP)
		nat = w[k, "native"]; c = w[k, "compact"] - nat; j = w[k, "jsonl"] - nat; h = w[k, "heaptrack"] - nat
		rc = h > 0 ? c / h : 1e9; rj = h > 0 ? j / h : 1e9
		v = f[1] == "live" ? "(no target)" : (rc <= 0.20 ? "PASS" : "FAIL")
		printf "%-6s %9s %3s %5s %8.3f %10.3f %10.3f %12.3f %10.3f %10.3f  %s\n", f[1], f[2], f[3], f[4],
			nat, c, j, h, rc, rj, v
	}
}' "$rows"

echo
echo "== bytes per event on disk; target: compact <= 5 B/event (aim 4)"
awk -F '\t' '
{ k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4; b[k, $5] = $10; e[k, $5] = $11; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
END {
	printf "%-6s %9s %3s %5s %12s %12s %9s %9s %11s\n", "work", "ops/thr", "thr", "depth",
		"events", "jsonl evts", "compact", "jsonl", "heaptrack"
	for (i = 1; i <= n; i++) {
		k = order[i]; split(k, f, SUBSEP); ev = e[k, "compact"]
		if (ev <= 0) { printf "%-6s %9s %3s %5s  no event count\n", f[1], f[2], f[3], f[4]; continue }
		c = b[k, "compact"] / ev
		v = c <= 4 ? "PASS (meets the aim)" : (c <= 5 ? "PASS" : "FAIL")
		if (f[1] == "live") v = "(no target)"
		d = e[k, "jsonl"] == ev ? "" : " (the two formats counted differently)"
		printf "%-6s %9s %3s %5s %12d %12d %9.2f %9.2f %11.2f  %s%s\n", f[1], f[2], f[3], f[4], ev,
			e[k, "jsonl"], c, b[k, "jsonl"] / ev, b[k, "heaptrack"] / ev, v, d
	}
}' "$rows"

echo
echo "== CPU per operation (user+sys of the best run), 2 threads over 1 thread; target: compact <= 1.25"
awk -F '\t' -v tl="$threads_list" '
$1 == "alloc" { k = $2 SUBSEP $4; c[k, $3, $5] = ($7 + $8) * 1e9 / $14; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
END {
	nt = split(tl, t, " "); lo = t[1]; hi = t[nt]
	printf "%9s %5s  %-9s %10s %10s %7s\n", "ops/thr", "depth", "tool", "ns/op " lo "t", "ns/op " hi "t", "ratio"
	if (lo == hi) { print "(one thread count: no ratio)"; exit }
	for (i = 1; i <= n; i++) {
		k = order[i]; split(k, f, SUBSEP)
		for (m = 1; m <= 4; m++) {
			tool = m == 1 ? "compact" : m == 2 ? "jsonl" : m == 3 ? "heaptrack" : "native"
			a = c[k, lo, tool]; b = c[k, hi, tool]; r = a > 0 ? b / a : 0
			v = tool == "compact" ? (r <= 1.25 ? "PASS" : "FAIL") : ""
			printf "%9s %5s  %-9s %10.0f %10.0f %7.2f  %s\n", f[1], f[2], tool, a, b, r, v
		}
	}
}' "$rows"

echo
echo "== the probe's writer (one compact run each, CGPROBE_STATS=1, outside the timing)"
echo "   default trace name: $default_name"
echo "   (ns/event: the writer thread's CPU over the events it wrote; run CPU: user+sys of the whole run)"
if [ -s "$tmp/statrows" ]; then
	awk -F '\t' 'BEGIN {
		printf "%-6s %9s %3s %5s %12s %10s %9s %8s %9s %7s %11s %9s %6s\n", "work", "ops/thr", "thr", "depth",
			"events", "writer ms", "ns/event", "encode", "compress", "write", "run CPU ms", "writer %", "zstd"
	}
	function ns(ms) { return ms == "?" || $5 == "?" || $5 == 0 ? "?" : sprintf("%.1f", ms * 1e6 / $5) }
	{
		pct = ($6 == "?" || $10 == 0) ? "?" : sprintf("%.0f", 100 * $6 / $10)
		printf "%-6s %9s %3s %5s %12s %10s %9s %8s %9s %7s %11.1f %9s %6s\n", $1, $2, $3, $4, $5, $6,
			ns($6), ns($7), ns($8), ns($9), $10, pct, $11
	}' "$tmp/statrows"
else
	echo "   (no run printed a CGPROBE_STATS line)"
fi
echo "   each run's own line:"
sed 's/^/   /' "$tmp/stats"

echo
echo "== bytes per field"
if [ -s "$tmp/fields" ]; then cat "$tmp/fields"; else echo "(the largest configuration was not run)"; fi

echo
awk -F '\t' '
{ k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4; if ($5 == "compact") enc[k] = $12 }
END { for (k in enc) if (enc[k] != "compact") { split(k, f, SUBSEP)
	printf "NOTE: the default recording of %s %s/thread x %s, depth %s wrote %s, not compact\n", f[1], f[2], f[3], f[4], enc[k] } }' "$rows" | sort
bench_load
echo "page cache   $(meminfo Cached) MiB cached, $(meminfo Dirty) MiB dirty at end"
exit 0
