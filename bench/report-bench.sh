#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The HTML report of a large trace (issue 13's report targets): bench/alloc-bench
# recorded by the probe (its default compact encoding, call stacks on) at
# about RECORDS memory records (THREADS threads of RECORDS / THREADS
# operations, DEPTH frames deep), then `cgtrace report` on it, timed with
# /usr/bin/time -v (wall, peak RSS), the page's size, and headless Chromium
# loading it from a file:// URL: `chromium --headless --dump-dom` timed to
# completion (beside the same on an empty page: the browser's own start), and
# the page's own figure from the self-test put on a copy of it
# (tests/lib/report-selftest.sh; render_ms: from navigation to the drawn
# page). Best of RUNS by wall time. The same at RECORDS / 10 first.
# One trace exists at a time: each is removed once measured.
#
#   bench/report-bench.sh [BUILD_DIR] [RECORDS] [RUNS]   (defaults: build 10000000 3)
#
# Environment: THREADS (2), DEPTH (16), TRACE_DIR (default TMPDIR or /tmp),
# DROP_CACHES=0. Every CGPROBE_* variable of the caller's environment is
# ignored. Targets: the page under 20 MB, Chromium done in under 3 s. Exit
# status: 0 once the figures are printed, whatever they are; non-zero when
# something could not be run.

# shellcheck disable=SC2034,SC2154 # bench_name is read by bench-env.sh, which sets records
bench_name="report-bench"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_args records RECORDS 10000000 "$@"
threads=${THREADS:-2}
depth=${DEPTH:-16}
bench_counts $threads $depth
[ "$threads" -ge 1 ] || die "THREADS must be at least 1"
[ "$records" -ge $((threads * 100)) ] || die "RECORDS must be at least 100 per thread"

bench_paths
bench_built "$build_arg" "$bench" "$probe" "$cgtrace"
[ -x /usr/bin/time ] || die "missing /usr/bin/time (GNU time)"
browser=$(command -v chromium 2>/dev/null) || browser=$(command -v chromium-browser 2>/dev/null) ||
	die "missing chromium (or chromium-browser) in PATH"
bench_start "$trace_dir"
sandbox=
[ "$(id -u)" != 0 ] || sandbox=--no-sandbox

# browse URL: chromium loads URL and dumps its DOM into $tmp/dom.html; sets b_wall.
browse() {
	rm -rf -- "$tmp/profile"
	t0=$(now_ns)
	timeout 300 "$browser" --headless $sandbox --disable-gpu --no-first-run \
		--user-data-dir="$tmp/profile" --dump-dom "$1" >"$tmp/dom.html" 2>"$tmp/browser.err" ||
		{ tail -n 5 "$tmp/browser.err" >&2; die "chromium failed on $1"; }
	b_wall=$(seconds_since "$t0")
}

