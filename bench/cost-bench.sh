#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The recording's cost (issue 26), under one protocol for every figure:
# bench/alloc-bench (random malloc/calloc/realloc/free of mixed sizes) at
# OPS and 10*OPS operations per thread, 1 and 2 threads, 1 frame deep; each
# configuration run natively, under the probe without stacks
# (CGPROBE_STACK_DEPTH=0), under the probe with stacks at the default depth
# (CGPROBE_STACK_DEPTH unset) and under heaptrack (`heaptrack -o FILE`, its
# heaptrack_interpret child in the timing). The protocol:
#   - RUNS (5) rounds, each running every tool once in turn, so that a drift
#     of the machine's load falls on all tools alike; the MEDIAN of the
#     rounds, with the spread (min..max) beside it; wall, user+sys CPU and
#     peak RSS by bench/rusage-run (wait4's, children included);
#   - the page cache is not dropped; after each run its trace is deleted and
#     `sync` run before the next;
#   - the time a tool adds is its median wall minus native's; the ratio's
#     spread is that of the ratios computed round by round.
# Every CGPROBE_* of the caller is unset first.
#
# Tables and targets:
#   1. no stacks, 2 threads: probe's added wall / heaptrack's <= 0.15;
#   2. stacks on: <= 0.5 at 1 thread, <= 0.35 at 2 threads;
#   3. the writer (CGPROBE_STATS=1's stderr line): writer CPU <= 25
#      ns/event, trace bytes / event <= 4.5. The timed no-stacks runs carry
#      CGPROBE_STATS=1 (STATS_TIMED=0: not): it only reads the thread CPU
#      clock around each block's compression and write (a few reads a block
#      of thousands of events) and prints one line at exit, nothing
#      measurable; the blocks each run wrote are printed, to check that.
#      One more untimed run of each no-stacks configuration with
#      CGPROBE_STATS=1 is shown beside the timed rounds' medians;
#   4. the readers, on the last round's traces of the 10*OPS, 2 thread,
#      no-stacks configuration (about 20 M events at the defaults) and
#      heaptrack's of the same round: `cgtrace summary` and `cgtrace
#      memory` beside `heaptrack_print`, RUNS interleaved rounds, page cache
#      as it is, median wall and peak RSS: cgtrace <= 0.4 x heaptrack_print's
#      wall (RSS beside, no target).
# Then how the added time grows from OPS to 10*OPS (ideally 10 x).
#
# Before/after: with BASE_BUILD=DIR (another build directory of the
# project, e.g. of the previous commit; it must hold preload/libcgprobe.so
# and cgtrace/cgtrace), every round also runs the same alloc-bench (this
# build's) under DIR's probe, without stacks ("base-nostacks", with
# CGPROBE_STATS=1 as the new one) and with stacks at the default depth
# ("base-stacks"), in the round's order native, base-nostacks, nostacks,
# base-stacks, stacks, heaptrack, each trace deleted and sync after its
# run; tables 1 and 2 show the base's added wall and ratio beside the new,
# table 3 the base's writer ns/event and bytes/event, table 4 DIR's
# `cgtrace summary` and `cgtrace memory` on the same probe trace,
# interleaved (a base reader that fails, e.g. on a newer trace, is shown
# as failed and left out of the next rounds). Verdicts are the new
# build's only. The conditions name DIR and, when its source dir
# (meson-info) is a git checkout, its commit.
#
#   bench/cost-bench.sh [BUILD_DIR] [OPS] [RUNS]      (defaults: build 1000000 5)
#
# Environment: SIZES (operations per thread, default "OPS 10*OPS"), THREADS
# ("1 2"), DEPTHS (alloc-bench's call depth, "1"; "1 16" adds 16 frames
# deep), RUNS (5, when the argument is not given), STATS_TIMED (1),
# TRACE_DIR (where the traces go, default TMPDIR or /tmp: a disk, not
# tmpfs), BASE_BUILD (a build to compare with, above). DROP_CACHES is not
# read: this protocol never drops the page cache. Exit status: 0 once the
# figures are printed, PASS or FAIL (a benchmark, not a test); non-zero
# when something could not be run.

