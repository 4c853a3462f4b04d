#!/bin/sh
# The pytest plugin (docs/pytest.md): 'cgprobe pytest' on a small test file
# (tests/python/pytest_limits.py) with one test over its peak limit and one
# under, one over its leak limit and one under: exit status 1, the two over
# failed with messages naming the limit, the bytes and the line that
# allocated them, the two under passed, and the trace holds one span per
# test named after its node id. Then: the markers listed by --markers, a
# marker with a bad size an error at setup, and without the probe the
# markers not checked, with one warning. Exits 77 without /usr/bin/python3
# or its pytest (Debian's python3-pytest).
#   test-pytest-plugin.sh WRAPPER CGTRACE PYTHON_DIR
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 3 "test-pytest-plugin.sh WRAPPER CGTRACE PYTHON_DIR" "$@"
wrapper=$(abs "$1")
cgtrace=$(abs "$2")
pydir=$(abs "$3")
here=$(cd "$(dirname "$0")" && pwd)/python
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP: no $py"; exit 77; }
"$py" -c 'import pytest' 2>/dev/null || { echo "SKIP: $py has no pytest (python3-pytest)"; exit 77; }
make_tmp
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_OUTPUT CGPROBE_CAPTURE CGPROBE_STACK_DEPTH PYTHONPATH
PYTHONDONTWRITEBYTECODE=1
CGPROBE_PYTEST_PYTHON=$py
export PYTHONDONTWRITEBYTECODE CGPROBE_PYTEST_PYTHON
cp "$here/pytest_limits.py" "$here/pytest_bad_marker.py" "$tmp/"
cd "$tmp" || exit 1

has() { grep -qF -- "$2" "$3" && ok || ko "$1: no '$2' in: $(cat "$3")"; }
line_of() { grep -n "# $1\$" "$tmp/pytest_limits.py" | cut -d: -f1; }

# The run: 1, as pytest exits when a test failed.
"$wrapper" -q -o "$tmp/t.%p.cgt" pytest -v -p no:cacheprovider pytest_limits.py \
	>"$tmp/out" 2>"$tmp/err"
r=$?
[ "$r" -eq 1 ] && ok || ko "cgprobe pytest exited $r, not 1: $(cat "$tmp/out")"
has "over" "pytest_limits.py::test_over FAILED" "$tmp/out"
has "under" "pytest_limits.py::test_under PASSED" "$tmp/out"
has "leaks" "pytest_limits.py::test_leaks FAILED" "$tmp/out"
has "no leak" "pytest_limits.py::test_no_leak PASSED" "$tmp/out"
has "peak message" \
	"cgprobe: peak 80.0 MiB on cpu over the limit 64.0 MiB, mostly from pytest_limits.py:$(line_of OVER) (test_over)" \
	"$tmp/out"
# The test as pytest places it: its first line, a decorator's.
has "peak's test" "in test_over (pytest_limits.py:$(($(line_of OVER) - 2)))" "$tmp/out"
has "leak message" "cgprobe: 4.0 MiB on cpu still live after the test, over the leak limit 1.0 MiB, kept from pytest_limits.py:$(line_of LEAK) (test_leaks)" \
	"$tmp/out"
has "summary" "2 failed, 2 passed" "$tmp/out"
has "header" "cgprobe: live figures from the probe" "$tmp/out"

# One span per test, named after its node id.
trace=
for t in "$tmp"/t.*.cgt; do trace=$t; done
if [ -n "$trace" ] && "$cgtrace" export "$trace" >"$tmp/t.jsonl" 2>"$tmp/err"; then
	for name in test_over test_under test_leaks test_no_leak; do
		n=$(grep '"span_start"' "$tmp/t.jsonl" | grep -cF "\"name\":\"pytest_limits.py::$name\"")
		[ "$n" -eq 1 ] && ok || ko "$n spans for pytest_limits.py::$name, not 1"
	done
else
	ko "no trace of the run: $(ls "$tmp")"
fi

# The markers are registered.
"$wrapper" -q -o "$tmp/m.%p.cgt" pytest -p no:cacheprovider --markers >"$tmp/out" 2>"$tmp/err" &&
	ok || ko "pytest --markers"
has "--markers" "@pytest.mark.cgprobe_limit(peak, device='cpu')" "$tmp/out"
has "--markers" "@pytest.mark.cgprobe_leaks(max, device='cpu')" "$tmp/out"

# A size that is none: an error at the test's setup, which says why.
"$wrapper" -q -o "$tmp/b.%p.cgt" pytest -p no:cacheprovider pytest_bad_marker.py \
	>"$tmp/out" 2>"$tmp/err"
r=$?
[ "$r" -eq 1 ] && ok || ko "a bad marker: exit $r, not 1"
has "bad marker" "1 error" "$tmp/out"
has "bad marker" "cgprobe_limit on pytest_bad_marker.py::test_bad_size: peak='lots' is not a size" \
	"$tmp/out"

# Without the probe: nothing checked, one warning, every test passes.
PYTHONPATH=$pydir "$py" -m pytest -p cgprobe.pytest_plugin -p no:cacheprovider pytest_limits.py \
	>"$tmp/out" 2>"$tmp/err"
r=$?
[ "$r" -eq 0 ] && ok || ko "without the probe: exit $r, not 0: $(cat "$tmp/out")"
has "no probe" "4 passed" "$tmp/out"
has "no probe" "cgprobe_leaks are not checked: run the tests as 'cgprobe pytest ARGS'" "$tmp/out"
n=$(grep -c "are not checked: run the tests as" "$tmp/out")
[ "$n" -eq 1 ] && ok || ko "without the probe: $n warnings, not 1"
finish
