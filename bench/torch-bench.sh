#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Call stacks at a real framework's scale (issue 21's targets), beside
# heaptrack: bench/torch-train.py (a Python Dataset, a DataLoader with 2
# worker processes, an MLP, Adam) at STEPS and 10*STEPS training steps,
# each natively, under the probe with stacks (the default depth), under
# the probe without (CGPROBE_STACK_DEPTH=0), and under heaptrack; then the
# readers on the traces of the last run: cgtrace top, memory, leaks and
# report beside heaptrack_print on heaptrack's trace, and summary --brief
# on the traces with and without stacks. Median of RUNS of each, run in
# rounds (wall, peak RSS of the largest process: wait4's, bench/rusage-run;
# each run's wall printed beside the median). One trace
# at a time: each run's traces are sized, then removed (but the last
# run's, which the readers read, removed after them), and the page cache
# synced (dropped when root may) before the next run.
#
# Targets printed beside the figures:
#   - top, memory, leaks, report: at most heaptrack_print's time and peak RSS;
#   - summary --brief: at most 1.1x its time and RSS on the trace without stacks;
#   - the profiled process's peak RSS: at most native + 64 MiB;
#   - the wall time the probe adds: at most 0.4 of what heaptrack adds;
#   - the trace (the main process's) no larger than before (printed, to compare).
#
#   bench/torch-bench.sh [BUILD_DIR] [STEPS] [RUNS]     (defaults: build 300 3)
#
# Environment: SIZES (steps, default "STEPS 10*STEPS"), PYTHON (default
# /usr/bin/python3, with Debian's python3-torch), WORKERS (DataLoader
# worker processes, default 2; heaptrack 1.4 deadlocks in a forked worker
# in most runs, a futex its lock left held across fork: WORKERS=0 runs the
# same script in one process), HT_TIMEOUT (seconds after
# which a heaptrack run counts as hung and is run again, default 900),
# TRACE_DIR, DROP_CACHES=0.
# Exit status: 0 once the figures are printed; non-zero when something
# could not be run (torch missing: 77).

bench_name="torch-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"
bench_help "$0" "${1:-}"

bench_args steps STEPS 300 "$@"
sizes=${SIZES:-"$steps $((steps * 10))"}
# shellcheck disable=SC2086 # a list of numbers, split on purpose
bench_counts $sizes
python=${PYTHON:-/usr/bin/python3}
workers=${WORKERS:-2}
bench_counts "$workers"
script=$src_dir/bench/torch-train.py
bench_paths
bench_built "$build_arg" "$probe" "$cgtrace" "$rusage_run"
bench_tools heaptrack heaptrack_print
"$python" -c 'import torch' 2>/dev/null || {
	echo "$bench_name: $python has no torch (apt-get install python3-torch)" >&2
	exit 77
}
bench_start "$trace_dir"
bench_conditions "$trace_dir" "$build"
echo "workload     $python $script --steps N --workers $workers (DataLoader worker processes), median of $runs runs"

# median FILE COLUMN: the median of a column of numbers.
median() {
	sort -g -k "$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

# timed OUT CMD...: CMD's wall and peak RSS (KiB) appended to OUT.
timed() {
	t_out=$1
	shift
	bench_settle
	"$rusage_run" "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || {
		tail -5 "$tmp/err" >&2
		die "failed: $*"
	}
	read -r t_w _ _ t_k <"$tmp/time"
	echo "$t_w $t_k" >>"$t_out"
}

# timed_try OUT CMD...: as timed, but a command killed by timeout(1) returns 1.
timed_try() {
	t_out=$1
	shift
	bench_settle
	t_rc=0
	"$rusage_run" "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || t_rc=$?
	[ "$t_rc" != 124 ] || return 1
	[ "$t_rc" = 0 ] || {
		tail -5 "$tmp/err" >&2
		die "failed: $*"
	}
	read -r t_w _ _ t_k <"$tmp/time"
	echo "$t_w $t_k" >>"$t_out"
}

# The main process's trace: the largest file the probe left.
main_trace() {
	find "$1" -maxdepth 1 -type f -name '*.cgt' -printf '%s %p\n' | sort -n | tail -n 1 | cut -d ' ' -f 2-
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
}

mib() {
	awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'
}