bench_name="cost-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_matrix 1000000 "$@"
[ $# -ge 3 ] || runs=${RUNS:-5}
depths=${DEPTHS:-1}
stats_timed=${STATS_TIMED:-1}
# shellcheck disable=SC2086 # a list of numbers, split on purpose
bench_counts "$runs" $depths "$stats_timed"
[ "$runs" -ge 1 ] || die "RUNS must be at least 1"
[ "$ops" -ge 10 ] || die "OPS must be at least 10"
[ "$stats_timed" = 1 ] || stats_timed=

bench_paths
bench_built "$build_arg" "$bench" "$probe" "$cgtrace" "$rusage_run"
bench_tools heaptrack heaptrack_print

# The build to compare with (BASE_BUILD): its probe and its cgtrace.
base=
if [ -n "${BASE_BUILD:-}" ]; then
	base=$(bench_build_dir "$BASE_BUILD")
	[ -d "$base" ] || die "BASE_BUILD=$BASE_BUILD: no such directory ($base)"
	base_probe=$base/preload/libcgprobe.so
	base_cgtrace=$base/cgtrace/cgtrace
	[ -f "$base_probe" ] || die "BASE_BUILD=$BASE_BUILD holds no preload/libcgprobe.so ($base_probe):" \
		"not a build of cgprobe, or not built (ninja -C $base)"
	[ -x "$base_cgtrace" ] || die "BASE_BUILD=$BASE_BUILD holds no cgtrace/cgtrace ($base_cgtrace):" \
		"not built (ninja -C $base)"
fi
# The page cache as it is: bench_settle only syncs.
DROP_CACHES=0
bench_start "$trace_dir"
bench_drop="not dropped (this protocol): sync only"

# The readers' traces: the largest size, 2 threads (else the last count),
# the first depth, from the last round.
for keep_ops in $sizes; do :; done
keep_thr=
for t in $threads_list; do
	[ "$t" != 2 ] || keep_thr=2
	last_thr=$t
done
[ -n "$keep_thr" ] || keep_thr=$last_thr
for keep_depth in $depths; do break; done
keep=$tmp/keep
mkdir "$keep"

if [ -n "$base" ]; then
	tools="native base-nostacks nostacks base-stacks stacks heaptrack"
	tw=13
else
	tools="native nostacks stacks heaptrack"
	tw=9
fi
rows=$tmp/rows
: >"$rows"

# stats_fields FILE: events, bytes, blocks, writer CPU ms and ns/event of
# the last CGPROBE_STATS line in FILE, tab-separated ("?" each when none).
# The line: "cgprobe: stats: PATH: ENC, N events, R records, B bytes (X raw),
# K blocks; writer CPU T ms: encode E, compress C, write W ms; Y ns/event; ...".
stats_fields() {
	grep 'cgprobe: stats:' "$1" | tail -n 1 | awk "$stats_awk"'
	{
		i = index($0, "; writer CPU"); head = substr($0, 1, i); tail = substr($0, i)
		printf "%s\t%s\t%s\t%s\t%s\n", before(head, " events,"), before(head, " bytes ("),
			before(head, " blocks;"), after(tail, "writer CPU "), before(tail, " ns/event")
		found = 1
	}
	END { if (!found) printf "?\t?\t?\t?\t?\n" }'
}

# run_once TOOL ROUND: alloc-bench ($wl_threads, $wl_ops, $wl_depth) under
# TOOL (native, nostacks, stacks, heaptrack; base-nostacks, base-stacks:
# the same under BASE_BUILD's probe; extra: the untimed no-stacks run with
# CGPROBE_STATS=1), a row in $rows: the configuration, ROUND, TOOL,
# wall, user, sys, RSS KiB, trace bytes, then the CGPROBE_STATS fields. The
# trace is deleted (or kept for the readers), then sync.
run_once() {
	r_tool=$1 r_round=$2
	rm -rf -- "$tmp/run"
	mkdir "$tmp/run"
	set -- "$bench" "$wl_threads" "$wl_ops" "$wl_depth"
	r_stats=
	# bench_under preloads $probe: the base's for the base-* tools.
	r_probe=$probe
	case $r_tool in base-*) probe=$base_probe ;; esac
	case $r_tool in
	native | heaptrack) bench_under "$r_tool run" "$tmp/run" "$r_tool" "" "$@" ;;
	nostacks | base-nostacks)
		r_stats=$stats_timed
		bench_under "$r_tool run" "$tmp/run" probe "CGPROBE_STACK_DEPTH=0${r_stats:+ CGPROBE_STATS=1}" "$@"
		;;
	stacks | base-stacks) bench_under "$r_tool run" "$tmp/run" probe "" "$@" ;;
	extra)
		r_stats=1
		bench_under "$r_tool run" "$tmp/run" probe "CGPROBE_STACK_DEPTH=0 CGPROBE_STATS=1" "$@"
		;;
	esac
	probe=$r_probe
	read -r r_wall r_user r_sys r_rss <"$tmp/time"
	r_bytes=0
	if [ "$r_tool" != native ]; then
		bench_one_file "$tmp/run" "$r_tool run"
		r_bytes=$(wc -c <"$b_file" | tr -d ' ')
	fi
	if [ -n "$r_stats" ]; then
		r_fields=$(stats_fields "$tmp/err")
	else
		r_fields=$(printf '\t\t\t\t')
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl_ops" "$wl_threads" "$wl_depth" "$r_round" \
		"$r_tool" "$r_wall" "$r_user" "$r_sys" "$r_rss" "$r_bytes" "$r_fields" >>"$rows"
	if [ "$r_round" = "$runs" ] && [ "$wl_ops" = "$keep_ops" ] && [ "$wl_threads" = "$keep_thr" ] &&
		[ "$wl_depth" = "$keep_depth" ]; then
		case $r_tool in
		nostacks | heaptrack)
			mkdir "$keep/$r_tool"
			mv -- "$b_file" "$keep/$r_tool/"
			[ "$r_tool" != nostacks ] || keep_fields=$r_fields
			;;
		esac
	fi
	rm -rf -- "$tmp/run"
	sync
}

