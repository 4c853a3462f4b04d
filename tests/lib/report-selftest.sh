#!/bin/sh
# report-selftest.sh PAGE OUT [SCRIPT]: OUT is PAGE (a page of cgtrace
# report) with the report's self-test, report-selftest.js beside this
# script (or SCRIPT beside it: job-selftest.js for a job's page), put
# before the page's own script: what tests/test-report-browser.sh,
# tests/test-job-views.sh and bench/report-bench.sh load. No report ships
# the self-test.
set -eu
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: report-selftest.sh PAGE OUT [SCRIPT]" >&2; exit 2; }
js=$(dirname "$0")/${3:-report-selftest.js}
[ -f "$js" ] || { echo "report-selftest.sh: no $js" >&2; exit 1; }
awk -v js="$js" '
{ print }
!done && index($0, "<script type=\"application/json\" id=\"cg-data\">") == 1 {
	print "<script>"
	while ((getline line < js) > 0)
		print line
	print "</script>"
	done = 1
}
END { if (!done) { print "report-selftest.sh: no data block in the page" > "/dev/stderr"; exit 1 } }' "$1" >"$2"
