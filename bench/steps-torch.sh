#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Memory per training update on a real PyTorch run, beside heaptrack:
# tests/python/leak_train.py (an MLP trained with SGD under
# cgprobe.torch.watch; a debug list keeps LEAK_KIB KiB a update, which
# Python frees only at exit; update 20 makes a 64 MiB scratch buffer) at
# UPDATES and 10 x UPDATES updates, natively, under the probe (the cgprobe
# wrapper, stacks at the default depth) and under heaptrack. Then what
# each tool answers and what it costs to ask: `cgtrace steps` and `steps
# --growth` on the probe's trace (the slope of live bytes at update ends,
# the site that grew), `heaptrack_print` on heaptrack's (its leaks, its
# peak). Median of RUNS for each run of the program, best of RUNS for the
# readers (wall, peak RSS: bench/rusage-run). One trace at a time: each
# run's trace is removed before the next (but the last, which the readers
# read), the page cache synced (dropped when root may) before each run.
#
#   bench/steps-torch.sh [BUILD_DIR] [UPDATES] [RUNS]   (defaults: build 300 3)
#
# Environment: LEAK_KIB (default 64), PYTHON (default /usr/bin/python3 with
# Debian's python3-torch), TRACE_DIR, DROP_CACHES=0. Exit status: 0 once
# the figures are printed; 77 without torch; non-zero when something could
# not be run.

bench_name="steps-torch"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"
bench_help "$0" "${1:-}"

bench_args updates UPDATES 300 "$@"
[ "$updates" -ge 30 ] || die "UPDATES must be at least 30 (update 20 holds the scratch buffer)"
leak_kib=${LEAK_KIB:-64}
bench_counts "$leak_kib"
python=${PYTHON:-/usr/bin/python3}
script=$src_dir/tests/python/leak_train.py
wrapper=$build/scripts/cgprobe
bench_paths
bench_built "$build_arg" "$probe" "$cgtrace" "$rusage_run" "$wrapper"
bench_tools heaptrack heaptrack_print
"$python" -c 'import torch' 2>/dev/null || {
	echo "$bench_name: $python has no torch (apt-get install python3-torch)" >&2
	exit 77
}
bench_start "$trace_dir"
bench_conditions "$trace_dir" "$build"
echo "workload     $python $script leak N 20 $leak_kib (PYTHONPATH=$build/python)"
echo "program runs median of $runs; readers best of $runs; caches $bench_drop before each"
export PYTHONPATH="$build/python"

# median FILE: the median of the numbers in FILE, one a line.
median() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# run_prog TOOL N: the program RUNS times under TOOL (native, probe,
# heaptrack) into $tmp/run; median wall and peak RSS into m_wall, m_rss.
run_prog() {
	: >"$tmp/walls"
	: >"$tmp/rsss"
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		rm -rf -- "$tmp/run"
		mkdir "$tmp/run"
		bench_settle
		case $1 in
		native) bench_under "native run" "$tmp/run" native "" "$python" "$script" leak "$2" 20 "$leak_kib" ;;
		probe) bench_under "probe run" "$tmp/run" native "" "$wrapper" -q -o "$tmp/run/t.%p.cgt" \
			"$python" "$script" leak "$2" 20 "$leak_kib" ;;
		heaptrack) bench_under "heaptrack run" "$tmp/run" heaptrack "" "$python" "$script" leak "$2" 20 \
			"$leak_kib" ;;
		esac
		read -r w _ _ k <"$tmp/time"
		echo "$w" >>"$tmp/walls"
		echo "$k" >>"$tmp/rsss"
	done
	m_wall=$(median "$tmp/walls")
	m_rss=$(median "$tmp/rsss")
	awk -v n="$2" -v t="$1" -v w="$m_wall" -v k="$m_rss" -v all="$(tr '\n' ' ' <"$tmp/walls")" 'BEGIN {
		printf "  %6s updates  %-9s  wall %7.2f s (runs: %s)  peak RSS %7.1f MiB\n", n, t, w, all, k / 1024
	}'
}

# reader N NAME CMD...: best of RUNS.
reader() {
	r_n=$1 r_name=$2
	shift 2
	"$@" >"$tmp/answer" 2>"$tmp/err" || {
		cat "$tmp/err" >&2
		die "$r_name failed"
	}
	bench_before=bench_settle
	bench_best "$runs" "$rusage_run" "$tmp/time" "$@"
	awk -v n="$r_n" -v r="$r_name" -v w="$best_wall" -v k="$best_rss" 'BEGIN {
		printf "  %6s updates  %-22s wall %7.3f s  peak RSS %7.1f MiB\n", n, r, w, k / 1024
	}'
}

for n in "$updates" $((updates * 10)); do
	echo
	echo "== $n updates, $leak_kib KiB kept a update"
	run_prog native "$n"
	native_wall=$m_wall
	run_prog heaptrack "$n"
	ht_wall=$m_wall
	bench_one_file "$tmp/run" "heaptrack"
	ht_file=$tmp/$(basename -- "$b_file")
	mv -- "$b_file" "$ht_file"
	run_prog probe "$n"
	probe_wall=$m_wall
	bench_one_file "$tmp/run" "the probe"
	trace=$b_file
	awk -v n="$n" -v a="$native_wall" -v p="$probe_wall" -v h="$ht_wall" -v b="$(wc -c <"$trace")" 'BEGIN {
		printf "  %6s updates  the probe adds %.2f s, heaptrack %.2f s: %.2f of heaptrack'"'"'s; trace %.1f MB\n",
			n, p - a, h - a, (p - a) / (h - a), b / 1e6
	}'
	reader "$n" "cgtrace steps" "$cgtrace" steps "$trace"
	grep '^trend on cpu' "$tmp/answer" | sed "s/^/  $n updates  cgtrace steps: /"
	reader "$n" "cgtrace steps --growth" "$cgtrace" steps --growth -n 1 "$trace"
	awk 'on { print; exit } /^ *bytes +allocs/ { on = 1 }' "$tmp/answer" |
		sed "s/^ */  $n updates  first growth site: /"
	reader "$n" "cgtrace summary" "$cgtrace" summary "$trace"
	grep '^peak' "$tmp/answer" | sed "s/^/  $n updates  cgtrace summary: /"
	reader "$n" "heaptrack_print -l" heaptrack_print -l 1 -f "$ht_file"
	grep -E '^(total memory leaked|peak heap memory consumption)' "$tmp/answer" |
		sed "s/^/  $n updates  heaptrack_print: /"
	# Its answers to the same questions: what it calls leaked, what made the peak.
	for section in "MEMORY LEAKS" "PEAK MEMORY CONSUMERS"; do
		awk -v s="$section" '$0 == s { on = 1; next } on && NF { printf "%s%s", sep, $0; sep = " / "; if (++k == 2) exit }
			END { print "" }' "$tmp/answer" | sed "s|^|  $n updates  heaptrack_print, first of $section: |"
	done
	rm -rf -- "$tmp/run" "$ht_file"
done
echo
bench_load