# The awk functions the tables share: med (the median: the middle value, or
# the mean of the two middle ones), lo and hi (min, max) of a[1..n].
awk_lib='
function med(a, n,   b, i, j, t) {
	for (i = 1; i <= n; i++) b[i] = a[i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && b[j - 1] > b[j]; j--) { t = b[j]; b[j] = b[j - 1]; b[j - 1] = t }
	return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
}
function lo(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
function hi(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
function spread(a, n, f) { return sprintf("(" f ".." f ")", lo(a, n), hi(a, n)) }
'

# base_conditions: the base build, its build type, and the commit of its
# source dir (meson-info.json's directories.source) when that is a git
# checkout (its HEAD now: the build may be older than the checkout).
base_conditions() {
	b_opts=$base/meson-info/intro-buildoptions.json
	b_bt=$(grep -o '"name": "buildtype", "value": "[^"]*"' "$b_opts" 2>/dev/null | sed 's/.*"value": "//; s/"$//') || b_bt=
	b_src=$(grep -o '"directories": {[^}]*}' "$base/meson-info/meson-info.json" 2>/dev/null |
		sed -n 's/.*"source": "\([^"]*\)".*/\1/p') || b_src=
	b_rev=
	if [ -n "$b_src" ] && b_rev=$(git -C "$b_src" rev-parse --short HEAD 2>/dev/null); then
		[ -z "$(git -C "$b_src" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
			b_rev="$b_rev, with uncommitted changes"
		b_src="source $b_src at $b_rev (its HEAD now) \"$(git -C "$b_src" log -1 --format=%s 2>/dev/null)\""
	elif [ -n "$b_src" ]; then
		b_src="source $b_src (not a git checkout)"
	else
		b_src="source dir unknown (no meson-info/meson-info.json)"
	fi
	echo "base build   $base (${b_bt:-?}): $b_src"
}

# --- the runs -----------------------------------------------------------------
bench_conditions "$tmp" "$build"
[ -z "$base" ] || base_conditions
echo "protocol     median of $runs interleaved rounds (each round: $tools, once each, in turn)," \
	"spread (min..max) beside each median; page cache not dropped; after each run its trace" \
	"deleted, then sync; every CGPROBE_* unset"
echo "tools        native; nostacks = probe, CGPROBE_STACK_DEPTH=0${stats_timed:+ and CGPROBE_STATS=1};" \
	"stacks = probe, CGPROBE_STACK_DEPTH unset (the default depth); heaptrack = heaptrack -o FILE" \
	"(heaptrack_interpret in its times)"
[ -z "$base" ] || echo "base tools   base-nostacks, base-stacks = the same, this build's alloc-bench, under $base_probe" \
	"(no verdicts on them)"
echo "workload     $bench THREADS OPS DEPTH: ops/thread $sizes; threads $threads_list; depth $depths"
echo
echo "== runs (wall s of each tool, round by round)"
for wl_ops in $sizes; do
	for wl_depth in $depths; do
		for wl_threads in $threads_list; do
			echo "-- $wl_ops ops/thread x $wl_threads thread(s), depth $wl_depth"
			i=0
			while [ "$i" -lt "$runs" ]; do
				i=$((i + 1))
				line="round $i:"
				for tool in $tools; do
					run_once "$tool" "$i"
					line="$line $tool $r_wall"
				done
				echo "$line"
			done
			# The untimed run with CGPROBE_STATS=1, outside the rounds.
			run_once extra 0
			echo "untimed no-stacks run with CGPROBE_STATS=1: wall $r_wall"
		done
	done
done

# --- the report -------------------------------------------------------------------
echo
echo "== medians of $runs rounds (min..max); cpu = user+sys; RSS = peak of the process or of its largest child (wait4)"
awk -F '\t' -v tl="$tools" -v tw="$tw" "$awk_lib"'
$4 > 0 { k = $1 SUBSEP $2 SUBSEP $3; n[k, $5]++; j = n[k, $5]
	w[k, $5, j] = $6; c[k, $5, j] = $7 + $8; m[k, $5, j] = $9 / 1024; b[k, $5, j] = $10 / 1e6
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k } }
END {
	nt = split(tl, t, " ")
	printf "%9s %3s %5s  %-" tw "s %24s %24s %22s %9s\n", "ops/thr", "thr", "depth", "tool", "wall s", "cpu s",
		"RSS MiB", "trace MB"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, f, SUBSEP)
		for (x = 1; x <= nt; x++) {
			r = n[k, t[x]]
			for (y = 1; y <= r; y++) { aw[y] = w[k, t[x], y]; ac[y] = c[k, t[x], y]; am[y] = m[k, t[x], y]; ab[y] = b[k, t[x], y] }
			printf "%9s %3s %5s  %-" tw "s %7.3f %16s %7.3f %16s %6.1f %15s %9s\n", f[1], f[2], f[3], t[x],
				med(aw, r), spread(aw, r, "%.3f"), med(ac, r), spread(ac, r, "%.3f"),
				med(am, r), spread(am, r, "%.1f"), (t[x] == "native" ? "-" : sprintf("%.1f", med(ab, r)))
		}
	}
}' "$rows"

