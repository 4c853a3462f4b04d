#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A job of many processes (docs/jobs.md): `cgtrace summary DIR` of a folder
# of PROCS traces beside the PROCS single-trace summaries, at EVENTS memory
# records a trace and at 10 x EVENTS.
#
# Two jobs at each size, made untimed, one job's folder at a time:
# - host: PROCS runs of the allocation benchmark (bench/alloc-bench, one
#   thread, EVENTS/2 operations) under the probe, each its own trace in the
#   folder, as a launcher's ranks write them;
# - gpu: PROCS generated traces whose records are all on one physical GPU
#   (the same UUID), alloc and free of 1024 live blocks in turn, started
#   1 ms apart on one boot: the per-GPU sum walks every moment of all.
# Each run after sync, the page cache dropped when root may (DROP_CACHES=0:
# sync only): the PROCS singles one after another (their walls and CPU
# summed, the largest RSS kept), then `summary DIR`, then `summary --jobs 2
# DIR`. RUNS rounds; medians of wall and CPU (user + sys), the highest RSS.
#
#   bench/job-bench.sh [BUILD_DIR] [EVENTS] [RUNS]   (defaults: build 2500000 3; PROCS=8)
#
# Targets (issue 24): summary DIR <= 1.2 x the singles' summed wall; with
# --jobs 2 <= 0.85 x that sum; its peak RSS <= 2 x the largest single's;
# on the gpu job, the RSS of summary DIR <= the sum of the singles' RSS
# (the per-GPU sum's memory at most the side-by-side reads'). Environment:
# TRACE_DIR (default TMPDIR or /tmp), PROCS, KINDS (default "host gpu"),
# DROP_CACHES=0. Exit status: 0
# once the figures are printed, PASS or FAIL (a benchmark, not a test).

bench_name="job-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_args events EVENTS 2500000 "$@"
[ "$events" -ge 1000 ] || die "EVENTS must be at least 1000"
procs=${PROCS:-8}
bench_paths
bench_built "$build_arg" "$cgtrace" "$rusage_run" "$bench" "$probe"
bench_start "$trace_dir"

rows=$tmp/rows
: >"$rows"

# timed KIND SIZE NAME ARGS...: one run of cgtrace ARGS, a row in $rows.
timed() {
	t_kind=$1 t_size=$2 t_name=$3
	shift 3
	bench_settle
	"$rusage_run" "$tmp/time" "$cgtrace" "$@" >/dev/null 2>"$tmp/err" || {
		cat "$tmp/err" >&2
		die "cgtrace $* failed"
	}
	read -r w u y k <"$tmp/time"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t_kind" "$t_size" "$t_name" "$w" \
		"$(awk -v a="$u" -v b="$y" 'BEGIN { print a + b }')" "$k" >>"$rows"
}

