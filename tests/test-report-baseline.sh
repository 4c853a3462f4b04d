#!/bin/sh
# SPDX-License-Identifier: MIT
# The HTML report against a baseline (cgtrace report --baseline BASE):
# the pages' data by test-report-baseline.py (two traces and two job
# folders whose differences it wrote; a bad BASE), then in headless
# Chromium: no console message, the trace's page draws BASE's line up to
# BASE's peak, by time and by update number (#align=update), and its
# cards show the differences; the job page draws the GPU's baseline sum
# and each lane's match, and rank 1's own page its baseline. Screenshots
# go to BUILDDIR/report-baseline.png and report-job-baseline.png. Exits
# 77 without python3, and without chromium (or chromium-browser) once
# the rest passed.
#   test-report-baseline.sh CGTRACE BUILDDIR
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 2 "test-report-baseline.sh CGTRACE BUILDDIR" "$@"
cgtrace=$(abs "$1")
build=$(abs "$2")
here=$(dirname "$0")
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
make_tmp
check_py="$here/test-report-baseline.py"

python3 "$check_py" data "$cgtrace" "$tmp" >"$tmp/out" 2>"$tmp/err" && ok || ko "the pages' data"
cat "$tmp/out"
: >"$tmp/err"

need_browser

# drawn PAGE HASH PRE KIND: PAGE (with its self-test) drawn at #HASH, the
# self-test's <pre id=PRE> checked by test-report-baseline.py KIND-selftest.
drawn() {
	browser_selftest "file://$1#$2" "$3"
	echo "#$2: $(cat "$tmp/selftest.json")"
	python3 "$check_py" "$4-selftest" "$tmp/selftest.json" >"$tmp/out" 2>"$tmp/err" && ok || ko "#$2: what the browser drew"
	cat "$tmp/out"
	: >"$tmp/err"
}

page=$tmp/trace.html
"$cgtrace" report --baseline "$tmp/base.jsonl" -o "$page" "$tmp/new.jsonl" 2>"$tmp/err" && ok || ko "cgtrace report --baseline"
"$here/lib/report-selftest.sh" "$page" "$tmp/trace.selftest.html" || ko "no self-test put on the page"
for hash in "" align=update selftest=interact; do
	drawn "$tmp/trace.selftest.html" "$hash" cg-selftest trace
done

job=$tmp/job.html
"$cgtrace" report --baseline "$tmp/jbase" -o "$job" "$tmp/jnew" 2>"$tmp/err" && ok || ko "cgtrace report --baseline of a job"
"$here/lib/report-selftest.sh" "$job" "$tmp/job.selftest.html" job-selftest.js || ko "no self-test put on the job's page"
drawn "$tmp/job.selftest.html" selftest-open=4102 cg-job-selftest job

# shot PAGE NAME: a screenshot of PAGE at 1280x720 as BUILDDIR/NAME.
shot() {
	rm -f "$build/$2"
	run_browser --hide-scrollbars --window-size=1280,720 --screenshot="$build/$2" \
		"file://$1" >/dev/null 2>"$tmp/browser.err"
	[ -s "$build/$2" ] && ok || { cp "$tmp/browser.err" "$tmp/err"; ko "no screenshot $2"; }
}
shot "$page" report-baseline.png
shot "$job" report-job-baseline.png
finish