# added TOOL T1 T2: the wall TOOL adds beside heaptrack's, configuration by
# configuration; targets by thread count from T1 (1 thread) and T2 (2).
# With BASE_BUILD, base-TOOL's added wall and ratio beside (no verdict).
added() {
	awk -F '\t' -v tool="$1" -v t1="$2" -v t2="$3" -v bt="${base:+base-$1}" "$awk_lib"'
	$4 > 0 { k = $1 SUBSEP $2 SUBSEP $3; w[k, $5, $4] = $6; if ($4 > nr[k]) nr[k] = $4
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k } }
	END {
		printf "%9s %3s %5s %9s %25s", "ops/thr", "thr", "depth", "native s", "+" tool " s"
		if (bt != "") printf " %25s", "+base s"
		printf " %25s %7s %17s", "+heaptrack s", "ratio", "ratio by round"
		if (bt != "") printf " %10s %17s", "base ratio", "base by round"
		printf " %7s\n", "target"
		for (i = 1; i <= nk; i++) {
			k = order[i]; split(k, f, SUBSEP); r = nr[k]
			for (y = 1; y <= r; y++) {
				an[y] = w[k, "native", y]; ap[y] = w[k, tool, y]; ah[y] = w[k, "heaptrack", y]
				dp[y] = ap[y] - an[y]; dh[y] = ah[y] - an[y]; rr[y] = dh[y] > 0 ? dp[y] / dh[y] : 1e9
				if (bt != "") { ab[y] = w[k, bt, y]; db[y] = ab[y] - an[y]; rb[y] = dh[y] > 0 ? db[y] / dh[y] : 1e9 }
			}
			nat = med(an, r); p = med(ap, r) - nat; h = med(ah, r) - nat
			ratio = h > 0 ? p / h : 1e9
			tg = f[2] == 1 ? t1 : f[2] == 2 ? t2 : ""
			v = tg == "" ? "(no target at " f[2] " thread(s))" : (ratio <= tg + 0 ? "PASS" : "FAIL")
			printf "%9s %3s %5s %9.3f %8.3f %16s", f[1], f[2], f[3], nat, p, spread(dp, r, "%.3f")
			if (bt != "") { b = med(ab, r) - nat; printf " %8.3f %16s", b, spread(db, r, "%.3f") }
			printf " %8.3f %16s %7.3f %17s", h, spread(dh, r, "%.3f"), ratio, spread(rr, r, "%.3f")
			if (bt != "") printf " %10.3f %17s", (h > 0 ? b / h : 1e9), spread(rb, r, "%.3f")
			printf " %7s  %s\n", (tg == "" ? "-" : "<= " tg), v
		}
	}' "$rows"
}

