# shellcheck shell=sh disable=SC2154,SC2034 # bench_name is the sourcing script's; what the helpers set, it reads
# SPDX-License-Identifier: MIT
#
# Shared by the benchmark scripts (sourced, not run): the machine conditions
# every figure is printed beside, the page cache between runs, a nanosecond
# clock and the encoding of a file by its first bytes.
#
# Set before sourcing: bench_name (for messages). Sourcing it sets -eu for
# the script and src_dir (the source tree the script is in); after
# bench_setup: bench_drop ("dropped" or why not), and the helpers below.

set -eu
src_dir=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)

die() {
	echo "$bench_name: $*" >&2
	exit 1
}

# bench_help SCRIPT ARG: with ARG -h or --help, prints SCRIPT's header
# comment (its usage) and exits.
bench_help() {
	case "${2:-}" in -h | --help)
		sed -n '3,/^$/s/^# \{0,1\}//p' "$1"
		exit 0
		;;
	esac
}

# Wall clock in nanoseconds (GNU date); GNU time's %e has 10 ms steps.
now_ns() {
	date +%s%N
}

# seconds_since T0: seconds from T0 (now_ns) to now, 3 decimals.
seconds_since() {
	awk -v a="$1" -v b="$(now_ns)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}

# meminfo FIELD: the field of /proc/meminfo in MiB.
meminfo() {
	awk -v f="$1:" '$1 == f { printf "%.0f", $2 / 1024 }' /proc/meminfo
}

# A build directory as an absolute path: relative to the current directory
# when it exists there, else to the source tree.
bench_build_dir() {
	case "$1" in
	/*) echo "$1" ;;
	*) if [ -d "$1" ]; then (CDPATH='' cd -- "$1" && pwd); else echo "$src_dir/$1"; fi ;;
	esac
}

# bench_args VAR WHAT DEFAULT [BUILD_DIR] [WHAT] [RUNS]: the arguments most
# scripts take (-h or --help prints the script's header, its usage). Sets
# build_arg (as given, default build), build (an absolute path), VAR (WHAT,
# default DEFAULT), runs (default 3, at least 1) and trace_dir (where the
# traces go: TRACE_DIR, else TMPDIR or /tmp).
bench_args() {
	b_var=$1 b_what=$2 b_default=$3
	shift 3
	bench_help "$0" "${1:-}"
	[ $# -le 3 ] || die "usage: $0 [BUILD_DIR] [$b_what] [RUNS]"
	build_arg=${1:-build}
	build=$(bench_build_dir "$build_arg")
	b_value=${2:-$b_default}
	runs=${3:-3}
	bench_counts "$b_value" "$runs"
	[ "$runs" -ge 1 ] || die "RUNS must be at least 1"
	eval "$b_var=\$b_value"
	trace_dir=${TRACE_DIR:-${TMPDIR:-/tmp}}
}

# bench_workload DEFAULT [BUILD_DIR] [OPS] [RUNS]: the start of a script
# that has one workload of alloc-bench recorded by the probe and by
# heaptrack and read back by cgtrace and heaptrack_print: bench_args, ops
# (OPS, at least 10, default DEFAULT), threads (THREADS, 2), depth (DEPTH,
# 16); the build's programs (bench_paths) and the tools must be there;
# then bench_start.
bench_workload() {
	b_default=$1
	shift
	bench_args ops OPS "$b_default" "$@"
	threads=${THREADS:-2}
	depth=${DEPTH:-16}
	bench_counts "$threads" "$depth"
	[ "$ops" -ge 10 ] || die "OPS must be at least 10"
	bench_paths
	bench_built "$build_arg" "$bench" "$probe" "$cgtrace" "$rusage_run"
	bench_tools heaptrack heaptrack_print
	bench_start "$trace_dir"
}

# bench_matrix DEFAULT [BUILD_DIR] [OPS] [RUNS]: bench_args for the
# recording benchmarks' grid of alloc-bench runs: ops (default DEFAULT),
# sizes (SIZES, operations a thread, "OPS 10*OPS"), threads_list (THREADS,
# "1 2") and depths (DEPTHS, "1 16").
bench_matrix() {
	b_default=$1
	shift
	bench_args ops OPS "$b_default" "$@"
	sizes=${SIZES:-"$ops $((ops * 10))"}
	threads_list=${THREADS:-"1 2"}
	depths=${DEPTHS:-"1 16"}
	# shellcheck disable=SC2086 # lists of numbers, split on purpose
	bench_counts $sizes $threads_list $depths
}

# bench_paths: what the build holds that the scripts run: bench (alloc-bench),
# probe, cgtrace and rusage_run.
bench_paths() {
	bench=$build/bench/alloc-bench
	probe=$build/preload/libcgprobe.so
	cgtrace=$build/cgtrace/cgtrace
	rusage_run=$build/bench/rusage-run
}

# The probe reads its whole configuration from CGPROBE_*: start from none,
# so that the caller's environment cannot change what is measured.
bench_clean_env() {
	for v in $(env | sed -n 's/^\(CGPROBE_[A-Za-z0-9_]*\)=.*/\1/p'); do
		unset "$v"
	done
}

# bench_start DIR: the caller's CGPROBE_* gone, $tmp made under DIR, the
# page cache's handling decided (bench_setup).
bench_start() {
	bench_clean_env
	bench_tmp "$1"
	bench_setup
}

# bench_setup: decides whether caches can be dropped, by dropping them once.
# Dropping needs root and a writable /proc/sys/vm/drop_caches (not in most
# containers); DROP_CACHES=0 turns it off.
bench_setup() {
	if [ "${DROP_CACHES:-1}" = 0 ]; then
		bench_drop="not dropped (DROP_CACHES=0): sync only"
	elif [ "$(id -u)" != 0 ]; then
		bench_drop="not dropped (not root): sync only"
	elif ! [ -w /proc/sys/vm/drop_caches ] || ! (echo 1 >/proc/sys/vm/drop_caches) 2>/dev/null; then
		bench_drop="not dropped (/proc/sys/vm/drop_caches not writable): sync only"
	else
		bench_drop="dropped (sync; echo 1 > /proc/sys/vm/drop_caches)"
	fi
}

# Between runs: the previous run's dirty pages written back, and its clean
# ones dropped when that is possible.
bench_settle() {
	sync
	case "$bench_drop" in
	dropped*) echo 1 >/proc/sys/vm/drop_caches ;;
	esac
}

