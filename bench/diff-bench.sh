#!/bin/sh
# SPDX-License-Identifier: MIT
#
# cgtrace diff beside cgtrace top on the larger side (docs/compare.md): two
# generated training traces (bench/gen-steps, in the compact encoding the
# probe writes, stacks on every allocation), BASE of UPDATES updates and
# NEW of 1.1 x UPDATES, then the same at 10 x UPDATES. RUNS rounds, each
# running `top NEW`, `diff BASE NEW` and `diff --json BASE NEW` once in
# turn (so that a slow spell of the machine falls on all of them); each
# command's median wall and CPU (user + sys) and its peak RSS
# (bench/rusage-run). diff reads both sides at once, on two threads. The
# traces are made (JSONL by gen-steps, then `cgtrace export --format
# compact`, untimed) before their size's runs and removed after them.
# Before each timed run: sync, and the page cache dropped when root may
# (DROP_CACHES=0: sync only).
#
#   bench/diff-bench.sh [BUILD_DIR] [UPDATES] [RUNS]   (defaults: build 20000 3)
#
# Target (issue 25): diff takes at most top's wall time on the larger
# side, at each size, on a machine of 2 cores or more. Environment:
# TRACE_DIR (default TMPDIR or /tmp), DROP_CACHES=0. Exit status: 0 once
# the figures are printed, PASS or FAIL (a benchmark, not a test);
# non-zero when something could not be run.

bench_name="diff-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_args updates UPDATES 20000 "$@"
[ "$updates" -ge 10 ] || die "UPDATES must be at least 10"
bench_paths
gen=$build/bench/gen-steps
bench_built "$build_arg" "$cgtrace" "$rusage_run" "$gen"
bench_start "$trace_dir"

rows=$tmp/rows
: >"$rows"
commands="top NEW|diff BASE NEW|diff --json BASE NEW"

# make SIZE NAME: a trace of SIZE updates as $tmp/NAME.cgt.
make() {
	"$gen" "$1" >"$tmp/$2.jsonl" || die "gen-steps failed"
	"$cgtrace" export --format compact "$tmp/$2.jsonl" -o "$tmp/$2.cgt" || die "export failed"
	rm -f -- "$tmp/$2.jsonl"
}

# round SIZE: each command once, in turn: a row a command in $rows (size,
# name, wall s, user+sys CPU s, peak RSS KiB).
round() {
	echo "$commands" | tr '|' '\n' | while IFS= read -r c; do
		bench_settle
		args=$(echo "$c" | sed "s#BASE#$tmp/base.cgt#; s#NEW#$tmp/new.cgt#")
		# shellcheck disable=SC2086 # the command's words, split on purpose
		"$rusage_run" "$tmp/time" "$cgtrace" $args >/dev/null 2>"$tmp/err" || {
			cat "$tmp/err" >&2
			die "cgtrace $c failed"
		}
		read -r w u y k <"$tmp/time"
		printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$c" "$w" "$(awk -v a="$u" -v b="$y" 'BEGIN { print a + b }')" \
			"$k" >>"$rows"
	done
}

mid() {
	awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' "$1"
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

bench_conditions "$tmp" "$build"
echo "reads        each after sync, caches $bench_drop"
echo
echo "== generated training traces, compact encoding: BASE of N updates, NEW of 1.1 x N;" \
	"$runs rounds, each command once a round in turn; medians"
: >"$tmp/medians"
for size in "$updates" $((updates * 10)); do
	bench_settle
	make "$size" base
	make $((size + size / 10)) new
	for side in base new; do
		records=$(memory_records "$cgtrace" "$tmp/$side.cgt") || die "summary --json failed"
		bytes=$(wc -c <"$tmp/$side.cgt" | tr -d ' ')
		awk -v s="$size" -v w="$side" -v n="$records" -v b="$bytes" 'BEGIN {
			printf "  %9s updates, %-4s: %d memory records, %.1f MB compact\n", s, w, n, b / 1e6
		}'
	done
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		round "$size"
	done
	medians "$size"
	rm -f -- "$tmp/base.cgt" "$tmp/new.cgt"
done
awk -F '\t' '{
	printf "  %9s updates  %-22s wall %8.3f s  CPU %8.3f s  peak RSS %8.1f MiB  (walls: %s)\n",
		$1, $2, $3, $4, $5 / 1024, $6
}' "$tmp/medians"

echo
echo "== side by side (target: diff <= top NEW's wall)"
awk -F '\t' '
	{ w[$1, $2] = $3; u[$1, $2] = $4; k[$1, $2] = $5; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
	END {
		for (i = 1; i <= n; i++) {
			s = order[i]
			t = w[s, "diff BASE NEW"] / w[s, "top NEW"]
			printf "  %9s updates  diff / top NEW: wall %.2f (%s), CPU %.2f, RSS %.2f; --json wall %.2f\n",
				s, t, t <= 1.0 ? "PASS" : "FAIL", u[s, "diff BASE NEW"] / u[s, "top NEW"],
				k[s, "diff BASE NEW"] / k[s, "top NEW"], w[s, "diff --json BASE NEW"] / w[s, "top NEW"]
		}
	}' "$tmp/medians"
bench_load