echo
echo "== 1. no stacks: wall added to native, probe over heaptrack (medians of the added times;" \
	"by round: the ratio in each round); target <= 0.15 at 2 threads${base:+; base: the probe of BASE_BUILD, no verdict}"
added nostacks "" 0.15

echo
echo "== 2. stacks on (default depth): wall added, probe over heaptrack; target <= 0.5 at 1 thread," \
	"<= 0.35 at 2 threads${base:+; base: the probe of BASE_BUILD, no verdict}"
added stacks 0.5 0.35

echo
echo "== 3. the writer, from CGPROBE_STATS=1: writer CPU per event (target <= 25 ns) and trace bytes" \
	"per event (target <= 4.5)"
if [ -n "$stats_timed" ]; then
	echo "   timed: the $runs timed no-stacks rounds (they carry CGPROBE_STATS=1), median (min..max);" \
		"untimed: the one extra run; verdicts on the timed medians"
else
	echo "   timed rounds without CGPROBE_STATS (STATS_TIMED=0): verdicts on the untimed extra run alone"
fi
echo "   (blocks: the compact blocks written, each timed by a few thread CPU clock reads when" \
	"CGPROBE_STATS=1; events are the probe's count, bytes the trace file's size)"
awk -F '\t' -v timed="$stats_timed" -v base="$base" "$awk_lib"'
function num(s) { return s != "" && s != "?" }
{ k = $1 SUBSEP $2 SUBSEP $3; if (!(k in seen)) { seen[k] = 1; order[++nk] = k } }
$5 == "nostacks" && num($11) && $11 > 0 { n[k]++; j = n[k]; e[k, j] = $11; bl[k, j] = $13
	ns[k, j] = num($15) ? $15 : $14 * 1e6 / $11; be[k, j] = $10 / $11 }
$5 == "base-nostacks" && num($11) && $11 > 0 { bn[k]++; j = bn[k]; be_[k, j] = $11; bbl[k, j] = $13
	bns[k, j] = num($15) ? $15 : $14 * 1e6 / $11; bbe[k, j] = $10 / $11 }
$5 == "extra" { xe[k] = $11; xbl[k] = $13; xns[k] = num($15) ? $15 : "?"; xb[k] = num($11) && $11 > 0 ? $10 / $11 : "?" }
END {
	printf "%9s %3s %5s  %-7s %12s %8s %23s %21s  %s\n", "ops/thr", "thr", "depth", "runs", "events",
		"blocks", "writer ns/event", "bytes/event", "verdict"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, f, SUBSEP); r = n[k]
		if (r > 0) {
			for (y = 1; y <= r; y++) { ae[y] = e[k, y]; ab[y] = bl[k, y]; an[y] = ns[k, y]; ay[y] = be[k, y] }
			mn = med(an, r); mb = med(ay, r)
			printf "%9s %3s %5s  %-7s %12d %8d %7.1f %15s %6.3f %14s  ", f[1], f[2], f[3], "timed",
				med(ae, r), med(ab, r), mn, spread(an, r, "%.1f"), mb, spread(ay, r, "%.3f")
			printf "writer %s, bytes %s\n", (mn <= 25 ? "PASS" : "FAIL"), (mb <= 4.5 ? "PASS" : "FAIL")
		} else if (timed) {
			printf "%9s %3s %5s  %-7s  no CGPROBE_STATS line in the timed runs\n", f[1], f[2], f[3], "timed"
		}
		# The base build, its timed rounds beside: no verdict, the new over the base.
		if (base != "" && timed) {
			q = bn[k]
			if (q > 0) {
				for (y = 1; y <= q; y++) { ae[y] = be_[k, y]; ab[y] = bbl[k, y]; an[y] = bns[k, y]; ay[y] = bbe[k, y] }
				bmn = med(an, q); bmb = med(ay, q)
				printf "%9s %3s %5s  %-7s %12d %8d %7.1f %15s %6.3f %14s  ", f[1], f[2], f[3], "base",
					med(ae, q), med(ab, q), bmn, spread(an, q, "%.1f"), bmb, spread(ay, q, "%.3f")
				if (r > 0 && bmn > 0 && bmb > 0) printf "(new / base: writer %.2f x, bytes %.2f x)\n", mn / bmn, mb / bmb
				else print ""
			} else {
				printf "%9s %3s %5s  %-7s  no CGPROBE_STATS line in the base timed runs\n", f[1], f[2], f[3], "base"
			}
		}
		if (!num(xe[k])) {
			printf "%9s %3s %5s  %-7s  no CGPROBE_STATS line\n", f[1], f[2], f[3], "untimed"
			continue
		}
		printf "%9s %3s %5s  %-7s %12d %8d %7s %15s %6.3f %14s  ", f[1], f[2], f[3], "untimed", xe[k], xbl[k],
			xns[k], "", xb[k], ""
		if (r > 0 || !num(xns[k])) print ""
		else printf "writer %s, bytes %s\n", (xns[k] <= 25 ? "PASS" : "FAIL"), (xb[k] <= 4.5 ? "PASS" : "FAIL")
	}
}' "$rows"