# round KIND SIZE: the singles, summed into one row, then the job twice.
round() {
	: >"$tmp/singles"
	for t in "$tmp/job"/*.cgt; do
		timed single "$2" one summary "$t"
		tail -n 1 "$rows" >>"$tmp/singles"
		sed -i '$d' "$rows"
	done
	awk -F '\t' -v k="$1" -v s="$2" '
		{ w += $4; u += $5; if ($6 > m) m = $6; r += $6 }
		END { printf "%s\t%s\tsingles\t%s\t%s\t%s\n%s\t%s\tsingles-rss-sum\t0\t0\t%s\n", k, s, w, u, m, k, s, r }' \
		"$tmp/singles" >>"$rows"
	timed "$1" "$2" "dir" summary "$tmp/job"
	timed "$1" "$2" "dir-jobs2" summary --jobs 2 "$tmp/job"
}

# make_host SIZE: PROCS allocation benchmarks under the probe into $tmp/job.
make_host() {
	mkdir -p "$tmp/job"
	i=0
	while [ "$i" -lt "$procs" ]; do
		i=$((i + 1))
		CGPROBE_OUTPUT=$tmp/job/rank$i.cgt RANK=$((i - 1)) WORLD_SIZE=$procs LD_PRELOAD=$probe \
			"$bench" 1 $(($1 / 2)) >/dev/null || die "alloc-bench under the probe failed"
	done
}

# make_gpu SIZE: PROCS traces of SIZE records on one GPU, as JSONL then compact.
make_gpu() {
	mkdir -p "$tmp/job"
	i=0
	while [ "$i" -lt "$procs" ]; do
		awk -v n="$1" -v r="$i" 'BEGIN {
			printf "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r%d\",\"correlation_id\":\"c\",\"entrypoint\":\"bench\",\"phase\":\"train\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cuda:0\",\"timing_mode\":\"host\",\"tags\":{\"pid\":\"%d\",\"RANK\":\"%d\",\"hostname\":\"bench\",\"cgprobe_boot_id\":\"b\",\"cgprobe_clock_realtime_ns\":\"%d\",\"cgprobe_clock_monotonic_ns\":\"%d\",\"cgprobe_clock_error_ns\":\"50\"}}\n", r, 1000 + r, r, 1700000000000000000 + r * 1000000, 1000000000 + r * 1000000
			print "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"bench\",\"start_ns\":0,\"span_kind\":\"function\",\"measured\":false}"
			srand(r + 1); ts = 0
			for (i = 0; i < n; i++) {
				k = i % 2048; a = 65536 + 4096 * (k % 1024)
				ts += 1 + int(rand() * 50)
				if (k < 1024) { b[k] = 512 * (1 + int(rand() * 64)); act = "alloc"; sz = b[k] }
				else { act = "free"; sz = b[k - 1024] }
				printf "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"0x%x\",\"span_id\":\"s1\",\"device\":\"cuda:0\",\"bytes\":%d,\"action\":\"%s\",\"dtype\":\"u8\",\"category\":\"other\"%s}\n", ts, a, sz, act, i == 0 ? ",\"cgprobe_device_uuid\":\"GPU-bench\"" : ""
			}
			printf "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%d}\n", ts + 1
		}' >"$tmp/g.jsonl" || die "generating a gpu trace failed"
		"$cgtrace" export --format compact "$tmp/g.jsonl" -o "$tmp/job/rank$i.cgt" || die "export failed"
		rm -f -- "$tmp/g.jsonl"
		i=$((i + 1))
	done
}

mid() {
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

bench_conditions "$tmp" "$build"
echo "job          $procs processes; reads each after sync, caches $bench_drop; $runs rounds, medians"
echo
for kind in ${KINDS:-host gpu}; do
	for size in "$events" $((events * 10)); do
		rm -rf -- "$tmp/job"
		"make_$kind" "$size"
		bytes=$(du -sb "$tmp/job" | cut -f 1)
		awk -v k="$kind" -v s="$size" -v p="$procs" -v b="$bytes" 'BEGIN {
			printf "== %s job: %d traces of %d records, %.1f MB on disk\n", k, p, s, b / 1e6 }'
		i=0
		while [ "$i" -lt "$runs" ]; do
			i=$((i + 1))
			round "$kind" "$size"
		done
		for name in singles dir dir-jobs2; do
			w=$(awk -F '\t' -v k="$kind" -v s="$size" -v n="$name" '$1 == k && $2 == s && $3 == n { print $4 }' "$rows" | mid)
			u=$(awk -F '\t' -v k="$kind" -v s="$size" -v n="$name" '$1 == k && $2 == s && $3 == n { print $5 }' "$rows" | mid)
			m=$(awk -F '\t' -v k="$kind" -v s="$size" -v n="$name" '$1 == k && $2 == s && $3 == n && $6 > m { m = $6 } END { print m }' "$rows")
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$size" "$name" "$w" "$u" "$m" >>"$tmp/medians"
		done
		r=$(awk -F '\t' -v k="$kind" -v s="$size" '$1 == k && $2 == s && $3 == "singles-rss-sum" && $6 > m { m = $6 } END { print m }' "$rows")
		printf '%s\t%s\tsingles-rss-sum\t0\t0\t%s\n' "$kind" "$size" "$r" >>"$tmp/medians"
		rm -rf -- "$tmp/job"
	done
done
echo
echo "== side by side (singles: the $procs summaries one after another, wall and CPU summed, RSS the largest)"
awk -F '\t' '
	{ w[$1, $2, $3] = $4; u[$1, $2, $3] = $5; k[$1, $2, $3] = $6
	  if (!(($1, $2) in seen)) { seen[$1, $2] = 1; order[++n] = $1 SUBSEP $2 } }
	END {
		for (i = 1; i <= n; i++) {
			split(order[i], ks, SUBSEP); j = ks[1]; s = ks[2]
			sw = w[j, s, "singles"]; su = u[j, s, "singles"]; sk = k[j, s, "singles"]
			printf "  %-4s %9d records a trace  singles: wall %7.3f s, CPU %7.3f s, RSS %6.1f MiB (largest; %.1f MiB summed)\n",
				j, s, sw, su, sk / 1024, k[j, s, "singles-rss-sum"] / 1024
			dw = w[j, s, "dir"] / sw; d2 = w[j, s, "dir-jobs2"] / sw
			printf "       summary DIR: wall %7.3f s (%.2f x, %s), CPU %7.3f s, RSS %6.1f MiB\n",
				w[j, s, "dir"], dw, dw <= 1.2 ? "PASS" : "FAIL", u[j, s, "dir"], k[j, s, "dir"] / 1024
			printf "       --jobs 2:    wall %7.3f s (%.2f x, %s), CPU %7.3f s, RSS %6.1f MiB (%.2f x the largest single, %s)\n",
				w[j, s, "dir-jobs2"], d2, d2 <= 0.85 ? "PASS" : "FAIL", u[j, s, "dir-jobs2"],
				k[j, s, "dir-jobs2"] / 1024, k[j, s, "dir-jobs2"] / sk,
				k[j, s, "dir-jobs2"] <= 2 * sk ? "PASS" : "FAIL"
			if (j == "gpu")
				printf "       the per-GPU sum: summary DIR RSS %.1f MiB <= the singles summed %.1f MiB: %s\n",
					k[j, s, "dir"] / 1024, k[j, s, "singles-rss-sum"] / 1024,
					k[j, s, "dir"] <= k[j, s, "singles-rss-sum"] ? "PASS" : "FAIL"
		}
	}' "$tmp/medians"
bench_load
