#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Memory per training update (docs/steps.md): `cgtrace steps` beside
# `cgtrace summary` on a generated training trace of UPDATES marked updates
# (bench/gen-steps: a data phase, forward, backward and optimizer steps, 18
# memory and 10 span records an update, stacks on the allocations, a small
# leak every 100 updates), in the compact encoding the probe writes, and
# the same at 10 x UPDATES. Each command: best of RUNS by wall time, peak
# RSS (bench/rusage-run); also `steps --phases` and `steps --growth`, which
# have no target. The trace is made (JSONL by gen-steps, then `cgtrace
# export --format compact`, untimed) before its size's runs and removed
# after them: one trace at a time. Before each timed run: sync, and the page
# cache dropped when root may (DROP_CACHES=0: sync only).
#
#   bench/steps-bench.sh [BUILD_DIR] [UPDATES] [RUNS]   (defaults: build 100000 3)
#
# Targets (issue 23): steps takes at most 1.2 x summary's wall time and at
# most summary's peak RSS + 200 bytes per update, at each size.
# Environment: TRACE_DIR (default TMPDIR or /tmp), DROP_CACHES=0. Needs
# about 45 GB free at the default 10 x size while the JSONL exists. Exit
# status: 0 once the figures are printed, PASS or FAIL (a benchmark, not a
# test); non-zero when something could not be run.

bench_name="steps-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_args updates UPDATES 100000 "$@"
[ "$updates" -ge 10 ] || die "UPDATES must be at least 10"
bench_paths
gen=$build/bench/gen-steps
bench_built "$build_arg" "$cgtrace" "$rusage_run" "$gen"
bench_start "$trace_dir"
bench_before=bench_settle

rows=$tmp/rows
: >"$rows"

# measure SIZE NAME CMD...: best of $runs, a row in $rows.
measure() {
	m_size=$1 m_name=$2
	shift 2
	"$@" >/dev/null 2>"$tmp/err" || {
		cat "$tmp/err" >&2
		die "$m_name failed: $*"
	}
	bench_best "$runs" "$rusage_run" "$tmp/time" "$@"
	printf '%s\t%s\t%s\t%s\n' "$m_size" "$m_name" "$best_wall" "$best_rss" >>"$rows"
	awk -v s="$m_size" -v n="$m_name" -v w="$best_wall" -v k="$best_rss" 'BEGIN {
		printf "  %9s updates  %-24s wall %8.3f s  peak RSS %8.1f MiB\n", s, n, w, k / 1024
	}'
}

bench_conditions "$tmp" "$build"
echo "reads        each after sync, caches $bench_drop"
echo
echo "== a generated training trace, compact encoding; best of $runs by wall time"
for size in "$updates" $((updates * 10)); do
	bench_settle
	"$gen" "$size" >"$tmp/t.jsonl" || die "gen-steps failed"
	"$cgtrace" export --format compact "$tmp/t.jsonl" -o "$tmp/t.cgt" || die "export failed"
	rm -f -- "$tmp/t.jsonl"
	records=$(memory_records "$cgtrace" "$tmp/t.cgt") || die "summary --json failed"
	bytes=$(wc -c <"$tmp/t.cgt" | tr -d ' ')
	awk -v s="$size" -v n="$records" -v b="$bytes" 'BEGIN {
		printf "  %9s updates: %d memory records, %.1f MB compact\n", s, n, b / 1e6
	}'
	measure "$size" "summary" "$cgtrace" summary "$tmp/t.cgt"
	measure "$size" "steps" "$cgtrace" steps "$tmp/t.cgt"
	measure "$size" "steps --phases" "$cgtrace" steps --phases "$tmp/t.cgt"
	measure "$size" "steps --growth" "$cgtrace" steps --growth "$tmp/t.cgt"
	rm -f -- "$tmp/t.cgt"
done

echo
echo "== side by side (targets: steps <= 1.2 x summary's wall; RSS <= summary's + 200 B an update)"
awk -F '\t' '
	{ w[$1, $2] = $3; k[$1, $2] = $4; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
	END {
		for (i = 1; i <= n; i++) {
			s = order[i]
			tw = w[s, "steps"] / w[s, "summary"]
			extra = (k[s, "steps"] - k[s, "summary"]) * 1024 / s
			printf "  %9s updates  steps / summary wall %.2f (%s)   RSS %+.1f MiB, %+.0f B an update (%s)\n",
				s, tw, tw <= 1.2 ? "PASS" : "FAIL", (k[s, "steps"] - k[s, "summary"]) / 1024,
				extra, extra <= 200 ? "PASS" : "FAIL"
			printf "  %9s updates  --phases %.2f x summary, %+.0f B an update; --growth %.2f x, %+.0f B an update\n",
				s, w[s, "steps --phases"] / w[s, "summary"],
				(k[s, "steps --phases"] - k[s, "summary"]) * 1024 / s,
				w[s, "steps --growth"] / w[s, "summary"],
				(k[s, "steps --growth"] - k[s, "summary"]) * 1024 / s
		}
		if (n == 2) {
			a = order[1]; b = order[2]
			printf "  growth over 10 x updates: summary wall %.1f x, steps wall %.1f x; summary RSS %.1f x, steps RSS %.1f x\n",
				w[b, "summary"] / w[a, "summary"], w[b, "steps"] / w[a, "steps"],
				k[b, "summary"] / k[a, "summary"], k[b, "steps"] / k[a, "steps"]
		}
	}' "$rows"
bench_load