echo
# shellcheck disable=SC2086 # a list of numbers, split on purpose
set -- $sizes
if [ $# -ge 2 ]; then
	echo "== how the added wall grows with the operations (medians' added time at each size over the first" \
		"size's; the operations grow $(awk -v a="$2" -v b="$1" 'BEGIN { printf "%g", a / b }') x)"
	awk -F '\t' -v first="$1" -v tl="${tools#native }" -v tw="$tw" "$awk_lib"'
	$4 > 0 { k = $2 SUBSEP $3; n[$1, k, $5]++; w[$1, k, $5, n[$1, k, $5]] = $6
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k } if (!($1 in sz)) { sz[$1] = 1; so[++ns] = $1 } }
	function add(s, k, t,   y, a, b, r) {
		r = n[s, k, t]
		for (y = 1; y <= r; y++) { a[y] = w[s, k, t, y]; b[y] = w[s, k, "native", y] }
		return med(a, r) - med(b, r)
	}
	END {
		printf "%3s %5s  %-" tw "s %9s %9s %12s %9s %8s\n", "thr", "depth", "tool", "ops/thr", "ops x", "added s",
			"first s", "added x"
		nt = split(tl, tt, " ")
		for (i = 1; i <= nk; i++) {
			split(order[i], f, SUBSEP)
			for (x = 1; x <= nt; x++) {
				t = tt[x]
				a0 = add(first, order[i], t)
				for (j = 2; j <= ns; j++) {
					a = add(so[j], order[i], t)
					printf "%3s %5s  %-" tw "s %9s %9.3g %12.3f %9.3f %8s\n", f[1], f[2], t, so[j], so[j] / first,
						a, a0, (a0 > 0 ? sprintf("%.2f", a / a0) : "n/a")
				}
			}
		}
	}' "$rows"
else
	echo "== how the added wall grows: one size only, nothing to compare"
fi

# --- the readers -------------------------------------------------------------------
echo
pt=$(find "$keep/nostacks" -maxdepth 1 -type f 2>/dev/null | head -n 1)
ht=$(find "$keep/heaptrack" -maxdepth 1 -type f 2>/dev/null | head -n 1)
if [ -z "$pt" ] || [ -z "$ht" ]; then
	die "the readers' traces were not kept ($keep_ops ops/thread x $keep_thr, depth $keep_depth)"
fi
k_events=$(printf '%s\n' "$keep_fields" | cut -f 1)
case "$k_events" in '' | *[!0-9]*) k_events=$(memory_records "$cgtrace" "$pt") || k_events=0 ;; esac
if [ -n "$base" ]; then
	readers="base-summary summary base-memory memory heaptrack_print"
	echo "== 4. the readers: $runs interleaved rounds (base cgtrace summary, cgtrace summary, base cgtrace memory," \
		"cgtrace memory, heaptrack_print in turn; base = BASE_BUILD's cgtrace on the same trace, no verdict)," \
		"page cache as it is, sync before each; output to /dev/null; target cgtrace <= 0.4 x heaptrack_print's wall"
else
	readers="summary memory heaptrack_print"
	echo "== 4. the readers: $runs interleaved rounds (cgtrace summary, cgtrace memory, heaptrack_print in turn)," \
		"page cache as it is, sync before each; output to /dev/null; target cgtrace <= 0.4 x heaptrack_print's wall"
