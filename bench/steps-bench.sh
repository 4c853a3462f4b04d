#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Memory per training update (docs/steps.md): `cgtrace steps` beside
# `cgtrace summary` on a generated training trace of UPDATES marked updates
# (bench/gen-steps: a data phase, forward, backward and optimizer steps, 18
# memory and 10 span records an update, stacks on the allocations, a small
# leak every 100 updates), in the compact encoding the probe writes, and
# the same at 10 x UPDATES. RUNS rounds, each running summary, steps,
# steps --phases and steps --growth once in turn (so that a slow spell of
# the machine falls on all of them); each command's median wall and CPU
# (user + sys) and its peak RSS (bench/rusage-run). --phases and --growth
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

rows=$tmp/rows
: >"$rows"
commands="summary|steps|steps --phases|steps --growth"

# round SIZE: each command once, in turn, after the page cache is dropped:
# a row a command in $rows (size, name, wall s, user+sys CPU s, peak RSS KiB).
round() {
	echo "$commands" | tr '|' '\n' | while IFS= read -r c; do
		bench_settle
		# shellcheck disable=SC2086 # the command's words, split on purpose
		"$rusage_run" "$tmp/time" "$cgtrace" $c "$tmp/t.cgt" >/dev/null 2>"$tmp/err" || {
			cat "$tmp/err" >&2
			die "cgtrace $c failed"
		}
		read -r w u y k <"$tmp/time"
		printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$c" "$w" "$(awk -v a="$u" -v b="$y" 'BEGIN { print a + b }')" \
			"$k" >>"$rows"
	done
}

# medians SIZE: each command's median wall, median CPU and peak RSS over the rounds.
medians() {
	echo "$commands" | tr '|' '\n' | while IFS= read -r c; do
		awk -F '\t' -v s="$1" -v c="$c" '$1 == s && $2 == c { print $3 }' "$rows" | sort -g >"$tmp/w"
		awk -F '\t' -v s="$1" -v c="$c" '$1 == s && $2 == c { print $4 }' "$rows" | sort -g >"$tmp/u"
		awk -F '\t' -v s="$1" -v c="$c" '$1 == s && $2 == c { print $5 }' "$rows" | sort -g >"$tmp/k"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$c" "$(mid "$tmp/w")" "$(mid "$tmp/u")" \
			"$(tail -n 1 "$tmp/k")" "$(tr '\n' ' ' <"$tmp/w")" >>"$tmp/medians"
	done
}

mid() {
	awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' "$1"
}

bench_conditions "$tmp" "$build"
echo "reads        each after sync, caches $bench_drop"
echo
echo "== a generated training trace, compact encoding; $runs rounds, each command once a round in turn; medians"
: >"$tmp/medians"
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
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		round "$size"
	done
	medians "$size"
	rm -f -- "$tmp/t.cgt"
done
awk -F '\t' '{
	printf "  %9s updates  %-16s wall %8.3f s  CPU %8.3f s  peak RSS %8.1f MiB  (walls: %s)\n",
		$1, $2, $3, $4, $5 / 1024, $6
}' "$tmp/medians"

echo
echo "== side by side (targets: steps <= 1.2 x summary's wall; RSS <= summary's + 200 B an update)"
awk -F '\t' '
	{ w[$1, $2] = $3; u[$1, $2] = $4; k[$1, $2] = $5; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
	END {
		for (i = 1; i <= n; i++) {
			s = order[i]
			tw = w[s, "steps"] / w[s, "summary"]
			extra = (k[s, "steps"] - k[s, "summary"]) * 1024 / s
			printf "  %9s updates  steps / summary: wall %.2f (%s), CPU %.2f;  RSS %+.1f MiB, %+.0f B an update (%s)\n",
				s, tw, tw <= 1.2 ? "PASS" : "FAIL", u[s, "steps"] / u[s, "summary"],
				(k[s, "steps"] - k[s, "summary"]) / 1024, extra, extra <= 200 ? "PASS" : "FAIL"
			printf "  %9s updates  --phases wall %.2f x summary, %+.0f B an update; --growth %.2f x, %+.0f B an update\n",
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
	}' "$tmp/medians"
bench_load