# bench_conditions DIR [BUILD_DIR]: the machine, as a header (DIR: where the
# traces or the clone go).
bench_conditions() {
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	[ -n "$cpu" ] || cpu=$(uname -m)
	fs=$(df -P -T "$1" 2>/dev/null | awk 'NR == 2 { print $2 ", " int($5 / 1048576) " GiB free on " $7 }')
	[ -n "$fs" ] || fs=$(stat -f -c '%T' "$1")
	gov=$(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null) || gov="n/a"
	bt=$(grep -o '"name": "buildtype", "value": "[^"]*"' "${2:-/nonexistent}/meson-info/intro-buildoptions.json" 2>/dev/null |
		sed 's/.*"value": "//; s/"$//')
	san=$(grep -o '"name": "b_sanitize", "value": "[^"]*"' "${2:-/nonexistent}/meson-info/intro-buildoptions.json" 2>/dev/null |
		sed 's/.*"value": "//; s/"$//')
	rev=$(git -C "$src_dir" rev-parse --short HEAD 2>/dev/null) || rev="n/a"
	[ -z "$(git -C "$src_dir" status --porcelain --untracked-files=no 2>/dev/null)" ] || rev="$rev (with uncommitted changes)"
	ht=$(heaptrack --version 2>/dev/null | head -n 1) || ht=
	zs=$(zstd --version 2>/dev/null | sed -n 's/.*\(v[0-9][0-9.]*\).*/zstd CLI \1/p')
	lz=$(pkg-config --modversion libzstd 2>/dev/null) || lz="n/a"
	echo "== conditions"
	echo "date         $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpu          $cpu, $(nproc) online (governor $gov)"
	echo "kernel       $(uname -sr)"
	echo "load         $(cut -d ' ' -f 1-3 /proc/loadavg) (1, 5, 15 min)"
	echo "work dir     $1: $fs"
	echo "memory       $(meminfo MemTotal) MiB total, $(meminfo MemFree) MiB free, $(meminfo MemAvailable) MiB available"
	echo "page cache   $(meminfo Cached) MiB cached, $(meminfo Dirty) MiB dirty, $(meminfo Writeback) MiB writeback;" \
		"vm.dirty_ratio $(cat /proc/sys/vm/dirty_ratio), dirty_background_ratio $(cat /proc/sys/vm/dirty_background_ratio)," \
		"dirty_bytes $(cat /proc/sys/vm/dirty_bytes)"
	[ -z "${bench_drop:-}" ] || echo "between runs caches $bench_drop"
	echo "tools        ${ht:-heaptrack absent}; ${zs:-zstd CLI absent}; libzstd $lz"
	if [ -n "${2:-}" ]; then
		echo "cgprobe      $src_dir at $rev, build $2 (${bt:-?}, sanitize ${san:-?})"
	else
		echo "cgprobe      $src_dir at $rev"
	fi
}