fi
echo "   probe's trace: $keep_ops ops/thread x $keep_thr, depth $keep_depth, no stacks, round $runs:" \
	"$(wc -c <"$pt" | tr -d ' ') bytes, $k_events events ($(encoding "$pt"))"
echo "   heaptrack's trace of the same round: $(wc -c <"$ht" | tr -d ' ') bytes (${ht##*/})"
: >"$tmp/readers"
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	for rd in $readers; do
		case $rd in
		heaptrack_print) set -- heaptrack_print "$ht" ;;
		base-*) set -- "$base_cgtrace" "${rd#base-}" "$pt" ;;
		*) set -- "$cgtrace" "$rd" "$pt" ;;
		esac
		sync
		r_rc=0
		"$rusage_run" "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || r_rc=$?
		if [ "$r_rc" != 0 ]; then
			tail -n 5 "$tmp/err" >&2
			case $rd in
			base-*)
				# The base's reader may not read the new trace: said in the
				# table, the other figures kept; not run again.
				echo "$bench_name: failed (status $r_rc), left out of the next rounds: $*" >&2
				printf '%s\t%s\tfail\tstatus %s: %s\n' "$i" "$rd" "$r_rc" \
					"$(tail -n 1 "$tmp/err" | tr '\t' ' ' | cut -c 1-80)" >>"$tmp/readers"
				readers=$(echo " $readers " | sed "s/ $rd / /; s/^ //; s/ \$//")
				continue
				;;
			*) die "failed: $*" ;;
			esac
		fi
		read -r r_wall _ _ r_rss <"$tmp/time"
		printf '%s\t%s\t%s\t%s\n' "$i" "$rd" "$r_wall" "$r_rss" >>"$tmp/readers"
	done
done
# The table: each new reader, the base's beside it (the new's wall over the
# base's in its verdict column), heaptrack_print last.
if [ -n "$base" ]; then
	rl="summary base-summary memory base-memory heaptrack_print" rw=20
else
	rl="summary memory heaptrack_print" rw=17
fi
awk -F '\t' -v ev="$k_events" -v tl="$rl" -v rw="$rw" "$awk_lib"'
$3 == "fail" { failed[$2] = $4; next }
{ n[$2]++; w[$2, n[$2]] = $3; m[$2, n[$2]] = $4 / 1024 }
END {
	r = n["heaptrack_print"]
	for (y = 1; y <= r; y++) { hw[y] = w["heaptrack_print", y]; hm[y] = m["heaptrack_print", y] }
	printf "%-" rw "s %24s %22s %7s %17s %9s %12s  %s\n", "reader", "wall s", "RSS MiB", "x hp", "x hp by round",
		"RSS x hp", "Mevents/s", "verdict"
	nt = split(tl, tt, " ")
	for (x = 1; x <= nt; x++) {
		t = tt[x]; b = t ~ /^base-/
		label = t == "heaptrack_print" ? t : b ? "base cgtrace " substr(t, 6) : "cgtrace " t
		if (t in failed) { printf "%-" rw "s  failed (%s)\n", label, failed[t]; continue }
		for (y = 1; y <= r; y++) { aw[y] = w[t, y]; am[y] = m[t, y]; rr[y] = hw[y] > 0 ? aw[y] / hw[y] : 1e9 }
		mw = med(aw, r); mh = med(hw, r); ratio = mh > 0 ? mw / mh : 1e9
		if (!b) nw[t] = mw
		v = t == "heaptrack_print" ? "" : !b ? (ratio <= 0.4 ? "PASS" : "FAIL") \
			: (mw > 0 ? sprintf("(new / base: %.2f x wall)", nw[substr(t, 6)] / mw) : "")
		printf "%-" rw "s %7.3f %16s %6.1f %15s %7.3f %17s %9.2f %12s  %s\n", label,
			mw, spread(aw, r, "%.3f"), med(am, r), spread(am, r, "%.1f"), ratio, spread(rr, r, "%.3f"),
			med(am, r) / med(hm, r), (ev > 0 && mw > 0 ? sprintf("%.2f", ev / mw / 1e6) : "-"), v
	}
}' "$tmp/readers"

echo
bench_load
echo "page cache   $(meminfo Cached) MiB cached, $(meminfo Dirty) MiB dirty at end"
exit 0
