#!/bin/sh
# SPDX-License-Identifier: MIT
# The views of a job: a small job folder (tests/lib/job_traces.py: two
# ranks sharing one GPU, a fork child), exported to Perfetto and written
# as a report, checked by test-job-views.py (its checks are described
# there); then the report in headless Chromium: no console message, the
# job page's lanes (a process's drawn up to its peak, the GPU's to its
# summed peak, which it marks) and process table, and a click on rank 1's
# lane opening its own page, which shows its peak. A screenshot of the job
# page goes to BUILDDIR/report-job.png. Exits 77 without python3, and
# without chromium (or chromium-browser) once the rest passed.
#   test-job-views.sh CGTRACE BUILDDIR
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 2 "test-job-views.sh CGTRACE BUILDDIR" "$@"
cgtrace=$(abs "$1")
build=$(abs "$2")
here=$(dirname "$0")
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
make_tmp

python3 "$here/test-job-views.py" data "$cgtrace" "$tmp" >"$tmp/out" 2>"$tmp/err" && ok || ko "the job's Perfetto file and page"
cat "$tmp/out"
: >"$tmp/err"

need_browser

page=$tmp/job.html
"$cgtrace" report -o "$page" "$tmp/job" 2>"$tmp/err" && ok || ko "cgtrace report of the job"
"$here/lib/report-selftest.sh" "$page" "$tmp/selftest.html" job-selftest.js || ko "no self-test put on the page"
# The self-test clicks pid 4102's lane (rank 1), then notes what its page shows.
browser_selftest "file://$tmp/selftest.html#selftest-open=4102" cg-job-selftest
echo "selftest: $(cat "$tmp/selftest.json")"
python3 "$here/test-job-views.py" selftest "$tmp/selftest.json" >"$tmp/out" 2>"$tmp/err" && ok || ko "what the browser drew"
cat "$tmp/out"
: >"$tmp/err"
rm -f "$build/report-job.png"
run_browser --hide-scrollbars --window-size=1280,720 --screenshot="$build/report-job.png" \
	"file://$page" >/dev/null 2>"$tmp/browser.err"
[ -s "$build/report-job.png" ] && ok || { cp "$tmp/browser.err" "$tmp/err"; ko "no screenshot"; }
finish