# bench_load: the load average now, for the end of a report.
bench_load() {
	echo "load at end  $(cut -d ' ' -f 1-3 /proc/loadavg) (1, 5, 15 min)"
}

# encoding FILE: compact, zstd, jsonl or unknown, by the first bytes.
encoding() {
	magic=$(od -An -tx1 -N8 "$1" 2>/dev/null | tr -d ' \n')
	case "$magic" in
	8943475452414345) echo compact ;;
	28b52ffd*) echo zstd ;;
	7b*) echo jsonl ;;
	*) echo unknown ;;
	esac
}

# meta_tag CGTRACE TRACE KEY: the value of a meta tag (the meta record is
# the first one), or n/a.
meta_tag() {
	case "$(encoding "$2")" in
	jsonl) line=$(head -n 1 "$2") ;;
	*) line=$("$1" export "$2" 2>/dev/null | head -n 1) ;;
	esac
	v=$(printf '%s\n' "$line" | sed -n "s/.*\"$3\":\"\([^\"]*\)\".*/\1/p")
	echo "${v:-n/a}"
}

# memory_records CGTRACE TRACE: alloc_count + free_count of summary --json.
memory_records() {
	"$1" summary --json "$2" 2>/dev/null | awk '{
		a = $0; f = $0
		if (!sub(/.*"alloc_count":/, "", a) || !sub(/.*"free_count":/, "", f)) exit 1
		sub(/[^0-9].*/, "", a); sub(/[^0-9].*/, "", f)
		print a + f
	}'
}

# bench_best RUNS RUSAGE_RUN TIMEFILE CMD...: runs CMD RUNS times (stdout to
# /dev/null, stderr kept in TIMEFILE.err), syncing before each (or running
# $bench_before, when set: bench_settle for cold reads); sets best_wall (s)
# and best_rss (KiB) of the fastest run. Dies when CMD fails.
bench_best() {
	b_runs=$1 b_rusage=$2 b_time=$3
	shift 3
	best_wall= best_rss=
	b_i=0
	while [ "$b_i" -lt "$b_runs" ]; do
		b_i=$((b_i + 1))
		${bench_before:-sync}
		"$b_rusage" "$b_time" "$@" >/dev/null 2>"$b_time.err" || {
			cat "$b_time.err" >&2
			die "failed: $*"
		}
		read -r b_w _ _ b_k <"$b_time"
		if [ -z "$best_wall" ] || awk -v a="$b_w" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
			best_wall=$b_w best_rss=$b_k
		fi
	done
}

