# shellcheck shell=sh disable=SC2154,SC2034 # $tmp is the sourcing script's; it reads what the helpers set
# SPDX-License-Identifier: MIT
# Sourced by the shell test scripts: counts checks, prints each failure with
# the stderr of the run it checked ($tmp/err), and ends with the plain
# "N passed, N failed" line that test runners read.
pass=0
fail=0
# need_args N USAGE ARGS...: exits 2 with USAGE unless there are N ARGS.
need_args() {
	n=$1 usage=$2
	shift 2
	[ $# -eq "$n" ] || { echo "usage: $usage" >&2; exit 2; }
}
# skip_unless_built FILE: exits 77 (skipped) when the build has no FILE.
skip_unless_built() {
	[ -f "$1" ] || { echo "SKIP: $1 is not built"; exit 77; }
}
# abs PATH: PATH made absolute against the current directory.
abs() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s' "$(pwd)/$1" ;; esac; }
# make_tmp: a fresh directory in $tmp, removed when the script exits.
make_tmp() {
	tmp=$(mktemp -d) || exit 1
	trap 'rm -rf "$tmp"' EXIT
}
# probe_test N USAGE CGTRACE PROBE ARGS...: the start of a script that runs
# programs under the probe: need_args, cgtrace and probe made absolute,
# skipped when the probe is not built, then make_tmp.
probe_test() {
	need_args "$@"
	cgtrace=$(abs "$3")
	probe=$(abs "$4")
	skip_unless_built "$probe"
	make_tmp
}
ok() { pass=$((pass + 1)); }
ko() {
	echo "FAIL $1"
	[ ! -s "$tmp/err" ] || sed 's/^/  stderr: /' "$tmp/err"
	fail=$((fail + 1))
}
skip() { echo "SKIP $1"; }
# finish: the closing line, and the exit status of the whole script.
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}
# need_browser: $browser, headless Chromium (chromium or chromium-browser),
# for run_browser; without one, the checks so far end the script: 77
# (skipped) when they passed.
need_browser() {
	browser=$(command -v chromium 2>/dev/null) || browser=$(command -v chromium-browser 2>/dev/null) || {
		[ "$fail" -eq 0 ] || finish
		echo "SKIP: no chromium or chromium-browser in PATH ($pass checks passed)"
		exit 77
	}
	# Root has no sandbox.
	sandbox=
	[ "$(id -u)" != 0 ] || sandbox=--no-sandbox
}
# run_browser ARGS...: headless Chromium with its own profile in $tmp, so parallel tests do not share one.
run_browser() {
	# shellcheck disable=SC2086 # $sandbox is one word or none
	timeout 120 "$browser" --headless $sandbox --disable-gpu --no-first-run \
		--user-data-dir="$tmp/profile" "$@"
}
# browser_selftest URL PRE: URL drawn by run_browser (--dump-dom), which
# must exit 0 and log nothing to the console (a page logs nothing); the
# text of its self-test's <pre id=PRE>, unescaped, into $tmp/selftest.json.
browser_selftest() {
	run_browser --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom \
		"$1" >"$tmp/dom.html" 2>"$tmp/browser.err"
	st=$?
	[ "$st" -eq 0 ] && ok || { cp "$tmp/browser.err" "$tmp/err"; ko "$1: chromium --dump-dom exit status $st"; }
	# Chromium prints every console message as "...:CONSOLE:LINE] "text", source: URL (LINE)".
	if grep -q ':CONSOLE' "$tmp/browser.err"; then
		grep ':CONSOLE' "$tmp/browser.err" >"$tmp/err"
		ko "$1: console messages"
	else
		ok
	fi
	: >"$tmp/err"
	sed -n "s/.*<pre id=\"$2\"[^>]*>\([^<]*\)<\/pre>.*/\1/p" "$tmp/dom.html" |
		sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g' >"$tmp/selftest.json"
}
