#!/bin/sh
# One version, from meson, everywhere: project(version:) as meson reports it
# is what cgprobe --version (the build's generated wrapper and the source
# tree's), cgtrace --version, the probe's cgprobe_version tag in a trace it
# records and the Python module's cgprobe.__version__ say.
#   test-version.sh WRAPPER SOURCE_WRAPPER BUILDDIR MESON
# Exits 77 when the probe is not built.
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 4 "test-version.sh WRAPPER SOURCE_WRAPPER BUILDDIR MESON" "$@"
wrapper=$(abs "$1")
src_wrapper=$(abs "$2")
build=$(abs "$3")
meson=$4
skip_unless_built "$build/preload/libcgprobe.so"
unset CGPROBE_OUTPUT CGPROBE_FORMAT CGPROBE_ONLY CGPROBE_FOLLOW CGPROBE_LIB PYTHONPATH
make_tmp

# The version in meson's own words: the projectinfo JSON's "version" member.
"$meson" introspect --projectinfo "$build" >"$tmp/info" 2>"$tmp/err" || ko "meson introspect --projectinfo"
want=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$tmp/info")
[ -n "$want" ] || { ko "no version in: $(head -c 300 "$tmp/info")"; finish; }

# same WHAT GOT: GOT is cgprobe's version.
same() {
	if [ "$2" = "$want" ]; then ok; else ko "$1 says '$2', meson $want"; fi
}
same "cgprobe --version (generated)" "$("$wrapper" --version 2>"$tmp/err" | sed -n 's/^cgprobe //p')"
same "cgprobe --version (source tree)" "$("$src_wrapper" --version 2>"$tmp/err" | sed -n 's/^cgprobe //p')"
same "cgtrace --version" "$("$build/cgtrace/cgtrace" --version 2>"$tmp/err" | sed -n 's/^cgtrace \([^ ]*\) .*/\1/p')"
if "$wrapper" -q -o "$tmp/t.%p.jsonl" true 2>"$tmp/err"; then
	same "the trace's cgprobe_version tag" \
		"$(sed -n '1s/.*"cgprobe_version":"\([^"]*\)".*/\1/p' "$tmp"/t.*.jsonl)"
else
	ko "recording true under the wrapper"
fi
py=$(command -v python3 || true)
if [ -n "$py" ]; then
	same "the Python module's __version__" \
		"$(PYTHONPATH=$build/python "$py" -c 'import cgprobe; print(cgprobe.__version__)' 2>"$tmp/err")"
else
	skip "the Python module's version (no python3)"
fi
finish