# bench_under WHAT DIR TOOL SETTINGS CMD...: CMD run in DIR by $rusage_run
# (its figures into $tmp/time, stderr into $tmp/err): natively (TOOL
# native), under the probe with the environment entries SETTINGS (TOOL
# probe; SETTINGS is split into words, empty for none), or under heaptrack
# (TOOL heaptrack, recording into DIR/ht, its stdout into $tmp/err too).
# Dies with $tmp/err and WHAT when CMD fails.
bench_under() {
	b_what=$1 b_dir=$2 b_tool=$3 b_settings=$4
	shift 4
	b_rc=0
	case $b_tool in
	native) (cd "$b_dir" && "$rusage_run" "$tmp/time" "$@") >/dev/null 2>"$tmp/err" || b_rc=$? ;;
	probe)
		# shellcheck disable=SC2086 # the settings, split into words on purpose
		(cd "$b_dir" && "$rusage_run" "$tmp/time" env $b_settings LD_PRELOAD="$probe" "$@") \
			>/dev/null 2>"$tmp/err" || b_rc=$?
		;;
	heaptrack) (cd "$b_dir" && "$rusage_run" "$tmp/time" heaptrack -o "$b_dir/ht" "$@") \
		>"$tmp/err" 2>&1 || b_rc=$? ;;
	*) die "bench_under: no tool $b_tool" ;;
	esac
	if [ "$b_rc" != 0 ]; then
		cat "$tmp/err" >&2
		die "$b_what failed (status $b_rc): $*"
	fi
}

# bench_one_file DIR WHAT: the one file a recording left in DIR, in b_file;
# dies (listing DIR) when there is not exactly one.
bench_one_file() {
	b_n=0
	for b_f in "$1"/*; do
		[ -f "$b_f" ] || continue
		b_n=$((b_n + 1))
		b_file=$b_f
	done
	[ "$b_n" = 1 ] || {
		ls -l "$1" >&2
		die "$2 left $b_n files, expected one trace"
	}
}

# bench_warm: between two timed runs, the last one's pages written back
# (bench_settle), then the script's run_once at 1000 operations on one
# thread (its wl_ops and wl_threads, restored after) to put the tool's
# binaries back in the page cache.
bench_warm() {
	bench_settle
	b_ops=$wl_ops b_threads=$wl_threads
	wl_ops=1000 wl_threads=1
	run_once
	wl_ops=$b_ops wl_threads=$b_threads
	rm -rf -- "$tmp/run"
	sync
}

# bench_counts N...: each a non-negative integer, else die.
bench_counts() {
	for b_n in "$@"; do
		case "$b_n" in '' | *[!0-9]*) die "not a non-negative integer: '$b_n'" ;; esac
	done
}

# bench_built BUILD_ARG FILE...: each FILE exists, else die saying how to build BUILD_ARG.
bench_built() {
	b_arg=$1
	shift
	for b_f in "$@"; do
		[ -e "$b_f" ] || die "missing $b_f (build first: meson setup $b_arg && ninja -C $b_arg)"
	done
}

# bench_tools TOOL...: each on PATH, else die.
bench_tools() {
	for b_t in "$@"; do
		command -v "$b_t" >/dev/null 2>&1 || die "missing $b_t in PATH"
	done
}

# The awk functions that read a CGPROBE_STATS line by its words, for the
# scripts' awk programs to start with: after(s, w) is the number right
# after w in s, before(s, w) the one right before it; "?" without w.
stats_awk='
function after(s, w,   i, t) { i = index(s, w); if (!i) return "?"; t = substr(s, i + length(w)); sub(/[^0-9.].*/, "", t); return t }
function before(s, w,   i, t) { i = index(s, w); if (!i) return "?"; t = substr(s, 1, i - 1); sub(/.*[^0-9.]/, "", t); return t }
'

# bench_tmp DIR: a fresh directory under DIR in $tmp, removed at exit (and on INT, TERM).
bench_tmp() {
	tmp=$(mktemp -d "$1/$bench_name.XXXXXX") || die "cannot create a directory in $1"
	trap 'rm -rf -- "$tmp"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