for n in $sizes; do
	echo
	echo "== $n steps"
	tools="native probe probe0 heaptrack"
	for tool in $tools; do
		: >"$tmp/$tool.runs"
		: >"$tmp/$tool.size"
	done
	# In rounds, each round every tool once: a machine whose speed drifts
	# (this one's does, by 20% over minutes) moves every tool's median alike.
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		for tool in $tools; do
			rm -rf -- "$tmp/$tool"
			mkdir -p "$tmp/$tool"
			case $tool in
			native) timed "$tmp/$tool.runs" "$python" "$script" --steps "$n" --workers "$workers" ;;
			probe) timed "$tmp/$tool.runs" env LD_PRELOAD="$probe" \
				CGPROBE_OUTPUT="$tmp/$tool/t.cgt" "$python" "$script" --steps "$n" --workers "$workers" ;;
			probe0) timed "$tmp/$tool.runs" env LD_PRELOAD="$probe" CGPROBE_STACK_DEPTH=0 \
				CGPROBE_OUTPUT="$tmp/$tool/t.cgt" "$python" "$script" --steps "$n" --workers "$workers" ;;
			heaptrack)
				# heaptrack 1.4 now and then hangs in a forked DataLoader
				# worker (its lock held across fork): such a run is killed
				# after HT_TIMEOUT seconds, said, and run again.
				until timed_try "$tmp/$tool.runs" timeout "${HT_TIMEOUT:-900}" heaptrack \
					-o "$tmp/$tool/ht" "$python" "$script" --steps "$n" --workers "$workers"; do
					echo "heaptrack run $i hung past ${HT_TIMEOUT:-900} s: killed, run again"
					rm -rf -- "$tmp/$tool"
					mkdir -p "$tmp/$tool"
				done
				;;
			esac
			case $tool in
			probe*) f=$(main_trace "$tmp/$tool") ;;
			heaptrack) f=$(find "$tmp/$tool" -maxdepth 1 -type f -name 'ht*' | head -n 1) ;;
			*) f= ;;
			esac
			[ -z "$f" ] || stat -c %s "$f" >>"$tmp/$tool.size"
			# The last run's traces stay for the readers.
			[ "$i" = "$runs" ] || rm -rf -- "$tmp/$tool"
		done
	done
	nat_w=$(median "$tmp/native.runs" 1) nat_k=$(median "$tmp/native.runs" 2)
	printf '%-26s %10s %10s %12s   %s\n' "run" "wall s" "peak MiB" "trace MiB" "each run's wall s"
	for tool in $tools; do
		sz=
		[ ! -s "$tmp/$tool.size" ] || sz=$(awk '{ s = $1 } END { printf "%.1f", s / 1048576 }' "$tmp/$tool.size")
		printf '%-26s %10s %10s %12s   %s\n' "$tool" "$(median "$tmp/$tool.runs" 1)" \
			"$(mib "$(median "$tmp/$tool.runs" 2)")" "${sz:--}" \
			"$(awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 }' "$tmp/$tool.runs")"
	done
	pr_w=$(median "$tmp/probe.runs" 1) pr_k=$(median "$tmp/probe.runs" 2)
	ht_w=$(median "$tmp/heaptrack.runs" 1)
	added=$(awk -v p="$pr_w" -v h="$ht_w" -v n="$nat_w" 'BEGIN { if (h > n) printf "%.2f", (p - n) / (h - n); else print "n/a" }')
	over=$(awk -v p="$pr_k" -v n="$nat_k" 'BEGIN { printf "%.0f", (p - n) / 1024 }')
	echo "probe adds $(awk -v p="$pr_w" -v n="$nat_w" 'BEGIN { printf "%.2f", p - n }') s, heaptrack" \
		"$(awk -v h="$ht_w" -v n="$nat_w" 'BEGIN { printf "%.2f", h - n }') s: ratio $added (target <= 0.4)"
	echo "probe's process peak RSS over native: $over MiB (target <= 64)"

	pt=$(main_trace "$tmp/probe") p0=$(main_trace "$tmp/probe0")
	ht=$(find "$tmp/heaptrack" -maxdepth 1 -type f -name 'ht*' | head -n 1)
	# The readers in rounds, each round every reader once: a machine whose
	# speed drifts moves every reader's median alike.
	readers="hp top memory leaks report brief brief0"
	for r in $readers; do : >"$tmp/$r.runs"; done
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		for r in $readers; do
			case $r in
			hp) timed "$tmp/$r.runs" heaptrack_print "$ht" ;;
			report) timed "$tmp/$r.runs" "$cgtrace" report -o "$tmp/r.html" "$pt" ;;
			brief) timed "$tmp/$r.runs" "$cgtrace" summary --brief "$pt" ;;
			brief0) timed "$tmp/$r.runs" "$cgtrace" summary --brief "$p0" ;;
			*) timed "$tmp/$r.runs" "$cgtrace" "$r" "$pt" ;;
			esac
		done
	done
	hp_w=$(median "$tmp/hp.runs" 1) hp_k=$(median "$tmp/hp.runs" 2)
	printf '%-26s %10s %10s %22s\n' "reader" "wall s" "peak MiB" "vs heaptrack_print"
	printf '%-26s %10s %10s\n' "heaptrack_print" "$hp_w" "$(mib "$hp_k")"
	for cmd in top memory leaks report; do
		w=$(median "$tmp/$cmd.runs" 1) k=$(median "$tmp/$cmd.runs" 2)
		printf '%-26s %10s %10s %10s x time %5s x RSS\n' "cgtrace $cmd" "$w" "$(mib "$k")" \
			"$(ratio "$w" "$hp_w")" "$(ratio "$k" "$hp_k")"
	done
	bw=$(median "$tmp/brief.runs" 1) bk=$(median "$tmp/brief.runs" 2)
	b0w=$(median "$tmp/brief0.runs" 1) b0k=$(median "$tmp/brief0.runs" 2)
	printf '%-26s %10s %10s %10s x time %5s x RSS (target <= 1.1 of depth 0: %s s, %s MiB)\n' \
		"cgtrace summary --brief" "$bw" "$(mib "$bk")" "$(ratio "$bw" "$b0w")" "$(ratio "$bk" "$b0k")" \
		"$b0w" "$(mib "$b0k")"
	rm -rf -- "$tmp/native" "$tmp/probe" "$tmp/probe0" "$tmp/heaptrack" "$tmp/r.html"
	sync
done
echo
bench_load
