#!/bin/sh
# cgprobe --report: TRACE.html beside each trace the run wrote, one line per
# report on stderr (none with --quiet), and a report that cannot be written
# is a warning that leaves the exit status PROGRAM's.
#   test-wrapper-report.sh WRAPPER BUILDDIR
# WRAPPER: the build's generated scripts/cgprobe (its own probe and cgtrace);
# PROGRAM: BUILDDIR/tests/hello. Exits 77 when they are not built.
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 2 "test-wrapper-report.sh WRAPPER BUILDDIR" "$@"
wrapper=$(abs "$1")
build=$(abs "$2")
hello=$build/tests/hello
skip_unless_built "$build/preload/libcgprobe.so"
skip_unless_built "$hello"
unset CGPROBE_OUTPUT CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_FOLLOW CGPROBE_FLUSH_MS CGPROBE_TAGS CGPROBE_LIB
make_tmp
mkdir "$tmp/tmpdir" || exit 1
TMPDIR=$tmp/tmpdir
export TMPDIR

run() {
	"$wrapper" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
}
# is_report FILE: a page cgtrace report wrote.
is_report() {
	[ -s "$1" ] && grep -q '<script type="application/json" id="cg-data">' "$1"
}

# One trace, one report, one line naming it.
run --report -o "$tmp/one.cgt" "$hello"
[ "$st" -eq 0 ] && ok || ko "--report: exit status $st"
is_report "$tmp/one.cgt.html" && ok || ko "--report: no $tmp/one.cgt.html"
n=$(grep -c "^cgprobe: report: $tmp/one.cgt.html\$" "$tmp/err")
[ "$n" -eq 1 ] && ok || ko "--report: $n lines naming the report"
# The summary is still there, before the report.
grep -q "^cgprobe: $tmp/one.cgt\$" "$tmp/err" && ok || ko "--report: no summary"

# Each process's trace gets its own.
run --report -o "$tmp/f.%p.cgt" sh -c "$hello; $hello"
traces=$(find "$tmp" -maxdepth 1 -name 'f.*.cgt' | wc -l)
pages=$(find "$tmp" -maxdepth 1 -name 'f.*.cgt.html' | wc -l)
lines=$(grep -c '^cgprobe: report: ' "$tmp/err")
if [ "$traces" -ge 2 ] && [ "$pages" -eq "$traces" ] && [ "$lines" -eq "$traces" ]; then
	ok
else
	ko "--report with children: $traces traces, $pages reports, $lines report lines"
fi

# --quiet: the reports, without the lines.
run -q --report -o "$tmp/q.cgt" "$hello"
is_report "$tmp/q.cgt.html" && ok || ko "-q --report: no report"
[ ! -s "$tmp/err" ] && ok || ko "-q --report printed something"

# A report that cannot be written (a directory stands where it goes): a
# warning, and PROGRAM's exit status all the same.
mkdir -p "$tmp/bad.cgt.html/x"
run --report -o "$tmp/bad.cgt" "$hello" 3
[ "$st" -eq 3 ] && ok || ko "failed report: exit status $st, expected 3"
grep -q "^cgprobe: warning: no report for $tmp/bad.cgt: " "$tmp/err" && ok ||
	ko "failed report: no warning"
grep -q '^cgprobe: report: ' "$tmp/err" && ko "failed report: announced as written" || ok

# Without --report, no page.
run -o "$tmp/none.cgt" "$hello"
[ ! -e "$tmp/none.cgt.html" ] && ok || ko "a report without --report"
grep -q '^cgprobe: report: ' "$tmp/err" && ko "report lines without --report" || ok
# The wrapper's temporary files are gone.
[ -z "$(ls -A "$tmp/tmpdir")" ] && ok || ko "left behind in TMPDIR: $(ls -A "$tmp/tmpdir")"
finish