# best A B: the smaller number.
best() {
	if [ -z "$2" ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; then echo "$1"; else echo "$2"; fi
}

bench_conditions "$tmp" "$build"
echo "browser      $("$browser" --version 2>/dev/null | head -n 1)"
echo
printf '<!DOCTYPE html><title>empty</title>\n' >"$tmp/empty.html"
empty=
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	browse "file://$tmp/empty.html"
	empty=$(best "$b_wall" "$empty")
done
echo "== headless Chromium on an empty page (its start and exit): $empty s, best of $runs"
echo
echo "== alloc-bench $threads threads, $depth frames deep, recorded by the probe; best of $runs by wall time"
summary=
for size in $((records / 10)) "$records"; do
	ops=$((size / threads))
	rm -rf -- "$tmp/rec"
	mkdir "$tmp/rec"
	bench_settle
	t0=$(now_ns)
	(cd "$tmp/rec" && env LD_PRELOAD="$probe" "$bench" "$threads" "$ops" "$depth") >/dev/null 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; die "recording failed"; }
	rec_wall=$(seconds_since "$t0")
	trace=
	for f in "$tmp/rec"/*; do trace=$f; done
	[ -f "$trace" ] || die "the recording left no trace"
	n=$(memory_records "$cgtrace" "$trace") || die "cgtrace summary --json failed on $trace"
	tbytes=$(wc -c <"$trace" | tr -d ' ')
	peak=$("$cgtrace" memory --json --top 1 "$trace" | sed -n 's/.*"summary":{[^}]*"peak_bytes":\([0-9]*\).*/\1/p')
	awk -v s="$size" -v n="$n" -v b="$tbytes" -v w="$rec_wall" 'BEGIN {
		printf "  %9s records asked: %s memory records, trace %.1f MB (%s), recorded in %.3f s\n", s, n, b / 1e6, "compact", w
	}'

	page=$tmp/report.html
	r_wall='' r_rss=''
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		sync
		/usr/bin/time -v "$cgtrace" report -o "$page" "$trace" 2>"$tmp/time" >/dev/null ||
			{ cat "$tmp/time" >&2; die "cgtrace report failed on $trace"; }
		w=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time" |
			awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
		k=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
		if [ -z "$r_wall" ] || awk -v a="$w" -v b="$r_wall" 'BEGIN { exit !(a < b) }'; then
			r_wall=$w r_rss=$k
		fi
	done
	pbytes=$(wc -c <"$page" | tr -d ' ')
	"$src_dir/tests/lib/report-selftest.sh" "$page" "$tmp/report-selftest.html" ||
		die "could not put the self-test on the page"
	rm -f -- "$trace"
	rm -rf -- "$tmp/rec"

	c_wall='' c_render=''
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		browse "file://$tmp/report-selftest.html"
		st=$(sed -n 's/.*<pre id="cg-selftest"[^>]*>\([^<]*\)<\/pre>.*/\1/p' "$tmp/dom.html")
		case $st in
		*'"rendered":true'*'"errors":[]'*) ;;
		*) die "the page did not render cleanly: ${st:-no self-test}" ;;
		esac
		render=$(printf '%s\n' "$st" | sed -n 's/.*"render_ms":\([0-9]*\).*/\1/p')
		shown=$(printf '%s\n' "$st" | sed -n 's/.*"peak_shown":\([0-9]*\).*/\1/p')
		drawn=$(printf '%s\n' "$st" | sed -n 's/.*"timeline_max":\([0-9]*\).*/\1/p')
		[ "$shown" = "$peak" ] && [ "$drawn" = "$peak" ] ||
			die "the page shows peak $shown and draws $drawn; cgtrace memory says $peak"
		c_wall=$(best "$b_wall" "$c_wall")
		c_render=$(best "$render" "$c_render")
	done
	awk -v r="$r_wall" -v k="$r_rss" -v p="$pbytes" -v c="$c_wall" -v m="$c_render" -v e="$empty" 'BEGIN {
		printf "  %9s cgtrace report: wall %.3f s, peak RSS %.1f MiB; page %.2f MB\n", "", r, k / 1024, p / 1e6
		printf "  %9s chromium --dump-dom: %.3f s (%.3f s over an empty page); the page drawn %d ms after navigation\n", "", c, c - e, m
	}'
	summary="$summary$size	$n	$pbytes	$c_wall	$c_render	$r_wall	$r_rss
"
done

echo
echo "== targets (at each size)"
printf '%s' "$summary" | awk -F '\t' '
function v(ok) { return ok ? "PASS" : "FAIL" }
NF >= 7 {
	printf "%9s records: page %.2f MB (target < 20 MB) %s; chromium %.3f s (target < 3 s) %s; render %d ms; cgtrace report %.3f s, %.1f MiB RSS\n",
		$2, $3 / 1e6, v($3 < 20e6), $4, v($4 < 3), $5, $6, $7 / 1024
}'
echo
bench_load
exit 0
